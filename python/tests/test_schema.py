import json
import os

import pytest

from pmlab_report import schema


def _problems(doc):
    return schema.validate(doc)


def _run_index(doc, predicate):
    return next(i for i, r in enumerate(doc["runs"]) if predicate(r))


def test_fixtures_are_valid(quick_doc, partial_doc):
    assert _problems(quick_doc) == []
    assert _problems(partial_doc) == []


def test_unknown_schema_version_is_rejected(quick_doc):
    quick_doc["schema_version"] = 7
    assert _problems(quick_doc) == ["unsupported schema_version 7 (this reader knows 1, 2, 3)"]


@pytest.mark.parametrize("value, expected", [
    ("1", "schema_version must be an integer (got string)"),
    (True, "schema_version must be an integer (got boolean)"),
])
def test_schema_version_must_be_integer(quick_doc, value, expected):
    quick_doc["schema_version"] = value
    assert _problems(quick_doc) == [expected]


def test_missing_schema_version(quick_doc):
    del quick_doc["schema_version"]
    assert _problems(quick_doc) == ["missing schema_version"]


def test_top_level_must_be_object():
    assert _problems([1, 2]) == ["top level must be an object (got array)"]


def test_metric_without_kind(quick_doc):
    del quick_doc["runs"][3]["metrics"]["throughput"]["kind"]
    assert _problems(quick_doc) == [
        "runs[3].metrics.throughput: missing kind (must be measured, modelled or published)"]


def test_metric_with_unknown_kind(quick_doc):
    quick_doc["runs"][3]["metrics"]["throughput"]["kind"] = "guessed"
    assert _problems(quick_doc) == [
        'runs[3].metrics.throughput: kind must be measured, modelled or published (got "guessed")']


def test_modelled_metric_without_model(quick_doc):
    i = _run_index(quick_doc, lambda r: r["suite"] == "other")
    del quick_doc["runs"][i]["metrics"]["ewr"]["model"]
    assert _problems(quick_doc) == [
        f"runs[{i}].metrics.ewr: modelled metric needs model (the model's name)"]


def test_published_metric_without_source(quick_doc):
    i = _run_index(quick_doc, lambda r: r["suite"] == "other")
    quick_doc["runs"][i]["metrics"]["ewr_published"]["source"] = ""
    assert _problems(quick_doc) == [
        f"runs[{i}].metrics.ewr_published: published metric needs source "
        "(where the number comes from)"]


def test_run_without_name(quick_doc):
    del quick_doc["runs"][5]["name"]
    assert _problems(quick_doc) == ["runs[5]: missing name"]


def test_metric_value_must_be_number_or_null(quick_doc):
    quick_doc["runs"][0]["metrics"]["bandwidth"]["value"] = "fast"
    quick_doc["runs"][1]["metrics"]["bandwidth"]["value"] = None  # null is allowed
    assert _problems(quick_doc) == [
        "runs[0].metrics.bandwidth: value must be a number (got string)"]


def test_error_run_needs_reason(quick_doc):
    i = _run_index(quick_doc, lambda r: r["status"] == "error")
    quick_doc["runs"][i]["reason"] = None
    assert _problems(quick_doc) == [f"runs[{i}]: reason must not be null"]


def test_error_run_may_omit_metrics(quick_doc):
    i = _run_index(quick_doc, lambda r: r["status"] == "error")
    del quick_doc["runs"][i]["metrics"]
    assert _problems(quick_doc) == []


def test_bad_status(quick_doc):
    quick_doc["runs"][0]["status"] = "failed"
    assert _problems(quick_doc) == [
        "runs[0]: status must be ok, error or skipped (got 'failed')"]


def test_name_must_match_suite_case_and_params(quick_doc):
    quick_doc["runs"][0]["name"] = "core.other/medium:dram"
    quick_doc["runs"][1]["params"]["extra"] = 1
    assert _problems(quick_doc) == [
        "runs[0]: name 'core.other/medium:dram' must start with 'core.persist' (suite.case)",
        f"runs[1]: name {quick_doc['runs'][1]['name']!r} lacks '/extra:…' for params.extra "
        "(in parameter order)",
    ]


def test_duplicate_run_names(quick_doc):
    quick_doc["runs"].append(dict(quick_doc["runs"][0]))
    n = len(quick_doc["runs"]) - 1
    assert _problems(quick_doc) == [f"runs[{n}]: name {quick_doc['runs'][0]['name']!r} duplicates runs[0]"]


def test_context_problems_have_paths(quick_doc):
    quick_doc["context"]["cpu"]["logical_cpus"] = "two"
    quick_doc["context"]["pool"]["medium"] = "tape"
    del quick_doc["context"]["run_id"]
    assert _problems(quick_doc) == [
        "context: missing run_id",
        "context.cpu: logical_cpus must be an integer (got string)",
        "context.pool: medium must be pmem or emulated (got 'tape')",
    ]


def test_unknown_keys_are_allowed(quick_doc):
    quick_doc["new_top_level"] = {"x": 1}
    quick_doc["context"]["new_context_key"] = "y"
    quick_doc["runs"][0]["metrics"]["new_metric"] = {"value": 1, "unit": "count", "kind": "measured"}
    assert _problems(quick_doc) == []


def test_all_problems_are_reported(quick_doc):
    for run in quick_doc["runs"][:3]:
        del run["metrics"]["throughput"]["unit"]
    assert len(_problems(quick_doc)) == 3


def test_read_rejects_non_json(tmp_path):
    path = tmp_path / "results.json"
    path.write_text("{ not json", encoding="utf-8")
    with pytest.raises(schema.ResultsError) as err:
        schema.read(path)
    assert "is not valid JSON" in err.value.summary()
    assert "line 1 column 3" in err.value.summary()


def test_read_rejects_nan(tmp_path):
    path = tmp_path / "results.json"
    path.write_text('{"schema_version": 1, "x": NaN}', encoding="utf-8")
    with pytest.raises(schema.ResultsError, match="NaN is not valid JSON"):
        schema.read(path)


def test_read_missing_file(tmp_path):
    with pytest.raises(schema.ResultsError, match="cannot read .*results.json: No such file"):
        schema.read(tmp_path / "results.json")


def test_load_raises_with_summary(tmp_path, quick_doc):
    for run in quick_doc["runs"][:3]:
        run["status"] = "bogus"
    path = tmp_path / "results.json"
    path.write_text(json.dumps(quick_doc), encoding="utf-8")
    with pytest.raises(schema.ResultsError) as err:
        schema.load(path)
    assert err.value.summary() == (
        "runs[0]: status must be ok, error or skipped (got 'bogus') (and 2 more problems)")


def test_a_number_too_large_for_a_double_is_named(tmp_path, quick_doc):
    # Python reads 1e400 as infinity; the message must not read "must be a number (got number)".
    text = json.dumps(quick_doc)
    first = next(iter(quick_doc["runs"][0]["metrics"]))
    text = text.replace(json.dumps(quick_doc["runs"][0]["metrics"][first]["value"]), "1e400", 1)
    path = tmp_path / "results.json"
    path.write_text(text)
    with pytest.raises(schema.ResultsError) as caught:
        schema.load(path)
    assert "got a number too large for a double" in caught.value.summary()


def test_interrupted_is_an_optional_boolean(quick_doc):
    quick_doc["context"]["interrupted"] = True
    assert schema.validate(quick_doc) == []
    quick_doc["context"]["interrupted"] = "yes"
    assert schema.validate(quick_doc) == ["context: interrupted must be a boolean (got string)"]


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "results.json"
    os.mkfifo(fifo)
    with pytest.raises(schema.ResultsError) as caught:
        schema.load(fifo)
    assert "not a regular file" in caught.value.summary()
