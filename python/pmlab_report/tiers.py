"""Memory tiers side by side: the idio suite's measurements per medium it ran on (local DRAM, a NUMA node,
the pool), each against local DRAM, and a finding per tier that says how it behaves.

A tier is a `medium` parameter of the idio runs: `dram` (the process's own node), `numa:N` (memory bound to
node N, labelled local, remote-socket, cxl or unknown by the runner's detection: the run's `placement` note
and the context's `memory_tiers` say on what evidence) or `pool` (the pool file, whose medium the context
names). Nothing here measures: each cell is a median or a peak of the runs' own metrics, and a tier missing
a measurement shows a dash.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html import escape
from statistics import median
from typing import Callable, Sequence

from .model import Run, is_number
from .units import format_quantity, sig

LOCAL = "dram"


@dataclass(frozen=True)
class Measure:
    key: str
    label: str
    unit: str
    case: str
    metric: str
    select: Callable[[Run], bool]
    peak: bool  # the largest value over the runs (a bandwidth), else the median (a latency)
    higher_is_better: bool


def _at_lowest_hit_ratio(op: str) -> Callable[[Run], bool]:
    return lambda r: r.param("op") == op and is_number(r.param("hit_ratio")) and float(r.param("hit_ratio")) == 0.0


MEASURES = (
    Measure("load_ns", "load latency, uncached (I1, p50)", "ns", "i1_latency", "latency_p50",
            _at_lowest_hit_ratio("load"), peak=False, higher_is_better=False),
    Measure("pstore_ns", "p-store latency, uncached (I1, p50)", "ns", "i1_latency", "latency_p50",
            _at_lowest_hit_ratio("pstore"), peak=False, higher_is_better=False),
    Measure("load_bw", "peak load bandwidth (I2)", "MiB/s", "i2_bandwidth", "bandwidth",
            lambda r: r.param("op") == "load", peak=True, higher_is_better=True),
    Measure("pstore_bw", "peak p-store bandwidth (I2)", "MiB/s", "i2_bandwidth", "bandwidth",
            lambda r: r.param("op") == "pstore", peak=True, higher_is_better=True),
    Measure("seq_read_bw", "peak sequential read bandwidth (I6)", "MiB/s", "i6_read", "bandwidth",
            lambda r: r.param("pattern") == "seq", peak=True, higher_is_better=True),
    Measure("rand_read_bw", "peak random read bandwidth (I6)", "MiB/s", "i6_read", "bandwidth",
            lambda r: r.param("pattern") == "rand", peak=True, higher_is_better=True),
)


@dataclass
class Tier:
    medium: str
    label: str      # what the tier is, as the report names it
    evidence: str   # what the label rests on
    values: dict[str, float] = field(default_factory=dict)
    peak_threads: dict[str, int] = field(default_factory=dict)  # bandwidth measures: threads at the peak


def _node_facts(medium: str, runs: Sequence[Run], context: dict) -> tuple[str, str]:
    """The label and evidence of a numa:N tier: the runner's placement note, else the context's tiers."""
    node = medium.split(":", 1)[1]
    placed = re.compile(rf"memory bound to node {node}, .*the node is (\S+) \((.*)\); threads on node")
    for r in runs:
        if match := placed.search(r.notes.get("placement", "")):
            return f"node {node} ({match.group(1)})", match.group(2)
    for n in (context.get("memory_tiers") or {}).get("nodes") or []:
        if str(n.get("node")) == node:
            return f"node {node} ({n.get('label', 'unknown')})", str(n.get("evidence", ""))
    return f"node {node} (unknown)", "no detection recorded in the results"


def _label(medium: str, runs: Sequence[Run], context: dict) -> tuple[str, str]:
    if medium == LOCAL:
        return "local DRAM", "the process's own memory"
    if medium == "pool":
        pool = context.get("pool") or {}
        kind = pool.get("medium") or "unknown medium"
        fs = pool.get("filesystem") or "unknown file system"
        return f"pool ({kind})", f"the pool file on {fs}"
    if medium.startswith("numa:"):
        return _node_facts(medium, runs, context)
    return medium, ""


def measure_tiers(runs: Sequence[Run], context: dict | None = None) -> list[Tier]:
    """One Tier per medium the idio runs measured on, local DRAM first, then as the runs name them."""
    context = context or {}
    idio = [r for r in runs if r.suite == "idio" and r.ok and isinstance(r.param("medium"), str)]
    media: list[str] = []
    for r in idio:
        if r.param("medium") not in media:
            media.append(r.param("medium"))
    media.sort(key=lambda m: (m != LOCAL, m == "pool", m))
    tiers = []
    for medium in media:
        mine = [r for r in idio if r.param("medium") == medium]
        tier = Tier(medium, *_label(medium, mine, context))
        for m in MEASURES:
            chosen = [r for r in mine if r.case == m.case and m.select(r) and is_number(r.value(m.metric))]
            if not chosen:
                continue
            if m.peak:
                best = max(chosen, key=lambda r: r.value(m.metric))
                tier.values[m.key] = float(best.value(m.metric))
                if is_number(best.param("threads")):
                    tier.peak_threads[m.key] = int(best.param("threads"))
            else:
                tier.values[m.key] = float(median(r.value(m.metric) for r in chosen))
        tiers.append(tier)
    return tiers


def _times(value: float) -> str:
    return f"{sig(value)}×"


def finding(tier: Tier, local: Tier) -> str | None:
    """How `tier` behaves against local DRAM, in one sentence, from what both measured."""
    parts = []
    for m in MEASURES:
        if m.key not in tier.values or not is_number(local.values.get(m.key)) or local.values[m.key] <= 0:
            continue
        ratio = tier.values[m.key] / local.values[m.key]
        what = m.label.split(" (")[0]
        if m.peak:
            at = tier.peak_threads.get(m.key)
            parts.append(f"{what} {_times(ratio)} local" + (f", highest at {at} thread{'s' if at != 1 else ''}"
                                                            if at else ""))
        else:
            parts.append(f"{what} {_times(ratio)} local")
    if not parts:
        return None
    return f"On {tier.label}: " + "; ".join(parts) + "."


def section(runs: Sequence[Run], context: dict | None = None) -> str:
    """The tier table and its findings, when the idio runs measured more than one tier; else nothing."""
    tiers = measure_tiers(runs, context)
    if len(tiers) < 2:
        return ""
    local = next((t for t in tiers if t.medium == LOCAL), None)
    head = "".join(f'<th title="{escape(t.evidence)}">{escape(t.label)}</th>' for t in tiers)
    body = []
    for m in MEASURES:
        if not any(m.key in t.values for t in tiers):
            continue
        cells = []
        for t in tiers:
            if m.key not in t.values:
                cells.append('<td class="num">–</td>')
                continue
            text = format_quantity(t.values[m.key], m.unit)
            if local is not None and t is not local and local.values.get(m.key):
                text += f" ({_times(t.values[m.key] / local.values[m.key])})"
            cells.append(f'<td class="num">{escape(text)}</td>')
        body.append(f"<tr><td>{escape(m.label)}</td>{''.join(cells)}</tr>")
    findings = [f for t in tiers if local is not None and t is not local for f in [finding(t, local)] if f]
    evidence = "".join(f"<li><b>{escape(t.label)}</b>: {escape(t.evidence)}</li>" for t in tiers if t.evidence)
    return ('<h3 id="tiers">Memory tiers side by side (measured; ratios against local DRAM)</h3>'
            '<div class="scroll"><table class="idio"><thead><tr><th>measure</th>'
            f'{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'
            + (f'<ul>{"".join(f"<li>{escape(f)}</li>" for f in findings)}</ul>' if findings else "")
            + f"<details><summary>What each tier is</summary><ul>{evidence}</ul></details>")
