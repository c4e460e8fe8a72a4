import pytest
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from pmlab_report import figures, model
from pmlab_report.suites import core

CORE_FIGURES = [core.persist_latency, core.persist_bandwidth, core.overhead]


def _runs(doc, suite="core"):
    return [r for r in model.from_document(doc).runs if r.suite == suite]


def test_core_figures_are_registered():
    keys = [spec.key for spec in figures.figures_for("core")]
    assert keys == ["core.persist_latency", "core.persist_bandwidth", "core.persist_same_line", "core.overhead"]
    assert all(spec.caption and spec.title for spec in figures.figures_for("core"))


def test_no_figures_for_unknown_suite():
    assert figures.figures_for("other") == []


def test_full_fixture_draws_every_figure(quick_doc):
    results = figures.build("core", _runs(quick_doc))
    assert [r.error for r in results] == [None, None, None, None]
    # The fixture predates the same-line pattern: that figure has nothing to draw (test_seed_figures.py draws it).
    assert all(isinstance(r.figure, Figure) for r in results if r.spec.key != "core.persist_same_line")
    latency = results[0].figure
    assert len(latency.axes) == 4  # medium (dram, pool) x pattern (seq, rand)
    titles = [ax.get_title() for ax in latency.axes]
    assert titles == ["medium: dram · pattern: seq", "medium: dram · pattern: rand",
                      "medium: pool · pattern: seq", "medium: pool · pattern: rand"]
    assert latency.axes[0].get_yscale() == "log"
    assert latency.axes[0].get_xscale() == "log"
    assert "ns" in latency.axes[0].get_ylabel()


SUBSETS = {
    "dram-seq-only": lambda r: r.param("medium") == "dram" and r.param("pattern") in ("seq", None),
    "one-size": lambda r: r.param("size") == 64,
    "not-ok-only": lambda r: not r.ok,
    "pool-clwb-only": lambda r: r.param("medium") == "pool" and r.param("flush") == "clwb",
    "overhead-only": lambda r: r.case == "overhead",
    "persist-only": lambda r: r.case == "persist",
    "nothing": lambda r: False,
}


@pytest.mark.parametrize("subset", sorted(SUBSETS))
@pytest.mark.parametrize("func", CORE_FIGURES, ids=lambda f: f.__name__)
def test_figures_tolerate_subsets(quick_doc, subset, func):
    runs = [r for r in _runs(quick_doc) if SUBSETS[subset](r)]
    fig = func(runs)
    assert fig is None or isinstance(fig, Figure)
    wants = "overhead" if func is core.overhead else "persist"
    has_data = any(r.ok and r.case == wants for r in runs)
    assert (fig is not None) == has_data


def test_subset_grid_shrinks(quick_doc):
    runs = [r for r in _runs(quick_doc) if SUBSETS["dram-seq-only"](r)]
    fig = core.persist_latency(runs)
    assert [ax.get_title() for ax in fig.axes] == ["medium: dram · pattern: seq"]


def test_figures_ignore_runs_of_other_suites(quick_doc):
    other = _runs(quick_doc, suite="other")
    for func in CORE_FIGURES:
        assert func(other) is None


def test_metric_with_null_values_is_skipped(quick_doc):
    doc = quick_doc
    for run in doc["runs"]:
        if run["case"] == "persist" and run["status"] == "ok":
            run["metrics"]["latency_p50"]["value"] = None
    assert core.persist_latency(_runs(doc)) is None
    assert core.persist_bandwidth(_runs(doc)) is not None


def _red_hatched_bars(fig):
    red = to_hex(core.EXCEED_COLOR)
    return [p for ax in fig.axes for p in ax.patches
            if isinstance(p, Rectangle) and to_hex(p.get_facecolor()) == red and p.get_hatch()]


def test_overhead_highlights_bars_above_target(partial_doc):
    fig = core.overhead(_runs(partial_doc))
    assert len(fig.axes) == 1  # only the pool medium is present
    bars = _red_hatched_bars(fig)
    assert len(bars) == 1  # pool/clwb/64 at 1.08
    assert bars[0].get_y() == pytest.approx(1.0)
    assert bars[0].get_height() == pytest.approx(0.08)
    dashed = [line for line in fig.axes[0].get_lines() if line.get_linestyle() == "--"]
    assert [line.get_ydata()[0] for line in dashed] == [pytest.approx(1.05)]
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "1.08" in texts and "error" in texts  # value label, and the errored slot


def test_overhead_follows_the_runs_verdict_and_target(partial_doc):
    # The report draws what the run decided and recorded; it does not judge the ratio itself.
    for run in partial_doc["runs"]:
        if run["case"] == "overhead" and run["status"] == "ok":
            for target in run["targets"]:
                target["verdict"] = "met"
                target["threshold"] = 1.2
    fig = core.overhead(_runs(partial_doc))
    assert _red_hatched_bars(fig) == []
    dashed = [line for line in fig.axes[0].get_lines() if line.get_linestyle() == "--"]
    assert [line.get_ydata()[0] for line in dashed] == [pytest.approx(1.2)]


def test_overhead_full_fixture_has_no_bar_above_target(quick_doc):
    assert _red_hatched_bars(core.overhead(_runs(quick_doc))) == []


def test_broken_figure_function_does_not_abort(partial_doc):
    @figures.figure("broken-suite", title="Broken", caption="raises")
    def broken(runs):
        raise ValueError("boom")

    @figures.figure("broken-suite", title="Empty", caption="nothing")
    def empty(runs):
        return None

    results = figures.build("broken-suite", _runs(partial_doc))
    assert results[0].error == "ValueError: boom"
    assert results[1].figure is None and results[1].error is None
