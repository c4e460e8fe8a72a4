"""Older results read as the current version (pmlab_report/migrate.py): version 1's *_met flags gone,
targets kept or stated from the flags; version 2's idio prose turned into the tokens version 3 records;
version-3 documents untouched."""
from __future__ import annotations

import copy
import json

from pmlab_report import migrate, schema


def _metric(value, unit="ratio", kind="measured"):
    return {"value": value, "unit": unit, "kind": kind}


def _doc(runs, version=1):
    return {"schema_version": version, "pmlab_version": "0.1.0", "context": {}, "runs": runs}


def _run(name, metrics, targets=None):
    run = {"name": name, "suite": name.split(".")[0], "case": name.split(".")[1].split("/")[0], "params": {},
           "status": "ok", "reason": None, "metrics": metrics}
    if targets is not None:
        run["targets"] = targets
    return run


def test_flags_without_targets_become_targets():
    doc = _doc([
        _run("primitives.log_target/size:64", {"zero_vs_pmemlog": _metric(2.5), "target": _metric(3.0),
                                              "target_met": _metric(0.0, "bool")}),
        _run("core.overhead/size:64", {"overhead_ratio": _metric(1.01), "overhead_target": _metric(1.05),
                                       "overhead_target_met": _metric(1.0, "bool")})])
    before = copy.deepcopy(doc)
    up = migrate.upgrade(doc)
    assert doc == before  # the argument is left as it was
    assert up["schema_version"] == migrate.CURRENT_VERSION == 3
    log, overhead = up["runs"]
    assert "target_met" not in log["metrics"] and "overhead_target_met" not in overhead["metrics"]
    assert log["targets"] == [{"metric": "zero_vs_pmemlog", "label": "zero_vs_pmemlog", "threshold": 3.0,
                               "direction": "at_least", "value": 2.5, "verdict": "missed"}]
    (t,) = overhead["targets"]
    assert (t["metric"], t["direction"], t["verdict"]) == ("overhead_ratio", "at_most", "met")


def test_flags_beside_targets_are_dropped_and_the_targets_kept():
    target = {"metric": "ratio", "label": "ours vs PMDK's", "threshold": 2.0, "direction": "at_least",
              "value": 2.2, "ci_low": 1.9, "ci_high": 2.4, "verdict": "unclear"}
    up = migrate.upgrade(_doc([_run("ds.target/workload:a", {"ratio": _metric(2.2), "target_met": _metric(0.0, "bool")},
                                    [target])]))
    assert up["runs"][0]["targets"] == [target]
    assert list(up["runs"][0]["metrics"]) == ["ratio"]


def test_version_3_is_read_as_it_is():
    doc = _doc([_run("ds.target/workload:a", {"ratio": _metric(2.2)})], version=3)
    assert migrate.upgrade(doc) is doc


def test_version_2_keeps_flags_it_never_had():
    run = _run("ds.target/workload:a", {"ratio": _metric(2.2), "target_met": _metric(1.0, "bool")})
    up = migrate.upgrade(_doc([run], version=2))
    assert "target_met" in up["runs"][0]["metrics"] and "targets" not in up["runs"][0]


def test_load_upgrades_a_version_1_file(tmp_path, partial_doc):
    doc = copy.deepcopy(partial_doc)
    doc["schema_version"] = 1
    run = next(r for r in doc["runs"] if r.get("targets"))
    judged = run["targets"][0]["metric"]
    del run["targets"]
    run["metrics"]["overhead_target_met"] = _metric(0.0, "bool")
    path = tmp_path / "results.json"
    path.write_text(json.dumps(doc))
    loaded = schema.load(path)
    assert loaded["schema_version"] == 3
    upgraded = next(r for r in loaded["runs"] if r["name"] == run["name"])
    assert (upgraded["targets"][0]["metric"], upgraded["targets"][0]["verdict"]) == (judged, "missed")
    assert "overhead_target_met" not in upgraded["metrics"]


def _idio_row(case, ident, notes):
    key = "idiosyncrasy" if case == "classification" else "rule"
    run = _run(f"idio.{case}/{key}:{ident}", {})
    run["params"] = {key: ident}
    run["notes"] = notes
    return run


def test_version_2_idio_prose_becomes_tokens():
    skipped = ("Not applicable here: one NUMA node (node 0): remote p-store bandwidth needs at least two. "
               "[PMIdioBench] attributes it to the mesh interconnect and the XPPrefetcher (classes C1, C2*, C3, C4*).")
    counters = ("Not applicable here: a read-modify-write inside the device shows only in media counters (EWR, RWR); "
                "this platform exposes none and no device model was attached. [PMIdioBench] attributes it to the "
                "XPBuffer design (classes C4).")
    emulated = ("x: pool 3.00x, DRAM 1.10x. Present, but the pool is emulated (DRAM pages behind a file), so nothing "
                "here is PMEM-specific: …")
    doc = _doc([
        _idio_row("classification", "I4", {"verdict": "not applicable here", "reasoning": skipped}),
        _idio_row("classification", "I7", {"verdict": "not applicable here", "reasoning": counters}),
        _idio_row("classification", "I2", {"verdict": "not applicable here", "reasoning":
                  "Not applicable here: no successful run measured the effect on the pool. [PMIdioBench] …"}),
        _idio_row("classification", "I3", {"verdict": "present", "pmem_specific": "no", "reasoning": emulated}),
        _idio_row("recommendation", "R7", {"impact_class": "not measured here", "reasoning": "Not measured …"}),
        _idio_row("recommendation", "R1", {"impact_class": "high", "reasoning": "A p-store costs …"}),
    ], version=2)
    i4, i7, i2, i3, r7, r1 = (r["notes"] for r in migrate.upgrade(doc)["runs"])
    assert i4 == {"verdict": "not_applicable", "not_applicable_because": "runs_skipped",
                  "skip_reason": "one NUMA node (node 0): remote p-store bandwidth needs at least two",
                  "pool_emulated": "no", "present_at": "1.2", "specific_at": "1.25"}
    assert (i7["verdict"], i7["not_applicable_because"]) == ("not_applicable", "no_media_counters")
    assert i2["not_applicable_because"] == "no_pool_runs"
    assert (i3["verdict"], i3["pool_emulated"]) == ("present", "yes")
    assert "not_applicable_because" not in i3 and "reasoning" not in i3
    assert r7 == {"impact_class": "not_measured"}
    assert r1 == {"impact_class": "high"}
