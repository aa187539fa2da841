"""Checking where numba may cache creates nothing: a ``__pycache__`` made inside an installed package
(/opt/classmap-studio) would be left behind when the package is removed."""
import os

from classmap_gui.core import numba_cache


def test_checking_a_cache_folder_creates_nothing(tmp_path):
    target = tmp_path / "pkg" / "core" / "__pycache__"
    assert numba_cache._can_write(target)          # numba could create it under a writable parent
    assert not (tmp_path / "pkg").exists()          # but the check made nothing


def test_a_read_only_parent_counts_as_access_2_says(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        # what access(2) says for this user (root may write into a mode-555 folder, not into a read-only mount)
        assert numba_cache._can_write(ro / "__pycache__") is os.access(ro, os.W_OK)
        assert not (ro / "__pycache__").exists()
    finally:
        ro.chmod(0o755)
