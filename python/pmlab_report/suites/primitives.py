"""Figures of the `primitives` suite: log writers and page flushers beside PMDK ([PMemIO] §3).

Reads:
  primitives.log_append    params medium, writer, padding, stores, size, threads; metric throughput (ops/s),
                           fences_per_op, flushes_per_op (pmemlog: fences published, flushes null)
  primitives.page_flush    params medium, flusher, page, dirty, threads; metric throughput (pages/s),
                           fences_per_op, flushes_per_op (pmemblk: fences published, flushes null)
  primitives.ycsb_write    params medium, writer, padding, stores, threads; metrics throughput (tx/s),
                           published_throughput (published)
  primitives.log_target    params padding, size, threads; metrics zero_vs_pmemlog (ratio, with its target),
                           one_barrier_streaming_vs_pmemlog (the bound, ratio)
Runs without a `stores` param (older result files) count as cached stores.
  primitives.flush_target  params page, dirty, threads; metrics hybrid_vs_best, best_vs_pmemblk (ratios,
                           with their targets)
Figures tolerate missing combinations, runs that are not ok and null values. PMDK's peers are drawn
black and dashed so they read as the baseline beside our lines.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter

from ..figures import figure, legend_outside, log2_axis, plain_log_y
from ..model import Run, distinct, is_number as _number
from ..units import compact, size_label

SUITE = "primitives"
WRITERS = ("classic", "header", "header-dancing", "zero", "pmemlog")
FLUSHERS = ("cow", "ulog", "hybrid", "pmemblk")
PEERS = ("pmemlog", "pmemblk")
PADDINGS = ("none", "line")
STORES = ("streaming", "cached")
COLORS = {"classic": "#1f77b4", "header": "#ff7f0e", "header-dancing": "#2ca02c", "zero": "#d62728",
          "cow": "#1f77b4", "ulog": "#ff7f0e", "hybrid": "#9467bd", "pmemlog": "black", "pmemblk": "black"}
MARKERS = {"classic": "o", "header": "s", "header-dancing": "^", "zero": "D", "cow": "o", "ulog": "s",
           "hybrid": "D", "pmemlog": "x", "pmemblk": "x"}
TARGET_COLOR = "#d62728"


def _positive(value: Any) -> bool:
    return _number(value) and value > 0


def _style(name: str) -> dict:
    peer = name in PEERS
    return {"color": COLORS.get(name, "0.4"), "marker": MARKERS.get(name, "."), "markersize": 4,
            "linewidth": 1.2 if peer else 1.5, "linestyle": "--" if peer else "-",
            "label": f"{name} (PMDK)" if peer else name}


def _log2_axis(ax, ticks: Sequence[float], label) -> None:
    log2_axis(ax, ticks, label)


def _log_y(ax) -> None:
    plain_log_y(ax)
    ax.tick_params(axis="y", labelsize=8)


def _stores(r: Run) -> str:
    return r.param("stores") or "cached"


def _stores_present(runs: Sequence[Run]) -> list[str]:
    return [s for s in STORES if any(_stores(r) == s and r.param("writer") != "pmemlog" for r in runs)]


def _one_medium(runs: list[Run]) -> tuple[list[Run], Any]:
    """The pool's runs when there are any (where the PMDK peers run), else the first medium's."""
    media = distinct(runs, "medium", ("pool", "dram"))
    if not media:
        return runs, None
    return [r for r in runs if r.param("medium") == media[0]], media[0]


def _ok(runs: Sequence[Run], case: str, metric: str) -> list[Run]:
    return [r for r in runs if r.case == case and r.ok and _positive(r.value(metric))]


def _curve(runs: Sequence[Run], x: str, metric: str, **params: Any) -> tuple[list, list]:
    points: dict[Any, float] = {}
    for r in runs:
        if all(r.param(k) == v for k, v in params.items()):
            points.setdefault(r.param(x), r.value(metric))
    xs = sorted(points)
    return xs, [points[v] for v in xs]


def _legend(fig, names: Sequence[str], title: str) -> None:
    handles = [Line2D([], [], **_style(n)) for n in names]
    fig.legend(handles=handles, loc="outside right upper", title=title, fontsize=8, title_fontsize=9,
               frameon=False)


# --------------------------------------------------------------------------- Figure 6: log appends


@figure(
    SUITE,
    title="primitives.log_append — durable appends per second ([PMemIO] Figure 6)",
    caption=("Appends per second (log scale) against the payload size (log\u2082), one line per log writer; "
             "libpmemlog (PMDK, black dashed) appended to a pool file beside ours and has no padding, so it "
             "appears in both columns. Solid: our writers storing entries as whole non-temporal lines "
             "(streaming); dotted: stored through the cache and flushed (cached). Columns: entries packed "
             "(padding none) or each on its own cache lines (padding line); rows: appending threads (each its "
             "own lane). A full log is truncated in a pause that is not timed. Pool medium when present."),
    case="log_append",
    metrics=("throughput",),
)
def log_throughput(runs: Sequence[Run]) -> Figure | None:
    ok, medium = _one_medium(_ok(runs, "log_append", "throughput"))
    if not ok:
        return None
    threads = distinct(ok, "threads")
    paddings = [p for p in PADDINGS if any(r.param("padding") == p for r in ok)] or ["none"]
    sizes = distinct(ok, "size")
    writers = [w for w in WRITERS if any(r.param("writer") == w for r in ok)]
    stores_present = _stores_present(ok) or ["cached"]
    fig = Figure(figsize=(2.6 + 4.0 * len(paddings), 0.9 + 2.8 * len(threads)), layout="constrained")
    axes = fig.subplots(len(threads), len(paddings), sharex=True, sharey=True, squeeze=False)
    for row, t in enumerate(threads):
        for col, padding in enumerate(paddings):
            ax = axes[row][col]
            for w in writers:
                pad = "none" if w == "pmemlog" else padding
                for stores in ("cached",) if w == "pmemlog" else stores_present:
                    xs, ys = _curve([r for r in ok if _stores(r) == stores], "size", "throughput", writer=w,
                                    padding=pad, threads=t)
                    if xs:
                        style = _style(w)
                        if stores == "cached" and w != "pmemlog" and len(stores_present) > 1:
                            style.update(linestyle=":", label=f"{w} (cached)")
                        ax.plot(xs, ys, **style)
            _log2_axis(ax, sizes, size_label)
            _log_y(ax)
            ax.grid(True, which="major", linewidth=0.4, alpha=0.5)
            ax.set_title(f"padding: {padding} · threads: {t}", fontsize=10)
            if row == len(threads) - 1:
                ax.set_xlabel("payload per entry", fontsize=9)
            if col == 0:
                ax.set_ylabel("appends/s", fontsize=9)
    handles = [Line2D([], [], **_style(n)) for n in writers]
    if len(stores_present) > 1:
        handles += [Line2D([], [], color="0.3", linestyle="-", label="streaming stores"),
                    Line2D([], [], color="0.3", linestyle=":", label="cached stores")]
    fig.legend(handles=handles, loc="outside right upper", title="writer", fontsize=8, title_fontsize=9,
               frameon=False)
    fig.suptitle(f"Log appends{f' (medium: {medium})' if medium else ''}", fontsize=12)
    return fig


# --------------------------------------------------------------------------- Figure 5: page flushes


@figure(
    SUITE,
    title="primitives.page_flush — failure-atomic page flushes per second ([PMemIO] Figure 5)",
    caption=("Pages flushed per second (log scale) against the dirty cache lines per page (log\u2082), one line "
             "per flusher: copy-on-write, micro-log, and the hybrid that picks one per flush from its "
             "calibrated cost model; libpmemblk (PMDK, black dashed) writes the whole page as a block whatever "
             "is dirty. Columns: page size; rows: flushing threads. Pool medium when present."),
    case="page_flush",
    metrics=("throughput",),
)
def page_flush(runs: Sequence[Run]) -> Figure | None:
    ok, medium = _one_medium(_ok(runs, "page_flush", "throughput"))
    if not ok:
        return None
    threads = distinct(ok, "threads")
    pages = distinct(ok, "page")
    flushers = [f for f in FLUSHERS if any(r.param("flusher") == f for r in ok)]
    fig = Figure(figsize=(2.6 + 3.6 * len(pages), 0.9 + 2.8 * len(threads)), layout="constrained")
    axes = fig.subplots(len(threads), len(pages), sharey=True, squeeze=False)
    for row, t in enumerate(threads):
        for col, page in enumerate(pages):
            ax = axes[row][col]
            cell = [r for r in ok if r.param("page") == page and r.param("threads") == t]
            for f in flushers:
                xs, ys = _curve(cell, "dirty", "throughput", flusher=f)
                if xs:
                    ax.plot(xs, ys, **_style(f))
            dirty = distinct(cell, "dirty") or distinct(ok, "dirty")
            _log2_axis(ax, dirty, lambda v: str(int(v)))
            _log_y(ax)
            ax.grid(True, which="major", linewidth=0.4, alpha=0.5)
            ax.set_title(f"page: {size_label(page) if _number(page) else page} · threads: {t}", fontsize=10)
            if row == len(threads) - 1:
                ax.set_xlabel("dirty cache lines", fontsize=9)
            if col == 0:
                ax.set_ylabel("pages/s", fontsize=9)
    _legend(fig, flushers, "flusher")
    fig.suptitle(f"Page flushes{f' (medium: {medium})' if medium else ''}", fontsize=12)
    return fig


# --------------------------------------------------------------------------- barriers and flushes


def _lines_written_back(r: Run) -> float | None:
    """Line flushes plus lines written with non-temporal stores, per operation (None for the peers)."""
    flushes, nt = r.value("flushes_per_op"), r.value("nt_bytes_per_op")
    if not _number(flushes):
        return None
    return flushes + (nt / 64.0 if _number(nt) else 0.0)


@figure(
    SUITE,
    title="primitives — persistency barriers and write-backs per operation",
    caption=("Fences (top) and cache lines written back (bottom: line flushes plus lines written with "
             "non-temporal stores) per operation, from the persistence vocabulary's counters, at one thread: "
             "log appends against the payload size (left), page flushes against the dirty lines of the "
             "smallest page size (right). The PMDK peers do not go through the vocabulary: their fence counts "
             "are the published ones (hollow markers), their write-backs unknown."),
    case=None,
    metrics=("fences_per_op", "flushes_per_op", "nt_bytes_per_op"),
)
def persistence_costs(runs: Sequence[Run]) -> Figure | None:
    logs, _ = _one_medium([r for r in runs if r.case == "log_append" and r.ok])
    pages, _ = _one_medium([r for r in runs if r.case == "page_flush" and r.ok])
    logs = [r for r in logs if r.param("threads") == min(distinct(logs, "threads") or [None])]
    # Both store modes write back the same lines under the same fences: draw the cached one.
    logs = [r for r in logs if _stores(r) == "cached"]
    pages = [r for r in pages if r.param("threads") == min(distinct(pages, "threads") or [None])]
    smallest = min(distinct(pages, "page") or [None])
    pages = [r for r in pages if r.param("page") == smallest]
    if not any(_number(r.value("fences_per_op")) or _number(_lines_written_back(r)) for r in logs + pages):
        return None
    fig = Figure(figsize=(11, 6), layout="constrained")
    axes = fig.subplots(2, 2, squeeze=False)
    panels = ((logs, "size", "writer", WRITERS, size_label, "payload per entry"),
              (pages, "dirty", "flusher", FLUSHERS, lambda v: str(int(v)),
               f"dirty lines ({size_label(smallest) if _number(smallest) else '?'} pages)"))
    for col, (cell, x, who, order, label, xlabel) in enumerate(panels):
        names = [n for n in order if any(r.param(who) == n for r in cell)]
        for row, metric in enumerate(("fences_per_op", "lines_per_op")):
            ax = axes[row][col]
            drew = False
            for n in names:
                for padding in ("none", "line") if who == "writer" else (None,):
                    chosen = [r for r in cell if r.param(who) == n and (padding is None or r.param("padding") == padding)]
                    if metric == "fences_per_op":
                        pts = sorted((r.param(x), r.value(metric), r.metrics[metric].kind) for r in chosen
                                     if metric in r.metrics and _number(r.value(metric)))
                    else:
                        pts = sorted((r.param(x), _lines_written_back(r), "measured") for r in chosen
                                     if _number(_lines_written_back(r)))
                    if not pts:
                        continue
                    style = _style(n)
                    if padding == "line":
                        style["linestyle"] = ":"
                        style["label"] = f"{n} (padded)"
                    if pts[0][2] == "published":
                        style["markerfacecolor"] = "none"
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], **style)
                    drew = True
            ticks = distinct(cell, x)
            if ticks:
                _log2_axis(ax, ticks, label)
            ax.set_ylim(bottom=0)
            ax.grid(True, linewidth=0.4, alpha=0.5)
            ax.set_ylabel("fences per op" if row == 0 else "lines written back per op", fontsize=9)
            if row == 1:
                ax.set_xlabel(xlabel, fontsize=9)
            if drew:
                legend_outside(ax, fontsize=7)
            else:
                ax.text(0.5, 0.5, "no data", transform=ax.transAxes, ha="center", va="center", color="0.5")
    fig.suptitle("Barriers and write-backs per operation (1 thread)", fontsize=12)
    return fig


# --------------------------------------------------------------------------- YCSB


@figure(
    SUITE,
    title="primitives.ycsb_write — YCSB 100% updates on a DRAM table ([PMemIO] §3.3.2)",
    caption=("Transactions per second: each latches a record, appends its redo entry durably through the "
             "writer, and updates the DRAM table (scrambled-zipfian keys). Bars per writer, packed and padded "
             "entries, stored streaming or (dotted) cached; one panel per thread count. Grey hatched bars are "
             "the paper's numbers (published, HyMem on an Optane DC PMM prototype, 1 thread), not ours."),
    case="ycsb_write",
    metrics=("throughput", "published_throughput"),
)
def ycsb(runs: Sequence[Run]) -> Figure | None:
    ok, medium = _one_medium(_ok(runs, "ycsb_write", "throughput"))
    if not ok:
        return None
    threads = distinct(ok, "threads")
    writers = [w for w in WRITERS if any(r.param("writer") == w for r in ok)]
    stores_present = _stores_present(ok) or ["cached"]
    series = [(padding, stores) for padding in PADDINGS for stores in stores_present] + [("published", None)]
    fig = Figure(figsize=(2.6 + (2.2 + 0.5 * len(series)) * len(threads), 3.8), layout="constrained")
    axes = fig.subplots(1, len(threads), sharey=True, squeeze=False)[0]
    width = 0.8 / len(series)
    for ax, t in zip(axes, threads):
        for i, w in enumerate(writers):
            for slot, (padding, stores) in enumerate(series):
                x = i - 0.4 + width * (slot + 0.5)
                if padding == "published":
                    vals = [r.value("published_throughput") for r in ok if r.param("writer") == w
                            and r.param("threads") == t and _positive(r.value("published_throughput"))]
                    if vals:
                        ax.bar(x, vals[0], width * 0.9, color="0.85", edgecolor="0.4", hatch="//")
                    continue
                if w == "pmemlog" and (padding == "line" or stores != stores_present[-1]):
                    continue  # libpmemlog has neither option: one bar
                vals = [r.value("throughput") for r in ok if r.param("writer") == w and r.param("threads") == t
                        and r.param("padding") == padding and (w == "pmemlog" or _stores(r) == stores)]
                if vals:
                    ax.bar(x, vals[0], width * 0.9, color=COLORS.get(w, "0.5"),
                           alpha=1.0 if padding == "none" else 0.55, edgecolor="black", linewidth=0.5,
                           hatch=".." if stores == "cached" and len(stores_present) > 1 and w != "pmemlog" else None)
        ax.set_xticks(range(len(writers)), writers, fontsize=8, rotation=15)
        ax.set_title(f"threads: {t}", fontsize=10)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: compact(v)))
        ax.grid(True, axis="y", linewidth=0.4, alpha=0.5)
    axes[0].set_ylabel("transactions/s", fontsize=9)
    handles = [Patch(facecolor="0.4", edgecolor="black", label="packed entries"),
               Patch(facecolor="0.4", alpha=0.55, edgecolor="black", label="padded entries"),
               Patch(facecolor="0.85", edgecolor="0.4", hatch="//", label="[PMemIO] (published)")]
    if len(stores_present) > 1:
        handles.insert(2, Patch(facecolor="white", edgecolor="black", hatch="..",
                                label="cached stores (else streaming)"))
    fig.legend(handles=handles, loc="outside right upper", fontsize=8, frameon=False)
    fig.suptitle(f"YCSB 100% updates{f' (medium: {medium})' if medium else ''}", fontsize=12)
    return fig


# --------------------------------------------------------------------------- the speed targets


def _first_threshold(rows: Sequence[Run], metric: str) -> float | None:
    """The threshold of the runs' target on `metric` (the same in every row of a case), or None."""
    for r in rows:
        if _number(r.threshold(metric)):
            return r.threshold(metric)
    return None


@figure(
    SUITE,
    title="primitives — speed targets, measured side by side",
    caption=("Each ratio comes from one run that alternates the contenders in phases over many rounds (median "
             "of the rounds' ratios). Left: zero log (streaming stores) / libpmemlog appends per second (ADR, "
             "clwb), against the run's target (red dashed); black ticks: the bound, the entry's lines made durable "
             "non-temporally under one barrier with no log work, over libpmemlog. Middle: hybrid / the better "
             "of cow and ulog at each dirty-line count, against its target (red dashed); grey crosses: the same hybrid on its "
             "calibrated model alone, without the online refinement. Right: our best flusher / "
             "libpmemblk; the red markers are its targets. Targets and whether each was met are the run's own "
             "(the targets on zero_vs_pmemlog, hybrid_vs_best and best_vs_pmemblk, and their verdicts): filled markers met theirs, hollow "
             "ones did not."),
    case=None,
    metrics=("zero_vs_pmemlog", "hybrid_vs_best", "best_vs_pmemblk"),
)
def targets(runs: Sequence[Run]) -> Figure | None:
    logs = [r for r in runs if r.case == "log_target" and r.ok and _number(r.value("zero_vs_pmemlog"))]
    flushes = [r for r in runs if r.case == "flush_target" and r.ok]
    hybrid = [r for r in flushes if _number(r.value("hybrid_vs_best"))]
    peer = [r for r in flushes if _number(r.value("best_vs_pmemblk"))]
    if not (logs or hybrid or peer):
        return None
    fig = Figure(figsize=(14, 4.2), layout="constrained")
    ax_log, ax_hyb, ax_blk = fig.subplots(1, 3)

    if logs:
        sizes = distinct(logs, "size")
        combos = sorted({(r.param("padding"), r.param("threads")) for r in logs}, key=str)
        width = 0.8 / max(1, len(combos))
        drew_bound = False
        for j, (padding, t) in enumerate(combos):
            for i, size in enumerate(sizes):
                sel = [r for r in logs if r.param("size") == size
                       and r.param("padding") == padding and r.param("threads") == t]
                if not sel:
                    continue
                vals = [sel[0].value("zero_vs_pmemlog")]
                met = sel[0].verdict("zero_vs_pmemlog") in (None, "met")
                x = i - 0.4 + width * (j + 0.5)
                bounds = [r.value("one_barrier_streaming_vs_pmemlog") for r in logs if r.param("size") == size
                          and r.param("padding") == padding and r.param("threads") == t]
                if bounds and _number(bounds[0]):
                    ax_log.plot([x], [bounds[0]], marker="_", markersize=10, markeredgewidth=2, color="black",
                                label="bound: the entry's lines, one barrier" if not drew_bound else None)
                    drew_bound = True
                ax_log.bar(x, vals[0], width * 0.9,
                           color=COLORS["zero"], alpha=0.35 + 0.65 * (j + 1) / len(combos),
                           edgecolor="black", linewidth=0.5, hatch=None if met else "///",
                           label=f"padding {padding}, {t} thr" if i == 0 else None)
        zero_target = _first_threshold(logs, "zero_vs_pmemlog")
        if zero_target is not None:
            ax_log.axhline(zero_target, color=TARGET_COLOR, linestyle="--", linewidth=1.2)
        ax_log.set_xticks(range(len(sizes)), [size_label(s) for s in sizes], fontsize=8)
        ax_log.set_xlabel("payload per entry", fontsize=9)
        legend_outside(ax_log, below=True, fontsize=7)
    ax_log.set_ylabel("zero / libpmemlog", fontsize=9)
    ax_log.set_title("zero vs libpmemlog (hatched: below target)", fontsize=10)

    def ratio_lines(ax, rows, metric):
        for page in distinct(rows, "page"):
            for t in distinct(rows, "threads"):
                sel = sorted((r for r in rows if r.param("page") == page and r.param("threads") == t),
                             key=lambda r: r.param("dirty"))
                if not sel:
                    continue
                xs = [r.param("dirty") for r in sel]
                ys = [r.value(metric) for r in sel]
                line, = ax.plot(xs, ys, linewidth=1.2, linestyle="-" if t == 1 else "--",
                                label=f"{size_label(page)} · {t} thr")
                for r, x, y in zip(sel, xs, ys):
                    met = r.verdict(metric) in (None, "met")
                    ax.plot([x], [y], marker="o", markersize=4, color=line.get_color(),
                            markerfacecolor=line.get_color() if met else "none")
        ticks = distinct(rows, "dirty")
        if ticks:
            _log2_axis(ax, ticks, lambda v: str(int(v)))
        ax.set_xlabel("dirty cache lines", fontsize=9)
        ax.grid(True, linewidth=0.4, alpha=0.5)
        if rows:
            legend_outside(ax, below=True, fontsize=7)

    ratio_lines(ax_hyb, hybrid, "hybrid_vs_best")
    # The hybrid on its calibrated model alone, run beside it (older runs do not have it).
    calibrated = [r for r in hybrid if _number(r.value("hybrid_calibrated_vs_best"))]
    if calibrated:
        ax_hyb.scatter([r.param("dirty") for r in calibrated], [r.value("hybrid_calibrated_vs_best") for r in calibrated],
                       marker="x", s=14, linewidths=0.8, color="0.45", label="calibrated model alone")
        legend_outside(ax_hyb, below=True, fontsize=7)
    hybrid_target = _first_threshold(hybrid, "hybrid_vs_best")
    if hybrid_target is not None:
        ax_hyb.axhline(hybrid_target, color=TARGET_COLOR, linestyle="--", linewidth=1.2)
    ax_hyb.axhline(1.0, color="0.3", linewidth=0.6)
    ax_hyb.set_ylabel("hybrid / best of cow, ulog", fontsize=9)
    ax_hyb.set_title("hybrid vs the better policy", fontsize=10)

    def blk_target(r):
        t = r.threshold("best_vs_pmemblk")
        return t if _number(t) else None

    ratio_lines(ax_blk, peer, "best_vs_pmemblk")
    for r in peer:
        t = blk_target(r)
        if t is not None:
            ax_blk.plot([r.param("dirty")], [t], marker="_", markersize=14, markeredgewidth=2, color=TARGET_COLOR)
    ax_blk.axhline(1.0, color="0.3", linewidth=0.6)
    ax_blk.set_ylabel("best flusher / libpmemblk", fontsize=9)
    ax_blk.set_title("our best flusher vs libpmemblk", fontsize=10)
    for ax in (ax_log, ax_hyb, ax_blk):
        ax.tick_params(axis="y", labelsize=8)
        ax.set_ylim(bottom=0)
    fig.suptitle("Speed targets (ratios measured side by side in one run)", fontsize=12)
    return fig
