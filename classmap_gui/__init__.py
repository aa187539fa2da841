"""ClassMap Studio: recognise images among many classes, fast.

``from classmap_gui import ClassMap`` gives the scikit-learn meta-estimator (filter-and-refine over a
classifier bank); it is imported on first use, so ``import classmap_gui`` stays light for the command line.
"""
__version__ = "0.1.0"
__all__ = ["ClassMap"]


def __getattr__(name: str):
    if name == "ClassMap":
        from .core.classify.classmap.estimator import ClassMap

        return ClassMap
    raise AttributeError(f"module 'classmap_gui' has no attribute {name!r}")
