"""The floors of docs/architecture.md, as the build keeps them: no include reaches a floor above its own."""
import shutil
import subprocess
import sys

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "check_floors.py"


def _check(src):
    return subprocess.run([sys.executable, str(SCRIPT), str(src)], capture_output=True, text=True)


def test_no_include_reaches_up():
    proc = _check(ROOT / "src")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_an_upward_include_and_a_folder_on_no_floor_fail(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(ROOT / "src", src)
    design = src / "pmlab" / "ds" / "common" / "structure.hpp"
    design.write_text('#include "pmlab/bench/case.hpp"\n' + design.read_text())
    (src / "pmlab" / "newconcept").mkdir()
    proc = _check(src)
    assert proc.returncode == 1
    assert "src/pmlab/ds/common/structure.hpp:1: ds/ includes pmlab/bench/case.hpp, a floor above it" in proc.stdout
    assert "src/pmlab/newconcept/ stands on no floor" in proc.stdout
