"""Fixtures for driving the built `pmlab` binary as a user would."""
import hashlib
import os
import pathlib
import subprocess
import tempfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
# What crash exec keeps across runs goes beside the build, not into the user's own cache.
os.environ.setdefault("PMLAB_CACHE_DIR", str(ROOT / "build" / "test-cache"))


@pytest.fixture(scope="session")
def pmlab():
    binary = pathlib.Path(os.environ.get("PMLAB_BIN", ROOT / "build" / "pmlab"))
    if not binary.exists():
        pytest.fail(f"{binary} is missing: run `make build` first")

    def run(*args, check=False, env=None):
        full_env = dict(os.environ, **(env or {}))
        proc = subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True, timeout=300,
                              env=full_env)
        if check and proc.returncode != 0:
            raise AssertionError(f"pmlab {' '.join(map(str, args))} exited {proc.returncode}: {proc.stderr}")
        return proc

    return run


@pytest.fixture(scope="session")
def line_flush(pmlab):
    """The line write-back pmlab picks on this CPU (clwb, else clflushopt, else clflush): a run filtered to one
    instruction must name one the CPU has."""
    import json
    return json.loads(pmlab("info", "--json", check=True).stdout)["default_flush"]


@pytest.fixture
def shm_dir():
    base = "/dev/shm" if os.path.isdir("/dev/shm") else None
    with tempfile.TemporaryDirectory(prefix="pmlab-cli-", dir=base) as d:
        yield pathlib.Path(d)
        for p in pathlib.Path(d).iterdir():
            p.chmod(0o644)


def digest(path):
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


@pytest.fixture(scope="session")
def prefix(tmp_path_factory):
    """An installation of the build (cmake --install) into a temporary prefix, as `make install PREFIX=` does."""
    where = tmp_path_factory.mktemp("prefix")
    proc = subprocess.run(["cmake", "--install", str(ROOT / "build"), "--prefix", str(where)], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return where
