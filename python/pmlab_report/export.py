"""pmlab export DIR --format csv|jsonl: results.json as one row per run x metric.

Every parameter of any run is its own column (empty where a run lacks it), beside the run's name, suite,
case, status and config hash, and the metric's name, value, unit, kind (measured, modelled, published)
and source (the model or publication of a modelled or published value). Runs without metrics (skipped,
errored) get one row with an empty metric, so nothing that ran disappears. Loadable by pandas, DuckDB or a
spreadsheet as it is.

Exit codes: 0 written; 2 bad usage; 3 unreadable input or unwritable output.
"""

from __future__ import annotations

import csv
import io
import json
import os
import sys

from . import atomic, cli, schema

PROG = "pmlab export"
FIXED = ["run", "suite", "case", "status", "config_hash", "metric", "value", "unit", "kind", "source"]


def param_column(name: str) -> str:
    """A parameter's column: its name, unless a fixed column has it."""
    return f"param_{name}" if name in FIXED else name


def rows(doc: dict) -> tuple[list[str], list[dict]]:
    params: list[str] = []
    for run in doc.get("runs", []):
        for name in run.get("params") or {}:
            if param_column(name) not in params:
                params.append(param_column(name))
    out = []
    for run in doc.get("runs", []):
        base = {"run": run["name"], "suite": run.get("suite"), "case": run.get("case"), "status": run.get("status"),
                "config_hash": run.get("config_hash")}
        for name, value in (run.get("params") or {}).items():
            base[param_column(name)] = value
        metrics = run.get("metrics") or {}
        if not metrics:
            out.append(dict(base, metric=None, value=None, unit=None, kind=None, source=None))
        for name, m in metrics.items():
            out.append(dict(base, metric=name, value=m.get("value"), unit=m.get("unit"), kind=m.get("kind"),
                            source=m.get("model") or m.get("source")))
    return FIXED[:5] + params + FIXED[5:], out


def as_csv(columns: list[str], records: list[dict]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for r in records:
        writer.writerow({k: ("" if v is None else v) for k, v in r.items()})
    return buf.getvalue()


def as_jsonl(columns: list[str], records: list[dict]) -> str:
    return "".join(json.dumps({c: r.get(c) for c in columns}) + "\n" for r in records)


def main(argv: list[str] | None = None) -> int:
    parser = cli.Parser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", metavar="DIR", help="run directory holding results.json")
    parser.add_argument("--format", choices=("csv", "jsonl"), default="csv")
    parser.add_argument("--out", metavar="FILE", help="write here (default: DIR/results.csv or DIR/results.jsonl)")
    args = parser.parse_args(argv)
    try:
        doc = schema.load(os.path.join(args.run_dir, "results.json"))
    except schema.ResultsError as exc:
        return cli.fail(exc.summary(), 3)
    columns, records = rows(doc)
    text = as_csv(columns, records) if args.format == "csv" else as_jsonl(columns, records)
    out = args.out or os.path.join(args.run_dir, f"results.{args.format}")
    try:
        atomic.write_atomically(out, text)
    except atomic.WriteError as exc:
        return cli.fail(str(exc), 3)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
