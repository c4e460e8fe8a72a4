"""Shared fixtures. Makes `pmlab_report` importable when pytest runs from anywhere."""

import copy
import json
import os
import pathlib
import sys

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")

PYTHON_DIR = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures"
if str(PYTHON_DIR) not in sys.path:
    sys.path.insert(0, str(PYTHON_DIR))


def _load(name):
    with open(FIXTURES / name, encoding="utf-8") as handle:
        return json.load(handle)


_QUICK = _load("core_quick.json")
_PARTIAL = _load("core_partial.json")


@pytest.fixture
def quick_doc():
    """core_quick.json as a dict (a fresh copy each test may mutate)."""
    return copy.deepcopy(_QUICK)


@pytest.fixture
def partial_doc():
    """core_partial.json: a handful of core runs, no pool, one bar above target, a skipped run."""
    return copy.deepcopy(_PARTIAL)


@pytest.fixture
def python_dir():
    return PYTHON_DIR


def write_run_dir(directory: pathlib.Path, content) -> pathlib.Path:
    """A run directory whose results.json holds `content` (dict -> JSON, str written verbatim)."""
    directory.mkdir(parents=True, exist_ok=True)
    text = content if isinstance(content, str) else json.dumps(content)
    (directory / "results.json").write_text(text, encoding="utf-8")
    return directory
