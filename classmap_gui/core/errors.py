"""The one exception module of core.

Every error a user can cause (bad data, a bad file, a bad setting) is one of these, with a
message that names the file or class at fault and says what to do.
"""
from __future__ import annotations


class ClassMapError(Exception):
    """Base of all errors ClassMap Studio raises on purpose."""


class DataError(ClassMapError, ValueError):
    """Image data that cannot be used: missing folder, empty class, unreadable set."""


class ModelFormatError(ClassMapError, ValueError):
    """A saved model or project that is corrupt, foreign, of a newer version, or unsafe."""


class ConfigError(ClassMapError, ValueError):
    """A parameter or setting with a wrong name or value."""


class NotFittedError(ClassMapError, RuntimeError):
    """An object used before it was trained."""


class Cancelled(ClassMapError):
    """Long work stopped because ``should_stop()`` turned true."""


class StorageError(ClassMapError, OSError):
    """A file or folder that cannot be written or read: a full or read-only disk, no permission.

    The message says what was being saved and that nothing was changed there."""


class NoSignalError(DataError):
    """Examples in which no classifier does better than chance (e.g. random labels): ClassMap's boosted
    embedding has no reference to choose."""
