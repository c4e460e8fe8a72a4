"""Memory tiers side by side: the idio suite's measurements per medium it ran on (local DRAM, a NUMA node,
the pool), each against local DRAM, and a finding per tier that says how it behaves.

A tier is a `medium` parameter of the idio runs: `dram` (the process's own node), `numa:N` (memory bound to
node N, labelled local, remote-socket, cxl or unknown by the runner's detection: the run's `placement` note
and the context's `memory_tiers` say on what evidence) or `pool` (the pool file, whose medium the context
names). Nothing here measures: each cell is a median or a peak of the runs' own metrics, and a tier missing
a measurement shows a dash. Below the measurements, each idiosyncrasy's verdict on each tier as the C++
summary recorded it: the pool's rows of idio.classification, and a NUMA node's rows with the parameter
`tier` (src/pmlab/suites/idio/classification.hpp).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html import escape
from statistics import median
from typing import Callable, Sequence

from . import idio_sentences
from .model import Run, is_number
from .units import format_quantity, sig

LOCAL = "dram"
# The runner's record of how much of the mapping that holds a run's memory huge pages back.
HUGE_FRACTION = "region_huge_page_fraction"


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
    # A parameter the measure is read at the largest value of that every tier measured (a pointer chase's
    # working set: each tier's own largest could be a size another tier's cache still holds).
    at_largest: str | None = None


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
    Measure("chase_ns", "pointer-chase latency (dependent loads)", "ns", "dependent_load", "load_latency",
            lambda r: True, peak=False, higher_is_better=False, at_largest="wss"),
)


@dataclass
class Tier:
    medium: str
    label: str      # what the tier is, as the report names it
    evidence: str   # what the label rests on
    values: dict[str, float] = field(default_factory=dict)
    peak_threads: dict[str, int] = field(default_factory=dict)  # bandwidth measures: threads at the peak
    huge_fraction: float | None = None  # median share of the tier's memory mapping in huge pages, per run
    # Fewest repetitions behind one of the tier's values (their median); 1 when a run kept no spread.
    samples: int | None = None
    # The parameter value an `at_largest` measure was read at, by measure key.
    at: dict[str, float] = field(default_factory=dict)


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
        backing = pool.get("backing") or {}
        # A pool on persistent memory is named by what the runner traced it to (a CXL region, an nvdimm).
        if backing.get("label") in ("cxl-pmem", "nvdimm-pmem", "cxl-devdax", "devdax"):
            kind = backing["label"]
        evidence = f"the pool file on {fs}" + (f"; {backing['evidence']}" if backing.get("evidence") else "")
        return f"pool ({kind})", evidence
    if medium.startswith("numa:"):
        return _node_facts(medium, runs, context)
    return medium, ""


def _largest_in_common(measure: Measure, idio: Sequence[Run]) -> float | None:
    """The largest value of `measure.at_largest` that every medium measuring the case measured."""
    per_medium: dict[str, set[float]] = {}
    for r in idio:
        value = r.param(measure.at_largest)
        if r.case == measure.case and measure.select(r) and is_number(r.value(measure.metric)) and is_number(value):
            per_medium.setdefault(r.param("medium"), set()).add(float(value))
    common = set.intersection(*per_medium.values()) if per_medium else set()
    return max(common) if common else None


def measure_tiers(runs: Sequence[Run], context: dict | None = None) -> list[Tier]:
    """One Tier per medium the idio runs measured on, local DRAM first, then as the runs name them."""
    context = context or {}
    idio = [r for r in runs if r.suite == "idio" and r.ok and isinstance(r.param("medium"), str)]
    media: list[str] = []
    for r in idio:
        if r.param("medium") not in media:
            media.append(r.param("medium"))
    media.sort(key=lambda m: (m != LOCAL, m == "pool", m))
    largest = {m.key: _largest_in_common(m, idio) for m in MEASURES if m.at_largest}
    tiers = []
    for medium in media:
        mine = [r for r in idio if r.param("medium") == medium]
        tier = Tier(medium, *_label(medium, mine, context))
        for m in MEASURES:
            chosen = [r for r in mine if r.case == m.case and m.select(r) and is_number(r.value(m.metric))]
            if m.at_largest:
                at = largest[m.key]
                chosen = [r for r in chosen if is_number(r.param(m.at_largest)) and float(r.param(m.at_largest)) == at]
                if chosen:
                    tier.at[m.key] = at
            if not chosen:
                continue
            counts = [int((r.metrics[m.metric].stats or {}).get("n") or 1) for r in chosen]
            tier.samples = min(counts + ([tier.samples] if tier.samples else []))
            if m.peak:
                best = max(chosen, key=lambda r: r.value(m.metric))
                tier.values[m.key] = float(best.value(m.metric))
                if is_number(best.param("threads")):
                    tier.peak_threads[m.key] = int(best.param("threads"))
            else:
                tier.values[m.key] = float(median(r.value(m.metric) for r in chosen))
        fractions = [float(r.value(HUGE_FRACTION)) for r in mine if is_number(r.value(HUGE_FRACTION))]
        tier.huge_fraction = median(fractions) if fractions else None
        tiers.append(tier)
    return tiers


def _percent(fraction: float) -> str:
    return f"{fraction * 100:.0f} %"


def page_size_finding(tiers: Sequence[Tier]) -> str | None:
    """A caution when the tiers' memory had different page sizes: a TLB that covers one tier's pages and
    not another's is part of the ratios between them."""
    known = [t for t in tiers if t.huge_fraction is not None]
    if len(known) < 2 or max(t.huge_fraction for t in known) - min(t.huge_fraction for t in known) < 0.5:
        return None
    shares = ", ".join(f"{t.label} {_percent(t.huge_fraction)}" for t in known)
    # Only the runner's own media can change page size: a pool is mapped as its file system maps it.
    remedy = ("; `pmlab run --pages huge` gives DRAM and node memory 2 MiB pages too"
              if any(t.medium == "pool" and t.huge_fraction >= 0.5 for t in known) else "")
    return (f"The tiers' memory had different page sizes (in 2 MiB pages: {shares}): the latency ratios "
            f"include the TLB misses one page size has and the other has not{remedy}.")


# Same memory measured twice agrees within this factor, or the run's noise is at least its deviation.
SAME_MEMORY_TOLERANCE = 1.10
REPETITIONS_HINT = "`pmlab run --repetitions 3` gives every point a median and a spread"


def _memory_nodes(context: dict) -> list[str]:
    """The NUMA nodes the runner's detection found with memory, as media name them ("numa:N")."""
    nodes = (context.get("memory_tiers") or {}).get("nodes") or []
    return [f"numa:{n.get('node')}" for n in nodes if is_number(n.get("memory_bytes")) and n["memory_bytes"] > 0]


def noise_finding(tiers: Sequence[Tier], context: dict) -> str | None:
    """What this run's own numbers say about its noise. Where the machine has one node with memory, a
    numa:N tier is the same memory as local DRAM: every ratio between the two is noise, and the largest is
    a floor under the differences between tiers that mean something. Without that control, a caution when
    the values rest on one sample per point."""
    local = next((t for t in tiers if t.medium == LOCAL), None)
    one_sample = any(t.samples == 1 for t in tiers)
    hint = f"; {REPETITIONS_HINT}" if one_sample else ""
    memory = _memory_nodes(context)
    twin = next((t for t in tiers if len(memory) == 1 and t.medium == memory[0]), None)
    if local is not None and twin is not None:
        deviations = []
        for m in MEASURES:
            mine, theirs = twin.values.get(m.key), local.values.get(m.key)
            if is_number(mine) and is_number(theirs) and mine > 0 and theirs > 0:
                deviations.append((max(mine / theirs, theirs / mine), mine / theirs, m.label.split(" (")[0]))
        if deviations:
            worst, ratio, what = max(deviations)
            sampled = " (one sample per point)" if one_sample else ""
            if worst > SAME_MEMORY_TOLERANCE:
                return (f"{twin.label} is the same memory as local DRAM (the only node with memory), yet its "
                        f"{what} measured {_times(ratio)} local{sampled}: in this run, differences of that size "
                        f"between tiers are noise, not the memory{hint}.")
            low, high = min(d[1] for d in deviations), max(d[1] for d in deviations)
            span = _times(low) if _times(low) == _times(high) else f"{_times(low)} to {_times(high)}"
            return (f"{twin.label} is the same memory as local DRAM (the only node with memory): its values were "
                    f"{span} local's{sampled}, the noise of this run's comparisons.")
    if one_sample:
        return f"Each value rests on one sample per point: a ratio near 1× may be noise{hint}."
    return None


def _times(value: float) -> str:
    return f"{sig(value)}×"


def classifications(runs: Sequence[Run]) -> dict[str, dict[str, Run]]:
    """The idio.classification rows by tier (the medium judged: "pool" or "numa:N"), then by idiosyncrasy."""
    out: dict[str, dict[str, Run]] = {}
    for r in runs:
        if r.suite == "idio" and r.case == "classification" and r.ok:
            out.setdefault(str(r.param("tier", "pool")), {})[str(r.param("idiosyncrasy"))] = r
    return out


def _specific(row: Run) -> str:
    return row.notes.get("tier_specific", row.notes.get("pmem_specific", "unknown"))


def verdict_cell(row: Run | None) -> str:
    """An idiosyncrasy's verdict on one tier, with the effect it rests on: "present, specific (2.3×)"."""
    if row is None:
        return "–"
    verdict = row.notes.get("verdict", "?")
    text = idio_sentences.verdict_word(verdict)
    if verdict == "present" and _specific(row) == "yes":
        text += ", specific"
    effect = row.value("effect_tier" if row.param("tier") else "effect_pool")
    return text + (f" ({_times(effect)})" if is_number(effect) else "")


def verdict_finding(rows: dict[str, Run]) -> str:
    """Which idiosyncrasies a tier shows, and which of them more than local DRAM does, as a clause."""
    present = [i for i, r in sorted(rows.items()) if r.notes.get("verdict") == "present"]
    if not present:
        if any(r.notes.get("verdict") == "absent" for r in rows.values()):
            return "none of I1–I8 present"
        return "I1–I8 not assessed (no idiosyncrasy case ran on it)" if rows else ""
    specific = [i for i in present if _specific(rows[i]) == "yes"]
    return (", ".join(present) + " present" +
            (f" ({', '.join(specific)} beyond local DRAM's)" if specific else ", none beyond local DRAM's"))


def finding(tier: Tier, local: Tier, verdicts: dict[str, Run] | None = None) -> str | None:
    """How `tier` behaves against local DRAM, in one sentence, from what both measured and, when given, the
    idiosyncrasies classified on it."""
    parts = []
    for m in MEASURES:
        if m.key not in tier.values or not is_number(local.values.get(m.key)) or local.values[m.key] <= 0:
            continue
        ratio = tier.values[m.key] / local.values[m.key]
        what = m.label.split(" (")[0] + (f" at {format_quantity(tier.at[m.key], 'B')}" if m.key in tier.at else "")
        if m.peak:
            at = tier.peak_threads.get(m.key)
            parts.append(f"{what} {_times(ratio)} local" + (f", highest at {at} thread{'s' if at != 1 else ''}"
                                                            if at else ""))
        else:
            parts.append(f"{what} {_times(ratio)} local")
    if verdicts:
        parts.append(verdict_finding(verdicts))
    if not parts:
        return None
    return f"On {tier.label}: " + "; ".join(parts) + "."


def _row_label(measure: Measure, tiers: Sequence[Tier]) -> str:
    """The measure's name, with the parameter value an `at_largest` measure was read at."""
    at = next((t.at[measure.key] for t in tiers if measure.key in t.at), None)
    if at is None:
        return measure.label
    return f"{measure.label}, {measure.at_largest} {format_quantity(at, 'B')}"


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
        body.append(f"<tr><td>{escape(_row_label(m, tiers))}</td>{''.join(cells)}</tr>")
    if any(t.huge_fraction is not None for t in tiers):
        cells = "".join('<td class="num">' + (_percent(t.huge_fraction) if t.huge_fraction is not None else "–")
                        + "</td>" for t in tiers)
        body.append(f"<tr><td>memory in 2 MiB pages (median over runs)</td>{cells}</tr>")
    by_tier = classifications(runs)
    judged = [t for t in tiers if t.medium in by_tier]
    if judged:
        ids = sorted({i for t in judged for i in by_tier[t.medium]})
        for ident in ids:
            name = next(r.notes.get("idiosyncrasy", "") for t in judged for r in [by_tier[t.medium].get(ident)] if r)
            cells = "".join(
                '<td class="small">' + ("reference" if t.medium == LOCAL else
                                        escape(verdict_cell(by_tier.get(t.medium, {}).get(ident)))) + "</td>"
                for t in tiers)
            body.append(f'<tr><td>{escape(ident)}: {escape(name)}</td>{cells}</tr>')
    findings = [f for t in tiers if local is not None and t is not local
                for f in [finding(t, local, by_tier.get(t.medium))] if f]
    if caution := page_size_finding(tiers):
        findings.append(caution)
    if caution := noise_finding(tiers, context or {}):
        findings.append(caution)
    evidence = "".join(f"<li><b>{escape(t.label)}</b>: {escape(t.evidence)}</li>" for t in tiers if t.evidence)
    return ('<h3 id="tiers">Memory tiers side by side (measured; ratios against local DRAM)</h3>'
            '<div class="scroll"><table class="idio"><thead><tr><th>measure</th>'
            f'{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'
            + ('<p class="muted">I1–I8: the verdict on each tier against local DRAM ([PMIdioBench] Table 1 method), '
               "with the effect it rests on; \"specific\": the tier shows it at least 1.25× as strongly as local "
               "DRAM does.</p>" if judged else "")
            + (f'<ul>{"".join(f"<li>{escape(f)}</li>" for f in findings)}</ul>' if findings else "")
            + f"<details><summary>What each tier is</summary><ul>{evidence}</ul></details>")
