"""Hostile input, as a user who tries to break pmlab would give it: every case must end with one
`pmlab: error: ...` line and the README's exit code, never an abort or a hang, never a changed or
deleted file, and never a temporary pool left in /dev/shm."""
import json
import os
import pathlib
import resource
import signal
import struct
import subprocess
import time

import pytest

from conftest import ROOT, digest

HEADER = 4096
MAGIC = b"PMLABPOL"
# Offsets in the 4 KiB header (src/pmlab/pool/header.hpp).
LAYOUT_AT, LAYOUT_VERSION_AT, POOL_SIZE_AT, CHECKSUM_AT = 16, 48, 56, HEADER - 8


def fnv1a64(data: bytes) -> int:
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def craft_header(path, edit):
    """Rewrites a pool's header with `edit(bytearray)` applied and a valid checksum."""
    with open(path, "r+b") as f:
        header = bytearray(f.read(HEADER))
        edit(header)
        header[CHECKSUM_AT:] = struct.pack("<Q", fnv1a64(bytes(header[:CHECKSUM_AT])))
        f.seek(0)
        f.write(header)


def shm_pools(pid):
    return [p for p in pathlib.Path("/dev/shm").glob(f"pmlab-{pid}.pool")]


def assert_error(proc, code, *fragments):
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert lines and lines[0].startswith("pmlab: error: "), proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr, (fragment, proc.stderr)


@pytest.fixture
def small_pool(pmlab, shm_dir):
    path = shm_dir / "p.pool"
    pmlab("pool", "create", path, "--size", "1M", check=True)
    return path


# --------------------------------------------------------------------------- no abort: text from outside


def test_paths_and_layout_names_that_are_not_utf8(pmlab, shm_dir):
    raw_dir = os.fsencode(shm_dir)
    pool = raw_dir + b"/\xff\xfe.pool"
    proc = subprocess.run([str(ROOT / "build" / "pmlab"), "pool", "create", pool, "--size", "1M"], capture_output=True)
    assert proc.returncode == 0, proc.stderr
    proc = subprocess.run([str(ROOT / "build" / "pmlab"), "pool", "info", pool, "--json"], capture_output=True)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["size_bytes"] == 1 << 20
    # A header whose layout name is not UTF-8, with a valid checksum.
    craft_header(pool, lambda h: h.__setitem__(slice(LAYOUT_AT, LAYOUT_AT + 4), b"\xc3(\x1b\x07"))
    for args in (["pool", "info", pool, "--json"], ["pool", "info", pool], ["pool", "check", pool]):
        proc = subprocess.run([str(ROOT / "build" / "pmlab"), *args], capture_output=True)
        assert proc.returncode == 0, (args, proc.stderr)
        assert b"\x1b" not in proc.stdout and b"\x07" not in proc.stdout  # escaped, not sent to the terminal
    assert b"\\x1b" in subprocess.run([str(ROOT / "build" / "pmlab"), "pool", "info", pool], capture_output=True).stdout
    # A run whose output directory and pool path are not UTF-8.
    out = raw_dir + b"/out-\xff"
    proc = subprocess.run([str(ROOT / "build" / "pmlab"), "run", "core.persist", "--quick", "--ops", "50", "--no-progress",
                           "--filter", "size:64/", "--out", out, "--pool", raw_dir + b"/run-\xfe.pool"],
                          capture_output=True)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(pathlib.Path(os.fsdecode(out + b"/results.json")).read_text())
    assert "\ufffd" in doc["context"]["pool"]["path"]
    assert os.path.exists(raw_dir + b"/run-\xfe.pool")  # made at the user's path: theirs to keep


def test_a_directory_as_device_model(pmlab, shm_dir):
    for option in ("--model", "--emulate"):
        proc = pmlab("run", "core", "--quick", option, shm_dir, "--out", shm_dir / "o")
        assert_error(proc, 3, "is a directory")
    assert not (shm_dir / "o").exists()


# --------------------------------------------------------------------------- no hang


def test_a_fifo_is_refused_without_blocking(pmlab, shm_dir):
    fifo = shm_dir / "fifo"
    os.mkfifo(fifo)
    for args in (["pool", "info", fifo], ["pool", "check", fifo], ["pool", "remove", fifo, "--force"],
                 ["run", "core", "--quick", "--model", fifo, "--out", shm_dir / "o"],
                 ["run", "core", "--quick", "--pool", fifo, "--out", shm_dir / "o"]):
        proc = pmlab(*args)  # the fixture's timeout turns a hang into a failure
        assert_error(proc, 3, "FIFO")
    assert fifo.is_fifo()


@pytest.mark.parametrize("value", ["-1", "18446744073709551616", "18446744073709551615", "abc", "", "1e3", " 5", "0"])
def test_ops_takes_only_a_positive_integer(pmlab, shm_dir, value):
    proc = pmlab("run", "core", "--ops", value, "--out", shm_dir / "o")
    assert_error(proc, 2, "--ops")
    assert "Traceback" not in proc.stderr and "could not be converted" not in proc.stderr


@pytest.mark.parametrize("option,value", [("--duration", "nan"), ("--duration", "-1s"), ("--duration", "inf"),
                                          ("--duration", "1e300"),
                                          ("--pool-size", "0"), ("--pool-size", "-1"), ("--pool-size", "99999999999999999999"),
                                          ("--domain", ""), ("--model", ""), ("--out", ""), ("--pool", ""), ("--flush", ""),
                                          ("--set", ""), ("--filter", "")])
def test_run_refuses_empty_and_out_of_range_values(pmlab, shm_dir, option, value):
    proc = pmlab("run", "core", option, value)
    assert_error(proc, 2, option)


# --------------------------------------------------------------------------- files that must not change


def test_pool_remove_never_deletes_what_is_not_a_pool(pmlab, shm_dir):
    text = shm_dir / "notes.txt"
    text.write_bytes(MAGIC + b" is how every pool begins, says this.")  # 39+ bytes of text
    before = digest(text)
    for force in ([], ["--force"]):
        assert_error(pmlab("pool", "remove", text, *force), 3, "not a pmlab pool")
    assert digest(text) == before


@pytest.mark.parametrize("damage", ["truncated", "corrupted", "too-large"])
def test_pool_remove_takes_a_damaged_pool_only_with_force(pmlab, small_pool, damage):
    if damage == "truncated":
        os.truncate(small_pool, 512 << 10)
    elif damage == "corrupted":
        with open(small_pool, "r+b") as f:
            f.seek(LAYOUT_AT)
            f.write(b"XX")
    else:
        os.truncate(small_pool, 2 << 20)
    before = digest(small_pool)
    proc = pmlab("pool", "remove", small_pool)
    assert_error(proc, 3, "--force")
    assert digest(small_pool) == before
    assert pmlab("pool", "remove", small_pool, "--force").returncode == 0
    assert not small_pool.exists()


def test_crafted_headers_are_refused_and_escaped(pmlab, small_pool):
    craft_header(small_pool, lambda h: h.__setitem__(slice(LAYOUT_VERSION_AT, LAYOUT_VERSION_AT + 4), struct.pack("<I", 999)))
    before = digest(small_pool)
    for args in (["pool", "info", small_pool], ["pool", "check", small_pool]):
        assert_error(pmlab(*args), 3, "version 999")
    craft_header(small_pool, lambda h: h.__setitem__(slice(LAYOUT_VERSION_AT, LAYOUT_VERSION_AT + 4), struct.pack("<I", 1)))
    craft_header(small_pool, lambda h: h.__setitem__(slice(POOL_SIZE_AT, POOL_SIZE_AT + 8), struct.pack("<Q", 2 << 20)))
    assert_error(pmlab("pool", "info", small_pool), 3, "the header says 2097152 bytes, the file has 1048576")
    craft_header(small_pool, lambda h: h.__setitem__(slice(POOL_SIZE_AT, POOL_SIZE_AT + 8), struct.pack("<Q", 1 << 20)))
    name = b"a\x1b[2Jb\x00"
    craft_header(small_pool, lambda h: h.__setitem__(slice(LAYOUT_AT, LAYOUT_AT + len(name)), name))
    proc = pmlab("pool", "info", small_pool)
    assert proc.returncode == 0 and "\x1b" not in proc.stdout and "a\\x1b[2Jb" in proc.stdout
    assert "\x1b" not in pmlab("pool", "check", small_pool).stdout


def test_report_refuses_to_overwrite_its_own_input(pmlab, shm_dir):
    out = shm_dir / "run"
    pmlab("run", "core.persist", "--quick", "--ops", "50", "--no-progress", "--filter", "medium:dram/.*size:64/",
          "--out", out, check=True)
    before = digest(out / "results.json")
    for target in (out / "results.json", shm_dir / "." / "run" / "results.json"):
        assert_error_report = pmlab("report", out, "--out", target)
        assert assert_error_report.returncode == 2, assert_error_report.stderr
        assert "is the input results.json" in assert_error_report.stderr
    assert digest(out / "results.json") == before


def limit_file_size(limit):
    """A full disk without root: writes past `limit` bytes fail with EFBIG (SIGXFSZ ignored)."""
    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def run_limited(args, limit, env=None):
    return subprocess.run([str(ROOT / "build" / "pmlab"), *map(str, args)], capture_output=True, text=True,
                          timeout=300, preexec_fn=limit_file_size(limit), env=dict(os.environ, **(env or {})))


def test_a_full_disk_keeps_the_old_report_and_results(pmlab, shm_dir):
    out = shm_dir / "run"
    pmlab("run", "core.persist", "--quick", "--ops", "50", "--no-progress", "--filter", "medium:dram/.*size:64/",
          "--out", out, check=True)
    pmlab("report", out, check=True)
    report_before, results_before = digest(out / "report.html"), digest(out / "results.json")
    proc = run_limited(["report", out], 4096)
    assert proc.returncode == 3, proc.stderr
    assert "File too large" in proc.stderr and "Traceback" not in proc.stderr
    assert digest(out / "report.html") == report_before
    # run --out into the same directory (--force) on a full disk: the old results stay, with the reason.
    proc = run_limited(["run", "core.persist", "--quick", "--ops", "50", "--no-progress", "--set", "medium=dram",
                        "--filter", "size:64/", "--out", out, "--force"], 2048)
    assert_error(proc, 3, "cannot write", "File too large")
    assert digest(out / "results.json") == results_before
    assert sorted(p.name for p in out.iterdir()) == ["report.html", "results.json"]  # no temporary left


def test_run_out_refuses_a_directory_with_results_unless_forced(pmlab, shm_dir):
    out = shm_dir / "run"
    args = ["run", "core.persist", "--quick", "--ops", "50", "--no-progress", "--filter", "medium:dram/.*size:64/",
            "--out", out]
    pmlab(*args, check=True)
    pmlab("report", out, check=True)
    before = digest(out / "results.json")
    assert_error(pmlab(*args), 3, "already holds results.json", "--force")
    assert digest(out / "results.json") == before
    proc = pmlab(*args, "--force")
    assert proc.returncode == 0, proc.stderr
    assert not (out / "report.html").exists()  # the old report described the old results


# --------------------------------------------------------------------------- exit codes and messages


def test_exit_codes_of_the_readme(pmlab, shm_dir, small_pool):
    assert_error(pmlab("pool", "info", shm_dir), 3, "is a directory")
    assert_error(pmlab("pool", "check", shm_dir), 3, "is a directory")
    proc = pmlab("pool", "bogus", small_pool)
    assert_error(proc, 2, "unknown command 'bogus' for 'pmlab pool'", "create, info, check, remove")
    for args in (["report", ""], ["pool", "info", ""], ["pool", "remove", ""]):
        assert pmlab(*args).returncode == 2, args


def test_a_sweep_of_a_missing_flush_instruction_exits_4(pmlab, shm_dir):
    proc = pmlab("run", "core.persist", "--quick", "--set", "flush=clwb", "--out", shm_dir / "o", env={"PMLAB_NO_CLWB": "1"})
    assert_error(proc, 4, "clwb")
    assert not (shm_dir / "o").exists()


def test_the_default_pool_fits_the_quick_tour_and_the_advice_fits_the_pool(pmlab, shm_dir, small_pool):
    big = shm_dir / "default.pool"
    pmlab("pool", "create", big, check=True)
    info = json.loads(pmlab("pool", "info", big, "--json", check=True).stdout)
    out = shm_dir / "run"
    proc = pmlab("run", "core", "--quick", "--ops", "20", "--no-progress", "--filter", "medium:pool/.*threads:1$",
                 "--pool", big, "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((out / "results.json").read_text())["context"]["pool"]["size_bytes"] == info["size_bytes"]
    # An existing pool too small: the advice is to make a larger pool, not --pool-size.
    proc = pmlab("run", "core", "--quick", "--ops", "20", "--no-progress", "--filter", "medium:pool/.*threads:1$",
                 "--pool", small_pool, "--out", shm_dir / "small")
    assert proc.returncode == 1
    assert "pmlab pool create PATH --size" in proc.stderr


def test_stale_pools_of_ended_processes_are_removed(pmlab):
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = pathlib.Path(f"/dev/shm/pmlab-{dead.pid}.pool")
    if stale.exists():
        pytest.skip(f"{stale} exists already")
    pmlab("pool", "create", stale, "--size", "1M", check=True)
    try:
        proc = pmlab("run", "core.persist", "--quick", "--ops", "20", "--no-progress", "--filter", "medium:pool/.*size:64/",
                     "--out", stale.with_suffix(".out"))
        assert proc.returncode == 0, proc.stderr
        assert f"removed stale pool {stale}" in proc.stderr
        assert not stale.exists()
    finally:
        if stale.exists():
            stale.unlink()
        subprocess.run(["rm", "-rf", str(stale.with_suffix(".out"))])


def _killed_once_it_leaves(args, pattern):
    """Runs `pmlab ARGS`, SIGKILLs it once /dev/shm holds something named `pattern` (formatted with its pid),
    and returns the run and what it left of that name."""
    run = subprocess.Popen([str(ROOT / "build" / "pmlab"), *map(str, args)], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    left = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and run.poll() is None and not left:
        left = sorted(pathlib.Path("/dev/shm").glob(pattern.format(pid=run.pid)))
        time.sleep(0.05)
    run.kill()
    run.wait()
    return run, left


def _next_run_sweeps(pmlab, shm_dir, left, what):
    proc = pmlab("run", "core.persist", "--quick", "--ops", "20", "--no-progress", "--filter",
                 "medium:pool/.*size:64/", "--out", shm_dir / "next")
    assert proc.returncode == 0, proc.stderr
    for path in left:
        assert not path.exists(), path
        assert f"removed {what} {path}" in proc.stderr


def test_side_pools_of_a_killed_run_are_swept_by_the_next(pmlab, shm_dir):
    # ds.vs_pmdk puts each copy, ours and PMDK's, in a pool file of its own beside the run's pool.
    run, left = _killed_once_it_leaves(["run", "ds.vs_pmdk", "--quick", "--no-progress", "--set",
                                        "structure=hashtable", "--set", "workload=c", "--out", shm_dir / "killed"],
                                       "pmlab-{pid}-ds-*.pool")
    shm = pathlib.Path("/dev/shm")
    try:
        assert left, "the run made no side pool"
        left = sorted(shm.glob(f"pmlab-{run.pid}*.pool"))
        assert shm / f"pmlab-{run.pid}.pool" in left and len(left) >= 2, left
        _next_run_sweeps(pmlab, shm_dir, left, "stale pool")
    finally:
        for path in shm.glob(f"pmlab-{run.pid}*.pool"):
            path.unlink()


def test_side_pools_beside_a_named_pool_are_swept_too(pmlab, shm_dir):
    # The cases put their side pools beside the run's pool, wherever --pool put it.
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = shm_dir / f"pmlab-{dead.pid}-ds-hashtable-0.pool"
    pmlab("pool", "create", stale, "--size", "1M", check=True)
    proc = pmlab("run", "core.persist", "--quick", "--ops", "20", "--no-progress", "--filter", "medium:pool/.*size:64/",
                 "--pool", shm_dir / "mine.pool", "--out", shm_dir / "o")
    assert proc.returncode == 0, proc.stderr
    assert not stale.exists() and f"removed stale pool {stale}" in proc.stderr


def test_scratch_directories_of_a_killed_run_are_swept_by_the_next(pmlab, shm_dir):
    # crash.exec_cost traces PMDK's example in a scratch directory of its own. SIGKILL leaves it, and so does
    # a second stop signal, which exits at once.
    if not (ROOT / "build" / "subjects" / "pmdk-map").exists():
        pytest.skip("PMDK's examples are not built beside pmlab: crash.exec_cost makes no scratch directory")
    run, left = _killed_once_it_leaves(["run", "crash.exec_cost", "--set", "inserts=2000", "--no-progress",
                                        "--out", shm_dir / "killed"], "pmlab-exec-cost-{pid}-*")
    try:
        assert left and all(path.is_dir() for path in left), left
        _next_run_sweeps(pmlab, shm_dir, left, "stale scratch directory")
    finally:
        shm = pathlib.Path("/dev/shm")
        for path in [*shm.glob(f"pmlab-exec-cost-{run.pid}-*"), *shm.glob(f"pmlab-{run.pid}.pool")]:
            subprocess.run(["rm", "-rf", str(path)])


def test_crash_exec_sweeps_the_scratch_directories_of_ended_processes(pmlab, shm_dir):
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = pathlib.Path(f"/dev/shm/pmlab-exec-{dead.pid}-Stale0")
    if stale.exists():
        pytest.skip(f"{stale} exists already")
    (stale / "images").mkdir(parents=True)
    (stale / "images" / "0.img").write_bytes(b"\0" * 4096)
    try:
        # The program maps no persistent memory, so the command fails; the sweep came first.
        proc = pmlab("crash", "exec", "--trace-only", "--trace", shm_dir / "t.pmtrace", "--out", shm_dir / "o",
                     "--", "true")
        assert proc.returncode == 1, proc.stderr
        assert f"removed stale scratch directory {stale}" in proc.stderr
        assert not stale.exists()
    finally:
        subprocess.run(["rm", "-rf", str(stale)])


def test_runs_started_in_one_second_never_share_a_default_run_directory(shm_dir, tmp_path):
    # Run ids tell seconds apart: a second run in the same second once took the first one's directory, and
    # with it that run's trace, judging the wrong program.
    log, pool = ROOT / "build" / "subjects" / "pmem-log", shm_dir / "log.pool"
    traces = []
    for n in (2, 4, 6):
        proc = subprocess.run([str(ROOT / "build" / "pmlab"), "crash", "exec", "--trace-only", "--setup",
                               f"rm -f {pool}", "--pool", str(pool), "--", str(log), "append", str(pool), str(n)],
                              capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert "reused" not in proc.stderr and f"{2 * n} fences" in proc.stderr, proc.stderr
        traces.append(next(line for line in proc.stdout.splitlines() if line.startswith("trace: ")))
    assert len(set(traces)) == 3, traces
    assert len(list((tmp_path / "results").iterdir())) == 3
