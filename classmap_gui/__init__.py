"""ClassMap Studio: recognise images among many classes, fast."""
__version__ = "0.1.0"
