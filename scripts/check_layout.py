#!/usr/bin/env python3
"""The source tree's layout rules, checked: every C and C++ file as .clang-format lays it out, no function in
src/ longer than MAX_FUNCTION_LINES and no file in src/ longer than MAX_FILE_LINES.

A function may be longer when a comment just above it says why: a line with "longer than 80 lines" among
the three lines before its first line. Function lengths come from lizard, which reads C and C++ without
compiling them.

Usage: check_layout.py [ROOT]   (ROOT: the checkout, by default this script's); exit 1 on a breach, with
one line for each, and 2 when a tool is missing.
"""
import pathlib
import shutil
import subprocess
import sys

MAX_FUNCTION_LINES = 80
MAX_FILE_LINES = 600
SUFFIXES = {".c", ".h", ".cpp", ".hpp"}
FORMATTED = ("src", "include", "tests", "examples", "subjects")
EXCUSE = "longer than 80 lines"


def sources(root, folders):
    for folder in folders:
        base = root / folder
        if base.is_dir():
            yield from sorted(p for p in base.rglob("*") if p.suffix in SUFFIXES and p.is_file())


def unformatted(root):
    clang_format = shutil.which("clang-format")
    if clang_format is None:
        sys.exit("check_layout: clang-format is not installed (scripts/setup.sh installs it)")
    breaches = []
    for path in sources(root, FORMATTED):
        proc = subprocess.run([clang_format, "--dry-run", "--Werror", f"--style=file:{root / '.clang-format'}",
                               str(path)], capture_output=True, text=True)
        if proc.returncode != 0:
            first = next((line for line in proc.stderr.splitlines() if "error:" in line), proc.stderr.strip())
            breaches.append(f"{path.relative_to(root)}: not as .clang-format lays it out ({first.strip()}); "
                            f"run clang-format -i --style=file on it")
    return breaches


def long_functions(root):
    try:
        import lizard
    except ImportError:
        sys.exit("check_layout: the Python package lizard is not installed (scripts/setup.sh installs it)")
    breaches = []
    for path in sources(root, ("src",)):
        text = path.read_text()
        lines = text.splitlines()
        for fn in lizard.analyze_file.analyze_source_code(str(path), text).function_list:
            if fn.length <= MAX_FUNCTION_LINES:
                continue
            above = lines[max(0, fn.start_line - 4):fn.start_line - 1]
            if any(EXCUSE in line for line in above):
                continue
            breaches.append(f"{path.relative_to(root)}:{fn.start_line}: {fn.name} is {fn.length} lines "
                            f"(at most {MAX_FUNCTION_LINES}, or a comment above it saying why it is {EXCUSE})")
    return breaches


def long_files(root):
    breaches = []
    for path in sources(root, ("src",)):
        count = len(path.read_text().splitlines())
        if count > MAX_FILE_LINES:
            breaches.append(f"{path.relative_to(root)}: {count} lines (at most {MAX_FILE_LINES})")
    return breaches


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
    breaches = unformatted(root) + long_functions(root) + long_files(root)
    for line in breaches:
        print(line)
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
