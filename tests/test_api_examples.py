"""The API reference's examples run: every class the manual documents (docs/api.rst) has an Examples
section in its numpydoc docstring, and each example gives the output it shows."""
import doctest
import importlib
import inspect
import re
from pathlib import Path

import pytest

API = Path(__file__).resolve().parents[1] / "docs" / "api.rst"
CLASSES = re.findall(r"^\.\. autoclass:: ([\w.]+)$", API.read_text(), re.M)


def _resolve(path: str):
    module, name = path.rsplit(".", 1)
    return getattr(importlib.import_module(module), name)


def test_the_reference_documents_the_classes_people_use():
    names = {c.rsplit(".", 1)[1] for c in CLASSES}
    assert {"ClassMap", "Recogniser", "OneVsAllRidge", "OneVsAllSVM", "AllPairsSVM", "NetworkFeatures", "KMeansFeatures", "HOGFeatures"} <= names


@pytest.mark.parametrize("path", CLASSES)
def test_the_class_example_runs_and_shows_its_output(path):
    cls = _resolve(path)
    doc = inspect.cleandoc(cls.__doc__)
    assert "\nExamples\n--------\n>>> " in doc, f"{path} has no Examples section"
    assert re.search(r"^Parameters\n-{10}\n(\w+ : .+\n(    .+\n)+)+", doc, re.M), \
        f"{path}: no typed Parameters (name : type, then an indented description)"
    tests = [t for t in doctest.DocTestFinder(recurse=False).find(cls, path) if t.examples]
    assert tests, f"{path}: its Examples hold no >>> example"
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    for t in tests:
        runner.run(t)
    assert runner.failures == 0, f"{path}: {runner.failures} example(s) failed (the output is above)"
