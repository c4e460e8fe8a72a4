"""pmlab compare and pmlab export through the CLI, on real runs."""

import csv
import json


def _run(pmlab, out, line_flush):
    proc = pmlab("run", "core.persist", "--quick", "--filter", f"medium:dram/domain:adr/flush:{line_flush}/size:64/pattern:seq",
                 "--ops", "2000", "--no-progress", "--out", out)
    assert proc.returncode == 0, proc.stderr
    return out


def test_compare_two_runs_and_export_them(pmlab, shm_dir, line_flush):
    a = _run(pmlab, shm_dir / "a", line_flush)
    b = _run(pmlab, shm_dir / "b", line_flush)
    proc = pmlab("compare", a, b, "--threshold", "5%", "--html", shm_dir / "cmp.html")
    # One sample a side: changes are reported, none is called significant.
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "metrics compared" in proc.stdout
    assert (shm_dir / "cmp.html").exists()
    assert pmlab("compare", a, shm_dir / "missing").returncode == 3

    proc = pmlab("export", a, "--format", "csv")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((a / "results.json").read_text())
    with open(a / "results.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["metric"]]
    assert len(rows) == sum(len(r["metrics"]) for r in doc["runs"])
    assert pmlab("export", a, "--format", "xml").returncode == 2


def test_python_side_errors_read_like_pmlab_s_own(pmlab, shm_dir):
    missing = shm_dir / "missing"
    for args, code in ((["compare", missing, missing, "--threshold", "lots"], 2), (["compare", missing, missing], 3),
                       (["export", missing], 3), (["report", missing], 3)):
        proc = pmlab(*args)
        assert proc.returncode == code, (args, proc.stderr)
        assert proc.stderr.startswith("pmlab: error: ") and proc.stderr.count("\n") == 1, (args, proc.stderr)
