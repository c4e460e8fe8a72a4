"""Figures of the `ds` suite (storeds-bench [StoredsBench]): YCSB over data structures on DRAM and PMEM.

Reads:
  ds.ycsb      params structure (ours, or PMDK's example maps pmdk-*), mode (dram | pmem-volatile | persist |
               tx | pmdk), workload, breakdown (none | no-flush | no-fence | no-log)[, threads, records, value]
               metrics throughput (ops/s), latency_p50, latency_p99 (ns), flushes_per_op, fences_per_op
  ds.update_ratio  params structure, mode, medium, updates (0-100 %), records, value, threads
               metrics throughput (ops/s), published_throughput (ops/s, [StoredsBench] §4, at 100 %)
  ds.target    derived rows: our persist structure / PMDK's peer throughput, target 1.5
  ds.overhead  derived rows: ns per operation per mode, and what switching flushing, fencing or logging
               off saves (the decomposition of [PMDKOverheads])
  ds.tier      derived rows: a structure on a NUMA node's memory (medium numa:N) against the same on its
               mode's own memory; the figures leave the node runs out (they compare modes, not memories)
Ratios drawn here (persistence overhead = persist / pmem-volatile throughput, PMEM cost = pmem-volatile /
dram, transaction overhead = tx / persist) are computed from measured numbers of the same run file, so they
are measured too. Every figure tolerates missing combinations and runs whose status is not ok.
"""

from __future__ import annotations

from typing import Sequence

from matplotlib.figure import Figure

from ..figures import Table, figure, legend_outside, plain_log_y, table
from ..model import Run, is_number as _number
from ..units import format_quantity

STRUCTURES = ("array", "hashtable", "skiplist", "bptree", "list")
PEERS = ("pmdk-btree", "pmdk-ctree", "pmdk-rbtree", "pmdk-hashmap-tx", "pmdk-hashmap-atomic", "pmdk-skiplist")
MODES = ("dram", "pmem-volatile", "persist", "tx")
WORKLOADS = ("a", "b", "c", "d", "e", "f", "write-only")
MODE_COLORS = {"dram": "#1f77b4", "pmem-volatile": "#ff7f0e", "persist": "#2ca02c", "tx": "#d62728",
               "pmdk": "#9467bd"}
PEER_COLORS = ("#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f")
PART_COLORS = {"base": "#ff7f0e", "flush": "#1f77b4", "fence": "#2ca02c", "log": "#d62728", "rest": "#c7c7c7"}
OTHER_COLOR = "#7f7f7f"


def _ordered(values, preferred: Sequence[str]) -> list:
    present = set(values)
    return [v for v in preferred if v in present] + sorted(v for v in present if v not in preferred)


def _rank(value, preferred: Sequence[str]) -> tuple:
    return (preferred.index(value) if value in preferred else len(preferred), str(value))


def _on_node(run: Run) -> bool:
    """A run on a NUMA node's memory: only ds.tier compares it with its mode's own memory."""
    return str(run.param("medium", "")).startswith("numa:")


def _ycsb(runs: Sequence[Run]) -> list[Run]:
    """The YCSB runs of the structures as designed (breakdown runs switch a cost off: not a design), each on its
    mode's own memory."""
    return [r for r in runs if r.case == "ycsb" and r.ok and r.value("throughput") is not None
            and r.param("breakdown", "none") == "none" and not _on_node(r)]


# Structures that measure the harness (ds.harness), not designs: no panel, no rank.
HARNESS_STRUCTURES = ("null", "null-predictable")


def _ours(runs: Sequence[Run]) -> list[Run]:
    return [r for r in _ycsb(runs) if not str(r.param("structure")).startswith("pmdk-")
            and r.param("structure") not in HARNESS_STRUCTURES]


def _peers(runs: Sequence[Run]) -> list[Run]:
    return [r for r in _ycsb(runs) if str(r.param("structure")).startswith("pmdk-")]


def _table(runs: Sequence[Run], metric: str) -> dict[tuple, float]:
    """(structure, mode, workload) -> metric; with several threads counts, the single-thread runs win."""
    table: dict[tuple, float] = {}
    for r in sorted(runs, key=lambda r: -(r.param("threads", 1) or 1)):
        v = r.value(metric)
        if v is not None:
            table[(r.param("structure"), r.param("mode"), str(r.param("workload")))] = v
    return table


@figure("ds", title="Throughput per structure, mode and workload ([StoredsBench] Figure 1)", case="ycsb",
        caption="YCSB run-phase throughput (thousand operations per second, measured) of each structure in each "
                "mode: dram (volatile, DRAM), pmem-volatile (volatile, on the pool), persist (crash-consistent "
                "through flush + fence and 8-byte commits), tx (failure-atomic through PMDK transactions, the "
                "arena in a libpmemobj pool); last panel: PMDK's example maps, built from libpmemobj-dev's "
                "sources, in the same run on the same workload streams. Workloads are YCSB's a-f and "
                "write-only (100% update); keys 8 B, values as the run's `value` parameter.",
        metrics=("throughput",))
def throughput(runs: Sequence[Run]) -> Figure | None:
    ycsb = _ours(runs)
    peers = _table(_peers(runs), "throughput")
    if not ycsb and not peers:
        return None
    table = _table(ycsb, "throughput")
    structures = _ordered({k[0] for k in table}, STRUCTURES)
    modes = _ordered({k[1] for k in table}, MODES)
    workloads = _ordered({k[2] for k in table} | {k[2] for k in peers}, WORKLOADS)
    panels = len(structures) + (1 if peers else 0)
    fig = Figure(figsize=(3.2 * panels + 0.6, 3.4), layout="constrained")
    axes = fig.subplots(1, panels, sharey=True, squeeze=False)[0]
    if peers:
        ax = axes[-1]
        names = _ordered({k[0] for k in peers}, PEERS)
        pw = 0.8 / len(names)
        for p_index, name in enumerate(names):
            xs = [w_index + (p_index - (len(names) - 1) / 2) * pw for w_index in range(len(workloads))]
            ax.bar(xs, [peers.get((name, "pmdk", w), 0.0) / 1e3 for w in workloads], pw,
                   label=name.removeprefix("pmdk-"), color=PEER_COLORS[p_index % len(PEER_COLORS)])
        ax.set_xticks(range(len(workloads)), workloads)
        ax.set_title("PMDK example maps (peers)")
        ax.set_xlabel("workload")
        ax.grid(True, axis="y", linewidth=0.4, alpha=0.5)
        legend_outside(ax, fontsize=7)
        axes = axes[:-1]
    if not structures:
        return fig
    width = 0.8 / max(len(modes), 1)
    for ax, s in zip(axes, structures):
        for m_index, m in enumerate(modes):
            xs = [w_index + (m_index - (len(modes) - 1) / 2) * width for w_index in range(len(workloads))]
            ys = [table.get((s, m, w), 0.0) / 1e3 for w in workloads]
            ax.bar(xs, ys, width, label=m, color=MODE_COLORS.get(m, OTHER_COLOR))
        ax.set_xticks(range(len(workloads)), workloads)
        ax.set_title(s)
        ax.set_xlabel("workload")
        ax.grid(True, axis="y", linewidth=0.4, alpha=0.5)
    axes[0].set_ylabel("throughput (K ops/s)")
    legend_outside(axes[-1])
    return fig


@figure("ds", title="Latency percentiles", case="ycsb",
        caption="Median and 99th-percentile operation latency (ns, measured, timer overhead subtracted) per "
                "structure and mode, one marker per workload: p50 filled, p99 hollow.",
        metrics=("latency_p50", "latency_p99"))
def latency(runs: Sequence[Run]) -> Figure | None:
    ycsb = _ycsb(runs)
    p50, p99 = _table(ycsb, "latency_p50"), _table(ycsb, "latency_p99")
    if not p50:
        return None
    pairs = sorted({(k[0], k[1]) for k in p50}, key=lambda sm: (_rank(sm[0], STRUCTURES), _rank(sm[1], MODES)))
    workloads = _ordered({k[2] for k in p50}, WORKLOADS)
    fig = Figure(figsize=(10.0, 1.0 + 0.3 * len(pairs)), layout="constrained")
    ax = fig.subplots()
    for y, (s, m) in enumerate(pairs):
        color = MODE_COLORS.get(m, OTHER_COLOR)
        for w in workloads:
            if (s, m, w) in p50 and p50[(s, m, w)] > 0:
                ax.plot(p50[(s, m, w)], y, "o", color=color, markersize=4)
            if (s, m, w) in p99 and p99[(s, m, w)] > 0:
                ax.plot(p99[(s, m, w)], y, "o", mfc="none", color=color, markersize=5)
    ax.set_yticks(range(len(pairs)), [f"{s} · {m}" for s, m in pairs], fontsize=8)
    ax.invert_yaxis()
    plain_log_y(ax, axis="x")
    ax.set_xlabel("latency (ns)")
    ax.grid(True, axis="x", linewidth=0.4, alpha=0.5)
    return fig


def overhead_ratios(runs: Sequence[Run]) -> dict[tuple, dict[str, float]]:
    """(structure, workload) -> {"pmem_cost": pmem-volatile/dram, "persist_cost": persist/pmem-volatile,
    "tx_cost": tx/persist}."""
    table = _table(_ycsb(runs), "throughput")
    out: dict[tuple, dict[str, float]] = {}
    for (s, m, w), v in table.items():
        if m != "pmem-volatile" or v <= 0:
            continue
        entry = {}
        if table.get((s, "dram", w), 0) > 0:
            entry["pmem_cost"] = v / table[(s, "dram", w)]
        if (s, "persist", w) in table:
            entry["persist_cost"] = table[(s, "persist", w)] / v
            if (s, "tx", w) in table and table[(s, "persist", w)] > 0:
                entry["tx_cost"] = table[(s, "tx", w)] / table[(s, "persist", w)]
        out[(s, w)] = entry
    return out


@figure("ds", title="Overhead decomposition", case="ycsb",
        caption="Throughput ratios from the same run (measured / measured): the medium's cost, pmem-volatile / "
                "dram, the persistence overhead, persist / pmem-volatile, and the transaction overhead, tx / "
                "persist, per structure and workload. 1.0 means no cost; below 1 the mode is slower.",
        metrics=("throughput",))
def overheads(runs: Sequence[Run]) -> Figure | None:
    ratios = overhead_ratios(runs)
    if not ratios:
        return None
    # One panel per workload, so each tick names one structure and the labels never collide.
    workloads = _ordered({w for _, w in ratios}, WORKLOADS)
    structures = _ordered({s for s, _ in ratios}, STRUCTURES)
    fig = Figure(figsize=(max(6.0, 0.75 * len(structures) * len(workloads) + 1.2), 3.6), layout="constrained")
    axes = fig.subplots(1, len(workloads), sharey=True, squeeze=False)[0]
    series = (("pmem_cost", "pmem-volatile / dram", "pmem-volatile"), ("persist_cost", "persist / pmem-volatile",
                                                                        "persist"), ("tx_cost", "tx / persist", "tx"))
    for ax, w in zip(axes, workloads):
        present = [s for s in structures if (s, w) in ratios]
        for i, (key, label, mode) in enumerate(series):
            xs = [x + (i - 1) * 0.27 for x in range(len(present))]
            ax.bar(xs, [ratios[(s, w)].get(key, 0) for s in present], 0.27, label=label, color=MODE_COLORS[mode])
        ax.axhline(1.0, color="0.3", linewidth=0.8)
        ax.set_xticks(range(len(present)), present, fontsize=8)
        ax.set_title(f"workload {w}", fontsize=10)
        ax.grid(True, axis="y", linewidth=0.4, alpha=0.5)
    axes[0].set_ylabel("throughput ratio")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside upper center", ncols=3, fontsize=9, frameon=False)
    return fig


def rankings(runs: Sequence[Run]) -> dict[tuple, list[str]]:
    """(mode, workload) -> structures from fastest to slowest."""
    table = _table(_ours(runs), "throughput")
    by: dict[tuple, list[tuple[float, str]]] = {}
    for (s, m, w), v in table.items():
        by.setdefault((m, w), []).append((v, s))
    return {k: [s for _, s in sorted(v, key=lambda t: -t[0])] for k, v in by.items()}


def ranking_changes(runs: Sequence[Run]) -> list[tuple[str, str, list[str], list[str]]]:
    """Workloads whose structure ranking on DRAM differs from that in a PMEM mode (the point of [StoredsBench])."""
    ranks = rankings(runs)
    changes = []
    for (m, w), order in sorted(ranks.items()):
        if m == "dram" or ("dram", w) not in ranks:
            continue
        dram = [s for s in ranks[("dram", w)] if s in order]
        mine = [s for s in order if s in dram]
        if dram != mine:
            changes.append((w, m, dram, mine))
    return changes


@figure("ds", title="Ranking changes between DRAM and PMEM", case="ycsb",
        caption="Rank of each structure by throughput (1 = fastest, measured) per workload, on DRAM and in each "
                "PMEM mode. Crossing lines are the ranking changes [StoredsBench] highlights: the structure that is "
                "best on DRAM need not be best on PMEM.",
        metrics=("throughput",))
def ranking(runs: Sequence[Run]) -> Figure | None:
    ranks = rankings(runs)
    workloads = _ordered({w for _, w in ranks}, WORKLOADS)
    workloads = [w for w in workloads if ("dram", w) in ranks]
    if not workloads:
        return None
    modes = _ordered({m for m, _ in ranks}, MODES)
    fig = Figure(figsize=(2.6 * len(workloads) + 0.6, 3.2), layout="constrained")
    axes = fig.subplots(1, len(workloads), sharey=True, squeeze=False)[0]
    palette = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b")
    for ax, w in zip(axes, workloads):
        structures = ranks[("dram", w)]
        for i, s in enumerate(structures):
            xs, ys = [], []
            for x, m in enumerate(modes):
                order = ranks.get((m, w), [])
                if s in order:
                    xs.append(x)
                    ys.append(order.index(s) + 1)
            ax.plot(xs, ys, "o-", color=palette[i % len(palette)], label=s)
        ax.set_xticks(range(len(modes)), modes, fontsize=7)
        ax.set_title(f"workload {w}")
        ax.grid(True, linewidth=0.4, alpha=0.5)
    axes[0].invert_yaxis()
    axes[0].set_ylabel("rank (1 = fastest)")
    legend_outside(axes[-1], fontsize=7)
    return fig


def targets(runs: Sequence[Run]) -> list[Run]:
    """The derived ds.target rows (our persist structure against PMDK's map), ok ones with a ratio."""
    return [r for r in runs if r.case == "target" and r.ok and r.value("ratio") is not None]


@figure("ds", title="Target: ours against PMDK's maps", case="target",
        caption="Throughput of our persist-mode structure divided by that of PMDK's example map in the same run "
                "on the same workload stream (measured / measured): B+-tree against PMDK's btree, hashtable "
                "against hashmap_tx. The dashed line is the target the run recorded; green bars met it (the run's verdict). Labels give each side's "
                "flushes and fences per operation (PMDK's counted at libpmem's entry points).",
        metrics=("ratio", "flushes_per_op", "fences_per_op"))
def target(runs: Sequence[Run]) -> Figure | None:
    rows = targets(runs)
    if not rows:
        return None
    # One panel per pair (ours / PMDK's), the workloads along it: short ticks, room for the labels.
    pairs = _ordered({(str(r.param("structure")), str(r.param("peer"))) for r in rows}, ())
    fig = Figure(figsize=(max(5.0, 1.15 * len(rows) + 1.5), 3.9), layout="constrained")
    axes = fig.subplots(1, len(pairs), sharey=True, squeeze=False)[0]
    goal = rows[0].threshold("ratio")
    top = max([r.value("ratio") for r in rows] + ([goal] if _number(goal) else []))
    for ax, (ours, peer) in zip(axes, pairs):
        cell = sorted((r for r in rows if str(r.param("structure")) == ours and str(r.param("peer")) == peer),
                      key=lambda r: _rank(str(r.param("workload")), WORKLOADS))
        xs = list(range(len(cell)))
        ax.bar(xs, [r.value("ratio") for r in cell], 0.6,
               color=[MODE_COLORS["persist"] if r.verdict("ratio") == "met" else MODE_COLORS["tx"] for r in cell])
        if _number(goal):
            ax.axhline(goal, color="0.2", linestyle="--", linewidth=0.9, label=f"target {goal:g}×")
        ax.axhline(1.0, color="0.5", linewidth=0.6)
        for x, r in zip(xs, cell):
            label = (f"{r.value('ratio'):.2f}×\n"
                     f"fl {r.value('flushes_per_op') or 0:.1f}/{r.value('peer_flushes_per_op') or 0:.1f}\n"
                     f"fe {r.value('fences_per_op') or 0:.1f}/{r.value('peer_fences_per_op') or 0:.1f}")
            ax.text(x, r.value("ratio"), label, ha="center", va="bottom", fontsize=8, linespacing=1.1,
                    bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.85, "pad": 1})
        ax.set_xticks(xs, [f"workload {r.param('workload')}" for r in cell], fontsize=8)
        ax.set_title(f"{ours} / {peer}", fontsize=10)
        ax.grid(True, axis="y", linewidth=0.4, alpha=0.5)
    axes[0].set_ylabel("throughput ratio (ours / PMDK)")
    axes[0].set_ylim(0, top * 1.45)
    if _number(goal):
        fig.legend(*axes[0].get_legend_handles_labels(), loc="outside upper right", fontsize=9, frameon=False)
    return fig


def breakdown_parts(runs: Sequence[Run]) -> dict[tuple, dict[str, float]]:
    """(structure, workload, mode) -> ns per operation split into base (the pmem-volatile run), flush, fence,
    log and rest, from the derived ds.overhead rows; parts below zero (noise) are drawn as zero."""
    out: dict[tuple, dict[str, float]] = {}
    for r in runs:
        if r.case != "overhead" or not r.ok:
            continue
        s, w = str(r.param("structure")), str(r.param("workload"))
        for mode in ("persist", "tx", "pmdk"):
            total = r.value(f"ns_{mode}")
            if total is None or r.value(f"{mode}_flush_ns") is None:
                continue
            base = r.value("ns_pmem_volatile") or 0.0
            parts = {"base": base}
            for part in ("flush", "fence", "log"):
                v = r.value(f"{mode}_{part}_ns")
                if v is not None:
                    parts[part] = max(v, 0.0)
            parts["rest"] = max(total - sum(parts.values()), 0.0)
            parts["total"] = total
            out[(s, w, mode)] = parts
    return out


@figure("ds", title="Overhead breakdown: flushing, fencing, logging [PMDKOverheads]", case="overhead",
        caption="Nanoseconds per operation of each durable mode (measured), split by what switching one cost "
                "off saves in a run of its own (breakdown=no-flush / no-fence / no-log): base is the same "
                "structure's pmem-volatile run (PMDK's maps have none: their base is 0), rest is what no switch "
                "removes (stores, undo-log bookkeeping, transaction begin/commit). The parts overlap (a fence "
                "waits for the flushes before it), so they are an attribution, not a sum: the black mark is the "
                "measured total; a stack above it means the savings overlap or are noise. PMDK's flushes and "
                "fences are switched at libpmem's entry points; their undo logging cannot be switched off.",
        metrics=("ns_persist", "ns_tx", "tx_flush_ns", "tx_fence_ns", "tx_log_ns"))
def breakdown(runs: Sequence[Run]) -> Figure | None:
    parts = breakdown_parts(runs)
    if not parts:
        return None
    modes_order = ("persist", "tx", "pmdk")
    workloads = _ordered({k[1] for k in parts}, WORKLOADS)
    # Horizontal bars, one panel per workload: every design's name is readable without rotation.
    per_panel = max(sum(1 for k in parts if k[1] == w) for w in workloads)
    fig = Figure(figsize=(5.0 * len(workloads) + 1.6, 0.28 * per_panel + 1.2), layout="constrained")
    axes = fig.subplots(1, len(workloads), squeeze=False)[0]
    for ax, w in zip(axes, workloads):
        keys = sorted((k for k in parts if k[1] == w),
                      key=lambda k: (_rank(k[0], STRUCTURES + PEERS), modes_order.index(k[2])))
        ys = list(range(len(keys)))
        left = [0.0] * len(keys)
        for part in ("base", "flush", "fence", "log", "rest"):
            widths = [parts[k].get(part, 0.0) for k in keys]
            ax.barh(ys, widths, 0.7, left=left, label=part, color=PART_COLORS[part])
            left = [a + b for a, b in zip(left, widths)]
        ax.plot([parts[k]["total"] for k in keys], ys, "|", color="black", markersize=12, markeredgewidth=2,
                label="measured total")
        ax.set_yticks(ys, [f"{k[0].removeprefix('pmdk-')} · {k[2]}" for k in keys], fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel("ns per operation")
        ax.set_title(f"workload {w}", fontsize=10)
        ax.grid(True, axis="x", linewidth=0.4, alpha=0.5)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside right upper", fontsize=8, frameon=False)
    return fig


STRUCTURE_COLORS = {"array": "#1f77b4", "hashtable": "#ff7f0e", "skiplist": "#2ca02c", "bptree": "#d62728",
                    "list": "#9467bd"}


@figure("ds", title="Throughput versus share of updates ([StoredsBench] Figure 1's read/write axis)",
        case="update_ratio",
        caption="YCSB throughput (thousand operations per second, log scale, measured by ds.update_ratio) against "
                "the share of operations that are updates, the rest reads (0 % = 100(R)/0(W) … 100 % = "
                "0(R)/100(W), zipfian keys, 8 B keys and the run's value size), one line per structure, one "
                "panel per mode: dram, pmem-volatile, persist (flush + fence, 8-byte commits) and tx (PMDK "
                "transactions). Hollow stars: published by [StoredsBench] §4 for the write-only workload (B-tree "
                "and skiplist on DRAM and in PMEM-Trans, their tx mode; their machine), drawn in the structure's "
                "colour at 100 %.",
        metrics=("throughput", "published_throughput"))
def update_ratio(runs: Sequence[Run]) -> Figure | None:
    rows = [r for r in runs if r.case == "update_ratio" and r.ok and _number(r.value("throughput"))
            and r.value("throughput") > 0 and not _on_node(r)]
    if not rows:
        return None
    # With several thread counts, the single-thread runs (the study's setup).
    threads = sorted({r.param("threads", 1) or 1 for r in rows})
    rows = [r for r in rows if (r.param("threads", 1) or 1) == threads[0]]
    modes = _ordered({r.param("mode") for r in rows}, MODES)
    structures = _ordered({r.param("structure") for r in rows}, STRUCTURES)
    updates = sorted({r.param("updates") for r in rows})
    fig = Figure(figsize=(1.6 + 3.2 * len(modes), 3.6), layout="constrained")
    axes = fig.subplots(1, len(modes), sharey=True, squeeze=False)[0]
    any_published = False
    for ax, mode in zip(axes, modes):
        for s in structures:
            points = {r.param("updates"): r for r in rows if r.param("mode") == mode and r.param("structure") == s}
            if not points:
                continue
            xs = sorted(points)
            color = STRUCTURE_COLORS.get(s, OTHER_COLOR)
            ax.plot(xs, [points[x].value("throughput") / 1e3 for x in xs], marker="o", markersize=4,
                    linewidth=1.5, color=color, label=s)
            for x in xs:
                published = points[x].value("published_throughput")
                if _number(published) and published > 0:
                    any_published = True
                    ax.plot([x], [published / 1e3], marker="*", markersize=12, markerfacecolor="none",
                            markeredgewidth=1.2, color=color, linestyle="none")
        ax.set_xticks(updates, [f"{u:g}" for u in updates])
        ax.set_xlabel("updates (% of operations)")
        ax.set_title(f"mode: {mode}", fontsize=10)
        ax.grid(True, linewidth=0.4, alpha=0.5)
        plain_log_y(ax)
    axes[0].set_ylabel("throughput (K ops/s)")
    handles, labels = [], []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    if any_published:
        from matplotlib.lines import Line2D

        handles.append(Line2D([], [], marker="*", markersize=10, markerfacecolor="none", color="0.3",
                              linestyle="none"))
        labels.append("published, [StoredsBench] §4")
    fig.legend(handles, labels, loc="outside right upper", fontsize=8, frameon=False)
    fig.suptitle(f"Throughput versus update share ({threads[0]} thread{'s' if threads[0] != 1 else ''})", fontsize=12)
    return fig


@table("ds", title="Structures on memory tiers",
       caption="Each structure run on a NUMA node's memory (medium numa:N: a remote socket, a CXL expander) against "
               "the same structure, mode, workload and setting on the mode's own memory (dram mode: local DRAM; "
               "persist mode: the pool, its write-backs and fences then reaching the node). Throughputs measured "
               "in this run; the ratio is the node's over the own memory's.")
def tier_tables(runs: Sequence[Run]) -> list[Table]:
    rows = [r for r in runs if r.case == "tier" and r.ok and _number(r.value("throughput"))]
    if not rows:
        return []
    rows.sort(key=lambda r: (str(r.param("tier")), _rank(r.param("structure"), STRUCTURES),
                             _rank(r.param("mode"), MODES), _rank(str(r.param("workload")), WORKLOADS)))
    cells = []
    for r in rows:
        ratio = r.value("throughput_ratio")
        cells.append((str(r.param("tier")), str(r.param("structure")), str(r.param("mode")), str(r.param("workload")),
                      format_quantity(r.value("throughput"), "ops/s"), r.notes.get("own_memory", "?"),
                      format_quantity(r.value("throughput_own_memory"), "ops/s"),
                      f"{ratio:.3g}×" if _number(ratio) else "–"))
    return [Table(title=f"{len(rows)} structure runs on a node's memory",
                  columns=("node", "structure", "mode", "workload", "throughput on the node", "own memory",
                           "throughput there", "node / own memory"),
                  rows=tuple(cells), collapsed=len(cells) > 12)]
