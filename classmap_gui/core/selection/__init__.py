"""How every choice is made on a validation part: the one selection policy, its learning-curve
gap estimate and the one split module. Below classify, data and detect, which all use it."""
