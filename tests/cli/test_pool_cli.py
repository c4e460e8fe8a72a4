"""`pmlab pool`: every bad input gets a one-line error, a documented exit code, and leaves the file as it was."""
import json
import os

import pytest

from conftest import digest

EXIT_USAGE, EXIT_INPUT = 2, 3


def one_line_error(proc, *needles):
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("pmlab: error: "), lines[0]
    for n in needles:
        assert n in lines[0], lines[0]


def test_create_info_check_remove_round_trip(pmlab, shm_dir):
    pool = shm_dir / "p.pool"
    out = pmlab("pool", "create", pool, "--size", "8M", "--layout", "bench", check=True)
    assert "emulated" in out.stdout
    info = json.loads(pmlab("pool", "info", pool, "--json", check=True).stdout)
    assert info["layout"] == "bench" and info["size_bytes"] == 8 << 20
    assert pmlab("pool", "check", pool, check=True).returncode == 0
    pmlab("pool", "remove", pool, check=True)
    assert not pool.exists()


def test_create_never_overwrites(pmlab, shm_dir):
    victim = shm_dir / "data.bin"
    victim.write_bytes(b"precious" * 1000)
    before = digest(victim)
    proc = pmlab("pool", "create", victim, "--size", "8M")
    assert proc.returncode == EXIT_INPUT
    one_line_error(proc, "already exists", "refusing to overwrite")
    assert digest(victim) == before


def test_create_in_missing_directory(pmlab, shm_dir):
    proc = pmlab("pool", "create", shm_dir / "nope" / "p.pool")
    assert proc.returncode == EXIT_INPUT
    one_line_error(proc, "does not exist")


def test_create_without_space(pmlab, shm_dir):
    proc = pmlab("pool", "create", shm_dir / "huge.pool", "--size", "1024T")
    assert proc.returncode == EXIT_INPUT
    one_line_error(proc, "no space")
    assert not (shm_dir / "huge.pool").exists()


@pytest.mark.parametrize("size", ["4K", "abc", "12Q", "-5"])
def test_create_bad_size(pmlab, shm_dir, size):
    proc = pmlab("pool", "create", shm_dir / "p.pool", "--size", size)
    assert proc.returncode == EXIT_USAGE
    assert proc.stderr.startswith("pmlab: error: ")
    assert not (shm_dir / "p.pool").exists()


def make_pool(pmlab, shm_dir, name="p.pool", layout="bench"):
    path = shm_dir / name
    pmlab("pool", "create", path, "--size", "4M", "--layout", layout, check=True)
    return path


@pytest.mark.parametrize("command", ["info", "check"])
def test_not_a_pool(pmlab, shm_dir, command):
    path = shm_dir / "notes.txt"
    path.write_bytes(b"x" * 8192)
    before = digest(path)
    proc = pmlab("pool", command, path)
    assert proc.returncode == EXIT_INPUT
    one_line_error(proc, "not a pmlab pool")
    assert digest(path) == before


@pytest.mark.parametrize("command", ["info", "check"])
def test_file_too_small(pmlab, shm_dir, command):
    path = shm_dir / "tiny"
    path.write_bytes(b"PMLABPOL")
    proc = pmlab("pool", command, path)
    assert proc.returncode == EXIT_INPUT
    one_line_error(proc, "too small")
    assert path.read_bytes() == b"PMLABPOL"


@pytest.mark.parametrize("command", ["info", "check"])
def test_corrupted_header(pmlab, shm_dir, command):
    path = make_pool(pmlab, shm_dir)
    data = bytearray(path.read_bytes())
    data[40] ^= 0xFF
    path.write_bytes(bytes(data))
    before = digest(path)
    proc = pmlab("pool", command, path)
    assert proc.returncode == EXIT_INPUT
    one_line_error(proc, "corrupted")
    assert digest(path) == before


@pytest.mark.parametrize("command", ["info", "check"])
def test_truncated(pmlab, shm_dir, command):
    path = make_pool(pmlab, shm_dir)
    os.truncate(path, 1 << 20)
    before = digest(path)
    proc = pmlab("pool", command, path)
    assert proc.returncode == EXIT_INPUT
    one_line_error(proc, "truncated")
    assert digest(path) == before


def test_missing_file(pmlab, shm_dir):
    proc = pmlab("pool", "info", shm_dir / "ghost.pool")
    assert proc.returncode == EXIT_INPUT
    one_line_error(proc, "no such pool file")


def test_wrong_layout_for_a_run(pmlab, shm_dir):
    path = make_pool(pmlab, shm_dir, layout="hashmap")
    before = digest(path)
    proc = pmlab("run", "core.persist", "--quick", "--ops", "100", "--pool", path, "--set", "medium=pool",
                 "--out", shm_dir / "out", "--no-progress")
    assert proc.returncode == EXIT_INPUT
    one_line_error(proc, "layout 'hashmap'")
    assert digest(path) == before


def test_read_only_pool_for_a_run(pmlab, shm_dir):
    path = make_pool(pmlab, shm_dir)
    path.chmod(0o444)
    before = digest(path)
    proc = pmlab("run", "core.persist", "--quick", "--ops", "100", "--pool", path, "--set", "medium=pool",
                 "--out", shm_dir / "out", "--no-progress")
    assert proc.returncode == EXIT_INPUT
    one_line_error(proc, "read-only")
    assert digest(path) == before
    # Read-only inspection still works.
    assert pmlab("pool", "check", path).returncode == 0


def test_run_on_a_file_that_is_not_a_pool(pmlab, shm_dir):
    path = shm_dir / "important.db"
    path.write_bytes(os.urandom(1 << 16))
    before = digest(path)
    proc = pmlab("run", "core.persist", "--quick", "--ops", "100", "--pool", path, "--set", "medium=pool",
                 "--out", shm_dir / "out", "--no-progress")
    assert proc.returncode == EXIT_INPUT
    one_line_error(proc, "not a pmlab pool")
    assert digest(path) == before


def test_remove_refuses_other_files(pmlab, shm_dir):
    path = shm_dir / "notes.txt"
    path.write_bytes(b"x" * 8192)
    proc = pmlab("pool", "remove", path)
    assert proc.returncode == EXIT_INPUT
    one_line_error(proc, "refusing to remove")
    assert path.exists()


def test_pool_in_use(pmlab, shm_dir):
    """A second user of a pool is refused while a run holds it (flock)."""
    import fcntl
    path = make_pool(pmlab, shm_dir)
    before = digest(path)
    with open(path, "rb") as holder:
        fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)
        for args in (["pool", "check", path], ["pool", "remove", path],
                     ["run", "core.persist", "--quick", "--ops", "100", "--pool", path, "--set", "medium=pool",
                      "--out", shm_dir / "out", "--no-progress"]):
            proc = pmlab(*args)
            assert proc.returncode == EXIT_INPUT, args
            one_line_error(proc, "in use")
    assert digest(path) == before
