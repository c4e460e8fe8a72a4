"""Figures of the `lockfree` suite: [PMIdioBench] §6 (lock-free persistent list and ring buffer).

Reads:
  lockfree.list          params design, domain, update, range, threads; metrics throughput (ops/s,
                         measured), flushes_per_op, fences_per_op, published_throughput (published)
  lockfree.list_latency  params design, domain, update, range; metrics find_latency_avg,
                         update_latency_avg (ns, measured), published_find_latency,
                         published_search_latency (ns, published)
  lockfree.ring          params design, domain, slot_flush; metrics {push,pop}_latency_{avg,p99,p999}
                         (ns, measured), published_{push,pop}_latency_* (ns, published, Figure 16(a)
                         setup), published_noflush_ratio_{push,pop}_* (published, Figure 15)
Published numbers were taken with 28 threads on Optane DCPMM; ours with the run's thread count on the
run's medium. They are drawn beside ours (dashed, hatched or as black markers), never mixed in.
Ratios computed here from two measured runs are measured. Figures tolerate missing runs.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from ..figures import figure, legend_outside, plain_log_y
from ..model import Run, is_number as _number

SUITE = "lockfree"
LIST_DESIGNS = ("volatile", "tlog", "logfree", "soft", "linkfree")
LABELS = {"volatile": "Volatile", "tlog": "TLog", "logfree": "Log-free", "soft": "SOFT", "linkfree": "Link-free",
          "tx": "TX", "txfree": "TX-free"}
COLORS = {"volatile": "#7f7f7f", "tlog": "#d62728", "logfree": "#9467bd", "soft": "#1f77b4", "linkfree": "#2ca02c",
          "tx-adr": "#d62728", "tx-eadr": "#ff7f0e", "txfree-eadr": "#2ca02c", "tx": "#ff7f0e", "txfree": "#2ca02c"}
RING_SYSTEMS = ("tx-adr", "tx-eadr", "txfree-eadr", "volatile")
RING_LABELS = {"tx-adr": "TX (ADR)", "tx-eadr": "TX (eADR)", "txfree-eadr": "TX-free (eADR)", "volatile": "Volatile"}
STATS = ("avg", "p99", "p999")
STAT_LABELS = {"avg": "avg", "p99": "p99", "p999": "p99.9"}
PUBLISHED_HATCH = "///"


def _ok(runs: Sequence[Run], case: str) -> list[Run]:
    return [r for r in runs if r.suite == SUITE and r.case == case and r.ok]


def _threads(runs: Sequence[Run]) -> str:
    counts = sorted({r.param("threads") for r in runs if r.param("threads") is not None})
    return "/".join(str(c) for c in counts) or "?"


def _flag(value: Any) -> bool:
    return value is True or value == "true"


# --------------------------------------------------------------------------- tables (pure, tested)


def list_throughput_table(runs: Sequence[Run]) -> dict[tuple, dict[str, float]]:
    """(domain, range, design) -> {update%: throughput}, with "published" twins keyed (..., design+"@published")."""
    table: dict[tuple, dict[str, float]] = {}
    for r in _ok(runs, "list"):
        key = (r.param("domain"), int(r.param("range")), r.param("design"))
        if _number(r.value("throughput")):
            table.setdefault(key, {})[int(r.param("update"))] = r.value("throughput")
        if _number(r.value("published_throughput")):
            pkey = (key[0], key[1], key[2] + "@published")
            table.setdefault(pkey, {})[int(r.param("update"))] = r.value("published_throughput")
    return table


def ring_system(run: Run) -> str:
    design = run.param("design")
    return "volatile" if design == "volatile" else f"{design}-{run.param('domain')}"


def ring_latency_table(runs: Sequence[Run]) -> dict[str, dict[str, float]]:
    """system -> {"push_avg": ns, ..., "published_push_avg": ns}: Figure 16(a)'s setup (eADR runs flush slots)."""
    out: dict[str, dict[str, float]] = {}
    for r in _ok(runs, "ring"):
        if r.param("domain") == "eadr" and not _flag(r.param("slot_flush")):
            continue
        row = out.setdefault(ring_system(r), {})
        for op in ("push", "pop"):
            for stat in STATS:
                for prefix in ("", "published_"):
                    v = r.value(f"{prefix}{op}_latency_{stat}")
                    if _number(v):
                        row[f"{prefix}{op}_{stat}"] = v
    return out


def r5_ratios(runs: Sequence[Run]) -> dict[str, dict[str, float]]:
    """design -> {"push_avg": no-flush / flush latency (measured / measured), "published_push_avg": ...}."""
    eadr = [r for r in _ok(runs, "ring") if r.param("domain") == "eadr"]
    by: dict[tuple, Run] = {(r.param("design"), _flag(r.param("slot_flush"))): r for r in eadr}
    out: dict[str, dict[str, float]] = {}
    for (design, flushed), run in by.items():
        if flushed or (design, True) not in by:
            continue
        with_flush = by[(design, True)]
        row = out.setdefault(design, {})
        for op in ("push", "pop"):
            for stat in STATS:
                a, b = run.value(f"{op}_latency_{stat}"), with_flush.value(f"{op}_latency_{stat}")
                if _number(a) and _number(b) and b > 0:
                    row[f"{op}_{stat}"] = a / b
                p = run.value(f"published_noflush_ratio_{op}_{stat}")
                if _number(p):
                    row[f"published_{op}_{stat}"] = p
    return out


# --------------------------------------------------------------------------- figures


@figure(SUITE, title="Lock-free list throughput vs update ratio ([PMIdioBench] Figure 11)", case="list",
        caption="Total throughput (ops/s, log scale) of each set design per durability domain (rows) and key range "
                "(columns), against the percentage of updates (half inserts, half deletes; the set prefilled to half "
                "the range). Solid: measured in this run (the volatile Harris list on DRAM repeated in every panel as "
                "the baseline). Dashed, same colour: published by [PMIdioBench] (28 threads on Optane DCPMM). "
                "Our thread count is in the legend.",
        metrics=("throughput", "published_throughput"))
def list_throughput(runs: Sequence[Run]) -> Figure | None:
    chosen = _ok(runs, "list")
    table = list_throughput_table(runs)
    if not table:
        return None
    domains = [d for d in ("adr", "eadr") if any(k[0] == d for k in table)]
    ranges = sorted({k[1] for k in table})
    if not domains:
        return None
    fig = Figure(figsize=(3.6 * len(ranges) + 0.8, 3.0 * len(domains) + 0.6), layout="constrained")
    axes = fig.subplots(len(domains), len(ranges), squeeze=False, sharex=True)
    threads = _threads(chosen)
    for row, domain in enumerate(domains):
        for col, rng in enumerate(ranges):
            ax = axes[row][col]
            for design in LIST_DESIGNS:
                for published in (False, True):
                    key = ("none" if design == "volatile" else domain, rng, design + ("@published" if published else ""))
                    points = table.get(key)
                    if not points:
                        continue
                    xs = sorted(points)
                    ax.plot(xs, [points[x] for x in xs], linestyle="--" if published else ("-" if design != "volatile" else ":"),
                            marker="x" if published else "o", markersize=3, linewidth=1.0 if published else 1.6,
                            color=COLORS[design], alpha=0.8 if published else 1.0)
            plain_log_y(ax)
            ax.set_title(f"{domain.upper()}, key range {rng}", fontsize=9)
            ax.grid(True, linewidth=0.4, alpha=0.5)
            if row == len(domains) - 1:
                ax.set_xlabel("updates (%)")
            if col == 0:
                ax.set_ylabel("throughput (ops/s)")
    present = [d for d in LIST_DESIGNS if any(k[2] == d for k in table)]
    handles = [Line2D([], [], color=COLORS[d], marker="o", markersize=3, label=LABELS[d]) for d in present]
    handles += [Line2D([], [], color="0.3", linestyle="-", label=f"measured ({threads} threads)"),
                Line2D([], [], color="0.3", linestyle="--", marker="x", label="published (28 threads)")]
    legend_outside(axes[0][-1], handles=handles, fontsize=7)
    return fig


@figure(SUITE, title="Lock-free list latency: find and update ([PMIdioBench] Figure 13)", case="list_latency",
        caption="Average latency (ns) of a lookup (find = contains) and of an update (insert or delete, including its "
                "search and its persistence) per design and key range, at 5% and 50% updates. Bars: measured in this "
                "run. Black markers: published by [PMIdioBench] at 28 threads (x = find, + = search, the traversal "
                "inside updates, which the paper times without the update's persistence).",
        metrics=("find_latency_avg", "update_latency_avg", "published_find_latency", "published_search_latency"))
def list_latency(runs: Sequence[Run]) -> Figure | None:
    chosen = [r for r in _ok(runs, "list_latency") if _number(r.value("find_latency_avg"))]
    if not chosen:
        return None
    updates = sorted({int(r.param("update")) for r in chosen})
    ranges = sorted({int(r.param("range")) for r in chosen})
    designs = [d for d in LIST_DESIGNS if any(r.param("design") == d for r in chosen)]
    domains = sorted({r.param("domain") for r in chosen})
    fig = Figure(figsize=(4.6 * len(updates) + 0.6, 3.4), layout="constrained")
    axes = fig.subplots(1, len(updates), squeeze=False, sharey=True)[0]
    bars = [(d, dom) for d in designs for dom in domains]
    width = 0.8 / max(2 * len(bars), 1)
    for ax, upd in zip(axes, updates):
        for gi, rng in enumerate(ranges):
            for bi, (design, dom) in enumerate(bars):
                run = next((r for r in chosen if r.param("design") == design and r.param("domain") == dom
                            and int(r.param("update")) == upd and int(r.param("range")) == rng), None)
                if run is None:
                    continue
                for oi, (metric, pub, marker) in enumerate((("find_latency_avg", "published_find_latency", "x"),
                                                            ("update_latency_avg", "published_search_latency", "+"))):
                    x = gi + (2 * bi + oi - (2 * len(bars) - 1) / 2) * width
                    v = run.value(metric)
                    if _number(v):
                        ax.bar(x, v, width, color=COLORS.get(design, "0.5"), alpha=1.0 if oi == 0 else 0.55,
                               edgecolor="white", linewidth=0.3)
                    p = run.value(pub)
                    if _number(p):
                        ax.plot(x, p, marker, color="black", markersize=6)
        ax.set_xticks(range(len(ranges)), [str(r) for r in ranges])
        ax.set_xlabel("key range")
        ax.set_title(f"{upd}% updates", fontsize=9)
        plain_log_y(ax)
        ax.grid(True, axis="y", linewidth=0.4, alpha=0.5)
    axes[0].set_ylabel("latency (ns)")
    handles = [Patch(color=COLORS.get(d, "0.5"), label=f"{LABELS[d]} ({'/'.join(domains)})") for d in designs]
    handles += [Patch(color="0.4", label="find (solid) / update (light), measured"),
                Line2D([], [], marker="x", color="black", linestyle="", label="published find (28 thr)"),
                Line2D([], [], marker="+", color="black", linestyle="", label="published search (28 thr)")]
    legend_outside(axes[-1], handles=handles, fontsize=7)
    return fig


def _paired_bars(ax, keys: Sequence[str], series: Sequence[tuple[str, dict[str, float], str]]) -> None:
    """Per series two bars per key: measured (solid) and published (hatched)."""
    width = 0.8 / max(2 * len(series), 1)
    for si, (name, row, color) in enumerate(series):
        for ki, key in enumerate(keys):
            for pi, prefix in enumerate(("", "published_")):
                v = row.get(prefix + key)
                if not _number(v):
                    continue
                x = ki + (2 * si + pi - (2 * len(series) - 1) / 2) * width
                ax.bar(x, v, width, color=color if pi == 0 else "white", edgecolor=color,
                       hatch=PUBLISHED_HATCH if pi == 1 else None, linewidth=0.8)


@figure(SUITE, title="R5: latency without / with slot flush under eADR ([PMIdioBench] Figure 15)", case="ring",
        caption="Ring buffer latency when slot data is left in the cache divided by the latency when each push writes "
                "its slot back with clwb (both under eADR), for TX and TX-free; above 1, flushing the low-locality "
                "slot data is faster (recommendation R5). Solid: measured (a ratio of two measured runs). Hatched: "
                "published by [PMIdioBench] (28 threads, Optane DCPMM).",
        metrics=("push_latency_avg", "pop_latency_avg", "published_noflush_ratio_push_avg"))
def ring_r5(runs: Sequence[Run]) -> Figure | None:
    ratios = r5_ratios(runs)
    if not ratios:
        return None
    keys = [f"{op}_{s}" for op in ("push", "pop") for s in STATS]
    fig = Figure(figsize=(7.5, 3.2), layout="constrained")
    ax = fig.subplots()
    series = [(d, ratios[d], COLORS.get(d, "0.5")) for d in ("tx", "txfree") if d in ratios]
    _paired_bars(ax, keys, series)
    ax.axhline(1.0, color="0.3", linewidth=0.8)
    ax.set_xticks(range(len(keys)), [f"{k.split('_')[0]} {STAT_LABELS[k.split('_')[1]]}" for k in keys], fontsize=8)
    ax.set_ylabel("latency ratio no flush / flush")
    handles = [Patch(color=COLORS.get(d, "0.5"), label=f"{LABELS[d]} measured") for d, _, _ in series]
    handles += [Patch(facecolor="white", edgecolor="0.3", hatch=PUBLISHED_HATCH, label="published (28 threads)")]
    legend_outside(ax, handles=handles, fontsize=7)
    ax.grid(True, axis="y", linewidth=0.4, alpha=0.5)
    return fig


@figure(SUITE, title="Ring buffer push / pop latency ([PMIdioBench] Figure 16(a))", case="ring",
        caption="Average, 99th and 99.9th percentile latency (ns, log scale) of push and pop with 4 KB slots, every "
                "thread alternating a push and a pop, ring prefilled to half its slots (working set beyond the LLC). "
                "eADR runs flush slot data, as the paper's Figure 16 does. Solid: measured; hatched: published by "
                "[PMIdioBench] (14 producers + 14 consumers, Optane DCPMM).",
        metrics=("push_latency_avg", "pop_latency_p99", "published_push_latency_avg"))
def ring_latency(runs: Sequence[Run]) -> Figure | None:
    table = ring_latency_table(runs)
    if not table:
        return None
    systems = [s for s in RING_SYSTEMS if s in table]
    fig = Figure(figsize=(10.0, 3.4), layout="constrained")
    axes = fig.subplots(1, 2, sharey=True)
    for ax, op in zip(axes, ("push", "pop")):
        keys = [f"{op}_{s}" for s in STATS]
        _paired_bars(ax, keys, [(s, table[s], COLORS.get(s, "0.5")) for s in systems])
        ax.set_xticks(range(len(keys)), [STAT_LABELS[s] for s in STATS])
        ax.set_title(op, fontsize=9)
        plain_log_y(ax)
        ax.grid(True, axis="y", linewidth=0.4, alpha=0.5)
    axes[0].set_ylabel("latency (ns)")
    threads = _threads(_ok(runs, "ring"))
    handles = [Patch(color=COLORS.get(s, "0.5"), label=f"{RING_LABELS[s]} measured ({threads} thr)") for s in systems]
    handles += [Patch(facecolor="white", edgecolor="0.3", hatch=PUBLISHED_HATCH, label="published (28 threads)")]
    fig.legend(handles=handles, loc="outside right upper", fontsize=7, frameon=False)
    return fig


@figure(SUITE, title="Persistence instructions per operation", case="list",
        caption="Flushes and fences issued per operation (measured by the persistence vocabulary's counters) for each "
                "list design and domain at the highest update ratio and the middle key range of the run, and for each "
                "ring design (one push or one pop on average). [PMIdioBench] and Zuriel et al. [DurableSets] give "
                "SOFT one fence per insert or delete and none per lookup.",
        metrics=("flushes_per_op", "fences_per_op"))
def persistence_counters(runs: Sequence[Run]) -> Figure | None:
    lists = [r for r in _ok(runs, "list") if _number(r.value("fences_per_op"))]
    rings = [r for r in _ok(runs, "ring") if _number(r.value("fences_per_op"))]
    if not lists and not rings:
        return None
    rows: list[tuple[str, float, float]] = []
    if lists:
        top = max(int(r.param("update")) for r in lists)
        ranges = sorted({int(r.param("range")) for r in lists})
        mid = ranges[len(ranges) // 2]
        for r in lists:
            if int(r.param("update")) == top and int(r.param("range")) == mid:
                rows.append((f"list {LABELS.get(r.param('design'), r.param('design'))} {r.param('domain')} ({top}% upd)",
                             r.value("flushes_per_op") or 0.0, r.value("fences_per_op")))
    for r in rings:
        flush = " +slot flush" if _flag(r.param("slot_flush")) else ""
        rows.append((f"ring {LABELS.get(r.param('design'), r.param('design'))} {r.param('domain')}{flush}",
                     r.value("flushes_per_op") or 0.0, r.value("fences_per_op")))
    fig = Figure(figsize=(7.5, 0.8 + 0.28 * len(rows)), layout="constrained")
    ax = fig.subplots()
    ys = range(len(rows))
    ax.barh([y - 0.2 for y in ys], [r[1] for r in rows], 0.4, color="#1f77b4", label="flushes / op")
    ax.barh([y + 0.2 for y in ys], [r[2] for r in rows], 0.4, color="#ff7f0e", label="fences / op")
    ax.set_yticks(list(ys), [r[0] for r in rows], fontsize=7)
    ax.invert_yaxis()
    # Zero and fractions sit on a linear stretch below 1, larger counts on a log one; ticks are named in
    # plain numbers and the axis ends past the longest bar, whose value is written beside it.
    largest = max([r[1] for r in rows] + [r[2] for r in rows] + [1.0])
    ax.set_xscale("symlog", linthresh=1.0, linscale=0.6)
    ticks = [t for t in (0, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000) if t <= largest * 1.05]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlim(0, largest * 2.2)
    for y, (_, flushes, fences) in zip(ys, rows):
        for offset, value in ((-0.2, flushes), (0.2, fences)):
            if value:
                ax.text(value, y + offset, f" {value:.3g}", va="center", fontsize=7.5)
    ax.set_xlabel("per operation (measured)")
    legend_outside(ax, fontsize=7)
    ax.grid(True, axis="x", linewidth=0.4, alpha=0.5)
    return fig
