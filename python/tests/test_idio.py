"""The idio suite's figures and tables on a small fixture (idio_quick.json: a trimmed quick run)."""

import copy
import json
import pathlib

import pytest
from matplotlib.figure import Figure

from pmlab_report import figures, findings, migrate, model, schema
from pmlab_report.suites import idio

FIXTURE = pathlib.Path(__file__).resolve().parent / "fixtures" / "idio_quick.json"
IDIO_FIGURES = [idio.i1_latency, idio.i2_bandwidth, idio.thread_scaling, idio.dependent_load, idio.i3_small_writes, idio.i4_numa,
                idio.i5_store_vs_pstore, idio.i6_read, idio.i7_i8, idio.peers]


@pytest.fixture
def idio_doc():
    with open(FIXTURE, encoding="utf-8") as handle:
        return json.load(handle)


def _runs(doc):
    return [r for r in model.from_document(doc).runs if r.suite == "idio"]


def test_fixture_is_valid_and_holds_derived_rows(idio_doc):
    assert schema.validate(idio_doc) == []
    cases = {r["case"] for r in idio_doc["runs"]}
    assert {"classification", "recommendation", "i4_numa"} <= cases
    verdicts = {r["params"]["idiosyncrasy"]: r["notes"]["verdict"] for r in idio_doc["runs"]
                if r["case"] == "classification"}
    assert sorted(verdicts) == [f"I{i}" for i in range(1, 9)]
    assert set(verdicts.values()) <= {"present", "absent", "not applicable here"}


def test_every_figure_registers_and_draws(idio_doc):
    keys = [spec.key for spec in figures.figures_for("idio")]
    assert keys == [f"idio.{f.__name__}" for f in IDIO_FIGURES]
    results = figures.build("idio", _runs(idio_doc))
    assert [r.error for r in results] == [None] * len(IDIO_FIGURES)
    # I4 needs two NUMA nodes: on the fixture's machine its runs were skipped, and it says so in text.
    # The fixture predates idio.dependent_load: that figure has no data here (test_seed_figures.py draws it).
    assert all(isinstance(r.figure, Figure) for r in results if r.spec.key not in ("idio.i4_numa", "idio.dependent_load"))
    (i4,) = [r for r in results if r.spec.key == "idio.i4_numa"]
    assert i4.figure is None and "NUMA node" in i4.not_measured


def test_i1_has_a_hit_ratio_panel_per_medium(idio_doc):
    fig = idio.i1_latency(_runs(idio_doc))
    assert len(fig.axes) == 4  # latency and hit ratio, for dram and pool
    assert fig.axes[0].get_yscale() == "log"


def test_classification_and_recommendations_are_html_text(idio_doc):
    results = model.from_document(migrate.upgrade(idio_doc))
    html = findings.idio_section(results.runs, findings.Evidence(results.runs), lambda m: f"[{m.kind}]")
    assert html.count('<span class="badge verdict-') == 8
    assert "not applicable here" in html and "not_applicable" not in html and "[published]" in html
    assert all(f"<b>R{i}</b>" in html for i in range(1, 8))
    assert 'href="#fig-idio-i1_latency"' in html  # I1's row links to its figure
    assert "Reasoning behind each verdict" in html


@pytest.mark.parametrize("func", IDIO_FIGURES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("keep", ["nothing", "not-ok-only", "one-case-each"])
def test_figures_tolerate_subsets(idio_doc, func, keep):
    runs = _runs(idio_doc)
    if keep == "nothing":
        runs = []
    elif keep == "dram-only":
        runs = [r for r in runs if r.param("medium") in ("dram", None)]
    elif keep == "not-ok-only":
        runs = [r for r in runs if not r.ok]
    else:
        seen, subset = set(), []
        for r in runs:
            if r.case not in seen:
                seen.add(r.case)
                subset.append(r)
        runs = subset
    fig = func(runs)
    assert fig is None or isinstance(fig, (Figure, figures.NotMeasured))


def test_schema_rejects_notes_that_are_not_text(idio_doc):
    doc = copy.deepcopy(idio_doc)
    row = next(r for r in doc["runs"] if r["case"] == "classification")
    row["notes"]["verdict"] = 3
    problems = schema.validate(doc)
    assert any("notes" in p and "verdict must be a string" in p for p in problems)
    row["notes"] = "present"
    assert any("notes must be an object" in p for p in schema.validate(doc))


def test_figures_draw_with_dram_only(idio_doc):
    runs = [r for r in _runs(idio_doc) if r.param("medium") in ("dram", None)]
    results = figures.build("idio", runs)
    assert [r.error for r in results] == [None] * len(IDIO_FIGURES)
    i2 = idio.i2_bandwidth(runs)
    assert [ax.get_title() for ax in i2.axes] == ["medium: dram"]


def test_notes_reach_the_model(idio_doc):
    rows = [r for r in _runs(idio_doc) if r.case == "recommendation"]
    assert len(rows) == 7
    assert all(r.notes.get("impact_class") for r in rows)
