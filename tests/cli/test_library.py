"""libpmlab as a user's build sees it: installed headers that stand alone and include only each other, a
shared library that exports the public API and nothing else, the examples built against the
installation alone (find_package, pkg-config; shared and static) and recovering after kill -9, a design
of the user's own crash-tested with `pmlab crash --load`, and the Debian package."""
import json
import os
import pathlib
import random
import re
import shutil
import signal
import subprocess
import time

import pytest

from conftest import ROOT

PUBLIC = ROOT / "include" / "pmlab"
INCLUDE = re.compile(r'^\s*#\s*include\s+([<"])([^>"]+)[>"]', re.MULTILINE)


def _run(args, **kw):
    proc = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=240, **kw)
    assert proc.returncode == 0, f"{' '.join(map(str, args))}: {proc.stdout}{proc.stderr}"
    return proc


def include_problems(folder: pathlib.Path) -> list[str]:
    """Includes of a public header that are not other public headers (pmlab's internals, quoted paths)."""
    public = {p.name for p in folder.iterdir()} | {"version.h"}
    found = []
    for header in sorted(folder.iterdir()):
        if header.suffix not in (".h", ".hpp"):
            continue
        for quote, included in INCLUDE.findall(header.read_text()):
            if quote == '"' or (included.startswith("pmlab") and
                                (not included.startswith("pmlab/") or included[len("pmlab/"):] not in public)):
                found.append(f"{header.name} includes {quote}{included}")
    return found


def test_public_headers_include_only_public_headers(tmp_path):
    assert include_problems(PUBLIC) == []
    # The check sees an internal header slipped into a copy.
    copy = tmp_path / "pmlab"
    shutil.copytree(PUBLIC, copy)
    (copy / "log.hpp").write_text((copy / "log.hpp").read_text().replace(
        "#include <pmlab/error.hpp>", '#include <pmlab/error.hpp>\n#include "pmlab/primitives/log/log.hpp"'))
    (copy / "ptm.hpp").write_text((copy / "ptm.hpp").read_text().replace(
        "#include <pmlab/error.hpp>", "#include <pmlab/ptm/common/heap.hpp>"))
    assert include_problems(copy) == ['log.hpp includes "pmlab/primitives/log/log.hpp',
                                      "ptm.hpp includes <pmlab/ptm/common/heap.hpp"]


def test_each_installed_header_compiles_alone(prefix, tmp_path):
    headers = sorted((prefix / "include" / "pmlab").iterdir())
    assert {h.name for h in headers} >= {"pmlab.h", "version.h", "trace.h", "error.hpp", "ptm.hpp", "log.hpp",
                                         "pmlab.hpp", "crash.hpp", "map.hpp", "lockfree.hpp",
                                         "persist.hpp", "pool.hpp"}
    strict = ["-Wall", "-Wextra", "-Werror", "-pedantic", "-fsyntax-only", f"-I{prefix / 'include'}"]
    for header in headers:
        unit = tmp_path / f"{header.stem}_alone"
        # A declaration of its own: ISO C has no empty translation unit (version.h is only macros).
        text = f"#include <pmlab/{header.name}>\ntypedef int unit_{header.stem};\n"
        if header.suffix == ".h":
            unit.with_suffix(".c").write_text(text)
            _run(["cc", "-std=c99", *strict, unit.with_suffix(".c")])
        unit.with_suffix(".cpp").write_text(text)
        # The crash API, the persistence vocabulary and pools are C++20 (std::source_location); the rest of
        # the C++ API C++17.
        cxx20_only = header.name in ("crash.hpp", "persist.hpp", "pool.hpp")
        for std in ("-std=c++20",) if cxx20_only else ("-std=c++17", "-std=c++20"):
            _run(["c++", std, *strict, unit.with_suffix(".cpp")])


def test_the_shared_library_exports_the_public_api_only(prefix):
    library = next((prefix / "lib").glob("libpmlab.so.*.*.*"))
    names = _run(["nm", "-D", "--defined-only", "--format=posix", library]).stdout.split("\n")
    symbols = [line.split(" ")[0] for line in names if line]
    demangled = _run(["c++filt"], input="\n".join(symbols)).stdout.split("\n")
    outside = [d for d in demangled if d and not (
        re.fullmatch(r"pmlab_\w+(@@PMLAB_0\.1)?", d) or d == "PMLAB_0.1" or
        re.match(r"(typeinfo for |typeinfo name for |vtable for )?pmlab::v0::", d))]
    assert outside == [], outside[:20]
    # Every function the C header declares is there.
    declared = set(re.findall(r"^[a-z].*?\b(pmlab_\w+)\(", (PUBLIC / "pmlab.h").read_text(), re.MULTILINE))
    exported = {d.split("@")[0] for d in demangled if d.startswith("pmlab_")}
    assert len(declared) > 20 and declared <= exported, declared - exported


def test_the_shared_library_reads_its_thread_locals_without_a_call(prefix):
    """Every operation reads thread-local words (persistence counters, the thread's last log slot): in a
    shared library each read would call __tls_get_addr unless they use the initial-exec model, which
    must still leave the library loadable with dlopen."""
    library = next((prefix / "lib").glob("libpmlab.so.*.*.*"))
    undefined = _run(["nm", "-D", "--undefined-only", "--format=posix", library]).stdout
    assert "__tls_get_addr" not in undefined
    loaded = _run(["python3", "-c", "import ctypes, sys; ctypes.CDLL(sys.argv[1]).pmlab_version()", library])
    assert loaded.returncode == 0


def _kill_midway(args, after_s):
    proc = subprocess.Popen([str(a) for a in args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(after_s)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    return proc.returncode


def _crash_with(pmlab, design, *args):
    """`pmlab crash --load DESIGN ARGS…` of an installation."""
    return subprocess.run([str(pmlab), "crash", "--load", str(design), *map(str, args)], capture_output=True,
                          text=True, timeout=240)


@pytest.fixture(scope="module")
def examples(prefix, tmp_path_factory):
    """The examples, each built from a copy of its folder against the installation only."""
    out = tmp_path_factory.mktemp("examples")
    env = {k: v for k, v in os.environ.items() if k not in ("CPATH", "LIBRARY_PATH", "LD_LIBRARY_PATH")}
    built = {}
    for name, binary in (("wal", "wal"), ("kv-store", "kv"), ("crash-design", "libcrash_design.so"),
                         ("id-set", "ids")):
        source = out / name
        shutil.copytree(ROOT / "examples" / name, source)
        _run(["cmake", "-S", source, "-B", source / "build", "-G", "Ninja", f"-DCMAKE_PREFIX_PATH={prefix}"], env=env)
        _run(["cmake", "--build", source / "build"], env=env)
        built[name] = source / "build" / binary
    built["stack"] = out / "crash-design" / "build" / "stack"
    pc_env = dict(env, PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig"))
    for variant, extra in (("bank-c", []), ("bank-c-static", ["STATIC=1"])):
        source = out / variant
        shutil.copytree(ROOT / "examples" / "bank-c", source)
        _run(["make", "-C", source, *extra], env=pc_env)
        built[variant] = source / "bank"
    # A C project built by CMake links the static library too (it names the C++ runtime the archive needs).
    source = out / "bank-c-cmake-static"
    shutil.copytree(ROOT / "examples" / "bank-c", source)
    _run(["cmake", "-S", source, "-B", source / "build", "-G", "Ninja", f"-DCMAKE_PREFIX_PATH={prefix}",
          "-DBANK_STATIC=ON"], env=env)
    _run(["cmake", "--build", source / "build"], env=env)
    built["bank-c-cmake-static"] = source / "build" / "bank"
    for static in ("bank-c-static", "bank-c-cmake-static"):
        assert "libpmlab" not in _run(["ldd", built[static]]).stdout, static
    assert "libpmlab" in _run(["ldd", built["bank-c"]]).stdout
    return built


@pytest.mark.parametrize("variant", ["bank-c", "bank-c-static", "bank-c-cmake-static"])
def test_the_c_bank_keeps_its_money_through_kill_9(examples, variant, shm_dir):
    bank = examples[variant]
    assert _run([bank, shm_dir, "check"]).stdout == "no bank yet\n"
    missing = subprocess.run([str(bank), str(shm_dir / "nowhere"), "check"], capture_output=True, text=True)
    assert missing.returncode == 3 and "is not a directory" in missing.stderr, missing.stderr
    assert "100000 in all" in _run([bank, shm_dir, "create", 100]).stdout
    again = subprocess.run([str(bank), str(shm_dir), "create", "100"], capture_output=True, text=True)
    assert again.returncode == 3 and "holds a bank already" in again.stderr, again.stderr
    assert "transfers" in _run([bank, shm_dir, "transfer", 500]).stdout
    rng = random.Random(7)
    for _ in range(3):
        assert _kill_midway([bank, shm_dir, "transfer", 10_000_000], rng.uniform(0.05, 0.4)) == -signal.SIGKILL
        checked = _run([bank, shm_dir, "check"])
        assert "100 accounts, 100000 in all" in checked.stdout, checked.stdout


def test_the_kv_store_keeps_a_prefix_of_its_loads_through_kill_9(examples, shm_dir):
    kv, pool = examples["kv-store"], shm_dir / "kv.pool"
    _run([kv, pool, "put", "colour", "blue"])
    _run([kv, pool, "put", "apple", "red"])
    _run([kv, pool, "put", "banana", "yellow"])
    assert _run([kv, pool, "get", "colour"]).stdout == "blue\n"
    assert subprocess.run([str(kv), str(pool), "del", "banana"]).returncode == 0
    assert subprocess.run([str(kv), str(pool), "get", "banana"], capture_output=True).returncode == 1
    assert _run([kv, pool, "scan", "b", 5]).stdout == "colour blue\n", "the B+-tree map scans in key order"
    assert _run([kv, pool, "scan", "", 1]).stdout == "apple red\n"
    rng = random.Random(11)
    for _ in range(3):
        assert _kill_midway([kv, pool, "load", 10_000_000], rng.uniform(0.05, 0.4)) == -signal.SIGKILL
        checked = _run([kv, pool, "check"])
        assert "loaded keys" in checked.stdout
    assert _run([kv, pool, "get", "colour"]).stdout == "blue\n"
    busy = subprocess.Popen([str(kv), str(pool), "load", "10000000"], stderr=subprocess.PIPE)
    time.sleep(0.2)
    second = subprocess.run([str(kv), str(pool), "check"], capture_output=True, text=True)
    busy.kill()
    busy.wait()
    assert second.returncode == 3 and "in use" in second.stderr, second.stderr


def test_the_wal_replays_every_returned_append_through_kill_9(examples, shm_dir):
    wal = examples["wal"]

    def newest(key, n):  # update i sets key i % 100 to i: the last of 1..n for this key
        return max((i for i in range(key or 100, n + 1, 100)), default=None)

    def shown():
        lines = _run([wal, shm_dir, "show"]).stdout.split("\n")
        head = lines[0].split()
        table = {int(k): int(v) for k, v in (line.split() for line in lines[1:] if line)}
        return int(head[0]), int(head[2]), int(head[6]), table

    assert "1000 updates logged, 0 checkpoint(s)" in _run([wal, shm_dir, "put", 1000]).stdout
    assert shown() == (1000, 0, 1000, {k: newest(k, 1000) for k in range(100)})
    assert "checkpoint of 100 keys, 1000 updates" in _run([wal, shm_dir, "checkpoint"]).stdout
    assert shown() == (1000, 1000, 0, {k: newest(k, 1000) for k in range(100)})
    # More updates than the log holds: it fills, is checkpointed, and takes the rest.
    assert "1500000 updates logged, 1 checkpoint(s) when the log filled" in _run([wal, shm_dir, "put", 1_500_000]).stdout
    total, from_snapshot, replayed, table = shown()
    assert total == 1_501_000 and from_snapshot + replayed == total and from_snapshot > 1000
    assert table == {k: newest(k, total) for k in range(100)}
    # Killed anywhere, in an append or in a checkpoint (a put too long to end first on any machine): every
    # update whose append returned, whole and in order (show fails on a gap), over the snapshot.
    rng = random.Random(3)
    for _ in range(4):
        assert _kill_midway([wal, shm_dir, "put", 10**12], rng.uniform(0.05, 0.6)) == -signal.SIGKILL
        before = total
        total, from_snapshot, replayed, table = shown()
        assert total >= before and from_snapshot + replayed == total
        assert table == {k: newest(k, total) for k in range(100)}


def test_the_crash_tested_design_runs_on_a_real_pool_and_keeps_every_returned_push(examples, shm_dir):
    stack, pool = examples["stack"], shm_dir / "stack.pool"
    assert _run([stack, pool, "push", 200]).stdout == "200 records\n"
    assert _run([stack, pool, "check"]).stdout == "200 records\n"
    rng = random.Random(5)
    for _ in range(3):
        assert _kill_midway([stack, pool, "push", 1_500_000], rng.uniform(0.02, 0.06)) == -signal.SIGKILL
        count = int(_run([stack, pool, "check"]).stdout.split()[0])
        assert count >= 200
    wrong = subprocess.run([str(examples["kv-store"]), str(pool), "check"], capture_output=True, text=True)
    assert wrong.returncode != 0 and "layout" in wrong.stderr, wrong.stderr


def test_the_debian_package_holds_everything_and_runs_unpacked(tmp_path):
    out = tmp_path / "deb"
    _run(["cpack", "-G", "DEB", "-B", out], cwd=ROOT / "build")
    deb = next(out.glob("pmlab_*.deb"))
    depends = _run(["dpkg-deb", "--field", deb, "Depends"]).stdout
    assert "libpmem2" in depends and "python3" in depends, depends
    listing = _run(["dpkg-deb", "--contents", deb]).stdout
    for path in ("./usr/bin/pmlab", "./usr/lib/pmlab/libpmlab-trace.so", "./usr/lib/libpmlab.a",
                 "./usr/include/pmlab/pmlab.h", "./usr/include/pmlab/version.h", "./usr/lib/pkgconfig/pmlab.pc",
                 "./usr/lib/cmake/pmlab/pmlabConfig.cmake", "./usr/share/pmlab/reference/README.md",
                 "./usr/share/pmlab/python/pmlab_report/__main__.py"):
        assert path in listing, path
    # Unpacked anywhere, its command runs and finds its own data, and a program builds against it.
    root = tmp_path / "root"
    _run(["dpkg-deb", "-x", deb, root])
    assert _run([root / "usr" / "bin" / "pmlab", "--version"]).stdout.startswith("pmlab ")
    source = tmp_path / "bank-c"
    shutil.copytree(ROOT / "examples" / "bank-c", source)
    _run(["make", "-C", source], env=dict(os.environ, PKG_CONFIG_PATH=str(root / "usr" / "lib" / "pkgconfig")))
    data = tmp_path / "data"
    data.mkdir()
    assert "100000 in all" in _run([source / "bank", data, "create", 100]).stdout


def test_a_design_of_ones_own_is_crash_tested_with_load(examples, prefix, tmp_path):
    pmlab, design = prefix / "bin" / "pmlab", examples["crash-design"]
    listed = _run([pmlab, "crash", "--load", design, "--list"]).stdout
    assert "mine.stack" in listed and "mine.broken-stack" in listed

    def crash(*args):
        return _crash_with(pmlab, design, *args)

    good = crash("mine.stack", "--quick", "--out", tmp_path / "good")
    assert good.returncode == 0, good.stderr
    runs = json.loads((tmp_path / "good" / "results.json").read_text())["runs"]
    assert len(runs) == 6  # adr and eadr, line, word and byte
    assert all(r["metrics"]["failures"]["value"] == 0 and r["metrics"]["states_checked"]["value"] > 50 for r in runs)
    # The broken twin is caught, at the design's own source line, with a replay that loads it again.
    broken = crash("mine.broken-stack", "--quick", "--domain", "adr", "--granularity", "line", "--out", tmp_path / "bad")
    assert broken.returncode == 1 and "stack.hpp:" in broken.stderr, broken.stderr
    replay = next(line for line in broken.stderr.splitlines() if "replay:" in line).split("replay: pmlab crash ")[1]
    assert replay.startswith(f"--load {design} mine.broken-stack ")
    again = crash(*replay.split()[2:], "--out", tmp_path / "replayed")
    assert again.returncode == 1 and "1 runs, 1 failures" in again.stdout, again.stdout + again.stderr
    # Mutation testing: every persistence call site of the design matters.
    mutated = crash("mine.stack", "--quick", "--mutate", "--out", tmp_path / "mutants")
    killed = re.search(r"(\d+) of (\d+) mutants killed", mutated.stderr)
    assert mutated.returncode == 0 and killed and killed.group(1) == killed.group(2) and int(killed.group(2)) >= 5, \
        mutated.stderr


def test_a_program_on_the_library_is_crash_tested_by_exec_as_it_is(examples, prefix, shm_dir, tmp_path):
    # The installed library's Persister tells the runtime of every flush and fence it issues: the program
    # needs no --pool (libpmem2 maps the pool), its stores are judged at their own write-backs and fences,
    # and a missing write-back is found in the design's own function.
    pmlab, stack, pool = prefix / "bin" / "pmlab", examples["stack"], shm_dir / "exec.pool"

    def crash_exec(*program, domain="adr", setup=f"rm -f {pool} && {stack} {pool} push 1", out=None, options=()):
        return subprocess.run([str(pmlab), "crash", "exec", "--setup", setup, "--check", f"{stack} {{}} check",
                               *options, "--domain", domain, "--granularity", "line", "--budget", "120", "--out",
                               str(tmp_path / (out or f"{domain}-{len(program)}")), "--", str(stack), str(pool), *program],
                              capture_output=True, text=True, timeout=240)

    good = crash_exec("push", "12")
    assert good.returncode == 0 and "24 fences, 36 write-backs" in good.stderr, good.stdout + good.stderr
    assert "1 runs, 0 failures" in good.stdout, good.stdout
    broken = crash_exec("push", "12", "--broken")
    assert broken.returncode == 1 and "24 fences, 24 write-backs" in broken.stderr, broken.stdout + broken.stderr
    assert "(a fence in stack::push(" in broken.stderr and "| stack: node" in broken.stderr, broken.stderr
    # A write-back is named at the design's own call, not at the library function that forwards it.
    assert "; at stack::push(" in broken.stderr and "libpmlab" not in broken.stderr, broken.stderr
    # The run creates its pool (open_or_create): a crash while it does leaves no pool, or a whole one that the
    # check opens (a half-made pool no open accepts failed every state of the create before).
    made = crash_exec("push", "3", setup=f"rm -f {pool}", out="made")
    assert made.returncode == 0 and "1 runs, 0 failures" in made.stdout, made.stdout + made.stderr
    # Named by --pool, the pool it made under another name and renamed is the one {} names, with no note.
    named = crash_exec("push", "3", setup=f"rm -f {pool}", out="named", options=("--pool", str(pool)))
    assert named.returncode == 0 and "neither mapped nor wrote" not in named.stderr, named.stderr
    # Under eADR the Persister issues no flush (the pool maps as byte-granular), and the twin's bug is none.
    eadr = crash_exec("push", "12", "--broken", domain="eadr")
    assert eadr.returncode == 0 and "24 fences, 0 write-backs" in eadr.stderr, eadr.stdout + eadr.stderr


def test_the_library_leaves_no_finding_of_its_own_in_the_examples_crash_exec_runs(examples, prefix, shm_dir,
                                                                                   tmp_path):
    # What `crash exec` finds in pmlab's own code would be the user's to read past in every run of their
    # program. The examples creating their pools (a PTM heap with a map, a log) and opening them (a heap and
    # a log, a set): no redundant write-back or empty fence in the library. Each check must also hold.
    pmlab, kv, ids, wal, bank = (prefix / "bin" / "pmlab", examples["kv-store"], examples["id-set"], examples["wal"],
                                 examples["bank-c"])
    kv_pool, ids_pool, wal_dir, bank_dir = shm_dir / "kv.pool", shm_dir / "ids.pool", shm_dir / "wal", shm_dir / "bank"
    runs = {
        "kv-create": (f"rm -f {kv_pool}", f"{kv} {{}} check", [kv, kv_pool, "load", 5], kv_pool),
        "kv-open": (f"rm -f {kv_pool} && {kv} {kv_pool} load 3", f"{kv} {{}} check", [kv, kv_pool, "load", 5], kv_pool),
        "wal-create": (f"rm -rf {wal_dir} && mkdir {wal_dir}", f"{wal} {{}} show", [wal, wal_dir, "put", 5], wal_dir),
        # Two pools, made in an order a crash cannot leave unchecked: the log, the heap, then the accounts.
        "bank-create": (f"rm -rf {bank_dir} && mkdir {bank_dir}", f"{bank} {{}} check", [bank, bank_dir, "create", 4],
                        bank_dir),
        "bank-open": (f"rm -rf {bank_dir} && mkdir {bank_dir} && {bank} {bank_dir} create 4", f"{bank} {{}} check",
                      [bank, bank_dir, "transfer", 5], bank_dir),
        "set-open": (f"rm -f {ids_pool} && {ids} {ids_pool} create", f"{ids} {{}} check 2",
                     [ids, ids_pool, "add", 2, 5], ids_pool),
    }
    for name, (setup, check, program, pool) in runs.items():
        proc = subprocess.run([str(pmlab), "crash", "exec", "--setup", setup, "--check", check, "--pool", str(pool),
                               "--granularity", "line", "--budget", "40", "--out", str(tmp_path / name), "--",
                               *map(str, program)], capture_output=True, text=True, timeout=240)
        assert proc.returncode == 0 and "1 runs, 0 failures" in proc.stdout, name + proc.stdout + proc.stderr
        findings = [f for run in json.loads((tmp_path / name / "results.json").read_text())["runs"]
                    for f in run.get("findings", [])]
        assert not [f for f in findings if f["in_library"]], (name, findings)


def test_a_threaded_program_on_the_library_holds_in_every_schedule_exec_tries(examples, prefix, shm_dir, tmp_path):
    # Four threads add to the installed library's lock-free set, each add marked as an operation: in the
    # program's own schedule and in two where the runtime pauses threads at persistence calls, every crash
    # state keeps each thread's returned adds. The same program acknowledging an add before making it fails.
    pmlab, ids, pool = prefix / "bin" / "pmlab", examples["id-set"], shm_dir / "ids.pool"

    def crash_exec(name, *extra):
        return subprocess.run([str(pmlab), "crash", "exec", "--setup", f"rm -f {pool} && {ids} {pool} create",
                               "--check", f"{ids} {{}} check 4", "--granularity", "line", "--budget", "200",
                               "--schedules", "3", "--out", str(tmp_path / name), "--", str(ids), str(pool), "add",
                               "4", "30", *extra], capture_output=True, text=True, timeout=240)

    good = crash_exec("good")
    assert good.returncode == 0 and "3 runs, 0 failures" in good.stdout, good.stdout + good.stderr
    assert good.stderr.count("pauses before persistence calls") == 2, good.stderr
    early = crash_exec("early", "--ack-early")
    assert early.returncode == 1 and "adds had returned" in early.stderr, early.stdout + early.stderr
    # The failure names the program's line (debug information by default), not the standard library's
    # thread machinery that the compiler inlined around it.
    assert "(ids.cpp:" in early.stderr and "invoke.h" not in early.stderr, early.stderr


def test_a_concurrent_design_of_ones_own_runs_threads_under_load(examples, prefix, tmp_path):
    pmlab, design = prefix / "bin" / "pmlab", examples["crash-design"]

    def crash(*args):
        return _crash_with(pmlab, design, *args)

    good = crash("mine.tally", "--quick", "--out", tmp_path / "tally")
    assert good.returncode == 0, good.stderr
    runs = json.loads((tmp_path / "tally" / "results.json").read_text())["runs"]
    assert runs and all(r["metrics"]["failures"]["value"] == 0 for r in runs)
    # The lost update exists only when the threads interleave between the read and the store.
    broken = crash("mine.broken-tally", "--quick", "--domain", "adr", "--granularity", "line",
                   "--out", tmp_path / "lost")
    assert broken.returncode == 1 and "no sum of the adds that returned" in broken.stderr, broken.stderr


def test_load_refuses_what_it_cannot_use(examples, prefix):
    pmlab, design = prefix / "bin" / "pmlab", examples["crash-design"]

    def crash(*args):
        return subprocess.run([str(pmlab), "crash", *map(str, args)], capture_output=True, text=True, timeout=60)

    missing = crash("--load", "no-such.so", "mine.stack")
    assert missing.returncode == 3 and "no such file" in missing.stderr
    library = next((prefix / "lib").glob("libpmlab.so.*.*.*"))
    foreign = crash("--load", library, "mine.stack")
    assert foreign.returncode == 2 and "defines no crash subjects" in foreign.stderr
    twice = crash("--load", design, "--load", design, "mine.stack")
    assert twice.returncode == 3 and "exists already" in twice.stderr
    not_elf = crash("--load", ROOT / "README.md", "mine.stack")
    assert not_elf.returncode == 2 and "cannot load it" in not_elf.stderr
