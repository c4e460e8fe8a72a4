"""crash.exec_cost: what tracing a PMDK example costs, with Valgrind as a peer in the same run when it is
installed, and a note saying why not when it is not."""
import json
import os
import shutil

import pytest


def _cost_run(pmlab, out, env=None):
    proc = pmlab("run", "crash.exec_cost", "--quick", "--repetitions", "1", "--out", out, env=env)
    assert proc.returncode == 0, proc.stderr
    runs = [r for r in json.loads((out / "results.json").read_text())["runs"] if r["case"] == "exec_cost"]
    assert len(runs) == 1
    if runs[0]["status"] == "skipped":
        pytest.skip(runs[0]["reason"])
    assert runs[0]["status"] == "ok", runs[0]
    return runs[0]


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_valgrind_runs_beside_the_traced_program(pmlab, shm_dir):
    run = _cost_run(pmlab, shm_dir / "with")
    m = run["metrics"]
    for name in ("valgrind_none_seconds", "valgrind_none_slowdown", "traced_vs_valgrind_none"):
        assert m[name]["value"] > 0, name
    # A difference of two medians, which noise can take below zero at the quick tour's 200 inserts.
    assert "valgrind_none_us_per_insert" in m
    # One sample a round, each side's process timed in the same round.
    assert m["traced_vs_valgrind_none"]["stats"]["n"] == m["tracing_slowdown"]["stats"]["n"] == 5
    assert {t["metric"] for t in run["targets"]} == {"tracing_slowdown", "traced_vs_valgrind_none"}
    assert "valgrind" not in run.get("notes", {})


def test_without_valgrind_the_run_says_so(pmlab, shm_dir, tmp_path):
    # A PATH with the setup's tools and no valgrind (on merged-/usr systems /bin holds it too).
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("rm", "sh"):
        os.symlink(shutil.which(tool), bin_dir / tool)
    run = _cost_run(pmlab, shm_dir / "without", env={"PATH": str(bin_dir)})
    assert "not installed" in run["notes"]["valgrind"]
    assert "valgrind_none_seconds" not in run["metrics"]
    assert [t["metric"] for t in run["targets"]] == ["tracing_slowdown"]
    assert run["metrics"]["tracing_slowdown"]["value"] > 1
