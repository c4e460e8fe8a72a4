"""Figures of the `ptm` suite: persistent transactions ([OptanePTM] and [PMDKOverheads]).

Reads:
  ptm.tx         params ptm (undo | redo | pmdk), durability (adr | eadr | pdram | pdram-lite), workload,
                 threads; metrics throughput (ops/s), fences_per_op, flushes_per_op, log_entries_per_tx
  ptm.breakdown  params ptm, workload, cost (full | no-log | no-flush | no-fence); metric throughput
  ptm.target     derived rows (measured): redo_vs_undo, redo_vs_pmdk, verdict notes
A cost's share is 1 - full throughput / throughput without it: the part of a transaction's time the cost
takes (computed from two measured numbers of one run file, so measured). PMDK's logging and fencing
cannot be switched off without modifying it: those bars are absent and marked "n/m". The PMDK ranges
published in [PMDKOverheads] are drawn beside ours, labelled published.
Every figure tolerates missing combinations and runs whose status is not ok.
"""

from __future__ import annotations

from typing import Sequence

from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ..figures import figure, legend_outside, log2_axis, plain_log_y
from ..model import Run

PTMS = ("undo", "redo", "pmdk", "volatile")
DURABILITY = ("adr", "eadr", "pdram-lite", "pdram")
WORKLOADS = ("sps-1", "sps-4", "sps-16", "sps-64", "queue", "hashmap", "bptree", "bank")
COSTS = ("no-log", "no-flush", "no-fence")
COST_LABEL = {"no-log": "logging", "no-flush": "flushing", "no-fence": "fencing"}
DURABILITY_COLORS = {"adr": "#d62728", "eadr": "#ff7f0e", "pdram-lite": "#2ca02c", "pdram": "#1f77b4"}
PTM_STYLE = {"undo": "--", "redo": "-", "pmdk": ":", "volatile": "-."}
PTM_MARKER = {"undo": "s", "redo": "o", "pmdk": "^", "volatile": "x"}
COST_COLORS = {"no-log": "#9467bd", "no-flush": "#d62728", "no-fence": "#8c564b"}
# [PMDKOverheads] (Wang & Diestelhorst, MEMSYS'18), PMDK on Arm: share of each cost, published ranges in %.
PUBLISHED_PMDK = {"no-log": (0, 35), "no-flush": (14, 53), "no-fence": (2, 5)}


def _ordered(values, preferred: Sequence[str]) -> list:
    present = set(values)
    return [v for v in preferred if v in present] + sorted(str(v) for v in present if v not in preferred)


def _ok(runs: Sequence[Run], case: str, metric: str = "throughput") -> list[Run]:
    return [r for r in runs if r.case == case and r.ok and isinstance(r.value(metric), (int, float))
            and r.value(metric) is not None]


def _threads(r: Run) -> int:
    return int(r.param("threads", 1) or 1)


@figure("ptm", title="Throughput per workload, PTM and durability model ([OptanePTM] Figure 1)", case="tx",
        caption="Transactions per second (thousands, measured) against threads, one panel per workload. Colour: "
                "durability model (adr: flush+fence; eadr: fence only; pdram-lite: redo log in persistent DRAM, data "
                "eADR; pdram: all DRAM persistent, no flush or fence, the flush-on-failure cost left out). Line: "
                "redo solid, undo dashed, PMDK dotted (ADR; eADR = its flushes switched off); black dash-dot: the "
                "volatile baseline ([OptanePTM]'s DRAM curve: the same interface and lock with no log, flush or fence, on "
                "DRAM). Undo and PMDK serialize transactions with one global lock; redo runs disjoint ones in parallel. On an emulated pool every medium is DRAM: the models differ "
                "only in the flushes and fences issued.",
        metrics=("throughput",))
def throughput(runs: Sequence[Run]) -> Figure | None:
    tx = _ok(runs, "tx")
    if not tx:
        return None
    workloads = _ordered({r.param("workload") for r in tx}, WORKLOADS)
    cols = min(4, len(workloads))
    rows = (len(workloads) + cols - 1) // cols
    fig = Figure(figsize=(3.3 * cols + 1.8, 2.7 * rows + 0.4), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False)
    seen = {}
    for i, w in enumerate(workloads):
        ax = axes[i // cols][i % cols]
        for ptm in _ordered({r.param("ptm") for r in tx}, PTMS):
            for d in _ordered({r.param("durability") for r in tx}, DURABILITY):
                pts = sorted((_threads(r), r.value("throughput")) for r in tx
                             if r.param("workload") == w and r.param("ptm") == ptm and r.param("durability") == d)
                if not pts:
                    continue
                label = f"{ptm} · {d}"
                line, = ax.plot([p[0] for p in pts], [p[1] / 1e3 for p in pts], PTM_STYLE.get(ptm, "-"),
                                marker=PTM_MARKER.get(ptm, "o"), markersize=3.5,
                                color="black" if ptm == "volatile" else DURABILITY_COLORS.get(d, "#7f7f7f"),
                                label="volatile baseline (DRAM)" if ptm == "volatile" else label)
                seen[line.get_label()] = line
        ax.set_title(w, fontsize=9)
        log2_axis(ax, [_threads(r) for r in tx])
        plain_log_y(ax)
        ax.set_xlabel("threads")
        ax.grid(True, linewidth=0.4, alpha=0.5)
        if i % cols == 0:
            ax.set_ylabel("K tx/s")
    for j in range(len(workloads), rows * cols):
        axes[j // cols][j % cols].set_visible(False)
    fig.legend(list(seen.values()), list(seen), loc="outside right upper", fontsize=7)
    return fig


@figure("ptm", title="Durability models at one thread ([OptanePTM] Figure 1c)", case="tx",
        caption="Single-thread transactions per second (thousands, measured) of undo and redo under each durability "
                "model, with PMDK under ADR and eADR (flushes switched off), per workload. [OptanePTM] expects ADR < eADR < "
                "PDRAM-Lite < PDRAM for redo; "
                "pdram-lite moves only the log (undo gets the same placement, for comparison).",
        metrics=("throughput",))
def durability(runs: Sequence[Run]) -> Figure | None:
    tx = [r for r in _ok(runs, "tx") if _threads(r) == 1]
    if not tx:
        return None
    workloads = _ordered({r.param("workload") for r in tx}, WORKLOADS)
    bars = [(p, d) for p in PTMS for d in DURABILITY
            if any(r.param("ptm") == p and r.param("durability") == d for r in tx)]
    fig = Figure(figsize=(max(6.0, 1.2 * len(workloads) + 4.0), 3.4), layout="constrained")
    ax = fig.subplots()
    width = 0.85 / max(len(bars), 1)
    for b, (p, d) in enumerate(bars):
        xs, ys = [], []
        for wi, w in enumerate(workloads):
            v = [r.value("throughput") for r in tx if r.param("workload") == w and r.param("ptm") == p
                 and r.param("durability") == d]
            if v:
                xs.append(wi + (b - (len(bars) - 1) / 2) * width)
                ys.append(v[0] / 1e3)
        ax.bar(xs, ys, width, color=DURABILITY_COLORS.get(d, "#7f7f7f"),
               hatch={"undo": "//", "pmdk": ".."}.get(p, ""), edgecolor="black", linewidth=0.3, label=f"{p} · {d}")
    ax.set_xticks(range(len(workloads)), workloads, fontsize=8)
    plain_log_y(ax)
    ax.set_ylabel("K tx/s (1 thread)")
    ax.grid(True, axis="y", linewidth=0.4, alpha=0.5)
    fig.legend(loc="outside right upper", fontsize=7)
    return fig


def breakdown_shares(runs: Sequence[Run]) -> dict[tuple, dict[str, float | None]]:
    """(ptm, workload) -> {cost: share of the full cost in % or None when not measurable}."""
    bd = _ok(runs, "breakdown")
    full = {(r.param("ptm"), r.param("workload")): r.value("throughput") for r in bd if r.param("cost") == "full"}
    out: dict[tuple, dict[str, float | None]] = {}
    for key, t_full in full.items():
        if not t_full:
            continue
        entry: dict[str, float | None] = {}
        for cost in COSTS:
            v = [r.value("throughput") for r in bd
                 if (r.param("ptm"), r.param("workload")) == key and r.param("cost") == cost]
            entry[cost] = 100.0 * (1.0 - t_full / v[0]) if v and v[0] else None
        out[key] = entry
    return out


@figure("ptm", title="Overhead breakdown: logging, flushing, fencing [PMDKOverheads]", case="breakdown",
        caption="Share of a transaction's time (%, measured: 1 - full throughput / throughput with the cost switched "
                "off) taken by logging, flushing and fencing, under ADR at one thread. PMDK: flushing is switched off at "
                "libpmem's entry points; its logging and fencing cannot be switched off without modifying "
                "libpmemobj (n/m). Hatched outlines: the PMDK ranges published in [PMDKOverheads] (logging 0-35%, "
                "flushing 14-53%, fencing 2-5%, Arm, 2018), published, not measured. Shares need not add up to 100%: the costs "
                "overlap.",
        metrics=("throughput",))
def breakdown(runs: Sequence[Run]) -> Figure | None:
    shares = breakdown_shares(runs)
    if not shares:
        return None
    keys = sorted(shares, key=lambda k: (PTMS.index(k[0]) if k[0] in PTMS else 9, str(k[1])))
    fig = Figure(figsize=(max(6.0, 1.3 * len(keys) + 2.0), 3.6), layout="constrained")
    ax = fig.subplots()
    width = 0.8 / len(COSTS)
    for ci, cost in enumerate(COSTS):
        lo, hi = PUBLISHED_PMDK[cost]
        for ki, key in enumerate(keys):
            x = ki + (ci - 1) * width
            v = shares[key][cost]
            if key[0] == "pmdk":
                # A published range is not a measurement: an outlined, hatched box, never a filled bar.
                ax.bar(x, hi - lo, width * 0.95, bottom=lo, fill=False, hatch="///", edgecolor="#1f4e9c",
                       linewidth=0.9, label="published range, PMDK [PMDKOverheads]")
            if v is None:
                ax.text(x, 1, "n/m", ha="center", va="bottom", fontsize=8, color="0.2",
                        bbox={"facecolor": "white", "edgecolor": "none", "pad": 1})
                continue
            ax.bar(x, v, width * 0.7, color=COST_COLORS[cost], label=f"{COST_LABEL[cost]} (measured)")
    ax.set_xticks(range(len(keys)), [f"{p}\n{w}" for p, w in keys], fontsize=8)
    ax.axhline(0, color="black", linewidth=0.5)
    ax.set_ylabel("share of the full cost (%)")
    ax.grid(True, axis="y", linewidth=0.4, alpha=0.5)
    handles, labels = ax.get_legend_handles_labels()
    uniq = dict(zip(labels, handles))
    uniq["n/m: not measurable"] = Rectangle((0, 0), 0, 0, fill=False, edgecolor="none")
    fig.legend(list(uniq.values()), list(uniq), loc="outside right upper", fontsize=8, frameon=False)
    return fig


@figure("ptm", title="Flushes and fences per transaction under ADR", case="tx",
        caption="Persistence instructions per transaction (measured, pmlab's per-thread counters) of undo and redo "
                "under ADR at one thread: undo fences once per distinct logged word plus twice at commit, redo three "
                "times whatever the write set. PMDK flushes and fences inside libpmem, which these counters do not "
                "see, so it is absent.",
        metrics=("fences_per_op", "flushes_per_op"))
def counters(runs: Sequence[Run]) -> Figure | None:
    tx = [r for r in _ok(runs, "tx", "fences_per_op") if _threads(r) == 1 and r.param("durability") == "adr"
          and r.param("ptm") in ("undo", "redo")]
    if not tx:
        return None
    workloads = _ordered({r.param("workload") for r in tx}, WORKLOADS)
    fig = Figure(figsize=(max(6.0, 1.1 * len(workloads) + 2.0), 3.2), layout="constrained")
    ax = fig.subplots()
    series = [(p, m) for p in ("undo", "redo") for m in ("fences_per_op", "flushes_per_op")]
    width = 0.8 / len(series)
    for si, (p, m) in enumerate(series):
        xs, ys = [], []
        for wi, w in enumerate(workloads):
            v = [r.value(m) for r in tx if r.param("workload") == w and r.param("ptm") == p]
            if v and v[0] is not None:
                xs.append(wi + (si - (len(series) - 1) / 2) * width)
                ys.append(max(v[0], 1e-2))
        ax.bar(xs, ys, width, label=f"{p} {m.split('_')[0]}",
               color={"undo": "#ff7f0e", "redo": "#1f77b4"}[p], alpha=1.0 if m == "fences_per_op" else 0.5)
    ax.set_xticks(range(len(workloads)), workloads, fontsize=8)
    plain_log_y(ax)
    ax.set_ylabel("per transaction")
    ax.grid(True, axis="y", linewidth=0.4, alpha=0.5)
    legend_outside(ax, fontsize=7)
    return fig


@figure("ptm", title="Targets: redo vs PMDK and undo on SPS and the hash map (ADR, 1 thread)", case="target",
        caption="Derived rows (measured): redo's throughput over PMDK's (each workload's target, a dashed mark: 4 on "
                "SPS-1, 3 on the hash map, 10 on SPS-16 and SPS-64) and over undo's (target ≥ 1.3, dotted) for each SPS "
                "variant and the hash map. The rows' notes give the verdict with flushes and fences per transaction, "
                "beside the published fence counts of Quadra, Trinity and RomulusLog ([DurableTx]).",
        metrics=("redo_vs_pmdk", "redo_vs_undo"))
def targets(runs: Sequence[Run]) -> Figure | None:
    rows = [r for r in runs if r.case == "target" and r.ok]
    if not rows:
        return None
    rows.sort(key=lambda r: WORKLOADS.index(r.param("workload")) if r.param("workload") in WORKLOADS else 99)
    fig = Figure(figsize=(max(5.0, 1.2 * len(rows) + 2.0), 3.0), layout="constrained")
    ax = fig.subplots()
    for i, r in enumerate(rows):
        for off, m, color in ((-0.18, "redo_vs_pmdk", "#2ca02c"), (0.18, "redo_vs_undo", "#1f77b4")):
            v = r.value(m)
            if v is not None:
                ax.bar(i + off, v, 0.34, color=color, label=m if i == 0 else None)
        target = r.threshold("redo_vs_pmdk")
        if target is not None:
            ax.plot([i - 0.36, i], [target, target], color="#2ca02c", linestyle="--", linewidth=0.8)
    ax.axhline(1.3, color="#1f77b4", linestyle=":", linewidth=0.8)
    ax.set_xticks(range(len(rows)), [r.param("workload") for r in rows])
    ax.set_ylabel("throughput ratio")
    ax.grid(True, axis="y", linewidth=0.4, alpha=0.5)
    legend_outside(ax, fontsize=7)
    return fig
