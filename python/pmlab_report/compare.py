"""pmlab compare A B: what changed between two runs (two machines, or before/after a change).

A and B are run directories holding results.json, or directories whose subdirectories are such run
directories: the repetitions of one side. Runs are matched by name; a metric is compared when both sides
measured (or modelled) it. Per metric: the median of each side, the change, and whether it is
significant: a two-sided Mann-Whitney U test over the repetitions (exact while the splits of the pooled
samples number at most 5000, else the normal approximation with tie correction), or "one sample" when a side has a single value — then no
change is called significant. Whether a change is better or worse follows the unit: rates (…/s) are
better higher, times (ns, us, ms, s) lower; counts and ratios are reported as changed, neither better nor
worse.

Then what both sides decided: every target's verdict, each idiosyncrasy's classification, each
recommendation's impact class and each decision's answer, with the verdicts that changed named (all of
them with --all). A verdict that changed is not an exit code of its own: a noisy target may flip.

Exit codes: 0 no significant regression beyond the threshold; 1 at least one; 2 bad usage; 3 unreadable
input.
"""

from __future__ import annotations

import argparse
import html
import itertools
import json
import math
import os
import statistics
import sys
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from . import atomic, cli, decisions, migrate, model, schema

PROG = "pmlab compare"
EXIT_OK, EXIT_REGRESSION, EXIT_USAGE, EXIT_INPUT = 0, 1, 2, 3
TIME_UNITS = {"ns", "us", "ms", "s"}
# The exact test enumerates every split of the pooled samples: up to 5 against 5 repetitions (252 splits)
# and beyond while cheap; above this the normal approximation (thousands of metrics are compared).
EXACT_SPLITS = 5000


class InputError(Exception):
    pass


def run_directories(path: str) -> list[str]:
    """The run directories a side names: itself, or its subdirectories holding results.json (sorted)."""
    if os.path.isfile(os.path.join(path, "results.json")):
        return [path]
    if not os.path.isdir(path):
        raise InputError(f"{path}: no such directory")
    dirs = sorted(os.path.join(path, d) for d in os.listdir(path)
                  if os.path.isfile(os.path.join(path, d, "results.json")))
    if not dirs:
        raise InputError(f"{path}: holds no results.json, nor subdirectories that do")
    return dirs


@dataclass
class Series:
    unit: str
    kind: str
    values: list[float] = field(default_factory=list)


@dataclass
class Side:
    dirs: list[str]
    series: dict[tuple[str, str], Series]
    hashes: dict[str, set[str]]  # run name -> config hashes seen
    contexts: list[dict]
    # What each repetition decided: (subject, what) -> the verdicts, one per repetition that decided it.
    verdicts: dict[tuple[str, str], list[str]] = field(default_factory=dict)


def decided(doc: dict) -> dict[tuple[str, str], str]:
    """What one results document decided, by (subject, what): every target's verdict, each idiosyncrasy's
    classification, each recommendation's impact class and each decision's answer (its winner)."""
    results = model.from_document(migrate.upgrade(doc))
    out: dict[tuple[str, str], str] = {}
    for run in results.runs:
        if not run.ok:
            continue
        for t in run.targets:
            out[(run.name, f"target {t.get('metric')} {t.get('direction', '')} {t.get('threshold')}")] = \
                str(t.get("verdict"))
        if run.suite == "idio" and run.case == "classification":
            out[(run.name, "verdict")] = run.notes.get("verdict", "?")
            out[(run.name, "PMEM-specific")] = run.notes.get("pmem_specific", "?")
        if run.suite == "idio" and run.case == "recommendation":
            out[(run.name, "impact class")] = run.notes.get("impact_class", "?")
    for outcome in decisions.answer_all(results.context, results.runs):
        for answer in outcome.answers:
            by = ", ".join(f"{k}={v}" for k, v in answer.by.items())
            out[(f"decision: {outcome.decision.question}" + (f" ({by})" if by else ""), "answer")] = answer.winner
    return out


@dataclass
class VerdictRow:
    subject: str
    what: str
    old: list[str]
    new: list[str]

    @property
    def changed(self) -> bool:
        return sorted(set(self.old)) != sorted(set(self.new))


def compare_verdicts(a: Side, b: Side) -> list[VerdictRow]:
    """Every verdict both sides reached, with each side's (one per repetition)."""
    return [VerdictRow(subject, what, a.verdicts[(subject, what)], b.verdicts[(subject, what)])
            for subject, what in sorted(a.verdicts.keys() & b.verdicts.keys())]


def load_side(path: str) -> Side:
    dirs = run_directories(path)
    series: dict[tuple[str, str], Series] = {}
    hashes: dict[str, set[str]] = {}
    contexts = []
    verdicts: dict[tuple[str, str], list[str]] = {}
    for d in dirs:
        try:
            doc = schema.load(os.path.join(d, "results.json"))
        except schema.ResultsError as exc:
            raise InputError(exc.summary()) from exc
        contexts.append(doc.get("context", {}))
        for key, verdict in decided(doc).items():
            verdicts.setdefault(key, []).append(verdict)
        for run in doc.get("runs", []):
            if run.get("status") != "ok":
                continue
            hashes.setdefault(run["name"], set()).add(str(run.get("config_hash")))
            for name, m in (run.get("metrics") or {}).items():
                v = m.get("value")
                if m.get("kind") == "published" or not _finite(v):
                    continue
                s = series.setdefault((run["name"], name), Series(m.get("unit", ""), m.get("kind", "measured")))
                s.values.append(float(v))
    return Side(dirs, series, hashes, contexts, verdicts)


def _finite(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def better_when(unit: str) -> str | None:
    """'higher' for rates, 'lower' for times, None where a change is neither better nor worse."""
    if unit.endswith("/s"):
        return "higher"
    if unit in TIME_UNITS:
        return "lower"
    return None


def mann_whitney_p(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided p-value of the Mann-Whitney U test of a against b."""
    n1, n2 = len(a), len(b)
    pooled = sorted((v, i) for i, v in enumerate(list(a) + list(b)))
    ranks = [0.0] * (n1 + n2)
    i = 0
    ties = 0.0
    while i < len(pooled):
        j = i
        while j + 1 < len(pooled) and pooled[j + 1][0] == pooled[i][0]:
            j += 1
        for k in range(i, j + 1):
            ranks[pooled[k][1]] = (i + j) / 2 + 1
        t = j - i + 1
        ties += t ** 3 - t
        i = j + 1
    u1 = sum(ranks[:n1]) - n1 * (n1 + 1) / 2
    mean = n1 * n2 / 2
    if math.comb(n1 + n2, n1) <= EXACT_SPLITS:
        # Exact: the share of all splits of the pooled ranks whose U is at least as far from the mean.
        observed = abs(u1 - mean)
        total = extreme = 0
        for chosen in itertools.combinations(range(n1 + n2), n1):
            u = sum(ranks[c] for c in chosen) - n1 * (n1 + 1) / 2
            total += 1
            extreme += abs(u - mean) >= observed - 1e-9
        return extreme / total
    n = n1 + n2
    var = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1)))
    if var <= 0:
        return 1.0
    z = (abs(u1 - mean) - 0.5) / math.sqrt(var)
    return math.erfc(max(z, 0.0) / math.sqrt(2))


@dataclass
class Row:
    run: str
    metric: str
    unit: str
    kind: str
    old: float
    new: float
    change: float | None  # (new - old) / |old|
    p: float | None        # None: one sample on a side
    better: str | None
    significant: bool
    verdict: str           # better | worse | changed | same | unclear


def compare(a: Side, b: Side, threshold: float, alpha: float = 0.05) -> list[Row]:
    rows = []
    for key in sorted(set(a.series) & set(b.series)):
        sa, sb = a.series[key], b.series[key]
        old, new = statistics.median(sa.values), statistics.median(sb.values)
        change = (new - old) / abs(old) if old != 0 else (0.0 if new == old else None)
        p = mann_whitney_p(sa.values, sb.values) if len(sa.values) >= 2 and len(sb.values) >= 2 else None
        better = better_when(sa.unit)
        significant = p is not None and p < alpha and change is not None and abs(change) > threshold
        if change is not None and abs(change) <= threshold:
            verdict = "same"
        elif p is None or not significant:
            verdict = "unclear"
        elif better is None:
            verdict = "changed"
        else:
            verdict = "better" if (change > 0) == (better == "higher") else "worse"
        rows.append(Row(key[0], key[1], sa.unit, sa.kind, old, new, change, p, better, significant, verdict))
    return rows


def setup_differences(a: Side, b: Side) -> list[str]:
    """What differs between the sides' setups (a before/after comparison expects git to differ)."""
    notes = []
    for label, get in (("git revision", lambda c: c.get("git_revision")),
                       ("CPU", lambda c: (c.get("cpu") or {}).get("model")),
                       ("pool medium", lambda c: (c.get("pool") or {}).get("medium") if c.get("pool") else None),
                       ("durability domain", lambda c: c.get("durability_domain")),
                       ("run control", lambda c: json.dumps(c.get("run_control"), sort_keys=True))):
        va = {str(get(c)) for c in a.contexts}
        vb = {str(get(c)) for c in b.contexts}
        if va != vb:
            notes.append(f"{label}: {', '.join(sorted(va))} -> {', '.join(sorted(vb))}")
    return notes


def _fmt(v: float | None, digits: int = 4) -> str:
    if v is None:
        return "-"
    return f"{v:.{digits}g}"


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{100 * v:+.1f}%"


def text_report(rows: Sequence[Row], a: Side, b: Side, only_a: Iterable[str], only_b: Iterable[str],
                show_all: bool) -> str:
    out = [f"A: {', '.join(a.dirs)} ({len(a.dirs)} repetition(s))",
           f"B: {', '.join(b.dirs)} ({len(b.dirs)} repetition(s))"]
    out += [f"setups differ: {n}" for n in setup_differences(a, b)]
    shown = [r for r in rows if show_all or r.verdict != "same"]
    shown.sort(key=lambda r: (r.verdict != "worse", r.verdict != "better", -abs(r.change or 0)))
    width = max([len(f"{r.run} {r.metric}") for r in shown] + [20])
    out.append(f"{'run metric':<{width}}  {'A':>11}  {'B':>11}  {'change':>8}  {'p':>7}  verdict")
    for r in shown:
        p = "1 sample" if r.p is None else f"{r.p:.3f}"
        out.append(f"{r.run + ' ' + r.metric:<{width}}  {_fmt(r.old):>11}  {_fmt(r.new):>11}  {_pct(r.change):>8}  "
                   f"{p:>7}  {r.verdict}{' (' + r.unit + ')' if r.unit else ''}")
    counts = {v: sum(1 for r in rows if r.verdict == v) for v in ("worse", "better", "changed", "unclear", "same")}
    out.append(f"{len(rows)} metrics compared: " + ", ".join(f"{n} {v}" for v, n in counts.items()))
    verdicts = compare_verdicts(a, b)
    for v in verdicts:
        if v.changed or show_all:
            out.append(f"verdict {'changed' if v.changed else 'same'}: {v.subject} {v.what}: "
                       f"{'/'.join(v.old)} -> {'/'.join(v.new)}")
    out.append(f"{len(verdicts)} verdicts compared: {sum(v.changed for v in verdicts)} changed")
    only_a, only_b = sorted(only_a), sorted(only_b)
    if only_a:
        out.append(f"{len(only_a)} runs only in A (e.g. {only_a[0]})")
    if only_b:
        out.append(f"{len(only_b)} runs only in B (e.g. {only_b[0]})")
    return "\n".join(out) + "\n"


def html_report(rows: Sequence[Row], a: Side, b: Side, threshold: float) -> str:
    e = html.escape
    body = []
    for r in sorted(rows, key=lambda r: (r.run, r.metric)):
        color = {"worse": "#fde0dc", "better": "#e0f3e0"}.get(r.verdict, "")
        body.append(f"<tr style='background:{color}'><td>{e(r.run)}</td><td>{e(r.metric)}</td><td>{e(r.unit)}</td>"
                    f"<td>{e(r.kind)}</td><td>{_fmt(r.old)}</td><td>{_fmt(r.new)}</td><td>{_pct(r.change)}</td>"
                    f"<td>{'1 sample' if r.p is None else f'{r.p:.3f}'}</td><td>{e(r.verdict)}</td></tr>")
    notes = "".join(f"<li>{e(n)}</li>" for n in setup_differences(a, b))
    import matplotlib

    matplotlib.use("Agg")  # figures are rendered to PNG only, never shown
    from .compare_figures import overlay_html

    figures = overlay_html(rows, a, b)
    return ("<!doctype html><html><head><meta charset='utf-8'><title>pmlab compare</title>"
            "<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse;font-size:13px}"
            "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}td:first-child,td:nth-child(2)"
            "{text-align:left}figure{margin:12px 0}figure img{max-width:100%}</style></head><body>"
            f"<h1>pmlab compare</h1><p>A: {e(', '.join(a.dirs))}<br>B: {e(', '.join(b.dirs))}<br>"
            f"threshold {100 * threshold:g}%, Mann-Whitney U at 0.05 over repetitions</p><ul>{notes}</ul>"
            f"{figures}<h2>Every metric compared</h2><table><thead><tr><th>run</th><th>metric</th><th>unit</th><th>kind</th><th>A</th><th>B</th>"
            "<th>change</th><th>p</th><th>verdict</th></tr></thead><tbody>"
            + "".join(body) + "</tbody></table></body></html>\n")


def _threshold(text: str) -> float:
    t = text.strip().rstrip("%")
    try:
        v = float(t) / 100
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"'{text}' is not a percentage (e.g. 5%)") from exc
    if not 0 <= v < 10:
        raise argparse.ArgumentTypeError(f"'{text}' is out of range")
    return v


def main(argv: list[str] | None = None) -> int:
    parser = cli.Parser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("a", metavar="A", help="run directory (or a directory of repetitions): the baseline")
    parser.add_argument("b", metavar="B", help="run directory (or a directory of repetitions): the contender")
    parser.add_argument("--threshold", type=_threshold, default=0.05, help="smallest change that counts (default 5%%)")
    parser.add_argument("--all", action="store_true", help="list unchanged metrics too")
    parser.add_argument("--html", metavar="FILE", help="also write the comparison as HTML")
    args = parser.parse_args(argv)
    try:
        a, b = load_side(args.a), load_side(args.b)
    except InputError as exc:
        return cli.fail(str(exc), EXIT_INPUT)
    rows = compare(a, b, args.threshold)
    names_a = {n for n, _ in a.series}
    names_b = {n for n, _ in b.series}
    sys.stdout.write(text_report(rows, a, b, names_a - names_b, names_b - names_a, args.all))
    if args.html:
        try:
            atomic.write_atomically(args.html, html_report(rows, a, b, args.threshold))
        except atomic.WriteError as exc:
            return cli.fail(str(exc), EXIT_INPUT)
    return EXIT_REGRESSION if any(r.verdict == "worse" for r in rows) else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
