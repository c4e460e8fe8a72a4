"""The model suite's figures on a small fixture (model_quick.json: a quick run of `pmlab run model`)."""

import copy
import json
import pathlib

import pytest
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from pmlab_report import figures, model, schema
from pmlab_report.suites import model as model_suite

FIXTURE = pathlib.Path(__file__).resolve().parent / "fixtures" / "model_quick.json"
FIGURES = [model_suite.xpbuffer_knee, model_suite.small_writes_ewr, model_suite.xpbuffer_counters,
           model_suite.emulation, model_suite.cost]
CASE_OF = {model_suite.xpbuffer_knee: {"xpbuffer"}, model_suite.small_writes_ewr: {"small_writes"},
           model_suite.xpbuffer_counters: {"rmw", "reads"}, model_suite.emulation: {"emulation"},
           model_suite.cost: {"cost"}}


@pytest.fixture
def model_doc():
    with open(FIXTURE, encoding="utf-8") as handle:
        return json.load(handle)


def _runs(doc):
    return [r for r in model.from_document(doc).runs if r.suite == "model"]


def test_fixture_is_valid_and_labels_every_number(model_doc):
    assert schema.validate(model_doc) == []
    kinds = {(m["kind"], m.get("model") or m.get("source") or "")
             for r in model_doc["runs"] for m in r["metrics"].values()}
    assert ("modelled", "dcpmm") in kinds
    assert ("modelled", "emulated:dcpmm") in kinds
    assert any(kind == "published" and "pmem-idiosyncrasies" in origin for kind, origin in kinds)
    assert any(kind == "published" and "09-infer_xpbuffer" in origin for kind, origin in kinds)


def test_every_figure_registers_and_draws(model_doc):
    keys = [spec.key for spec in figures.figures_for("model")]
    assert keys == ["model.xpbuffer_knee", "model.small_writes_ewr", "model.xpbuffer_counters",
                    "model.emulation", "model.cost"]
    results = figures.build("model", _runs(model_doc))
    assert [r.error for r in results] == [None] * len(FIGURES)
    assert all(isinstance(r.figure, Figure) for r in results)


def test_knee_figure_draws_model_and_published_apart(model_doc):
    fig = model_suite.xpbuffer_knee(_runs(model_doc))
    ax = fig.axes[0]
    lines = [line for line in ax.get_lines() if isinstance(line, Line2D)]
    assert [line.get_linestyle() for line in lines] == ["-", "--"]  # modelled solid, published dashed
    modelled = dict(zip(lines[0].get_xdata(), lines[0].get_ydata()))
    published = dict(zip(lines[1].get_xdata(), lines[1].get_ydata()))
    assert modelled[16384] == pytest.approx(1.0, abs=0.05)
    assert modelled[65536] == pytest.approx(2.0, abs=0.1)
    assert published[20480] == pytest.approx(1.36, abs=0.01)
    assert ax.get_xscale() == "log"
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any("FAST'20" in t for t in legend) and any("dcpmm" in t for t in legend)


@pytest.mark.parametrize("func", FIGURES, ids=lambda f: f.__name__)
def test_figures_return_none_without_their_data(model_doc, func):
    runs = [r for r in _runs(model_doc) if r.case not in CASE_OF[func]]
    assert func(runs) is None
    assert func([]) is None


@pytest.mark.parametrize("func", FIGURES, ids=lambda f: f.__name__)
def test_figures_tolerate_failed_runs_and_null_values(model_doc, func):
    doc = copy.deepcopy(model_doc)
    for i, run in enumerate(doc["runs"]):
        if i % 2 == 0:
            run["status"], run["reason"] = "error", "deliberate"
        else:
            for metric in run["metrics"].values():
                if metric["kind"] == "published":
                    metric["value"] = None
    fig = func(_runs(doc))
    assert fig is None or isinstance(fig, Figure)


def test_published_values_appear_only_where_the_run_has_them(model_doc):
    runs = _runs(model_doc)
    for run in runs:
        for name, metric in run.metrics.items():
            if name.endswith("_published"):
                assert metric.kind == "published" and metric.source
