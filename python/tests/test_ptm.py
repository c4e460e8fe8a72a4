"""The ptm suite's figures on a fixture (ptm_quick.json: trimmed from a real `pmlab run ptm --quick` of this
machine — the threads=1 runs of ptm.tx, every ptm.breakdown run and the derived ptm.target rows)."""

import copy
import json
import pathlib

import pytest
from matplotlib.figure import Figure

from pmlab_report import figures, model, schema
from pmlab_report.suites import ptm

FIXTURE = pathlib.Path(__file__).resolve().parent / "fixtures" / "ptm_quick.json"
FIGURES = [ptm.throughput, ptm.durability, ptm.breakdown, ptm.counters, ptm.targets]
with open(FIXTURE, encoding="utf-8") as _handle:
    _DOC = json.load(_handle)


@pytest.fixture
def doc():
    return copy.deepcopy(_DOC)


def _runs(document, keep=lambda r: True):
    return [r for r in model.from_document(document).runs if r.suite == "ptm" and keep(r)]


def test_fixture_is_valid(doc):
    assert schema.validate(doc) == []


def test_fixture_covers_every_ptm_durability_and_workload(doc):
    tx = [r for r in _runs(doc) if r.case == "tx" and r.ok]
    assert {r.param("ptm") for r in tx} == {"undo", "redo", "pmdk"}
    assert {r.param("durability") for r in tx if r.param("ptm") != "pmdk"} == {"adr", "eadr", "pdram", "pdram-lite"}
    assert {"queue", "hashmap", "bptree", "bank"} <= {r.param("workload") for r in tx}
    assert any(str(r.param("workload")).startswith("sps-") for r in tx)


def test_figures_are_registered_with_captions():
    keys = [spec.key for spec in figures.figures_for("ptm")]
    assert keys == ["ptm.throughput", "ptm.durability", "ptm.breakdown", "ptm.counters", "ptm.targets"]
    assert all(spec.title and spec.caption for spec in figures.figures_for("ptm"))


def test_every_figure_draws_from_the_quick_run(doc):
    results = figures.build("ptm", _runs(doc))
    assert [r.error for r in results] == [None] * len(FIGURES)
    assert all(isinstance(r.figure, Figure) for r in results)


def test_breakdown_shares_are_computed_and_pmdk_logging_is_not_measurable(doc):
    shares = ptm.breakdown_shares(_runs(doc))
    assert ("redo", "hashmap") in shares and ("undo", "sps-16") in shares
    for key, entry in shares.items():
        assert set(entry) == {"no-log", "no-flush", "no-fence"}
        for v in entry.values():
            assert v is None or -100.0 < v < 100.0, (key, entry)
    pmdk = [e for (p, _), e in shares.items() if p == "pmdk"]
    assert pmdk and all(e["no-log"] is None and e["no-fence"] is None for e in pmdk)
    # Switching the undo log off must save time: its share is positive on SPS.
    assert shares[("undo", "sps-16")]["no-log"] > 0


def test_share_formula(doc):
    for run in doc["runs"]:
        if run["case"] == "breakdown" and run["params"]["ptm"] == "redo" and run["params"]["workload"] == "hashmap":
            run["metrics"]["throughput"]["value"] = 100.0 if run["params"]["cost"] == "full" else 200.0
    shares = ptm.breakdown_shares(_runs(doc))
    assert shares[("redo", "hashmap")] == {"no-log": 50.0, "no-flush": 50.0, "no-fence": 50.0}


def test_target_rows_carry_a_verdict(doc):
    rows = [r for r in _runs(doc) if r.case == "target"]
    assert rows
    for r in rows:
        assert "verdict" in r.notes and "counters" in r.notes
        assert r.value("redo_vs_undo") is not None


SUBSETS = {
    "no-breakdown": lambda r: r.case != "breakdown",
    "only-breakdown": lambda r: r.case == "breakdown",
    "only-adr": lambda r: r.param("durability", "adr") == "adr",
    "nothing": lambda r: False,
}


@pytest.mark.parametrize("subset", sorted(SUBSETS))
def test_figures_tolerate_subsets(doc, subset):
    runs = _runs(doc, SUBSETS[subset])
    needs = {ptm.throughput: ("tx",), ptm.durability: ("tx",), ptm.breakdown: ("breakdown",),
             ptm.counters: ("tx",), ptm.targets: ("target",)}
    for func in FIGURES:
        fig = func(runs)
        assert fig is None or isinstance(fig, Figure)
        assert (fig is not None) == any(r.ok and r.case in needs[func] for r in runs), func.__name__


def test_failed_runs_are_left_out(doc):
    for run in doc["runs"]:
        if run["case"] == "tx":
            run["status"] = "error"
            run["reason"] = "forced"
    assert ptm.throughput(_runs(doc)) is None
