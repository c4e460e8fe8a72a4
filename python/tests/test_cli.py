import json
import os
import subprocess
import sys

import pytest

from conftest import FIXTURES, write_run_dir


def run_cli(python_dir, *args):
    env = dict(os.environ, PYTHONPATH=str(python_dir), MPLBACKEND="Agg")
    return subprocess.run([sys.executable, "-m", "pmlab_report", *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=60)


def test_writes_report_into_run_dir(tmp_path, python_dir, partial_doc):
    run_dir = write_run_dir(tmp_path / "run", partial_doc)
    result = run_cli(python_dir, run_dir)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(run_dir / "report.html")
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    assert html.count("<img ") == 3
    assert result.stderr == ""


def test_out_option(tmp_path, python_dir, partial_doc):
    run_dir = write_run_dir(tmp_path / "run", partial_doc)
    out = tmp_path / "elsewhere.html"
    result = run_cli(python_dir, run_dir, "--out", out)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(out)
    assert out.exists() and not (run_dir / "report.html").exists()


def _assert_input_error(result, message):
    assert result.returncode == 3
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("pmlab report: error: ")
    assert message in lines[0]
    assert "Traceback" not in result.stderr


def test_missing_results(tmp_path, python_dir):
    result = run_cli(python_dir, tmp_path / "no-such-run")
    _assert_input_error(result, "cannot read")
    assert "No such file or directory" in result.stderr


def test_unreadable_results(tmp_path, python_dir):
    (tmp_path / "results.json").mkdir()  # a directory where the file should be
    result = run_cli(python_dir, tmp_path)
    _assert_input_error(result, "cannot read")


def test_non_json(tmp_path, python_dir):
    run_dir = write_run_dir(tmp_path, "this is not json")
    _assert_input_error(run_cli(python_dir, run_dir), "is not valid JSON")


def test_unknown_schema_version(tmp_path, python_dir, partial_doc):
    partial_doc["schema_version"] = 7
    run_dir = write_run_dir(tmp_path, partial_doc)
    result = run_cli(python_dir, run_dir)
    _assert_input_error(result, "unsupported schema_version 7 (this reader knows 1)")
    assert result.stderr == ("pmlab report: error: unsupported schema_version 7 "
                             "(this reader knows 1)\n")


def test_invalid_metric(tmp_path, python_dir, partial_doc):
    partial_doc["runs"][3]["metrics"] = {"throughput": {"value": 1, "unit": "ops/s", "kind": "?"}}
    run_dir = write_run_dir(tmp_path, partial_doc)
    _assert_input_error(run_cli(python_dir, run_dir),
                        "runs[3].metrics.throughput: kind must be measured, modelled or published")


def test_several_problems_are_counted(tmp_path, python_dir, partial_doc):
    for run in partial_doc["runs"]:
        del run["name"]
    run_dir = write_run_dir(tmp_path, partial_doc)
    _assert_input_error(run_cli(python_dir, run_dir), "runs[0]: missing name (and 6 more problems)")


@pytest.mark.parametrize("args", [[], ["a", "b"], ["--bogus", "x"]])
def test_bad_usage(python_dir, args):
    result = run_cli(python_dir, *args)
    assert result.returncode == 2
    assert "usage:" in result.stderr
    assert "pmlab report: error:" in result.stderr


def test_unwritable_output(tmp_path, python_dir, partial_doc):
    run_dir = write_run_dir(tmp_path / "run", partial_doc)
    result = run_cli(python_dir, run_dir, "--out", tmp_path / "missing-dir" / "r.html")
    assert result.returncode == 3
    assert result.stderr.startswith("pmlab report: error: cannot write ")
    assert "Traceback" not in result.stderr
