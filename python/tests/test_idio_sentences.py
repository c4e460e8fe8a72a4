"""The words of the idio verdicts (pmlab_report/idio_sentences.py): each sentence says what a row records,
for every verdict, cause and impact class; and a version-2 file's rows, upgraded, read as its writer wrote them."""

import json
import pathlib
import re

import pytest

from pmlab_report import findings, idio_sentences, migrate, model

FIXTURE = pathlib.Path(__file__).resolve().parent / "fixtures" / "idio_quick.json"


def _metric(value, kind="measured"):
    metric = {"value": value, "unit": "ratio", "kind": kind}
    if kind == "modelled":
        metric["model"] = "dcpmm"
    if kind == "published":
        metric["source"] = "[PMIdioBench] sheet"
    return metric


def _classification(ident, notes, pool=None, dram=None, pool_kind="measured", published=None):
    metrics = {"effect_pool": _metric(pool, pool_kind), "effect_dram": _metric(dram)}
    if published is not None:
        metrics["effect_published_pmem"] = _metric(published[0], "published")
        metrics["effect_published_dram"] = _metric(published[1], "published")
    base = {"idiosyncrasy": "Name", "effect": "a / b", "root_cause": "the cause", "applicability": "C4",
            "pmem_specific": "unknown", "pool_emulated": "no", "present_at": "1.2", "specific_at": "1.25"}
    return model.run_from_dict(0, {"name": f"idio.classification/idiosyncrasy:{ident}", "suite": "idio",
                                   "case": "classification", "params": {"idiosyncrasy": ident}, "status": "ok",
                                   "reason": None, "metrics": metrics, "notes": {**base, **notes}})


def _recommendation(ident, impact_class, pool=None, dram=None):
    return model.run_from_dict(0, {"name": f"idio.recommendation/rule:{ident}", "suite": "idio",
                                   "case": "recommendation", "params": {"rule": ident}, "status": "ok",
                                   "reason": None, "metrics": {"impact_pool": _metric(pool),
                                                               "impact_dram": _metric(dram)},
                                   "notes": {"impact_class": impact_class, "published_impact": "High (C4)"}})


@pytest.mark.parametrize("notes, pool, dram, expected", [
    ({"verdict": "present", "pmem_specific": "yes"}, 3.0, 1.5,
     "a / b: pool 3.00×, DRAM 1.50×. Present and PMEM-specific here: the pool shows it 2.00× as strongly as DRAM"),
    ({"verdict": "present", "pmem_specific": "no"}, 3.0, 2.9, "Present, but DRAM shows it as well"),
    ({"verdict": "present"}, 3.0, None, "a / b: pool 3.00×, DRAM n/a. Present on the pool; without a DRAM effect"),
    ({"verdict": "present", "pmem_specific": "no", "pool_emulated": "yes"}, 3.0, 1.1,
     "Present, but the pool is emulated (DRAM pages behind a file), so nothing here is PMEM-specific: the "
     "pool/DRAM difference (2.73×) comes from the mapping or from noise ([PMIdioBench] names the cause; classes C4)."),
    ({"verdict": "absent"}, 1.1, 1.0,
     "Absent: below the 1.20× threshold on the pool. [PMIdioBench] attributes it to the cause (classes C4)"),
])
def test_each_verdict_in_words(notes, pool, dram, expected):
    assert expected in idio_sentences.classification_reason(_classification("I3", notes, pool, dram))


@pytest.mark.parametrize("because, expected", [
    ({"not_applicable_because": "no_pool_runs"}, "no successful run measured the effect on the pool."),
    ({"not_applicable_because": "no_paired_runs"}, "no local/remote pair of runs succeeded."),
    ({"not_applicable_because": "no_media_counters"}, "shows only in media counters (EWR, RWR)"),
    ({"not_applicable_because": "runs_skipped", "skip_reason": "one NUMA node"}, ": one NUMA node. [PMIdioBench]"),
])
def test_each_cause_of_not_applicable_in_words(because, expected):
    text = idio_sentences.classification_reason(_classification("I4", {"verdict": "not_applicable", **because}))
    assert text.startswith("Not applicable here: ") and expected in text
    assert text.endswith("[PMIdioBench] attributes it to the cause (classes C4).")


def test_modelled_effects_and_published_numbers_are_said():
    row = _classification("I7", {"verdict": "present"}, 1.8, None, pool_kind="modelled", published=(1.79, None))
    text = idio_sentences.classification_reason(row)
    assert text.endswith("The effect is modelled (device model), not measured. Published on DCPMM: 1.79× (DRAM n/a).")


def test_impacts_in_words():
    text = idio_sentences.recommendation_reason(_recommendation("R1", "high", 10.9, 10.8))
    assert text == ("A p-store costs this many loads (I1, cached data). Impact here: pool 10.90× (high), "
                    "DRAM 10.80×. Published impact ([PMIdioBench] Table 4): High (C4).")
    i4 = _classification("I4", {"verdict": "not_applicable", "not_applicable_because": "runs_skipped",
                                "skip_reason": "one NUMA node"})
    r4 = idio_sentences.recommendation_reason(_recommendation("R4", "not_measured"), [i4])
    assert r4.startswith("Not measured: one NUMA node. Impact here: pool n/a (not measured here), DRAM n/a.")
    assert idio_sentences.verdict_word("not_applicable") == "not applicable here"


def test_a_version_2_file_reads_as_its_writer_wrote_it():
    with open(FIXTURE, encoding="utf-8") as handle:
        doc = json.load(handle)
    assert doc["schema_version"] == 2
    written = {r["name"]: r["notes"]["reasoning"] for r in doc["runs"]
               if r["case"] in ("classification", "recommendation")}
    runs = model.from_document(migrate.upgrade(doc)).runs
    classifications = [r for r in runs if r.case == "classification"]
    for run in runs:
        if run.case == "classification":
            said = idio_sentences.classification_reason(run)
        elif run.case == "recommendation" and run.param("rule") != "R7":  # R7's pointer to the study moved since
            said = idio_sentences.recommendation_reason(run, classifications)
        else:
            continue
        assert said == re.sub(r"(\d\.\d\d)x", r"\1×", written[run.name]), run.name  # the writer wrote 2.00x
    html = findings.idio_section(runs, findings.Evidence(runs), lambda m: "")
    assert "What each impact measures" in html and "Not measured: one NUMA node (node 0)" in html
