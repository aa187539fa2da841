"""ClassMap's filter indexes: the p classes nearest a query embedding by weighted L1."""
