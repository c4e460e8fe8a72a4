"""The findings section, the decisions' bootstrap, target and warning collection, and the schema of
stats / at_timer_floor / targets / checks, on small synthetic documents."""

import copy
import re

import pytest

from pmlab_report import decisions, findings, model, render, schema, tables
from pmlab_report.model import Metric, Run


def _run(index, case, params, metrics, suite="primitives", status="ok", reason=None, targets=()):
    name = f"{suite}.{case}" + "".join(f"/{k}:{v}" for k, v in params.items())
    return Run(index=index, name=name, suite=suite, case=case, params=params, status=status, reason=reason,
               metrics=metrics, targets=tuple(targets))


def _throughput(samples):
    ordered = sorted(samples)
    median = ordered[len(ordered) // 2]
    stats = {"n": len(samples), "samples": list(samples), "median": median, "over": "repetitions"}
    return Metric(median, "ops/s", "measured", stats=stats if len(samples) > 1 else None)


def _log_runs(zero, classic, sizes=(64,)):
    runs = []
    for size in sizes:
        for writer, samples in (("zero", zero), ("classic", classic)):
            runs.append(_run(len(runs), "log_append", {"medium": "pool", "domain": "adr", "flush": "clwb",
                                                      "writer": writer, "size": size, "threads": 1},
                             {"throughput": _throughput(samples)}))
    return runs


CONTEXT = {"durability_domain": "adr", "flush_instruction": "clwb"}


def _log_decision():
    return next(d for d in decisions.decisions(CONTEXT) if d.case == "log_append")


# --------------------------------------------------------------------------- decisions


def test_bootstrap_interval_brackets_the_ratio_and_is_reproducible():
    winner = [[10.0, 10.2, 9.9, 10.1, 10.05]]
    runner = [[5.0, 5.1, 4.9, 5.05, 4.95]]
    first = decisions.bootstrap_ratio(winner, runner)
    assert first == decisions.bootstrap_ratio(winner, runner)  # fixed seed
    low, high = first
    assert 1.9 < low <= 2.0 <= high < 2.1


def test_bootstrap_needs_two_samples_per_side():
    assert decisions.bootstrap_ratio([[10.0]], [[5.0, 5.1]]) is None


def test_winner_by_median_with_a_confidence_interval():
    runs = _log_runs(zero=[9.0e6, 9.2e6, 8.8e6, 30e6, 9.1e6], classic=[3.0e6, 3.1e6, 2.9e6, 3.05e6, 2.95e6])
    outcome = decisions.decide(_log_decision(), runs)
    (answer,) = outcome.answers
    assert answer.winner == "zero" and answer.runner_up == "classic"
    assert answer.ratio == pytest.approx(9.1e6 / 3.0e6)  # medians: the 30e6 outlier does not count
    assert answer.ci is not None and answer.ci[0] > 1
    assert "threads 1" in outcome.compared and "medium pool" in outcome.compared


def test_single_sample_says_so():
    runs = _log_runs(zero=[9e6], classic=[3e6])
    (answer,) = decisions.decide(_log_decision(), runs).answers
    assert answer.ci is None
    assert "one sample, no CI" in findings._ratio_text(answer)


def test_an_interval_reaching_one_is_not_called_a_difference():
    runs = _log_runs(zero=[9.0e6, 9.6e6, 8.7e6, 9.4e6], classic=[8.9e6, 9.3e6, 9.1e6, 8.8e6])
    (answer,) = decisions.decide(_log_decision(), runs).answers
    assert answer.ci[0] <= 1.0
    assert "not distinguishable" in findings._ratio_text(answer)


def test_each_contender_at_its_best_option():
    runs = []
    for writer, padding, value in (("zero", "none", 5e6), ("zero", "line", 9e6), ("classic", "none", 3e6),
                                   ("classic", "line", 2e6)):
        runs.append(_run(len(runs), "log_append", {"writer": writer, "padding": padding, "size": 64,
                                                  "threads": 1}, {"throughput": _throughput([value])}))
    (answer,) = decisions.decide(_log_decision(), runs).answers
    assert answer.winner == "zero (padding line)" and answer.runner_up == "classic (padding none)"
    assert answer.ratio == pytest.approx(3.0)


def test_no_runs_is_said():
    outcome = decisions.decide(_log_decision(), [])
    assert outcome.missing and not outcome.answers


def _decision(question_start):
    return next(d for d in decisions.decisions(CONTEXT) if d.question.startswith(question_start))


def _ptm_runs(throughputs, durability="pdram"):
    runs = []
    for workload in ("sps-1", "bank"):
        for ptm, value in throughputs.items():
            runs.append(_run(len(runs), "tx", {"ptm": ptm, "durability": durability, "workload": workload,
                                               "threads": 1, "medium": "dram"},
                             {"throughput": _throughput([value])}, suite="ptm"))
    return runs


def test_the_volatile_ptm_is_a_reference_never_the_answer():
    runs = _ptm_runs({"undo": 2e6, "redo": 3e6, "volatile": 9e6})
    (answer,) = decisions.decide(_decision("PTM"), runs).answers
    assert (answer.winner, answer.runner_up, answer.contenders) == ("redo", "undo", 2)
    assert answer.reference == ("volatile (no failure atomicity, reference)", pytest.approx(9e6))


def test_a_lone_failure_atomic_ptm_has_nothing_to_beat():
    outcome = decisions.decide(_decision("PTM"), _ptm_runs({"undo": 2e6, "volatile": 9e6}))
    assert not outcome.answers and outcome.missing


def _use_html(doc, runs):
    """The "On this machine, use" section of DOC's context with RUNS as its only runs."""
    doc = {**doc, "runs": [{"name": r.name, "suite": r.suite, "case": r.case, "params": r.params, "status": "ok",
                            "metrics": {"throughput": {"value": r.metrics["throughput"].value, "unit": "ops/s",
                                                       "kind": "measured"}}} for r in runs]}
    results = model.from_document(doc)
    return findings.use_section(results, findings.Evidence(results.runs))


def test_the_ptm_reference_is_shown_beside_the_answer(quick_doc):
    html = _use_html(quick_doc, _ptm_runs({"undo": 2e6, "redo": 3e6, "volatile": 9e6}))
    row = html[html.index("PTM, by durability domain"):]
    assert "<b>redo</b>" in row and "<b>volatile" not in row
    assert "volatile (no failure atomicity, reference): 9.00 M transactions/s" in row
    assert "failure-atomic designs only; 2 contenders" in row


def _ycsb_runs(throughputs):
    runs = []
    for workload in ("a", "c"):
        for structure, value in throughputs.items():
            mode = "pmdk" if structure.startswith("pmdk-") else "persist"
            runs.append(_run(len(runs), "ycsb", {"structure": structure, "mode": mode, "medium": "pool",
                                                 "breakdown": "none", "workload": workload, "threads": 1},
                             {"throughput": _throughput([value])}, suite="ds"))
    return runs


def test_the_array_never_answers_for_maps_of_any_keys():
    runs = _ycsb_runs({"array": 9e6, "hashtable": 4e6, "bptree": 3e6, "pmdk-btree": 1e6})
    outcome = decisions.decide(_decision("Crash-consistent map for any keys"), runs)
    assert [a.winner for a in outcome.answers] == ["hashtable (mode persist)"] * 2
    assert {a.runner_up for a in outcome.answers} == {"bptree (mode persist)"}
    assert all(a.contenders == 3 for a in outcome.answers)
    assert "the array is left out" in outcome.compared


def test_dense_keys_set_the_array_against_the_best_map():
    dense = _decision("Dense integer keys")
    runs = _ycsb_runs({"array": 9e6, "hashtable": 4e6, "bptree": 3e6, "pmdk-btree": 1e6})
    answer = decisions.decide(dense, runs).answers[0]
    assert (answer.winner, answer.runner_up, answer.ratio) == \
        ("array (mode persist)", "hashtable (mode persist)", pytest.approx(9 / 4))
    assert answer.contenders == 4
    # When a map beats the array, the array is still the other side, not the second map.
    runs = _ycsb_runs({"array": 2e6, "hashtable": 4e6, "bptree": 3e6})
    answer = decisions.decide(dense, runs).answers[0]
    assert (answer.winner, answer.runner_up) == ("hashtable", "array")
    assert decisions.decide(dense, _ycsb_runs({"hashtable": 4e6, "bptree": 3e6})).missing == \
        "no array run to set against the others"


# --------------------------------------------------------------------------- targets


def test_targets_are_the_runners_own():
    run = _run(0, "log_target", {"size": 64}, {"zero_vs_pmemlog": Metric(3.1, "ratio", "measured")},
        targets=[{"metric": "zero_vs_pmemlog", "label": "Zero log vs libpmemlog", "threshold": 3.0,
                  "direction": "at_least", "value": 3.1, "ci_low": 2.8, "ci_high": 3.4, "verdict": "unclear",
                  "why": "the interval straddles the threshold"}])
    (target,) = findings.collect_targets([run])
    assert (target.verdict, target.label, target.ci) == ("unclear", "Zero log vs libpmemlog", (2.8, 3.4))
    html, missed, unclear = findings.targets_section([run], findings.Evidence([run]))
    assert (missed, unclear) == (0, 1)
    assert "3.10 [2.80, 3.40] (target ≥ 3)" in html and "straddles" in html


# --------------------------------------------------------------------------- the rendered section


@pytest.fixture
def enriched_doc(quick_doc):
    doc = copy.deepcopy(quick_doc)
    doc["checks"] = [
        {"kind": "plausibility", "rule": "bandwidth-below-peak", "description": "no bandwidth above the memory peak",
         "verdict": "violated", "runs": [doc["runs"][0]["name"]], "detail": "measured 900 GiB/s",
         "explained": "docs/plausibility.md#bandwidth"},
        {"kind": "cross-check", "rule": "fio-agrees", "description": "our bandwidth within 2x of fio's",
         "verdict": "ok", "runs": [], "detail": None, "explained": None}]
    p50 = doc["runs"][0]["metrics"]["latency_p50"]
    p50["at_timer_floor"] = True
    p50["stats"] = {"n": 3, "samples": [10.0, 10.5, 11.0], "median": 10.5, "ci_low": 10.0, "ci_high": 11.0,
                    "ci_level": 0.95, "over": "repetitions"}
    return doc


def test_enriched_document_is_valid(enriched_doc):
    assert schema.validate(enriched_doc) == []


@pytest.mark.parametrize("mutate, problem", [
    (lambda d: d["checks"][0].update(verdict="bad"), "checks[0]: verdict must be ok, violated or not_applicable"),
    (lambda d: d["checks"][0].update(runs=[3]), "checks[0].runs[0]: must be a string (got number)"),
    (lambda d: d["runs"][0]["metrics"]["latency_p50"]["stats"].update(n=0), "stats: n must be at least 1"),
    (lambda d: d["runs"][0]["metrics"]["latency_p50"]["stats"].update(samples=["x"]), "samples[0]: must be a number"),
    (lambda d: d["runs"][0]["metrics"]["latency_p50"].update(at_timer_floor="yes"), "at_timer_floor must be a boolean"),
    (lambda d: d["runs"][0].update(targets=[{"metric": "x", "threshold": 1, "direction": "above", "value": 1,
                                             "verdict": "met"}]), "direction must be at_least or at_most"),
])
def test_new_fields_are_validated(enriched_doc, mutate, problem):
    mutate(enriched_doc)
    problems = schema.validate(enriched_doc)
    assert len(problems) == 1 and problem in problems[0], problems


def test_findings_come_first_with_banner_warnings_and_floor(enriched_doc):
    html = render.render_report(model.from_document(enriched_doc))
    assert html.index('id="findings"') < html.index('id="context"') < html.index('id="suite-core"')
    findings_html = html[html.index('id="findings"'):html.index('id="context"')]
    assert "The pool is emulated, not persistent memory." in findings_html
    assert "bandwidth-below-peak" in findings_html and "docs/plausibility.md#bandwidth" in findings_html
    assert f'<a href="#run-0">{enriched_doc["runs"][0]["name"]}</a>' in findings_html
    assert "1 value at the timer floor" in findings_html
    assert "fio-agrees" in findings_html  # in the folded list of checks that passed
    # skipped and failed runs: each reason once
    assert findings_html.count("region of 64 MiB needed, pool has 32 MiB") == 1
    assert 'title="within 3× of the timer’s measured resolution' in html and "≤" in html
    assert '<span class="ci"' in html


def test_no_banner_on_real_pmem(quick_doc):
    quick_doc["context"]["pool"].update(medium="pmem", filesystem="ext4-dax")
    html = render.render_report(model.from_document(quick_doc))
    assert "The pool is emulated" not in html
    assert re.search(r'id="use"', html)


# --------------------------------------------------------------------------- tables


def test_settings_apart_and_constant_parameters_said_once():
    runs = [_run(i, "log_target", {"medium": "pool", "size": size}, {
        "throughput": Metric(v, "ops/s", "measured"), "target": Metric(3.0, "ratio", "measured"),
        "forced_domain": Metric(1.0, "bool", "measured"), "threads_pinned": Metric(1.0, "count", "measured")})
        for i, (size, v) in enumerate(((64, 2.0e6), (256, 1.5e6)))]
    html = tables.case_tables(runs, lambda m: '<span class="badge kind-measured">meas</span>')
    measurements, settings = html.split("Settings and target checks")
    assert "Every run: medium = <code>pool</code>" in measurements
    assert "<th>size</th>" in measurements and "<th>medium</th>" not in measurements
    assert "throughput" in measurements and "forced_domain" not in measurements
    assert "forced_domain" in settings and "threads_pinned" in settings and "throughput" not in settings
    assert '<span class="unit">(Mops/s)</span>' in measurements and ">2.00</td>" in measurements


@pytest.mark.parametrize("values, unit, expected", [
    ([120.0, 2500.0, 90.0], "ns", ("ns", 1.0)),
    ([12e3, 25e3, 9e3], "ns", ("µs", 1e3)),
    ([5.0e9, 6.0e9], "B/s", ("GiB/s", 1024.0**3)),
    ([900.0, 3000.0, 40000.0], "MiB/s", ("GiB/s", 1024.0)),
    ([900.0, 300.0], "MiB/s", ("MiB/s", 1.0)),
    ([2.0e6, 3.0e6], "count", ("count, millions", 1e6)),
    ([1.2, 0.8], "ratio", ("ratio", 1.0)),
])
def test_column_scale(values, unit, expected):
    scale = tables.column_scale(values, unit)
    assert (scale.unit, scale.divisor) == expected


def test_figures_ring_values_at_the_timer_floor(quick_doc):
    from pmlab_report.figures import FLOOR_LABEL
    from pmlab_report.suites import core

    def legend(doc):
        runs = [r for r in model.from_document(doc).runs if r.suite == "core"]
        return [t.get_text() for t in core.persist_latency(runs).legends[0].get_texts()]

    assert not any("timer floor" in t for t in legend(quick_doc))
    quick_doc["runs"][0]["metrics"]["latency_p50"]["at_timer_floor"] = True
    assert FLOOR_LABEL.replace(": ", ":\n") in legend(quick_doc)


def test_every_decision_links_to_a_registered_figure():
    from pmlab_report import figures, suites  # noqa: F401  (registers the figures)

    keys = {spec.key for suite in figures.registered_suites() for spec in figures.figures_for(suite)}
    for decision in decisions.decisions(CONTEXT):
        assert decision.figure in keys, decision.figure


def test_decisions_whose_case_did_not_run_are_named_once(quick_doc):
    html = render.render_report(model.from_document(quick_doc))
    use = html[html.index('id="use"'):html.index('id="targets"')]
    assert "Not answered by this run (its case did not run): log writer (primitives.log_append)" in use
    assert "not answered:" not in use
    assert "Flush instruction on the pool" in use  # the core fixture answers this one


def test_a_close_single_sample_call_is_not_made():
    runs = _log_runs(zero=[9.1e6], classic=[9.0e6])
    (answer,) = decisions.decide(_log_decision(), runs).answers
    assert "too close to call" in findings._ratio_text(answer)
    runs = _log_runs(zero=[9.9e6], classic=[9.0e6])
    (answer,) = decisions.decide(_log_decision(), runs).answers
    assert "too close to call" not in findings._ratio_text(answer)


def test_the_two_structure_decisions_are_told_apart(quick_doc):
    html = _use_html(quick_doc, _ycsb_runs({"array": 9e6, "hashtable": 4e6, "bptree": 3e6}))
    maps = html[html.index("Crash-consistent map for any keys, by YCSB workload"):html.index("Dense integer keys")]
    dense = html[html.index("Dense integer keys: the array or the best map, by YCSB workload"):]
    assert "the array is left out: it indexes dense integer keys only; 2 contenders" in maps
    assert "<b>array" not in maps and "<b>hashtable</b>" in maps
    assert "array against the best of 2 others" in dense and "<b>array</b>" in dense
