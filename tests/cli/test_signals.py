"""SIGINT and SIGTERM at random moments of a short `pmlab run`: it stops with 128 + the signal (or
finishes first), leaves no temporary pool in /dev/shm, and leaves a valid results.json marked
interrupted, or none at all."""
import json
import pathlib
import random
import signal
import subprocess
import sys
import time

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "python"))
from pmlab_report import schema  # noqa: E402

# A few dozen short runs on DRAM and the pool: about two seconds, long enough to land inside.
RUN = ["run", "core", "--quick", "--no-progress", "--duration", "0.02s"]


@pytest.mark.parametrize("signo", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_signal_at_a_random_moment(shm_dir, signo):
    rng = random.Random()
    seed = rng.randrange(1 << 30)
    rng.seed(seed)
    for attempt in range(4):
        out = shm_dir / f"{signo.name}-{attempt}"
        proc = subprocess.Popen([str(ROOT / "build" / "pmlab"), *RUN, "--out", str(out)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        # From planning and pool creation to the end of the runs (the first 50 ms are the process's
        # start-up, before any handler can be installed).
        time.sleep(rng.uniform(0.05, 1.5))
        proc.send_signal(signo)
        stdout, stderr = proc.communicate(timeout=120)
        where = f"seed {seed}, attempt {attempt}: exit {proc.returncode}, stderr {stderr!r}"
        assert proc.returncode in (0, 128 + signo), where
        assert not pathlib.Path(f"/dev/shm/pmlab-{proc.pid}.pool").exists(), where
        results = out / "results.json"
        if results.exists():
            doc = schema.load(results)  # valid, partial or not
            assert doc["context"]["interrupted"] is (proc.returncode != 0), where
            if proc.returncode != 0:
                assert f"stopped by {signo.name}" in stderr, where
        else:
            assert proc.returncode == 128 + signo, where
        assert [p.name for p in out.iterdir()] in ([], ["results.json"]) if out.exists() else True, where


def test_a_second_signal_ends_at_once_and_still_removes_the_pool(shm_dir):
    proc = subprocess.Popen([str(ROOT / "build" / "pmlab"), *RUN, "--out", str(shm_dir / "o")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pool = pathlib.Path(f"/dev/shm/pmlab-{proc.pid}.pool")
    deadline = time.monotonic() + 60
    while not pool.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.3)  # the same signal from the same process at once is one request (below)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=120)
    assert proc.returncode in (0, 130)
    assert not pool.exists()


def test_a_run_bounded_by_timeout_stops_cleanly(shm_dir):
    # timeout(1) sends SIGTERM to the command and then to its whole process group: pmlab gets it twice at
    # once, and that is one request to stop, not a second one that exits at once and writes nothing.
    out = shm_dir / "bounded"
    proc = subprocess.run(["timeout", "--preserve-status", "1.2", str(ROOT / "build" / "pmlab"), *RUN,
                           "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 128 + signal.SIGTERM), proc.stderr
    if proc.returncode != 0:
        assert "stopped by SIGTERM" in proc.stderr, proc.stderr
        assert schema.load(out / "results.json")["context"]["interrupted"] is True


def test_a_run_whose_helper_the_stop_killed_is_interrupted_not_failed(shm_dir):
    # crash.exec_cost spends its run in processes it waits for (the example map natively, traced, under
    # Valgrind); a stop kills the one running, and the run it cut short is recorded as interrupted, as a run
    # without processes is, not as the error the killed process gave it.
    out = shm_dir / "helper"
    proc = subprocess.Popen([str(ROOT / "build" / "pmlab"), "run", "crash.exec_cost", "--quick", "--no-progress",
                             "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode in (0, 130), stderr
    if (out / "results.json").exists():
        runs = schema.load(out / "results.json")["runs"]
        assert all(r["status"] != "error" for r in runs), [(r["name"], r["status"], r.get("reason")) for r in runs]
