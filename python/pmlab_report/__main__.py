"""Command line: python3 -m pmlab_report RUN_DIR [--out FILE].

Exit codes: 0 report written; 2 bad usage (also --out naming the input);
3 results.json missing, unreadable or invalid, or the report could not be written
(the message names the cause; an existing report is left as it was).
"""

from __future__ import annotations

import argparse
import os
import sys

from . import atomic, cli, model, schema

PROG = "pmlab report"
EXIT_OK, EXIT_USAGE, EXIT_INPUT, EXIT_WRITE = 0, 2, 3, 3


def _non_empty(text: str) -> str:
    if not text:
        raise argparse.ArgumentTypeError("an empty value is not allowed")
    return text


def _parser() -> argparse.ArgumentParser:
    parser = cli.Parser(
        prog=PROG,
        description="Write RUN_DIR/report.html (self-contained, offline) from RUN_DIR/results.json.")
    parser.add_argument("run_dir", metavar="RUN_DIR", type=_non_empty, help="run directory holding results.json")
    parser.add_argument("--out", metavar="FILE", type=_non_empty,
                        help="where to write the report (default: RUN_DIR/report.html)")
    return parser


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)  # exits with 2 on bad usage
    results_path = os.path.join(args.run_dir, "results.json")
    out_path = args.out or os.path.join(args.run_dir, "report.html")

    try:
        document = schema.load(results_path)
    except schema.ResultsError as exc:
        return cli.fail(exc.summary(), EXIT_INPUT)

    if _same_file(out_path, results_path):
        return cli.fail(f"--out {out_path} is the input results.json; the report would replace it", EXIT_USAGE)
    out_dir = os.path.dirname(os.path.abspath(out_path))
    if not os.path.isdir(out_dir):
        return cli.fail(f"cannot write {out_path}: directory {out_dir} does not exist", EXIT_WRITE)

    # matplotlib is imported only now, so errors in the input are reported fast.
    import matplotlib

    matplotlib.use("Agg")  # never open a window; figures are rendered to PNG only
    from . import render

    html = render.render_report(model.from_document(document), args.run_dir)

    try:
        atomic.write_atomically(out_path, html)
    except atomic.WriteError as exc:
        return cli.fail(str(exc), EXIT_WRITE)
    print(out_path)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
