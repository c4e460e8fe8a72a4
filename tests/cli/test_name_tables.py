"""Structures and ptm workloads are picked by name in one table each (ds/structures.hpp,
ptm/workloads/catalog.hpp); nothing else in src/ compares a string with one of their names."""
import re

from conftest import ROOT

NAMES = ["array", "hashtable", "skiplist", "bptree", "list", "sps", "queue", "hashmap", "bank"]
PATTERN = re.compile(r'(==|!=)\s*"(%s)"|"(%s)"\s*(==|!=)' % ("|".join(NAMES), "|".join(NAMES)))


def comparisons(root):
    found = []
    for path in sorted((root / "src").rglob("*.[ch]pp")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if PATTERN.search(line):
                found.append(f"{path.relative_to(root)}:{n}: {line.strip()}")
    return found


def test_no_name_compared_outside_the_tables():
    assert comparisons(ROOT) == []


def test_a_comparison_is_found(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "x.cpp").write_text('bool f(const std::string& s) { return s == "bptree"; }\n')
    assert comparisons(tmp_path) == ['src/x.cpp:1: bool f(const std::string& s) { return s == "bptree"; }']
