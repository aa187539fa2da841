"""Sphinx configuration of the manual (``make docs``): the pages are docs/*.md (MyST Markdown, the same files
GitHub shows), the API reference is generated from the numpydoc docstrings (autodoc + numpydoc).

It lives outside docs/ so that docs/ holds the manual's pages and pictures only: ``sphinx-build -c .sphinx``.
"""
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, ROOT)

project = "ClassMap Studio"
author = "ClassMap Studio developers"
from classmap_gui import __version__ as release  # noqa: E402

version = release
extensions = ["myst_parser", "sphinx.ext.autodoc", "numpydoc", "sphinx.ext.doctest", "sphinx.ext.mathjax"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath"]
suppress_warnings = ["myst.header"]   # pages start at any heading level they like; no warning is a hidden error

# numpydoc: the reference shows typed Parameters / Attributes / Examples; the checks below turn a class of the
# reference without a typed parameter list or without an example into a build warning (an error under -W).
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks = {"PR01", "PR02", "PR04", "EX01"}
numpydoc_validation_exclude = {r"\.[a-z_]+$"}   # methods: their one-paragraph docstrings stay as they are
autodoc_default_options = {"members": False}
autodoc_typehints = "none"   # the types are in the numpydoc Parameters, written for people
html_theme = "alabaster"
html_title = f"ClassMap Studio {release}"
html_static_path = []
doctest_test_doctest_blocks = "default"
