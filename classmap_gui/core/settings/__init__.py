"""Settings groups that are not one component's parameters, each declared once and read by every layer that
needs it (:mod:`.hand`: the hand model's build, choice, scan and reading settings)."""
