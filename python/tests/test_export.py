"""pmlab export: every metric of results.json exactly once, parameters as columns."""

from __future__ import annotations

import csv
import json

from pmlab_report import export


def _metrics(doc):
    return {(r["name"], m): v["value"] for r in doc["runs"] for m, v in (r.get("metrics") or {}).items()}


def test_csv_round_trips_every_metric_once(quick_doc, tmp_path):
    (tmp_path / "results.json").write_text(json.dumps(quick_doc))
    assert export.main([str(tmp_path), "--format", "csv"]) == 0
    with open(tmp_path / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    seen = {}
    for r in rows:
        if not r["metric"]:
            continue
        key = (r["run"], r["metric"])
        assert key not in seen
        seen[key] = float(r["value"]) if r["value"] else None
    expected = _metrics(quick_doc)
    assert set(seen) == set(expected)
    for key, value in expected.items():
        if value is not None:
            assert seen[key] == value
    # Every parameter is a column of its own.
    params = {p for r in quick_doc["runs"] for p in r["params"]}
    assert params <= set(rows[0])


def test_jsonl_rows_and_runs_without_metrics(quick_doc, tmp_path):
    quick_doc["runs"][0]["status"] = "skipped"
    quick_doc["runs"][0]["metrics"] = {}
    quick_doc["runs"][0]["reason"] = "not measurable here"
    quick_doc["runs"][0].pop("histogram", None)
    (tmp_path / "results.json").write_text(json.dumps(quick_doc))
    assert export.main([str(tmp_path), "--format", "jsonl", "--out", str(tmp_path / "x.jsonl")]) == 0
    lines = [json.loads(line) for line in (tmp_path / "x.jsonl").read_text().splitlines()]
    assert sum(1 for line in lines if line["metric"] is not None) == len(_metrics(quick_doc))
    assert any(line["run"] == quick_doc["runs"][0]["name"] and line["metric"] is None for line in lines)


def test_a_parameter_named_like_a_fixed_column_keeps_both():
    assert export.param_column("value") == "param_value"
    assert export.param_column("threads") == "threads"
