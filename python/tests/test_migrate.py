"""Version-1 results read as version 2 (pmlab_report/migrate.py): the *_met flags gone, targets kept or
stated from the flags, version-2 documents untouched."""
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
    assert up["schema_version"] == migrate.CURRENT_VERSION == 2
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


def test_version_2_is_read_as_it_is():
    doc = _doc([_run("ds.target/workload:a", {"ratio": _metric(2.2)})], version=2)
    assert migrate.upgrade(doc) is doc


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
    assert loaded["schema_version"] == 2
    upgraded = next(r for r in loaded["runs"] if r["name"] == run["name"])
    assert (upgraded["targets"][0]["metric"], upgraded["targets"][0]["verdict"]) == (judged, "missed")
    assert "overhead_target_met" not in upgraded["metrics"]
