"""The source tree's layout rules (scripts/check_layout.py): .clang-format's layout, functions in src/ of at most
80 lines unless a comment says why, files in src/ of at most 600 lines."""
import shutil
import subprocess
import sys

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "check_layout.py"


def _check(root):
    return subprocess.run([sys.executable, str(SCRIPT), str(root)], capture_output=True, text=True)


def test_the_tree_keeps_its_layout():
    proc = _check(ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _function(name, lines, excuse=""):
    body = "".join(f"  total += {i};\n" for i in range(lines - 4))
    return f"{excuse}int {name}() {{\n  int total = 0;\n{body}  return total;\n}}\n"


def test_each_breach_is_named(tmp_path):
    shutil.copy(ROOT / ".clang-format", tmp_path / ".clang-format")
    src = tmp_path / "src" / "pmlab" / "thing"
    src.mkdir(parents=True)
    (src / "long_function.cpp").write_text(_function("long_one", 81) + "\n" + _function("short_one", 80))
    excuse = "// This one is longer than 80 lines: it is a table.\n"
    (src / "excused.cpp").write_text(_function("excused_one", 120, excuse))
    (src / "long_file.cpp").write_text("".join(f"int v{i} = {i};\n" for i in range(601)))
    (src / "unformatted.cpp").write_text("int  f( ) {return 1;}\n")
    proc = _check(tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert any(line.startswith("src/pmlab/thing/long_function.cpp:1: long_one is 81 lines") for line in lines), lines
    assert not any("short_one" in line or "excused" in line for line in lines), lines
    assert "src/pmlab/thing/long_file.cpp: 601 lines (at most 600)" in lines, lines
    assert any(line.startswith("src/pmlab/thing/unformatted.cpp: not as .clang-format lays it out") for line in lines)
    assert len(lines) == 3, lines
