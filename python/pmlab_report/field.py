"""“Against the field”: where pmlab's designs stand beside the published figures of the field's best-known
designs, one table per family.

  PTM       ptm.target rows: the redo PTM's and PMDK's throughput measured side by side, their ratio with its
            interval, the redo PTM's fences per writing transaction — beside the fence counts published
            for Quadra, Trinity and RomulusLog ([DurableTx]).
  Indexes   ds.target rows: our persist-mode structure against PMDK's example map on the same workload
            stream — beside the ratios FPTree, the RECIPE-converted indexes and the durable sets published.
  Scaling   ptm.scaling and ds.scaling rows: throughput at T threads / at 1 thread, the target verdict, and
            the probes of the multi-thread run (cores the host gave it, core-to-core latency).

Every number is labelled: measured (this run) or published (a docs/references.md key and where in the
source). A published figure is only put beside ours when it shares our metric and our baseline; the others
are listed with their own baseline, and where none is comparable the table says "not published in a
comparable form". A family whose rows are absent is left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Callable, Iterable, Sequence

from .findings import Evidence
from .model import MEASURED, Metric, Results, Run, is_number
from .units import DASH, format_quantity, sig

Badge = Callable[[Metric], str]
# The title of a column badged " +model": its cells are modelled from this run's own inputs (the model
# is named in each row's metric), not measured.
MODELLED_COLUMN = "modelled from this run's inputs, not measured"
NOT_COMPARABLE = "not published in a comparable form"
# Two cores are "near" when the runs' probe moves a line between them in under this (bench::kNearCoresNs,
# which splits the scaling repetitions into scaling_near_cores and scaling_far_cores).
NEAR_CORES_NS = 100


@dataclass(frozen=True)
class Published:
    """One figure of the field as its source states it."""
    design: str
    family: str                  # ptm | index | scaling
    metric: str                  # what the figure measures, in words
    value: float | None          # None: no figure found in a form comparable with ours
    text: str                    # the value as the source words it ("1", "up to 8.2×")
    baseline: str                # what a ratio is relative to ("" for an absolute count)
    source: str                  # docs/references.md key
    where: str                   # where in the source
    comparable: bool             # same metric and baseline as the pmlab column it would stand beside
    beside: tuple[str, ...] = ()  # pmlab structures the figure concerns (indexes)
    kind: str = ""               # "fences" for fences per writing transaction


# The sources are the papers' abstracts and the authors' artifact; a figure read off a plot is not taken.
PUBLISHED: tuple[Published, ...] = (
    Published("Quadra", "ptm", "fences per writing transaction", 1, "1", "", "[DurableTx]",
              "the authors' artifact README (pramalhe/durabletx), list of PTMs", True, kind="fences"),
    Published("Trinity", "ptm", "fences per writing transaction", 2, "2", "", "[DurableTx]",
              "the authors' artifact README (pramalhe/durabletx), list of PTMs", True, kind="fences"),
    Published("RomulusLog", "ptm", "fences per writing transaction", 4, "4", "", "[DurableTx]",
              "the authors' artifact README (pramalhe/durabletx), list of PTMs; [Romulus] abstract: at most "
              "four persistence fences whatever the transaction size", True, kind="fences"),
    Published("Romulus", "ptm", "throughput, update-only workloads", 2, "2×",
              "the state-of-the-art PTMs it was compared with (not named in the abstract)", "[Romulus]",
              "abstract", False),
    Published("OneFile", "ptm", "throughput against PMDK's transactions", None, "", "PMDK's transactions",
              "[OneFile]", "no figure against PMDK on these workloads was found in a form that can be quoted",
              False),
    Published("FPTree", "index", "throughput", 8.2, "up to 8.2×",
              "the state-of-the-art persistent trees it was compared with, at several emulated SCM latencies",
              "[FPTree]", "abstract", False, beside=("bptree",)),
    Published("RECIPE-converted indexes", "index", "throughput, multi-threaded workloads", 5.2, "up to 5.2×",
              "hand-crafted PM indexes, on Intel DC Persistent Memory", "[RECIPE]", "abstract", False,
              beside=("bptree", "hashtable")),
    Published("P-CLHT (RECIPE)", "index", "throughput, YCSB", 2.4, "up to 2.4×",
              "CCEH (cacheline-conscious extendible hashing)", "[RECIPE]", "abstract", False,
              beside=("hashtable",)),
    Published("durable sets (SOFT, Link-free)", "index", "throughput, durable hash tables", 3.3, "up to 3.3×",
              "“existing technology” (the abstract's words)", "[DurableSets]", "abstract", False,
              beside=("hashtable",)),
)

PTM_WORKLOADS = ("sps-1", "sps-4", "sps-16", "sps-64", "hashmap", "queue", "bptree", "bank")
DS_WORKLOADS = ("a", "b", "c", "d", "e", "f", "write-only")


def published(family: str, table: Iterable[Published] | None = None) -> list[Published]:
    return [p for p in (PUBLISHED if table is None else table) if p.family == family]


# --------------------------------------------------------------------------- cells


def _order(value, preferred: Sequence[str]) -> tuple:
    return (preferred.index(value) if value in preferred else len(preferred), str(value))


def _interval(metric: Metric | None, target: dict | None = None) -> tuple[float, float] | None:
    """The 95 % interval of a metric (its stats), else the one the runner judged the target with."""
    stats = (metric.stats if metric else None) or {}
    if is_number(stats.get("ci_low")) and is_number(stats.get("ci_high")):
        return stats["ci_low"], stats["ci_high"]
    if target and is_number(target.get("ci_low")) and is_number(target.get("ci_high")):
        return target["ci_low"], target["ci_high"]
    return None


def _ratio(metric: Metric | None, target: dict | None = None) -> str:
    if metric is None or not is_number(metric.value):
        return DASH
    text = f"{escape(sig(metric.value))}×"
    ci = _interval(metric, target)
    if ci:
        text += f' <span class="ci" title="95 % interval over the repetitions">[{escape(sig(ci[0]))}, ' \
                f"{escape(sig(ci[1]))}]</span>"
    else:
        text += ' <span class="ci" title="a single sample: no interval">(no CI)</span>'
    return text


def _quantity(metric: Metric | None) -> str:
    if metric is None or not is_number(metric.value):
        return DASH
    return escape(format_quantity(metric.value, metric.unit))


def _average(metric: Metric | None) -> str:
    """A count per operation: a mean, so 1.00 rather than 1."""
    if metric is None or not is_number(metric.value):
        return DASH
    return escape(sig(metric.value, keep_integers=False))


def _target(run: Run, metric: str) -> dict | None:
    """The runner's judgement of `metric` on this run."""
    return next((t for t in run.targets if t.get("metric") == metric), None)


def _verdict(target: dict | None) -> str:
    if not target:
        return '<span class="muted">no target</span>'
    sign = {"at_least": "≥", "at_most": "≤"}.get(str(target.get("direction")), "")
    threshold = target.get("threshold")
    goal = f"{sign} {sig(threshold)}" if is_number(threshold) else ""
    verdict = str(target.get("verdict") or "")
    css = verdict if verdict in ("met", "missed", "unclear") else "na"
    badge = f' <span class="badge verdict-{css}">{escape(verdict)}</span>' if verdict else ""
    return f"{escape(goal)}{badge}"


def _pub_badge(p: Published) -> str:
    return (f'<span class="badge kind-published" title="published: {escape(p.source)}, {escape(p.where)}">'
            f"pub {escape(p.source)}</span>")


def _figure(p: Published) -> str:
    """A published figure with its design and source, or the plain statement that none can be quoted."""
    if p.value is None:
        return f"{escape(p.design)}: {NOT_COMPARABLE} {escape(p.source)}"
    return f"{escape(p.design)} {escape(p.text)}{_pub_badge(p)}"


def _head(columns: Sequence[str], badge: Badge) -> str:
    """Header cells; a name ending in " +m" is measured in this run, " +model" modelled from it, " +p"
    published: its badge follows."""
    cells = []
    for name in columns:
        kind = ""
        if name.endswith(" +m"):
            name, kind = name[:-3], badge(Metric(None, "", MEASURED))
        elif name.endswith(" +model"):
            name, kind = name[:-7], (f' <span class="badge kind-modelled" title="{escape(MODELLED_COLUMN)}">'
                                     "model</span>")
        elif name.endswith(" +p"):
            name, kind = name[:-3], ' <span class="badge kind-published">pub</span>'
        cells.append(f"<th>{escape(name)}{kind}</th>")
    return "<tr>" + "".join(cells) + "</tr>"


def _published_table(figures: Sequence[Published]) -> str:
    if not figures:
        return ""
    rows = "".join(
        f"<tr><td>{escape(p.design)}</td><td>{escape(p.metric)}</td>"
        f"<td class=\"num\">{escape(p.text) if p.value is not None else DASH}</td>"
        f"<td class=\"small\">{escape(p.baseline) or DASH}</td><td>{escape(p.source)}</td>"
        f"<td class=\"small\">{escape(p.where)}</td>"
        f"<td>{'yes' if p.comparable and p.value is not None else 'no'}</td></tr>" for p in figures)
    return ('<p class="muted small">Published, for comparison (quoted, not measured here; full entries in '
            "docs/references.md):</p>"
            '<div class="scroll"><table class="runs field"><thead><tr><th>design</th><th>figure</th>'
            '<th>value <span class="badge kind-published">pub</span></th><th>relative to</th><th>source</th>'
            "<th>where in the source</th><th>comparable with pmlab’s column</th></tr></thead>"
            f"<tbody>{rows}</tbody></table></div>")


def _side_by_side(run: Run, ours: str, peer: str, ratio: str, target: dict | None) -> str:
    """Our throughput, the peer's measured in the same run, and their ratio with its interval."""
    return (f'<td class="num">{_quantity(run.metrics.get(ours))}</td>'
            f'<td class="num">{_quantity(run.metrics.get(peer))}</td>'
            f'<td class="num">{_ratio(run.metrics.get(ratio), target)}</td>')


def _table(head: str, body: Sequence[str]) -> str:
    return (f'<div class="scroll"><table class="runs field"><thead>{head}</thead><tbody>{"".join(body)}'
            "</tbody></table></div>")


def _details(summary: str, body: str, rows: int) -> str:
    return (f"<details><summary><b>{escape(summary)}</b> "
            f'<span class="muted">({rows} row{"" if rows == 1 else "s"})</span></summary>{body}</details>')


def _span(values: Sequence[float], suffix: str = "×") -> str:
    values = sorted(v for v in values if is_number(v))
    if not values:
        return DASH
    low, high = sig(values[0], keep_integers=False), sig(values[-1], keep_integers=False)
    return f"{low}{suffix}" if low == high else f"{low}–{high}{suffix}"


def _relation(ours: float, figures: Sequence[Published]) -> str:
    """'as few as Quadra (1), fewer than Trinity (2) and RomulusLog (4)': ours against each count."""
    groups: dict[str, list[str]] = {}
    for p in figures:
        if p.value is None:
            continue
        if abs(ours - p.value) <= 0.05 * p.value:
            word = "as few as"
        else:
            word = "fewer than" if ours < p.value else "more than"
        groups.setdefault(word, []).append(f"{p.design} ({p.text})")
    parts = []
    for word in ("as few as", "fewer than", "more than"):
        names = groups.get(word)
        if names:
            parts.append(f"{word} {names[0] if len(names) == 1 else ', '.join(names[:-1]) + ' and ' + names[-1]}")
    return ", ".join(parts)


# --------------------------------------------------------------------------- PTM


def _ptm_section(runs: Sequence[Run], badge: Badge, evidence: str) -> str:
    rows = sorted((r for r in runs if r.suite == "ptm" and r.case == "target" and r.ok
                   and is_number(r.value("redo_vs_pmdk"))),
                  key=lambda r: _order(r.param("workload"), PTM_WORKLOADS))
    if not rows:
        return ""
    field = published("ptm")
    fences = [p for p in field if p.kind == "fences"]
    others = [p for p in field if p.kind != "fences"]
    comparable_tput = [p for p in others if p.comparable and p.value is not None]
    tput_cell = ("<br>".join(_figure(p) for p in comparable_tput) if comparable_tput
                 else f"{NOT_COMPARABLE}<br><span class=\"muted\">(listed below with their own baselines: "
                 + escape("; ".join(f"{p.design} {p.source}" for p in others)) + ")</span>")
    fence_cell = "<br>".join(_figure(p) for p in fences)
    body = []
    for i, r in enumerate(rows):
        target = _target(r, "redo_vs_pmdk")
        span = ""
        if i == 0:
            span = (f'<td rowspan="{len(rows)}" class="pub">{fence_cell}</td>'
                    f'<td rowspan="{len(rows)}" class="pub">{tput_cell}</td>')
        body.append(
            f"<tr><td>{escape(str(r.param('workload')))}</td>"
            + _side_by_side(r, "redo_throughput", "pmdk_throughput", "redo_vs_pmdk", target)
            + f'<td class="nowrap">{_verdict(target)}</td>'
            f'<td class="num">{_average(r.metrics.get("redo_fences_per_write_tx"))}</td>{span}</tr>')
    head = _head(("workload", "redo PTM (pmlab) +m", "PMDK, same run +m", "redo / PMDK [95 % CI] +m", "target",
                  "fences per writing tx (pmlab) +m", "the field: fences per writing tx +p",
                  "the field: throughput vs PMDK +p"), badge)
    table = _table(head, body)

    ratios = [r.value("redo_vs_pmdk") for r in rows]
    ours_fences = [r.value("redo_fences_per_write_tx") for r in rows if is_number(r.value("redo_fences_per_write_tx"))]
    threads = sorted({r.param("threads", 1) for r in rows}, key=str)
    statement = (f"<b>pmlab:</b> the redo PTM ran {_span(ratios)} PMDK’s transactions on "
                 f"{escape(', '.join(str(r.param('workload')) for r in rows))} (measured side by side in this run, "
                 f"{escape('/'.join(str(t) for t in threads))} thread{'s' if threads != [1] else ''})")
    if ours_fences:
        worst = max(ours_fences)
        statement += (f", with at most {sig(worst)} fence{'s' if worst != 1 else ''} per writing transaction "
                      f"(measured): {escape(_relation(worst, fences))}.")
    else:
        statement += "; its fences per writing transaction were not measured in this run."
    literature = []
    counted = [p for p in fences if p.value is not None]
    if counted:
        fewest = min(counted, key=lambda p: p.value)
        literature.append(f"the fewest fences per writing transaction published are {escape(fewest.design)}’s "
                          f"{escape(fewest.text)} ({escape(fewest.source)})")
    if not comparable_tput:
        literature.append(f"a throughput ratio against PMDK’s transactions is {NOT_COMPARABLE}")
    if literature:
        statement += " <b>The literature:</b> " + "; ".join(literature) + "."
    return (f'<h3 id="field-ptm">PTM</h3><p class="small">{statement} {_link(evidence)}</p>'
            + _details("PTM: per workload, beside the field", table + _published_table(field), len(rows)))


# --------------------------------------------------------------------------- indexes


def _index_section(runs: Sequence[Run], badge: Badge, evidence: str) -> str:
    rows = [r for r in runs if r.suite == "ds" and r.case == "target" and r.ok and is_number(r.value("ratio"))]
    if not rows:
        return ""
    field = published("index")
    pairs: dict[tuple[str, str], list[Run]] = {}
    for r in rows:
        pairs.setdefault((str(r.param("structure")), str(r.param("peer"))), []).append(r)
    body = []
    for (ours, peer), cell in sorted(pairs.items()):
        cell.sort(key=lambda r: _order(str(r.param("workload")), DS_WORKLOADS))
        concerned = [p for p in field if ours in p.beside]
        comparable = [p for p in concerned if p.comparable and p.value is not None]
        if comparable:
            field_cell = "<br>".join(_figure(p) for p in comparable)
        else:
            named = "; ".join(f"{p.design} {p.source}" for p in concerned)
            field_cell = NOT_COMPARABLE + (f'<br><span class="muted">(listed below, against other PM indexes: '
                                           f"{escape(named)})</span>" if named else "")
        for i, r in enumerate(cell):
            target = _target(r, "ratio")
            span = f'<td rowspan="{len(cell)}" class="pub">{field_cell}</td>' if i == 0 else ""
            body.append(
                f"<tr><td>{escape(ours)} / {escape(peer)}</td><td>{escape(str(r.param('workload')))}</td>"
                + _side_by_side(r, "throughput", "peer_throughput", "ratio", target)
                + f'<td class="num">{_ratio_plain(r.metrics.get("ratio_net_of_harness"))}</td>'
                f'<td class="nowrap">{_verdict(target)}</td>{span}</tr>')
    head = _head(("pmlab / PMDK’s map", "YCSB workload", "pmlab (persist) +m", "PMDK’s map, same run +m",
                  "ratio [95 % CI] +m", "ratio net of the harness +m", "target",
                  "the field: ratio vs PMDK’s maps +p"), badge)
    table = _table(head, body)
    ranges = "; ".join(f"{escape(ours)} {_span([r.value('ratio') for r in cell])} PMDK’s "
                       f"{escape(peer.removeprefix('pmdk-'))}"
                       for (ours, peer), cell in sorted(pairs.items()))
    statement = f"<b>pmlab:</b> {ranges} (measured on the same workload streams in this run). "
    comparable = [p for p in field if p.comparable and p.value is not None]
    others = [p for p in field if not p.comparable and p.value is not None]
    if comparable:
        statement += "<b>The literature:</b> " + "; ".join(_figure(p) for p in comparable) + "."
    else:
        names = sorted({p.design.split(" (")[0] for p in others})
        statement += (f"<b>The literature:</b> a ratio against PMDK’s example maps is {NOT_COMPARABLE}"
                      + (f"; {escape(', '.join(names))} publish theirs against other persistent-memory indexes"
                         if names else "") + ".")
    return (f'<h3 id="field-indexes">Indexes</h3><p class="small">{statement} {_link(evidence)}</p>'
            + _details("Indexes: per workload, beside the field", table + _published_table(field), len(rows)))


def _ratio_plain(metric: Metric | None) -> str:
    if metric is None or not is_number(metric.value):
        return DASH
    return f"{escape(sig(metric.value))}×"


# --------------------------------------------------------------------------- scaling


def _probe_run(row: Run, runs: Sequence[Run]) -> Run | None:
    """The multi-thread run a scaling row was derived from: same suite, every parameter of the row equal,
    carrying the probes (cores_available, core_to_core_ns)."""
    for r in runs:
        if r.suite != row.suite or r.case == row.case or not r.ok:
            continue
        if "cores_available" not in r.metrics and "core_to_core_ns" not in r.metrics:
            continue
        if all(r.params.get(k) == v for k, v in row.params.items()):
            return r
    return None


def _placed(metric: Metric | None) -> str:
    """A scaling ratio over the repetitions of one placement of the cores, with how many there were."""
    if metric is None or not is_number(metric.value):
        return DASH
    n = len((metric.stats or {}).get("samples") or []) or 1
    return f'{_ratio(metric) if n > 1 else escape(sig(metric.value)) + "×"} <span class="ci">(n = {n})</span>'


def _ours(row: Run) -> bool:
    return row.param("ptm") != "pmdk" and not str(row.param("structure", "")).startswith("pmdk-")


def _design(row: Run) -> str:
    if row.suite == "ptm":
        name = "PMDK’s transactions" if row.param("ptm") == "pmdk" else f"{row.param('ptm')} PTM"
        return f"{name} ({row.param('durability', '?')})"
    return f"{row.param('structure', '?')} ({row.param('mode', '?')})"


def _scaling_section(runs: Sequence[Run], badge: Badge, links: dict[str, str]) -> str:
    rows = [r for r in runs if r.case == "scaling" and r.ok and is_number(r.value("scaling"))]
    if not rows:
        return ""
    rows.sort(key=lambda r: (r.suite != "ptm", not r.targets, not _ours(r), _design(r),
                             _order(str(r.param("workload")), PTM_WORKLOADS + DS_WORKLOADS)))
    field = published("scaling")
    comparable = [p for p in field if p.comparable and p.value is not None]
    field_cell = "<br>".join(_figure(p) for p in comparable) if comparable else NOT_COMPARABLE
    body, cores, latencies, near, apart = [], [], [], [], []
    for i, r in enumerate(rows):
        probe = r if "cores_available" in r.metrics else _probe_run(r, runs)
        available = probe.metrics.get("cores_available") if probe else None
        c2c = probe.metrics.get("core_to_core_ns") if probe else None
        threads = r.param("threads")
        if available and is_number(available.value):
            cores.append(available.value)
        if c2c and is_number(c2c.value):
            latencies.append(c2c.value)
        # SMT siblings share a core, and the probe reads them as one where the kernel said they share it.
        physical = probe.metrics.get("physical_cores") if probe else None
        expected = (min(threads, physical.value) if is_number(threads) and physical and is_number(physical.value)
                    else threads)
        short = (available is not None and is_number(available.value) and is_number(expected)
                 and available.value < 0.9 * expected)
        cores_html = _average(available)
        if short:
            cores_html = (f'<span class="caution" title="the host ran the threads on fewer cores than threads">'
                          f"{cores_html} ⚠</span>")
        note = r.notes.get("scaling", "")
        handoffs = r.metrics.get("record_handoffs_per_op") or (probe.metrics.get("record_handoffs_per_op")
                                                                if probe else None)
        for name, seen in (("scaling_near_cores", near), ("scaling_far_cores", apart)):
            if _target(r, "scaling") and is_number(r.value(name)):
                seen.append(r.value(name))
        span = f'<td rowspan="{len(rows)}" class="pub">{field_cell}</td>' if i == 0 else ""
        body.append(
            f"<tr><td>{escape(r.suite)}</td><td>{escape(_design(r))}</td>"
            f"<td>{escape(str(r.param('workload')))}</td><td class=\"num\">{escape(str(threads))}</td>"
            f'<td class="num" title="{escape(note)}">{_ratio(r.metrics.get("scaling"), _target(r, "scaling"))}</td>'
            f'<td class="nowrap">{_verdict(_target(r, "scaling"))}</td>'
            f'<td class="num">{_placed(r.metrics.get("scaling_near_cores"))}</td>'
            f'<td class="num">{_placed(r.metrics.get("scaling_far_cores"))}</td><td class="num">{cores_html}</td>'
            f'<td class="num">{_quantity(c2c)}</td><td class="num">{_average(handoffs)}</td>{span}</tr>')
    head = _head(("suite", "design", "workload", "threads", "T threads / 1 thread [95 % CI] +m", "target",
                  f"cores near (< {NEAR_CORES_NS:g} ns) +m", "cores apart +m", "cores available +m",
                  "core-to-core +m", "record hand-offs per operation +model",
                  "the field: T threads / 1 thread +p"), badge)
    table = _table(head, body)

    # The designs with a scaling target first, grouped, each with its range and verdicts; then the rest.
    targeted: dict[str, list[Run]] = {}
    for r in rows:
        if _target(r, "scaling"):
            targeted.setdefault(_design(r), []).append(r)
    said = []
    for design, cell in targeted.items():
        targets = [_target(r, "scaling") for r in cell]
        verdicts = sorted({str(t.get("verdict")) for t in targets if t.get("verdict")})
        thresholds = sorted({sig(t["threshold"]) for t in targets if is_number(t.get("threshold"))})
        said.append(f"{escape(design)} on {escape(', '.join(str(r.param('workload')) for r in cell))} "
                    f"{_span([r.value('scaling') for r in cell])}"
                    + (f" (target ≥ {escape('/'.join(thresholds))}: {escape(', '.join(verdicts))})"
                       if thresholds or verdicts else ""))
    rest = [r.value("scaling") for r in rows if _ours(r) and _design(r) not in targeted]
    peers = [r.value("scaling") for r in rows if not _ours(r)]
    threads = sorted({str(r.param("threads")) for r in rows})
    statement = (f"<b>pmlab</b>, throughput at {escape('/'.join(threads))} threads over 1 thread (measured): "
                 + "; ".join(said + ([f"its other designs and modes {_span(rest)}"] if rest else [])
                             + ([f"PMDK’s {_span(peers)}"] if peers else [])))
    if cores or latencies:
        statement += (f"; the host gave the threads {_span(cores, '')} cores"
                      + (f", core to core {_span(latencies, ' ns')}" if latencies else "")
                      + " (measured by the runs’ probes)")
    if near or apart:
        statement += (f"; split by where the host put the cores, the designs with a target scale "
                      f"{_span(near) if near else DASH} on cores near each other (a line moves between them in "
                      f"under {NEAR_CORES_NS:g} ns) and {_span(apart) if apart else DASH} apart: each record the "
                      "workload makes the threads share (its hand-offs per operation, modelled from the operation "
                      "streams) costs more apart")
    statement += f". <b>The literature:</b> 2-thread / 1-thread figures of the field: {NOT_COMPARABLE}."
    link = " ".join(_link(a, f"evidence ({s})") for s, a in links.items() if a)
    return (f'<h3 id="field-scaling">Scaling</h3><p class="small">{statement} {link}</p>'
            + _details("Scaling: per design and workload", table + _published_table(field), len(rows)))


# --------------------------------------------------------------------------- the section


def _link(anchor: str | None, text: str = "evidence") -> str:
    return f'<a href="#{escape(anchor)}">{escape(text)}</a>' if anchor else ""


def section(results: Results, badge: Badge) -> str:
    """The section's HTML, or "" when the run has none of the families' rows."""
    evidence = Evidence(results.runs)
    parts = [_ptm_section(results.runs, badge, evidence.for_case("ptm", "target")),
             _index_section(results.runs, badge, evidence.for_case("ds", "target")),
             _scaling_section(results.runs, badge, {s: evidence.for_case(s, "scaling") for s in ("ptm", "ds")
                                                    if any(r.suite == s and r.case == "scaling"
                                                           for r in results.runs)})]
    if not any(parts):
        return ""
    intro = ('<p class="muted small">Measured: this run, side by side on this machine. Published: quoted '
             "from the source named by its docs/references.md key, with where in the source; a published "
             "figure stands beside ours only when it shares our metric and our baseline, else the table says "
             f"“{NOT_COMPARABLE}” and the figure is listed with its own baseline.</p>")
    return '<section id="field"><h2>Against the field</h2>' + intro + "".join(parts) + "</section>"
