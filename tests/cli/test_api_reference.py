"""docs/api.md is generated from the public headers' doc comments (scripts/api_reference.py): it must be
current, and every public declaration must have a comment saying its contract."""
import shutil
import subprocess
import sys

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "api_reference.py"


def _check(include, out):
    return subprocess.run([sys.executable, str(SCRIPT), "--check", str(include), str(out)], capture_output=True,
                          text=True, timeout=60)


def test_the_reference_is_current_and_every_public_declaration_documented():
    proc = _check(ROOT / "include" / "pmlab", ROOT / "docs" / "api.md")
    assert proc.returncode == 0, proc.stdout
    text = (ROOT / "docs" / "api.md").read_text()
    for declared in ("int pmlab_ptm_run(", "uint64_t read(uint64_t offset) const;", "class CrashSubject",
                     "uint64_t append(unsigned lane, const void* data, size_t size);", "#define PMLAB_VERSION_MAJOR"):
        assert declared in text, declared
    assert "_M_" not in text and "namespace detail" not in text and "Impl& self()" not in text
    # version.h as the build configures it: the version, not CMake's placeholders.
    assert "@PROJECT_VERSION" not in text and '#define PMLAB_VERSION_STRING "0.' in text


def test_an_undocumented_declaration_or_a_stale_reference_is_reported(tmp_path):
    include = tmp_path / "pmlab"
    shutil.copytree(ROOT / "include" / "pmlab", include)
    out = tmp_path / "api.md"
    shutil.copy(ROOT / "docs" / "api.md", out)
    log = include / "log.hpp"
    log.write_text(log.read_text().replace("  void truncate();", "  void truncate();\n\n  void rotate(unsigned lane);"))
    proc = _check(include, out)
    assert proc.returncode == 1
    assert "undocumented: include/pmlab/log.hpp" in proc.stdout and "void rotate(unsigned lane);" in proc.stdout
    # Documented, it is in the API: the reference that lacks it is stale.
    log.write_text(log.read_text().replace("  void rotate(unsigned lane);", "  // Starts the lane over.\n  void rotate(unsigned lane);"))
    proc = _check(include, out)
    assert proc.returncode == 1 and "undocumented:" not in proc.stdout and "is not current" in proc.stdout, proc.stdout
