"""What `pmlab report`, `pmlab compare` and `pmlab export` share on the command line.

They run as `python3 -m …` under the C++ `pmlab`, so their errors must read like its own: one line on
stderr, `pmlab: error: …`, whatever the subcommand (the README's promise), and the exit codes of its table.
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

PREFIX = "pmlab: error: "
EXIT_USAGE = 2  # every subcommand's exit code for bad usage


def _escaped(ch: str) -> str:
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8, kept by Python's surrogateescape
        return f"\\x{code - 0xDC00:02x}"
    return "".join(f"\\x{b:02x}" for b in ch.encode("utf-8", "surrogatepass"))


def printable(text: str) -> str:
    """TEXT with control characters and undecodable bytes written as \\xNN, as the C++ side writes them,
    so a path or a value from a file can neither break the line nor move the cursor. Backslashes are left
    as they are: messages quote names with repr(), which has escaped them already."""
    return "".join(_escaped(c) if ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or 0xD800 <= ord(c) <= 0xDFFF
                   else c for c in text)


def print_error(message: str) -> None:
    print(PREFIX + printable(message), file=sys.stderr)


def fail(message: str, code: int) -> int:
    """Reports MESSAGE and returns CODE, for `return fail(…)` in a command's main."""
    print_error(message)
    return code


class Parser(argparse.ArgumentParser):
    """argparse with pmlab's error line: argparse would print the usage and `PROG: error:` instead. The
    usage stays on --help, which the line points to."""

    def error(self, message: str) -> NoReturn:
        print_error(f"{message} (see {self.prog} --help)")
        sys.exit(EXIT_USAGE)
