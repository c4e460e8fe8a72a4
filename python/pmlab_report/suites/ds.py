"""Figures of the `ds` suite (seed 001, storeds-bench): YCSB over data structures on DRAM and PMEM.

Reads:
  ds.ycsb  params structure, mode (dram | pmem-volatile | persist), workload[, threads, records, value]
           metrics throughput (ops/s), latency_p50, latency_p99 (ns)
Ratios drawn here (persistence overhead = persist / pmem-volatile throughput, PMEM cost = pmem-volatile /
dram) are computed from two measured numbers of the same run file, so they are measured too.
Every figure tolerates missing combinations and runs whose status is not ok.
"""

from __future__ import annotations

from typing import Sequence

from matplotlib.figure import Figure

from ..figures import figure
from ..model import Run

STRUCTURES = ("array", "hashtable", "skiplist", "bptree", "list")
MODES = ("dram", "pmem-volatile", "persist")
WORKLOADS = ("a", "b", "c", "d", "e", "f", "write-only")
MODE_COLORS = {"dram": "#1f77b4", "pmem-volatile": "#ff7f0e", "persist": "#2ca02c"}
OTHER_COLOR = "#7f7f7f"


def _ordered(values, preferred: Sequence[str]) -> list:
    present = set(values)
    return [v for v in preferred if v in present] + sorted(v for v in present if v not in preferred)


def _rank(value, preferred: Sequence[str]) -> tuple:
    return (preferred.index(value) if value in preferred else len(preferred), str(value))


def _ycsb(runs: Sequence[Run]) -> list[Run]:
    return [r for r in runs if r.case == "ycsb" and r.ok and r.value("throughput") is not None]


def _table(runs: Sequence[Run], metric: str) -> dict[tuple, float]:
    """(structure, mode, workload) -> metric; with several threads counts, the single-thread runs win."""
    table: dict[tuple, float] = {}
    for r in sorted(runs, key=lambda r: -(r.param("threads", 1) or 1)):
        v = r.value(metric)
        if v is not None:
            table[(r.param("structure"), r.param("mode"), str(r.param("workload")))] = v
    return table


@figure("ds", title="Throughput per structure, mode and workload (seed 001 Figure 1)", case="ycsb",
        caption="YCSB run-phase throughput (thousand operations per second, measured) of each structure in each "
                "mode: dram (volatile, DRAM), pmem-volatile (volatile, on the pool), persist (crash-consistent "
                "through flush + fence and 8-byte commits). Workloads are YCSB's a-f and write-only (100% "
                "update); keys 8 B, values as the run's `value` parameter.",
        metrics=("throughput",))
def throughput(runs: Sequence[Run]) -> Figure | None:
    ycsb = _ycsb(runs)
    if not ycsb:
        return None
    table = _table(ycsb, "throughput")
    structures = _ordered({k[0] for k in table}, STRUCTURES)
    modes = _ordered({k[1] for k in table}, MODES)
    workloads = _ordered({k[2] for k in table}, WORKLOADS)
    fig = Figure(figsize=(3.2 * len(structures) + 0.6, 3.4), layout="constrained")
    axes = fig.subplots(1, len(structures), sharey=True, squeeze=False)[0]
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
    axes[-1].legend(fontsize=8)
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
    ax.set_xscale("log")
    ax.set_xlabel("latency (ns)")
    ax.grid(True, axis="x", linewidth=0.4, alpha=0.5)
    return fig


def overhead_ratios(runs: Sequence[Run]) -> dict[tuple, dict[str, float]]:
    """(structure, workload) -> {"pmem_cost": pmem-volatile/dram, "persist_cost": persist/pmem-volatile}."""
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
        out[(s, w)] = entry
    return out


@figure("ds", title="Overhead decomposition", case="ycsb",
        caption="Throughput ratios from the same run (measured / measured): the medium's cost, pmem-volatile / "
                "dram, and the persistence overhead, persist / pmem-volatile, per structure and workload. "
                "1.0 means no cost; below 1 the mode is slower.",
        metrics=("throughput",))
def overheads(runs: Sequence[Run]) -> Figure | None:
    ratios = overhead_ratios(runs)
    if not ratios:
        return None
    keys = sorted(ratios, key=lambda k: (_rank(k[0], STRUCTURES), _rank(k[1], WORKLOADS)))
    fig = Figure(figsize=(max(6.0, 0.45 * len(keys) + 1.5), 3.6), layout="constrained")
    ax = fig.subplots()
    xs = range(len(keys))
    ax.bar([x - 0.2 for x in xs], [ratios[k].get("pmem_cost", 0) for k in keys], 0.4,
           label="pmem-volatile / dram", color=MODE_COLORS["pmem-volatile"])
    ax.bar([x + 0.2 for x in xs], [ratios[k].get("persist_cost", 0) for k in keys], 0.4,
           label="persist / pmem-volatile", color=MODE_COLORS["persist"])
    ax.axhline(1.0, color="0.3", linewidth=0.8)
    ax.set_xticks(list(xs), [f"{s}\n{w}" for s, w in keys], fontsize=7)
    ax.set_ylabel("throughput ratio")
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", linewidth=0.4, alpha=0.5)
    return fig


def rankings(runs: Sequence[Run]) -> dict[tuple, list[str]]:
    """(mode, workload) -> structures from fastest to slowest."""
    table = _table(_ycsb(runs), "throughput")
    by: dict[tuple, list[tuple[float, str]]] = {}
    for (s, m, w), v in table.items():
        by.setdefault((m, w), []).append((v, s))
    return {k: [s for _, s in sorted(v, key=lambda t: -t[0])] for k, v in by.items()}


def ranking_changes(runs: Sequence[Run]) -> list[tuple[str, str, list[str], list[str]]]:
    """Workloads whose structure ranking on DRAM differs from that in a PMEM mode (seed 001's point)."""
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
                "PMEM mode. Crossing lines are the ranking changes seed 001 highlights: the structure that is "
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
    axes[-1].legend(fontsize=7)
    return fig
