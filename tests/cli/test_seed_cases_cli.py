"""The cases behind the studies' figures of issue 22, run as a user runs them: each point must measure what
its parameters say (an update share that changes nothing, or a chase that is not one, would still draw)."""
import json


def _runs(pmlab, out, *args):
    proc = pmlab("run", *args, "--out", out, "--no-progress")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((out / "results.json").read_text())
    return doc, [r for r in doc["runs"] if r["status"] == "ok"]


def test_update_ratio_mixes_reads_and_updates(pmlab, shm_dir):
    doc, runs = _runs(pmlab, shm_dir / "u", "ds.update_ratio", "--quick", "--set", "structure=array,bptree",
                      "--set", "mode=persist,dram", "--set", "updates=0,100", "--set", "records=2000")
    by = {(r["params"]["structure"], r["params"]["mode"], r["params"]["updates"]): r for r in runs}
    assert len(by) == 8, [r["name"] for r in doc["runs"]]
    # Reads persist nothing: an all-read mix flushes nothing, an all-update mix flushes every operation.
    assert by[("array", "persist", 0)]["metrics"]["flushes_per_op"]["value"] == 0
    assert by[("array", "persist", 100)]["metrics"]["flushes_per_op"]["value"] >= 1
    published = by[("bptree", "dram", 100)]["metrics"]["published_throughput"]
    assert published["kind"] == "published" and "[StoredsBench]" in published["source"]
    assert "published_throughput" not in by[("bptree", "dram", 0)]["metrics"]
    assert "published_throughput" not in by[("array", "dram", 100)]["metrics"]


def _past_the_llc(pmlab) -> int:
    """A working set past this machine's last-level cache (as `pmlab info` reads it), at least 256 MiB: hosts
    differ by more than 10x (a 480 MiB L3 has been seen here)."""
    proc = pmlab("info", "--json")
    assert proc.returncode == 0, proc.stderr
    caches = json.loads(proc.stdout)["cpu"]["caches"]
    llc = max((c for c in caches if c["type"] != "instruction"), key=lambda c: c["level"])["size_bytes"]
    wss = 256 << 20
    while wss <= llc:
        wss *= 2
    return wss


def test_dependent_load_times_a_chain_per_working_set(pmlab, shm_dir):
    large_wss = _past_the_llc(pmlab)
    _, runs = _runs(pmlab, shm_dir / "d", "idio.dependent_load", "--quick", "--set", "medium=dram",
                    "--set", f"wss=4096,{large_wss}")
    by = {r["params"]["wss"]: r["metrics"] for r in runs if r["case"] == "dependent_load"}
    assert set(by) == {4096, large_wss}
    small, large = by[4096], by[large_wss]
    # A chase in the L1 costs a few ns a load; past the LLC, each load goes to memory.
    assert 0 < small["load_latency"]["value"] < 20
    assert large["load_latency"]["value"] > 5 * small["load_latency"]["value"]
    assert large["load_latency_median"]["stats"]["n"] >= 5
    assert large["published_load_latency"]["kind"] == "published"
    assert "published_load_latency" not in small


def test_persist_same_pattern_runs_beside_seq_and_rand(pmlab, shm_dir, line_flush):
    _, runs = _runs(pmlab, shm_dir / "p", "core.persist", "--quick", "--ops", "2000", "--set", "medium=dram",
                    "--set", "domain=adr", "--set", f"flush={line_flush}", "--set", "size=64")
    patterns = {r["params"]["pattern"]: r["metrics"] for r in runs}
    assert set(patterns) == {"seq", "rand", "same"}
    for metrics in patterns.values():
        assert metrics["flushes_per_op"]["value"] == 1


def test_crash_suite_writes_the_design_list(pmlab, shm_dir):
    doc, runs = _runs(pmlab, shm_dir / "c", "crash", "--quick", "--set", "ops=8")
    designs = [r for r in runs if r["case"] == "designs"]
    names = {r["params"]["design"] for r in designs}
    assert {"log.zero", "ds.bptree.persist", "lockfree.list.soft"} <= names
    assert not any("broken" in n for n in names)
    assert all(r["notes"]["domains"] and r["notes"]["family"] == r["params"]["design"].split(".")[0] for r in designs)
    proc = pmlab("report", shm_dir / "c")
    assert proc.returncode == 0, proc.stderr
    html = (shm_dir / "c" / "report.html").read_text()
    assert "crash-test status" in html and "not crash-tested in this run" in html
