#!/usr/bin/env python3
"""Fails when a file under src/ includes from a floor above its own (docs/architecture.md).

A folder under src/pmlab/ is a concept and stands on one floor; a file may include from its own floor and
the floors below, never from above. A folder on no floor is an error too: a new concept must be placed.
The preloaded runtime (src/pmlab-trace) links nothing of pmlab's and may include only the trace and trap formats it
shares with the simulator.

    scripts/check_floors.py [SRC_DIR]      exit 0: no arrow up; 1: the arrows up, one a line
"""
import pathlib
import re
import sys

# Lowest first. Folders on one floor may include each other.
FLOORS = [
    ("common", "platform"),
    ("persist", "media", "record", "workload"),
    ("pool",),
    ("pmdk",),
    ("crashtest",),
    ("primitives", "ds", "lockfree", "ptm"),
    ("crash", "model", "profile"),
    ("api",),
    ("bench",),
    ("suites",),
    ("cli",),
]
FLOOR_OF = {folder: level for level, folders in enumerate(FLOORS) for folder in folders}
TRACE_RUNTIME_MAY_INCLUDE = {"pmlab/crash/exec/trace_format.hpp", "pmlab/crash/exec/trap_format.hpp"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"(pmlab(?:-trace)?/[^"]+)"', re.MULTILINE)


def violations(src: pathlib.Path) -> list[str]:
    found = []
    engine = src / "pmlab"
    for folder in sorted(p for p in engine.iterdir() if p.is_dir()):
        if folder.name not in FLOOR_OF:
            found.append(f"src/pmlab/{folder.name}/ stands on no floor: add it to FLOORS in {__file__} "
                         "and to docs/architecture.md")
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".cpp", ".hpp", ".h") or not path.is_file():
            continue
        relative = path.relative_to(src)
        text = path.read_text(errors="replace")
        for number, included in _includes(text):
            where = f"src/{relative}:{number}"
            if relative.parts[0] == "pmlab-trace":
                if included.startswith("pmlab/") and included not in TRACE_RUNTIME_MAY_INCLUDE:
                    found.append(f"{where}: the preloaded runtime includes {included} (it links nothing of pmlab's)")
                continue
            own, other = relative.parts[1], included.split("/")[1]
            if own in FLOOR_OF and other in FLOOR_OF and FLOOR_OF[other] > FLOOR_OF[own]:
                found.append(f"{where}: {own}/ includes {included}, a floor above it")
    return found


def _includes(text: str):
    for match in INCLUDE.finditer(text):
        yield text.count("\n", 0, match.start()) + 1, match.group(1)


def main() -> int:
    src = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[1] / "src")
    found = violations(src)
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} include(s) against the floors (docs/architecture.md)", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
