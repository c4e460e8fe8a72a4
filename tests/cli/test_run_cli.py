"""`pmlab run`, `list`, `info`, `report` as a user calls them."""
import json
import os
import pathlib
import subprocess

from conftest import ROOT


def test_help_on_every_command(pmlab):
    for args in (["--help"], ["run", "--help"], ["list", "--help"], ["info", "--help"], ["report", "--help"],
                 ["pool", "--help"], ["pool", "create", "--help"]):
        proc = pmlab(*args)
        assert proc.returncode == 0, args
        assert "Usage" in proc.stdout or "usage" in proc.stdout.lower()


def test_usage_errors_exit_2(pmlab, shm_dir):
    assert pmlab().returncode == 2
    assert pmlab("frobnicate").returncode == 2
    proc = pmlab("run", "core", "--set", "size=lots", "--out", shm_dir / "o")
    assert proc.returncode == 2 and "size=lots" in proc.stderr
    proc = pmlab("run", "nosuch", "--out", shm_dir / "o")
    assert proc.returncode == 2 and "unknown suite or case" in proc.stderr
    proc = pmlab("run", "core", "--domain", "battery", "--out", shm_dir / "o")
    assert proc.returncode == 2 and "battery" in proc.stderr


def test_info_says_the_transparent_huge_page_mode(pmlab):
    try:
        line = open("/sys/kernel/mm/transparent_hugepage/enabled").read()
        mode = line[line.index("[") + 1:line.index("]")]
    except (OSError, ValueError):
        mode = "unknown"
    assert f"huge pages       transparent: {mode} (" in pmlab("info", check=True).stdout


def test_pages_huge_puts_the_dram_medium_in_huge_pages(pmlab, shm_dir):
    out = shm_dir / "huge"
    proc = pmlab("run", "core.persist", "--quick", "--ops", "300", "--filter", "size:64/", "--set", "medium=dram",
                 "--pages", "huge", "--out", out, "--no-progress")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((out / "results.json").read_text())
    assert doc["context"]["media_pages"] == "huge"
    # Runs of a flush instruction this CPU lacks are skipped, with no metrics.
    shares = [r["metrics"]["region_huge_page_fraction"]["value"] for r in doc["runs"]
              if r["case"] == "persist" and r["status"] == "ok"]
    assert shares
    if "[never]" not in pathlib.Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text():
        assert min(shares) > 0.5, shares
    proc = pmlab("run", "core", "--pages", "2M", "--out", shm_dir / "bad")
    assert proc.returncode == 2 and "--pages" in proc.stderr and "base, huge" in proc.stderr


def test_info_json_names_the_platform(pmlab):
    info = json.loads(pmlab("info", "--json", check=True).stdout)
    assert {"cpu", "numa_nodes", "hardware_counters", "pmem", "timer"} <= info.keys()
    assert isinstance(info["hardware_counters"]["available"], bool)
    if not info["hardware_counters"]["available"]:
        assert info["hardware_counters"]["reason"]


def test_list_shows_core_and_its_parameters(pmlab):
    out = pmlab("list", "core", "-v", check=True).stdout
    assert "core.persist" in out and "core.overhead" in out and "default" in out


def test_unsupported_flush_instruction_exits_4(pmlab, shm_dir):
    # PMLAB_NO_CLWB hides clwb as a CPU without it would.
    proc = pmlab("run", "core.persist", "--flush", "clwb", "--out", shm_dir / "o", env={"PMLAB_NO_CLWB": "1"})
    assert proc.returncode == 4
    assert "clwb" in proc.stderr


def test_quick_core_run_then_report(pmlab, shm_dir):
    out = shm_dir / "run"
    proc = pmlab("run", "core", "--quick", "--ops", "300", "--out", out, "--no-progress",
                 "--filter", "size:(64|4096)(/|$)")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((out / "results.json").read_text())
    assert doc["schema_version"] == 3
    assert doc["context"]["pool"]["medium"] == "emulated"
    # Every run is ok but those of a flush instruction this CPU lacks, skipped saying so.
    not_ok = [r for r in doc["runs"] if r["status"] != "ok"]
    assert all(r["status"] == "skipped" and "this CPU has no" in r["reason"] for r in not_ok), not_ok
    media = {r["params"]["medium"] for r in doc["runs"]}
    assert media == {"dram", "pool"}
    for r in doc["runs"]:
        for name, m in r["metrics"].items():
            assert m["kind"] in ("measured", "modelled", "published"), name
    # Every run on a medium says how much of its memory huge pages back; DRAM keeps base pages in any THP mode.
    persist_runs = [r for r in doc["runs"] if r["case"] == "persist" and r["status"] == "ok"]
    assert persist_runs
    for r in persist_runs:
        share = r["metrics"]["region_huge_page_fraction"]["value"]
        assert 0 <= share <= 1 and (share == 0 or r["params"]["medium"] == "pool"), r["name"]
    proc = pmlab("report", out)
    assert proc.returncode == 0, proc.stderr
    html = (out / "report.html").read_text()
    assert html.count("<img") + html.count("<svg") >= 1
    assert "core.persist" in html


def test_report_on_missing_results(pmlab, shm_dir):
    proc = pmlab("report", shm_dir)
    assert proc.returncode == 3
    assert "results.json" in proc.stderr


def test_crash_all_quick_passes_and_reports_its_rate(pmlab, shm_dir):
    out = shm_dir / "crash"
    proc = pmlab("crash", "all", "--quick", "--out", out)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((out / "results.json").read_text())
    assert doc["runs"], "no design was crash-tested"
    for r in doc["runs"]:
        assert r["status"] == "ok", r
        assert r["metrics"]["failures"]["value"] == 0
        assert r["metrics"]["states_checked"]["value"] > 0
        assert r["metrics"]["states_per_second"]["value"] > 0
    assert not any("broken" in r["case"] for r in doc["runs"])
    assert pmlab("report", out).returncode == 0


def test_crash_catches_a_broken_design_and_replays_it(pmlab, shm_dir):
    out = shm_dir / "crash"
    proc = pmlab("crash", "selftest.broken.missing-flush", "--ops", "4", "--out", out)
    assert proc.returncode == 1
    assert "FAILED at crash point" in proc.stderr and "replay:" in proc.stderr
    run = json.loads((out / "results.json").read_text())["runs"][0]
    assert run["status"] == "error" and run["failures"]
    failure = run["failures"][0]
    assert "commit_record.cpp" in failure["site"]
    again = pmlab("crash", "selftest.broken.missing-flush", "--ops", "4", "--out", shm_dir / "again",
                  "--domain", "adr", "--granularity", "line", "--replay", failure["replay"])
    assert again.returncode == 1
    replayed = json.loads((shm_dir / "again" / "results.json").read_text())["runs"][0]
    assert replayed["metrics"]["states_checked"]["value"] == 1
    assert replayed["failures"][0]["property"] == failure["property"]


def test_crash_bad_arguments(pmlab, shm_dir):
    assert pmlab("crash", "no.such.design", "--out", shm_dir / "o").returncode == 2
    assert pmlab("crash", "all", "--domain", "battery", "--out", shm_dir / "o").returncode == 2
    assert pmlab("crash", "selftest.commit-record", "--replay", "x", "--out", shm_dir / "o").returncode == 2
    proc = pmlab("crash", "selftest.commit-record", "--domain", "none", "--out", shm_dir / "o")
    assert proc.returncode == 2 and "nothing to crash-test" in proc.stderr


def test_crash_refuses_bad_numbers_and_granularities(pmlab, shm_dir):
    for args in (["--budget", "-1"], ["--budget", "18446744073709551616"], ["--ops", "0"], ["--seed", "-1"],
                 ["--timeout", "-1"], ["--timeout", "nan"], ["--recovery-budget", "-1"], ["--granularity", "line,,word"],
                 ["--shard", "3/2"], ["--shard", "0/4"], ["--jobs", "99"]):
        proc = pmlab("crash", "selftest.commit-record", *args, "--out", shm_dir / "o")
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stderr.startswith("pmlab: error: "), (args, proc.stderr)
    assert not (shm_dir / "o").exists()


def test_crash_replay_of_nothing_and_of_several_designs_is_refused(pmlab, shm_dir):
    proc = pmlab("crash", "selftest.commit-record", "--replay", "999999:0", "--granularity", "line",
                 "--domain", "adr", "--out", shm_dir / "o")
    assert proc.returncode == 2 and "names no crash state" in proc.stderr
    proc = pmlab("crash", "selftest", "--replay", "1:0", "--out", shm_dir / "o")
    assert proc.returncode == 2 and "exactly one" in proc.stderr


def test_crash_shards_merge_into_the_whole_run(pmlab, shm_dir):
    common = ["selftest.scan-log", "selftest.broken.missing-fence", "--budget", "300", "--ops", "8",
              "--granularity", "line", "--domain", "adr"]
    whole = pmlab("crash", *common, "--out", shm_dir / "whole")
    assert whole.returncode == 1  # the broken design fails
    for k in (1, 2, 3):
        assert pmlab("crash", *common, "--shard", f"{k}/3", "--out", shm_dir / f"s{k}").returncode in (0, 1)
    merged = pmlab("crash", "merge", shm_dir / "s1", shm_dir / "s2", shm_dir / "s3", "--out", shm_dir / "merged")
    assert merged.returncode == 1, merged.stderr
    def by_name(path):
        return {r["name"]: r for r in json.loads((path / "results.json").read_text())["runs"]}
    a, b = by_name(shm_dir / "whole"), by_name(shm_dir / "merged")
    assert a.keys() == b.keys()
    for name in a:
        for metric in ("states_checked", "failures", "states_enumerated"):
            assert a[name]["metrics"][metric]["value"] == b[name]["metrics"][metric]["value"], (name, metric)
        assert len(b[name]["failures"]) == len(a[name]["failures"]) or len(b[name]["failures"]) >= 20
    # Two shards of three are not the whole: refused.
    proc = pmlab("crash", "merge", shm_dir / "s1", shm_dir / "s2", "--out", shm_dir / "partial")
    assert proc.returncode == 2 and "every shard" in proc.stderr


def test_crash_mutate_reports_a_score(pmlab, shm_dir):
    out = shm_dir / "mut"
    proc = pmlab("crash", "selftest.commit-record", "--mutate", "--quick", "--out", out)
    assert proc.returncode == 0, proc.stderr
    run = json.loads((out / "results.json").read_text())["runs"][0]
    assert run["params"]["test"] == "mutation"
    assert run["metrics"]["mutation_score"]["value"] == 1.0
    assert run["metrics"]["killed"]["value"] >= 4
    assert all(m["killed"] or m["equivalent"] for m in run["mutants"])
    assert pmlab("report", out).returncode == 0
    assert "Mutation score" in (out / "report.html").read_text()


def test_version_dry_run_and_pool_rm(pmlab, shm_dir):
    proc = pmlab("--version")
    assert proc.returncode == 0 and proc.stdout.startswith("pmlab ")
    proc = pmlab("run", "core.persist", "--quick", "--dry-run", "--out", shm_dir / "never")
    assert proc.returncode == 0, proc.stderr
    names = [line for line in proc.stdout.splitlines() if line.startswith("core.persist/")]
    assert names and f"{len(names)} runs" in proc.stdout
    assert not (shm_dir / "never").exists()  # nothing ran, nothing written
    assert pmlab("run", "nosuch", "--dry-run").returncode == 2
    assert pmlab("pool", "create", shm_dir / "p.pool", "--size", "4M").returncode == 0
    assert pmlab("pool", "rm", shm_dir / "p.pool").returncode == 0
    assert not (shm_dir / "p.pool").exists()


def test_list_shows_derived_cases(pmlab):
    out = pmlab("list").stdout
    for name in ("ds.target", "ds.overhead", "idio.classification", "idio.recommendation"):
        assert any(line.split()[0] == name and "derived" in line for line in out.splitlines() if line.strip()), name


def test_null_structure_runs_on_two_threads(pmlab, shm_dir):
    # The null structure stands for the harness: two threads share it as they share a structure, and the
    # load phase's inserts from both must all count.
    out = shm_dir / "null2"
    proc = pmlab("run", "ds.ycsb", "--quick", "--ops", "20000", "--no-progress", "--out", out,
                 "--set", "structure=null", "--set", "mode=dram", "--set", "medium=dram", "--set", "workload=c",
                 "--set", "records=400000", "--set", "threads=2", "--repetitions", "3")
    assert proc.returncode == 0, proc.stderr
    runs = json.loads((out / "results.json").read_text())["runs"]
    ycsb = [r for r in runs if r["case"] == "ycsb"]
    assert len(ycsb) == 1 and ycsb[0]["status"] == "ok", ycsb
    assert ycsb[0]["params"]["threads"] in (2, "2")


def test_a_pool_made_at_a_new_path_is_kept(pmlab, shm_dir):
    pool = shm_dir / "mine.pool"
    proc = pmlab("run", "core.persist", "--quick", "--ops", "20", "--no-progress", "--filter", "medium:pool/.*size:64/",
                 "--pool", pool, "--out", shm_dir / "o")
    assert proc.returncode == 0, proc.stderr
    assert pool.exists(), "a pool made at the user's path must be kept"
    assert pmlab("pool", "check", pool).returncode == 0
    again = pmlab("run", "core.persist", "--quick", "--ops", "20", "--no-progress", "--filter", "medium:pool/.*size:64/",
                  "--pool", pool, "--out", shm_dir / "again")
    assert again.returncode == 0, again.stderr
    assert pool.exists()


def test_an_option_error_after_a_design_names_the_option(pmlab):
    proc = pmlab("crash", "selftest.commit-record", "--budget", "abc")
    assert proc.returncode == 2
    assert proc.stderr.startswith("pmlab: error:") and "--budget" in proc.stderr, proc.stderr
    assert "unknown command" not in proc.stderr


def test_info_labels_the_memory_tiers_of_a_captured_tree(pmlab):
    from conftest import ROOT
    tree = ROOT / "tests" / "platform" / "sysfs" / "cxl-expander"
    info = json.loads(pmlab("info", "--json", "--sysfs-root", tree, check=True).stdout)
    labels = {n["node"]: n["label"] for n in info["memory_tiers"]["nodes"]}
    assert labels == {0: "local", 1: "remote-socket", 2: "cxl"}
    text = pmlab("info", "--sysfs-root", tree, check=True).stdout
    assert "node 2   cxl" in text and "dax0.0 of CXL region0" in text
    # Nothing of this machine beside a captured tree's tiers: its CPU or devices would read as the tree's.
    assert "CPU " not in text and "devices " not in text and set(info) == {"sysfs_root", "memory_tiers"}
    assert pmlab("info", "--sysfs-root", tree / "sys").returncode == 2  # the directory above sys/
    here = json.loads(pmlab("info", "--json", check=True).stdout)["memory_tiers"]
    assert any(n["label"] == "local" for n in here["nodes"])
    assert pmlab("info", "--sysfs-root", tree / "nowhere").returncode == 2


def test_a_captured_tree_reads_as_this_machine_and_is_never_mixed_with_another(pmlab, tmp_path):
    from conftest import ROOT
    script = ROOT / "scripts" / "capture_memory_tiers.sh"
    subprocess.run([str(script), str(tmp_path / "here")], check=True, capture_output=True, timeout=60)
    captured = json.loads(pmlab("info", "--json", "--sysfs-root", tmp_path / "here", check=True).stdout)
    live = json.loads(pmlab("info", "--json", check=True).stdout)
    assert captured["memory_tiers"]["nodes"] == live["memory_tiers"]["nodes"]
    again = subprocess.run([str(script), str(tmp_path / "here")], capture_output=True, text=True, timeout=60)
    assert again.returncode == 2 and "exists" in again.stderr, again.stderr


def _sysfs_entries(root):
    """Each file (its text) and link (its target) below root/sys, by path; the trees' .keep files left out,
    and of an HMAT initiator entry (a link in sysfs) only its name, which is all that is read of it."""
    out = {}
    for path in sorted((root / "sys").rglob("*")):
        if path.is_symlink():
            out[str(path.relative_to(root))] = "-> " + os.readlink(path)
        elif path.parent.name == "initiators" and path.name.startswith("node"):
            out[str(path.relative_to(root))] = "initiator"
        elif path.is_file() and path.name != ".keep":
            out[str(path.relative_to(root))] = path.read_text()
    return out


def test_the_capture_script_copies_every_tree_it_is_given_whole(pmlab, tmp_path):
    # The hand-made trees stand for machines this one is not: copied through the script (SYSFS_ROOT), each
    # comes back file for file, links and the nvdimm region's persistence domain behind a pmem device too.
    from conftest import ROOT
    script = ROOT / "scripts" / "capture_memory_tiers.sh"
    for tree in sorted((ROOT / "tests" / "platform" / "sysfs").iterdir()):
        if not (tree / "sys").is_dir():
            continue
        copy = tmp_path / tree.name
        subprocess.run([str(script), str(copy)], check=True, capture_output=True, timeout=60,
                       env=os.environ | {"SYSFS_ROOT": str(tree)})
        assert _sysfs_entries(copy) == _sysfs_entries(tree), tree.name
        assert (json.loads(pmlab("info", "--json", "--sysfs-root", copy, check=True).stdout)["memory_tiers"] ==
                json.loads(pmlab("info", "--json", "--sysfs-root", tree, check=True).stdout)["memory_tiers"])
    assert any("persistence_domain" in path for path in _sysfs_entries(tmp_path / "cxl-pmem-region"))
    bad = subprocess.run([str(script), str(tmp_path / "none")], capture_output=True, text=True, timeout=60,
                         env=os.environ | {"SYSFS_ROOT": str(tmp_path / "nowhere")})
    assert bad.returncode == 2 and "holds no sys/" in bad.stderr, bad.stderr


def test_a_numa_node_is_a_medium_and_an_absent_one_is_refused(pmlab, shm_dir, line_flush):
    out = shm_dir / "numa"
    proc = pmlab("run", "idio.dependent_load", "idio.i2_bandwidth", "--quick", "--no-progress", "--out", out,
                 "--set", "medium=numa:0,pool", "--filter", f"wss:4096/|op:load/flush:{line_flush}/size:4096/threads:1/",
                 "--duration", "0.02s")
    assert proc.returncode == 0, proc.stderr
    runs = [r for r in json.loads((out / "results.json").read_text())["runs"] if r["case"] in ("dependent_load", "i2_bandwidth")]
    numa = [r for r in runs if r["params"].get("medium") == "numa:0"]
    assert numa and all(r["status"] == "ok" for r in runs), [(r["name"], r["status"], r.get("reason")) for r in runs]
    assert {r["params"]["medium"] for r in runs} == {"numa:0", "pool"}
    notes = [dict(r["notes"]) if isinstance(r["notes"], list) else r["notes"] for r in numa]
    assert all("memory bound to node 0, every page checked on it" in n["placement"] for n in notes), notes
    absent = pmlab("run", "idio.dependent_load", "--quick", "--set", "medium=numa:999", "--out", shm_dir / "absent")
    assert absent.returncode == 2 and "no NUMA node 999 with memory" in absent.stderr, absent.stderr
    assert not (shm_dir / "absent" / "results.json").exists()
    # The peers allocate their own memory, which no node binding reaches: their numa points are left out.
    peers = pmlab("run", "idio.vs_likwid", "idio.vs_fio", "--quick", "--dry-run", "--set", "medium=numa:0,dram")
    assert peers.returncode == 0, peers.stderr
    assert "medium:dram" in peers.stdout and "numa" not in peers.stdout, peers.stdout
    # A suite-wide node reaches pool-only cases: they are left out, saying why, and the rest is planned.
    suite = pmlab("run", "primitives", "--quick", "--dry-run", "--set", "medium=numa:0")
    assert suite.returncode == 0, suite.stderr
    assert "primitives.log_target not run: it takes no value of --set medium" in suite.stderr, suite.stderr
    assert "medium:numa:0" in suite.stdout and "log_target" not in suite.stdout, suite.stdout
    # The ds structures run on a node in the two modes whose memory the harness provides.
    ds = pmlab("run", "ds", "--quick", "--dry-run", "--set", "medium=numa:0")
    assert ds.returncode == 0, ds.stderr
    names = [n for n in ds.stdout.splitlines() if n.startswith("ds.")]
    assert names and all(n.startswith("ds.ycsb/") and "/medium:numa:0/" in n for n in names), names
    assert {n.split("/mode:")[1].split("/")[0] for n in names} == {"dram", "persist"}, names
    # A selection whose every point is left out says why, not only that nothing matched.
    lockfree = pmlab("run", "lockfree.ring", "--quick", "--set", "medium=numa:0", "--out", shm_dir / "ring")
    assert lockfree.returncode == 2, lockfree.stderr
    assert "sweep points left out as redundant, the first lockfree.ring: " in lockfree.stderr, lockfree.stderr
    assert " runs on " in lockfree.stderr, lockfree.stderr
    alone = pmlab("run", "primitives.log_target", "--quick", "--dry-run", "--set", "medium=numa:0")
    assert alone.returncode == 2 and "must be one of pool" in alone.stderr, alone.stderr
    cpu = pmlab("run", "idio.dependent_load", "--quick", "--cpu-node", "999", "--out", shm_dir / "cpu")
    assert cpu.returncode == 2 and "--cpu-node 999" in cpu.stderr, cpu.stderr
    assert "nodes with CPUs it may use: " in cpu.stderr, cpu.stderr
    # A dry run plans the run the options allow: it refuses the same node.
    assert pmlab("run", "idio.dependent_load", "--quick", "--cpu-node", "999", "--dry-run").returncode == 2


def test_runs_started_together_write_to_two_default_directories(tmp_path):
    # Two runs given no --out, started at once (one run id, to the second): each gets a directory of its
    # own, and neither loses its results to the other.
    pmlab = ROOT / "build" / "pmlab"
    args = [str(pmlab), "run", "core.persist", "--quick", "--ops", "20", "--no-progress", "--filter",
            "medium:dram/.*size:64/"]
    runs = [subprocess.Popen(args, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]
    outputs = [r.communicate(timeout=300) for r in runs]
    assert all(r.returncode == 0 for r in runs), outputs
    made = sorted(p.name for p in (tmp_path / "results").iterdir())
    assert len(made) == 2 and all((tmp_path / "results" / name / "results.json").exists() for name in made), made
    # A run that ends before it writes leaves no empty directory.
    nothing = subprocess.run([*args[:2], "core.persist", "--filter", "no-such-run"], cwd=tmp_path, capture_output=True,
                             text=True, timeout=120)
    assert nothing.returncode == 2 and "nothing to run" in nothing.stderr, nothing.stderr
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == made
