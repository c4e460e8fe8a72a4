"""The primitives suite's figures on a fixture (primitives_quick.json: a trimmed quick run of this machine,
plus one skipped and one failed run)."""

import copy
import json
import pathlib

import pytest
from matplotlib.figure import Figure

from pmlab_report import figures, model, schema
from pmlab_report.suites import primitives

FIXTURE = pathlib.Path(__file__).resolve().parent / "fixtures" / "primitives_quick.json"
FIGURES = [primitives.log_throughput, primitives.page_flush, primitives.persistence_costs, primitives.ycsb,
           primitives.targets]
with open(FIXTURE, encoding="utf-8") as _handle:
    _DOC = json.load(_handle)


@pytest.fixture
def doc():
    return copy.deepcopy(_DOC)


def _runs(document, keep=lambda r: True):
    return [r for r in model.from_document(document).runs if r.suite == "primitives" and keep(r)]


def _lines(fig):
    return [line for ax in fig.axes for line in ax.get_lines()]


def test_fixture_is_valid(doc):
    assert schema.validate(doc) == []


def test_figures_are_registered_with_captions():
    keys = [spec.key for spec in figures.figures_for("primitives")]
    assert keys == ["primitives.log_throughput", "primitives.page_flush", "primitives.persistence_costs",
                    "primitives.ycsb", "primitives.targets"]
    assert all(spec.title and spec.caption for spec in figures.figures_for("primitives"))


def test_every_figure_draws_from_the_quick_run(doc):
    results = figures.build("primitives", _runs(doc))
    assert [r.error for r in results] == [None] * 5
    assert all(isinstance(r.figure, Figure) for r in results)


def test_log_figure_puts_libpmemlog_beside_every_padding(doc):
    fig = primitives.log_throughput(_runs(doc))
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == ["padding: none · threads: 1", "padding: line · threads: 1",
                      "padding: none · threads: 2", "padding: line · threads: 2"]
    for ax in fig.axes:
        labels = [line.get_label() for line in ax.get_lines()]
        assert "pmemlog (PMDK)" in labels
        assert "zero" in labels
        peer = next(line for line in ax.get_lines() if line.get_label() == "pmemlog (PMDK)")
        assert peer.get_linestyle() == "--"
    assert fig.axes[0].get_yscale() == "log" and fig.axes[0].get_xscale() == "log"


def test_page_figure_has_a_panel_per_page_size_and_thread_count(doc):
    fig = primitives.page_flush(_runs(doc))
    assert [ax.get_title() for ax in fig.axes] == ["page: 4 KiB · threads: 1", "page: 16 KiB · threads: 1",
                                                   "page: 4 KiB · threads: 2", "page: 16 KiB · threads: 2"]
    labels = {line.get_label() for line in fig.axes[1].get_lines()}
    assert labels == {"cow", "ulog", "hybrid", "pmemblk (PMDK)"}
    # 16 KiB pages: one point per dirty-line count of the quick sweep (1, 8, 32, 64, 256).
    cow = next(line for line in fig.axes[1].get_lines() if line.get_label() == "cow")
    assert list(cow.get_xdata()) == [1, 8, 32, 64, 256]


def test_costs_figure_marks_published_peer_counts_hollow(doc):
    fig = primitives.persistence_costs(_runs(doc))
    fences = fig.axes[0]
    peer = next(line for line in fences.get_lines() if line.get_label() == "pmemlog (PMDK)")
    assert peer.get_markerfacecolor() == "none"
    assert set(peer.get_ydata()) == {2.0}
    zero = next(line for line in fences.get_lines() if line.get_label() == "zero")
    assert {round(y, 6) for y in zero.get_ydata()} == {1.0}
    # Write-backs: the peers are unknown (null), so they are not drawn.
    assert all("PMDK" not in line.get_label() for line in fig.axes[2].get_lines())


def test_ycsb_shows_the_published_numbers_apart(doc):
    fig = primitives.ycsb(_runs(doc))
    hatched = [p for ax in fig.axes for p in ax.patches if p.get_hatch() == "//"]
    assert sorted(round(p.get_height()) for p in hatched) == [1500000, 1700000, 2000000]
    assert fig.axes[0].get_title() == "threads: 1"


def test_targets_hatch_the_ratios_the_run_marked_below_target(doc):
    # The run's verdict decides, not a threshold in the report: a ratio above the target the run marked
    # as missed is still hatched.
    for run in doc["runs"]:
        if run["case"] == "log_target":
            run["metrics"]["zero_vs_pmemlog"]["value"] = 3.5
            (target,) = run["targets"]
            target["verdict"] = "met" if run["params"]["size"] == 64 else "missed"
    fig = primitives.targets(_runs(doc))
    bars = fig.axes[0].patches
    sizes = sorted({run["params"]["size"] for run in doc["runs"] if run["case"] == "log_target"})
    assert bars and any(p.get_hatch() is None for p in bars) and any(p.get_hatch() for p in bars)
    unhatched = {round(p.get_x() + p.get_width() / 2) for p in bars if p.get_hatch() is None}
    assert unhatched == {sizes.index(64)}
    dashed = [line.get_ydata()[0] for line in fig.axes[0].get_lines() if line.get_linestyle() == "--"]
    assert dashed == [pytest.approx(3.0)]  # the target as the run recorded it


def test_targets_hollow_markers_below_target(doc):
    for run in doc["runs"]:
        if run["case"] == "flush_target":
            run["metrics"]["hybrid_vs_best"]["value"] = 1.0
            run["targets"] = [t for t in run.get("targets", []) if t["metric"] != "hybrid_vs_best"] + [
                {"metric": "hybrid_vs_best", "label": "hybrid", "threshold": 0.95, "direction": "at_least",
                 "value": 1.0, "verdict": "missed" if run["params"]["dirty"] == 8 else "met"}]
    fig = primitives.targets(_runs(doc))
    markers = [line for line in fig.axes[1].get_lines() if line.get_marker() == "o" and len(line.get_xdata()) == 1]
    hollow = {line.get_xdata()[0] for line in markers if line.get_markerfacecolor() == "none"}
    assert hollow == {8}


def test_targets_cross_the_calibrated_hybrid_where_it_was_run(doc):
    flushes = [run for run in doc["runs"] if run["case"] == "flush_target" and run["status"] == "ok"]
    assert flushes
    fig = primitives.targets(_runs(doc))
    assert not fig.axes[1].collections  # the fixture predates the calibrated contender
    for run in flushes:
        run["metrics"]["hybrid_calibrated_vs_best"] = {"value": 0.9 if run["params"]["dirty"] == 8 else 1.01,
                                                       "unit": "ratio", "kind": "measured"}
    fig = primitives.targets(_runs(doc))
    (crosses,) = fig.axes[1].collections
    offsets = crosses.get_offsets()
    assert len(offsets) == len(flushes)
    assert {round(y, 2) for x, y in offsets if x == 8} == {0.9}


SUBSETS = {
    "logs-only": lambda r: r.case in ("log_append", "log_target"),
    "pages-only": lambda r: r.case in ("page_flush", "flush_target"),
    "not-ok-only": lambda r: not r.ok,
    "without-peers": lambda r: r.case in ("log_append", "page_flush")
                               and r.param("writer") != "pmemlog" and r.param("flusher") != "pmemblk",
    "nothing": lambda r: False,
}


@pytest.mark.parametrize("subset", sorted(SUBSETS))
def test_figures_tolerate_subsets(doc, subset):
    runs = _runs(doc, SUBSETS[subset])
    needs = {primitives.log_throughput: ("log_append",), primitives.page_flush: ("page_flush",),
             primitives.persistence_costs: ("log_append", "page_flush"), primitives.ycsb: ("ycsb_write",),
             primitives.targets: ("log_target", "flush_target")}
    for func in FIGURES:
        fig = func(runs)
        assert fig is None or isinstance(fig, Figure)
        assert (fig is not None) == any(r.ok and r.case in needs[func] for r in runs), func.__name__


def test_null_throughput_is_left_out(doc):
    for run in doc["runs"]:
        if run["case"] == "log_append" and run["params"]["writer"] == "zero":
            run["metrics"]["throughput"]["value"] = None
    fig = primitives.log_throughput(_runs(doc))
    assert all(line.get_label() != "zero" for line in _lines(fig))


def _with_streaming_twins(document, case):
    """Each of our writers' runs of `case` again as a streaming twin (the fixture predates the option)."""
    twins = []
    for run in document["runs"]:
        if run["case"] == case and run["params"].get("writer") != "pmemlog":
            run["params"]["stores"] = "cached"
            twin = copy.deepcopy(run)
            twin["params"]["stores"] = "streaming"
            twin["name"] = run["name"] + "/stores:streaming"
            if isinstance(twin["metrics"].get("throughput", {}).get("value"), (int, float)):
                twin["metrics"]["throughput"]["value"] *= 1.5
            twins.append(twin)
    document["runs"].extend(twins)
    return document


def test_log_figure_draws_each_writer_per_store_mode(doc):
    fig = primitives.log_throughput(_runs(_with_streaming_twins(doc, "log_append")))
    lines = {line.get_label(): line for line in fig.axes[0].get_lines()}
    assert lines["zero"].get_linestyle() == "-" and lines["zero (cached)"].get_linestyle() == ":"
    assert all(a > b for a, b in zip(lines["zero"].get_ydata(), lines["zero (cached)"].get_ydata()))
    assert "pmemlog (PMDK)" in lines and "pmemlog (cached)" not in lines
    # The fences figure draws one store mode (both write back the same lines under the same fences).
    costs = primitives.persistence_costs(_runs(doc))
    assert [line.get_label() for line in costs.axes[0].get_lines()].count("zero") == 1


def test_ycsb_dots_the_cached_bars_beside_streaming(doc):
    fig = primitives.ycsb(_runs(_with_streaming_twins(doc, "ycsb_write")))
    ax = fig.axes[0]
    dotted = [p for p in ax.patches if p.get_hatch() == ".."]
    plain = [p for p in ax.patches if p.get_hatch() is None]
    assert dotted and len(plain) == len(dotted) + 1  # libpmemlog: one bar, neither option


def test_targets_tick_the_one_barrier_bound(doc):
    for run in doc["runs"]:
        if run["case"] == "log_target":
            run["metrics"]["one_barrier_streaming_vs_pmemlog"] = {"value": 3.25, "unit": "ratio", "kind": "measured"}
    fig = primitives.targets(_runs(doc))
    ticks = [line for line in fig.axes[0].get_lines() if line.get_marker() == "_"]
    assert ticks and all(list(line.get_ydata()) == [3.25] for line in ticks)
    assert len(ticks) == len(fig.axes[0].patches)
