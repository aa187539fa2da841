"""Training a recogniser: its settings (:mod:`.config`, :mod:`.defaults`), the one search over a bank's
and ClassMap's hyper-parameters (:mod:`.search`, :mod:`.scoring`), encoding, training and evaluation."""
