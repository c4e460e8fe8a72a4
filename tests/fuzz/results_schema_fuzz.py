"""The report's loader and validator (python/pmlab_report/schema.py) on arbitrary input.

Whatever the bytes, loading answers with a document or a ResultsError (one clear line), never another
exception; and a document the validator accepts must go through the model the report is built from.

Input, first byte even: the bytes of a results.json. Odd: an edit of a real results document (a value
anywhere in it replaced by one the rest of the bytes choose), which reaches the validator's deep checks
that random bytes never get to.

Run as a fuzzer with atheris (`make fuzz`); python/tests/test_fuzz_corpus.py replays the corpus.
"""

from __future__ import annotations

import copy
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

from pmlab_report import model, schema  # noqa: E402

_BASE = json.loads((ROOT / "python" / "tests" / "fixtures" / "core_partial.json").read_text())


class _Bytes:
    """Draws small choices from the input, then zeros once it is used up."""

    def __init__(self, data: bytes):
        self.data, self.at = data, 0

    def byte(self) -> int:
        value = self.data[self.at] if self.at < len(self.data) else 0
        self.at += 1
        return value

    def text(self) -> str:
        n = self.byte() % 24
        raw = bytes(self.byte() for _ in range(n))
        return raw.decode("utf-8", errors="replace")

    def value(self, depth: int = 0):
        kind = self.byte() % (10 if depth < 3 else 7)
        if kind == 0:
            return None
        if kind == 1:
            return bool(self.byte() & 1)
        if kind == 2:
            return int.from_bytes(bytes(self.byte() for _ in range(8)), "little", signed=True)
        if kind == 3:
            return [1e400, -1e400, 1e308, -0.0, 5e-324, 0.5, 2**64, -(2**63)][self.byte() % 8]
        if kind == 4:
            return self.text()
        if kind == 5:
            return ["ok", "error", "skipped", "measured", "modelled", "published", "adr", "clwb", ""][self.byte() % 9]
        if kind == 6:
            return 10 ** (self.byte() % 40)
        if kind == 7:
            return [self.value(depth + 1) for _ in range(self.byte() % 4)]
        if kind == 8:
            return {self.text(): self.value(depth + 1) for _ in range(self.byte() % 4)}
        return copy.deepcopy(_BASE["runs"][0]) if _BASE["runs"] else {}


def _edit(doc, draw: _Bytes):
    """Replace one value, reached by a path the bytes choose, with a drawn value."""
    for _ in range(1 + draw.byte() % 3):
        node = doc
        for _ in range(draw.byte() % 6):
            if isinstance(node, dict) and node:
                keys = list(node)
                child = node[keys[draw.byte() % len(keys)]]
            elif isinstance(node, list) and node:
                child = node[draw.byte() % len(node)]
            else:
                break
            if not isinstance(child, (dict, list)):
                break
            node = child
        if isinstance(node, dict):
            keys = list(node) + [draw.text()]
            key = keys[draw.byte() % len(keys)]
            if draw.byte() % 5 == 0 and key in node:
                del node[key]
            else:
                node[key] = draw.value()
        elif isinstance(node, list):
            if node and draw.byte() % 2:
                node[draw.byte() % len(node)] = draw.value()
            else:
                node.append(draw.value())
    return doc


def check_one(data: bytes) -> None:
    """One input; raises only on a finding."""
    if not data:
        return
    try:
        if data[0] % 2 == 0:
            doc = schema.decode(data[1:])
        else:
            doc = _edit(copy.deepcopy(_BASE), _Bytes(data[1:]))
            # What pmlab writes and the report reads back: a round trip through JSON text, where an
            # out-of-range number is written as the literal a file would hold (1e400, not Infinity).
            text = json.dumps(doc).replace("Infinity", "1e400")
            doc = schema.decode(text.encode("utf-8"))
    except schema.ResultsError as exc:
        assert isinstance(exc.summary(), str)
        return
    problems = schema.validate(doc)
    assert isinstance(problems, list) and all(isinstance(p, str) for p in problems)
    if not problems:
        model.from_document(doc)


def main() -> None:
    import atheris  # only the fuzzer needs it; the corpus replay does not

    sys.setrecursionlimit(10000)

    def one_input(data: bytes) -> None:
        check_one(data)

    atheris.instrument_all()
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
