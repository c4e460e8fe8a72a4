"""The lockfree suite's figures and tables, on a fixture written by a real `pmlab run lockfree --quick`
(trimmed to the runs the figures read) and on hand-built runs for the arithmetic."""

import json
import pathlib

from matplotlib.figure import Figure

from pmlab_report import figures, model, schema
from pmlab_report.model import Metric, Run
from pmlab_report.suites import lockfree

FIXTURE = pathlib.Path(__file__).resolve().parent / "fixtures" / "lockfree_quick.json"


def _fixture_runs():
    doc = json.loads(FIXTURE.read_text(encoding="utf-8"))
    assert schema.validate(doc) == []
    return model.from_document(doc).runs


def _ring(index, design, domain, flush, push_avg, published_ratio=None):
    metrics = {"push_latency_avg": Metric(push_avg, "ns", "measured"),
               "pop_latency_avg": Metric(2 * push_avg, "ns", "measured")}
    if published_ratio is not None:
        metrics["published_noflush_ratio_push_avg"] = Metric(published_ratio, "ratio", "published",
                                                             source="[PMIdioBench]")
    return Run(index=index, name=f"lockfree.ring/{design}/{domain}/{flush}", suite="lockfree", case="ring",
               params={"design": design, "domain": domain, "slot_flush": flush, "threads": 2},
               status="ok", reason=None, metrics=metrics)


def test_r5_ratio_divides_the_no_flush_run_by_the_flush_run():
    runs = [_ring(0, "tx", "eadr", False, 300.0, 0.8584), _ring(1, "tx", "eadr", True, 200.0),
            _ring(2, "txfree", "eadr", False, 100.0)]  # no flush twin: no ratio
    ratios = lockfree.r5_ratios(runs)
    assert abs(ratios["tx"]["push_avg"] - 1.5) < 1e-12
    assert abs(ratios["tx"]["pop_avg"] - 1.5) < 1e-12
    assert ratios["tx"]["published_push_avg"] == 0.8584
    assert "txfree" not in ratios


def test_figure16_table_uses_flushing_eadr_runs_only():
    runs = [_ring(0, "tx", "eadr", False, 300.0), _ring(1, "tx", "eadr", True, 200.0),
            _ring(2, "tx", "adr", False, 900.0)]
    table = lockfree.ring_latency_table(runs)
    assert table["tx-eadr"]["push_avg"] == 200.0
    assert table["tx-adr"]["push_avg"] == 900.0


def test_quick_run_covers_every_design_with_published_numbers_beside():
    runs = _fixture_runs()
    ok = [r for r in runs if r.suite == "lockfree" and r.ok]
    assert {r.param("design") for r in ok if r.case == "list"} == {"volatile", "tlog", "logfree", "soft", "linkfree"}
    assert {lockfree.ring_system(r) for r in ok if r.case == "ring"} >= {"volatile", "tx-adr", "tx-eadr", "txfree-eadr"}
    published = [m for r in ok for m in r.metrics.values() if m.kind == "published"]
    assert published and all(m.source for m in published)
    table = lockfree.list_throughput_table(runs)
    assert ("adr", 1024, "tlog@published") in table and ("adr", 1024, "tlog") in table
    assert set(lockfree.r5_ratios(runs)) == {"tx", "txfree"}


def test_every_figure_draws_the_fixture_and_tolerates_no_runs():
    runs = _fixture_runs()
    specs = figures.figures_for("lockfree")
    assert len(specs) == 5
    for spec in specs:
        assert isinstance(spec.func(runs), Figure), spec.key
        assert spec.func([]) is None, spec.key
