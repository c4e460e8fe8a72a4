"""Replays the report validator's fuzz corpus (tests/fuzz/corpus/results_schema): every input that the
fuzzer ever kept, or that once found a bug, must still load as a document or a ResultsError."""
import importlib.util
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "fuzz" / "corpus" / "results_schema"


def _target():
    spec = importlib.util.spec_from_file_location("results_schema_fuzz", ROOT / "tests" / "fuzz" / "results_schema_fuzz.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("path", sorted(CORPUS.iterdir()), ids=lambda p: p.name)
def test_corpus_input(path):
    _target().check_one(path.read_bytes())


def test_corpus_is_there():
    assert len(list(CORPUS.iterdir())) >= 4
