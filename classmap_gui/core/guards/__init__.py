"""What input may be: budgets of memory and pixels, what is read at most, regular files only, array
checks, and the parameter schema every component's settings are checked against."""
