import json
import os
import subprocess
import sys

import pytest

from conftest import FIXTURES, write_run_dir


def run_module(python_dir, module, *args):
    env = dict(os.environ, PYTHONPATH=str(python_dir), MPLBACKEND="Agg")
    return subprocess.run([sys.executable, "-m", module, *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=60)


def run_cli(python_dir, *args):
    return run_module(python_dir, "pmlab_report", *args)


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


def _assert_error_line(result, code, message):
    """The README's promise for every subcommand: one line on stderr, `pmlab: error: …`, and CODE."""
    assert result.returncode == code, result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("pmlab: error: "), lines[0]
    assert message in lines[0]


def _assert_input_error(result, message):
    _assert_error_line(result, 3, message)


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
    _assert_input_error(result, "unsupported schema_version 7 (this reader knows 1, 2, 3)")
    assert result.stderr == ("pmlab: error: unsupported schema_version 7 "
                             "(this reader knows 1, 2, 3)\n")


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


@pytest.mark.parametrize("args, message", [
    ([], "the following arguments are required: RUN_DIR"),
    (["a", "b"], "unrecognized arguments: b"),
    (["--bogus", "x"], "unrecognized arguments: --bogus"),
    (["run", "--out", ""], "argument --out: an empty value is not allowed"),
])
def test_bad_usage(python_dir, args, message):
    result = run_cli(python_dir, *args)
    _assert_error_line(result, 2, message)
    assert result.stderr.rstrip().endswith("(see pmlab report --help)")


def test_help_keeps_the_usage(python_dir):
    result = run_cli(python_dir, "--help")
    assert result.returncode == 0
    assert result.stdout.startswith("usage: pmlab report ")
    assert result.stderr == ""


@pytest.mark.parametrize("module, args, code, message", [
    ("pmlab_report.compare", ["MISSING-A", "MISSING-B"], 3, "MISSING-A: no such directory"),
    ("pmlab_report.compare", ["a", "b", "--threshold", "lots"], 2, "'lots' is not a percentage"),
    ("pmlab_report.compare", ["a"], 2, "the following arguments are required: B"),
    ("pmlab_report.export", ["MISSING"], 3, "MISSING/results.json: No such file or directory"),
    ("pmlab_report.export", ["MISSING", "--format", "xml"], 2, "argument --format: invalid choice: 'xml'"),
])
def test_compare_and_export_errors_share_the_prefix(tmp_path, python_dir, module, args, code, message):
    result = run_module(python_dir, module, *[tmp_path / a if a.startswith("MISSING") else a for a in args])
    _assert_error_line(result, code, message)


def test_a_path_cannot_break_the_error_line(tmp_path, python_dir):
    result = run_cli(python_dir, tmp_path / "two\nlines\x1b[31m")
    _assert_input_error(result, "two\\x0alines\\x1b[31m/results.json")


def test_unwritable_output(tmp_path, python_dir, partial_doc):
    run_dir = write_run_dir(tmp_path / "run", partial_doc)
    result = run_cli(python_dir, run_dir, "--out", tmp_path / "missing-dir" / "r.html")
    assert result.returncode == 3
    assert result.stderr.startswith("pmlab: error: cannot write ")
    assert "Traceback" not in result.stderr
