"""Command line: python3 -m pmlab_report RUN_DIR [--out FILE].

Exit codes: 0 report written; 2 bad usage; 3 results.json missing, unreadable or
invalid; 1 the report could not be written.
"""

from __future__ import annotations

import argparse
import os
import sys

from . import model, schema

PROG = "pmlab report"
EXIT_OK, EXIT_WRITE, EXIT_USAGE, EXIT_INPUT = 0, 1, 2, 3


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Write RUN_DIR/report.html (self-contained, offline) from RUN_DIR/results.json.")
    parser.add_argument("run_dir", metavar="RUN_DIR", help="run directory holding results.json")
    parser.add_argument("--out", metavar="FILE",
                        help="where to write the report (default: RUN_DIR/report.html)")
    return parser


def _fail(message: str, code: int) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return code


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)  # exits with 2 on bad usage
    results_path = os.path.join(args.run_dir, "results.json")
    out_path = args.out or os.path.join(args.run_dir, "report.html")

    try:
        document = schema.load(results_path)
    except schema.ResultsError as exc:
        return _fail(exc.summary(), EXIT_INPUT)

    out_dir = os.path.dirname(os.path.abspath(out_path))
    if not os.path.isdir(out_dir):
        return _fail(f"cannot write {out_path}: directory {out_dir} does not exist", EXIT_WRITE)

    # matplotlib is imported only now, so errors in the input are reported fast.
    import matplotlib

    matplotlib.use("Agg")  # never open a window; figures are rendered to PNG only
    from . import render

    html = render.render_report(model.from_document(document), args.run_dir)

    try:
        with open(out_path, "w", encoding="utf-8") as handle:
            handle.write(html)
    except OSError as exc:
        return _fail(f"cannot write {out_path}: {exc.strerror or exc}", EXIT_WRITE)
    print(out_path)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
