"""An installation as a user makes it (make install PREFIX=…): the command, the runtime crash exec
preloads, the published data and the report renderer, found from the prefix alone."""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tomllib

import pytest

from conftest import ROOT



def _env():
    # Nothing points back at the source tree: what the installation needs, it must find itself.
    return {k: v for k, v in os.environ.items()
            if k not in ("PMLAB_REFERENCE_DIR", "PMLAB_PYTHONPATH", "PMLAB_TRACE_RUNTIME", "PYTHONPATH")}


def test_the_layout(prefix):
    assert (prefix / "bin" / "pmlab").is_file()
    assert (prefix / "lib" / "pmlab" / "libpmlab-trace.so").is_file()
    assert (prefix / "share" / "pmlab" / "reference" / "README.md").is_file()
    assert (prefix / "share" / "pmlab" / "python" / "pmlab_report" / "__main__.py").is_file()
    assert not list((prefix / "share" / "pmlab" / "python").rglob("__pycache__"))


def test_a_moved_installation_runs_reports_and_reads_its_own_data(prefix, tmp_path):
    moved = tmp_path / "moved"
    shutil.copytree(prefix, moved)
    pmlab = moved / "bin" / "pmlab"
    version = subprocess.run([str(pmlab), "--version"], capture_output=True, text=True, env=_env())
    assert version.returncode == 0 and version.stdout.startswith("pmlab "), version.stderr
    out = tmp_path / "run"
    proc = subprocess.run([str(pmlab), "run", "model.xpbuffer", "--quick", "--no-progress", "--out", str(out)],
                          capture_output=True, text=True, env=_env())
    assert proc.returncode == 0, proc.stderr
    data = json.loads((out / "results.json").read_text())["context"]["reference_data"]
    assert data == {"directory": str(moved / "share" / "pmlab" / "reference"), "found_by": "install prefix",
                    "missing": []}
    report = subprocess.run([str(pmlab), "report", str(out)], capture_output=True, text=True, env=_env())
    assert report.returncode == 0, report.stderr
    assert "model.xpbuffer" in (out / "report.html").read_text()
    # crash exec finds the runtime it preloads under the prefix (this program maps no pool: its own error).
    traced = subprocess.run([str(pmlab), "crash", "exec", "--check", "true", "--out", str(tmp_path / "exec"), "--",
                             "/bin/true"], capture_output=True, text=True, env=_env())
    assert "runtime" not in traced.stderr and "mapped no persistent memory" in traced.stderr, traced.stderr


def test_the_python_package_lists_every_subpackage():
    project = tomllib.loads((ROOT / "python" / "pyproject.toml").read_text())
    listed = set(project["tool"]["setuptools"]["packages"])
    found = {".".join(p.relative_to(ROOT / "python").parts[:-1])
             for p in (ROOT / "python" / "pmlab_report").rglob("__init__.py")}
    assert found == listed
    assert sys.version_info >= tuple(int(x) for x in project["project"]["requires-python"][2:].split("."))
