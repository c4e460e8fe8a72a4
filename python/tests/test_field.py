"""The "Against the field" section on small synthetic results: the measured ratio with its interval beside
the published figures with their source keys, "not published in a comparable form" where no figure shares
our baseline, and families left out when their rows are absent."""

import pathlib
import re

import pytest

from pmlab_report import field, model, render
from pmlab_report.model import Metric, Results, Run

REFERENCES = pathlib.Path(__file__).resolve().parents[2] / "docs" / "references.md"


def _metric(value, unit="ratio", samples=None, kind="measured"):
    stats = None
    if samples:
        stats = {"n": len(samples), "samples": samples, "ci_low": min(samples), "ci_high": max(samples),
                 "ci_level": 0.95, "over": "repetitions"}
    return Metric(value, unit, kind, stats=stats)


def _run(index, suite, case, params, metrics, targets=(), notes=None):
    name = f"{suite}.{case}" + "".join(f"/{k}:{v}" for k, v in params.items())
    return Run(index=index, name=name, suite=suite, case=case, params=params, status="ok", reason=None,
               metrics=metrics, targets=tuple(targets), notes=notes or {})


def _ptm_target(index=0, workload="sps-1"):
    return _run(index, "ptm", "target", {"workload": workload, "ptm": "all", "threads": 1, "medium": "pool"}, {
        "redo_throughput": _metric(5.4e6, "ops/s"),
        "pmdk_throughput": _metric(1.13e6, "ops/s"),
        "redo_vs_pmdk": _metric(4.98, samples=[4.75, 4.98, 5.01]),
        "redo_fences_per_write_tx": _metric(1.0, "count"),
    }, targets=[{"metric": "redo_vs_pmdk", "label": "redo PTM vs PMDK", "threshold": 4.0, "direction": "at_least",
                 "value": 4.98, "ci_low": 4.75, "ci_high": 5.01, "verdict": "met"}])


def _ds_target(index=1, workload="a"):
    return _run(index, "ds", "target", {"structure": "bptree", "peer": "pmdk-btree", "workload": workload,
                                        "threads": 1}, {
        "throughput": _metric(5.06e6, "ops/s"),
        "peer_throughput": _metric(1.34e6, "ops/s"),
        "ratio": _metric(3.65, samples=[3.53, 3.65, 3.89]),
        "ratio_net_of_harness": _metric(3.86),
        "target_ratio": _metric(2.0),
    }, targets=[{"metric": "ratio", "label": "bptree (persist) vs PMDK's pmdk-btree", "threshold": 2.0,
                 "direction": "at_least", "value": 3.65, "ci_low": 3.53, "ci_high": 3.89, "verdict": "met"}])


def _scaling_rows(start=2):
    params = {"ptm": "redo", "durability": "adr", "workload": "hashmap", "medium": "pool", "threads": 2}
    scaling = _run(start, "ptm", "scaling", params, {
        "scaling_target": _metric(1.5),
        "scaling": _metric(1.21, samples=[0.82, 1.21, 1.59]),
        "scaling_near_cores": _metric(1.4, samples=[1.21, 1.59]),
        "scaling_far_cores": _metric(0.82),
    }, targets=[{"metric": "scaling", "threshold": 1.5, "direction": "at_least", "value": 1.21, "ci_low": 0.82,
                 "ci_high": 1.59, "verdict": "unclear"}], notes={"scaling": "throughput at 2 threads / at 1 thread"})
    probed = _run(start + 1, "ptm", "tx", params, {
        "throughput": _metric(9.0e6, "ops/s"),
        "cores_available": _metric(1.98, "count"),
        "core_to_core_ns": _metric(201.0, "ns"),
        "record_handoffs_per_op": _metric(0.0823, "ratio", kind="modelled"),
    })
    return [scaling, probed]


def _results(runs):
    return Results(schema_version=2, pmlab_version="test", context={}, runs=tuple(runs))


def _badge(metric):
    return f"<span class=\"badge\">{metric.kind}</span>"


def _text(html):
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


# --------------------------------------------------------------------------- PTM


def test_ptm_table_has_the_measured_ratio_its_interval_and_the_published_fences():
    html = field.section(_results([_ptm_target()]), _badge)
    text = _text(html)
    assert 'id="field-ptm"' in html
    assert "4.98×" in text and "[4.75, 5.01]" in text
    assert "5.40 Mops/s" in text and "1.13 Mops/s" in text
    # Beside it, the published fence counts with their source key.
    for design, count in (("Quadra", "1"), ("Trinity", "2"), ("RomulusLog", "4")):
        assert f"{design} {count}" in text
    assert "pub [DurableTx]" in text
    # No throughput ratio against PMDK can be quoted: the table says so instead of printing a number.
    assert field.NOT_COMPARABLE in text
    assert "[OneFile]" in text
    assert "as few as Quadra (1)" in text


def test_ptm_verdict_and_fences_are_shown():
    text = _text(field.section(_results([_ptm_target()]), _badge))
    assert "≥ 4" in text and "met" in text
    assert "1.00" in text  # fences per writing transaction, measured


# --------------------------------------------------------------------------- indexes


def test_index_table_has_ratio_interval_net_of_harness_and_the_field_not_comparable():
    html = field.section(_results([_ds_target()]), _badge)
    text = _text(html)
    assert 'id="field-indexes"' in html
    assert "3.65×" in text and "[3.53, 3.89]" in text
    assert "3.86×" in text                      # net of the harness
    assert "≥ 2" in text and "met" in text      # from the run's target
    assert field.NOT_COMPARABLE in text
    # The field's figures are listed with their own baseline and source key, not beside ours.
    assert "up to 8.2×" in text and "[FPTree]" in text
    assert "[RECIPE]" in text


def test_a_comparable_published_figure_stands_beside_ours(monkeypatch):
    comparable = field.Published("SomeTree", "index", "throughput", 2.5, "2.5×", "PMDK's btree", "[FPTree]",
                                 "Table 9", True, beside=("bptree",))
    monkeypatch.setattr(field, "PUBLISHED", field.PUBLISHED + (comparable,))
    html = field.section(_results([_ds_target()]), _badge)
    cell = re.search(r'<td rowspan="1" class="pub">(.*?)</td>', html).group(1)
    assert "SomeTree 2.5×" in _text(cell) and "pub [FPTree]" in _text(cell)
    assert field.NOT_COMPARABLE not in _text(cell)


# --------------------------------------------------------------------------- scaling


def test_scaling_row_shows_ratio_verdict_and_the_probes_of_its_multi_thread_run():
    html = field.section(_results(_scaling_rows()), _badge)
    text = _text(html)
    assert 'id="field-scaling"' in html
    assert "1.21×" in text and "[0.820, 1.59]" in text
    assert "≥ 1.50" in text and "unclear" in text
    assert "1.98" in text and "201 ns" in text   # cores_available, core_to_core_ns of the ptm.tx run
    assert field.NOT_COMPARABLE in text


def test_scaling_row_splits_the_repetitions_by_where_the_cores_were_and_shows_the_modelled_hand_offs():
    html = field.section(_results(_scaling_rows()), _badge)
    text = _text(html)
    assert "cores near (&lt; 100 ns)" in text and "cores apart" in text
    assert "(n = 2)" in text and "0.820× (n = 1)" in text
    assert "0.0823" in text and "record hand-offs per operation" in text
    assert "scale 1.40× on cores near" in text and "0.820× apart" in text   # the statement quotes both


def test_fewer_cores_than_threads_is_flagged():
    rows = _scaling_rows()
    probed = rows[1]
    rows[1] = Run(**{**probed.__dict__, "metrics": {**probed.metrics, "cores_available": _metric(1.2, "count")}})
    html = field.section(_results(rows), _badge)
    assert 'class="caution"' in html


def test_smt_siblings_reading_as_one_core_are_not_flagged():
    rows = _scaling_rows()
    probed = rows[1]
    rows[1] = Run(**{**probed.__dict__, "metrics": {**probed.metrics, "cores_available": _metric(0.98, "count"),
                                                    "physical_cores": _metric(1, "count")}})
    assert 'class="caution"' not in field.section(_results(rows), _badge)


# --------------------------------------------------------------------------- absent families


def test_a_missing_family_is_left_out_without_error():
    html = field.section(_results([_ds_target()]), _badge)
    assert 'id="field-indexes"' in html
    assert 'id="field-ptm"' not in html and 'id="field-scaling"' not in html


def test_no_family_no_section_and_the_report_still_renders():
    other = _run(0, "core", "persist", {"size": 64}, {"throughput": _metric(1e6, "ops/s")})
    assert field.section(_results([other]), _badge) == ""
    page = render.render_report(_results([other]))
    assert 'id="field"' not in page and 'href="#field"' not in page


def test_failed_rows_are_not_shown():
    bad = _ptm_target()
    bad = Run(**{**bad.__dict__, "status": "error", "reason": "crashed"})
    assert field.section(_results([bad]), _badge) == ""


def test_the_report_places_the_section_after_the_findings():
    page = render.render_report(_results([_ptm_target(), _ds_target(), *_scaling_rows()]))
    assert page.index('id="findings"') < page.index('id="field"') < page.index('id="context"')
    assert 'href="#field"' in page


def test_real_fixture_without_stats_or_fence_counts(python_dir):
    import json

    doc = json.loads((python_dir / "tests" / "fixtures" / "ptm_quick.json").read_text(encoding="utf-8"))
    text = _text(field.section(model.from_document(doc), _badge))
    assert "(no CI)" in text                       # these rows kept one sample
    assert "not measured in this run" in text      # no redo_fences_per_write_tx in this older file


# --------------------------------------------------------------------------- the published table


@pytest.mark.parametrize("figure", field.PUBLISHED, ids=lambda p: p.design)
def test_every_published_figure_names_a_recorded_source(figure):
    references = REFERENCES.read_text(encoding="utf-8")
    assert f"`{figure.source}`" in references, f"{figure.source} is not a key of docs/references.md"
    assert figure.where
    if figure.value is None:
        assert not figure.comparable
    else:
        assert figure.text
