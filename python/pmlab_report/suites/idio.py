"""Figures and tables of the `idio` suite (the idiosyncrasies of [PMIdioBench]).

Reads (every plotted number keeps the kind the run gave it; published numbers come only from the
derived rows, labelled with their source):
  idio.i1_latency          params medium, op, flush, hit_ratio, threads; metrics latency_p50, hit_ratio_measured
  idio.i2_bandwidth        params medium, op, flush, size, threads;        metric bandwidth (MiB/s),
                           published_bandwidth (MiB/s, [OptaneGuide] Fig. 4, at 256 B)
  idio.dependent_load      params medium, wss, threads; metrics load_latency (ns, best batch),
                           load_latency_median (ns, median of batches, with stats),
                           published_load_latency (ns, [OptaneGuide] Fig. 2, past the LLC)
  idio.i3_small_writes     params medium, pattern, size, threads;          metric bandwidth
  idio.i4_numa             params medium, locality, pattern, size, threads; metric bandwidth (or skipped + reason)
  idio.i5_store_vs_pstore  params medium, pattern, op, size, threads;      metric bandwidth
  idio.i6_read             params medium, pattern, size, threads;          metric bandwidth
  idio.i7_rewrite          params medium, flush, target;                   metric latency_p50
  idio.i8_dirty_load       params medium, domain;                          metric latency_p50
  idio.vs_likwid / vs_fio  params (medium, pages, kernel | flush, size, threads); metrics ratio_vs_likwid /
                           ratio_vs_fio
  idio.classification      params idiosyncrasy; metrics effect_*; notes verdict, pmem_specific,
                           not_applicable_because, … (tokens: idio_sentences.py words them)
  idio.recommendation      params rule; metrics impact_*; notes rule, impact_class, published_impact, …
Every figure tolerates missing combinations and runs that are not ok; a figure whose data is absent
returns None (the report says so), I4 returns its skip reason as text. The classification and the
recommendations are rendered as HTML tables at the top of the report (findings.py), not as figures.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from matplotlib.figure import Figure
from matplotlib.colors import Normalize, SymLogNorm
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter

from ..figures import NotMeasured, figure, legend_outside, log2_axis, mark_timer_floor, plain_log_y
from ..model import Run, distinct, is_number as _number
from ..units import size_label

MEDIA = ("dram", "pool")
FLUSHES = ("clflush", "clflushopt", "clwb", "ntstore")
COLORS = {"load": "#1f77b4", "store": "#ff7f0e", "pstore": "#2ca02c", "clflush": "#d62728",
          "clflushopt": "#9467bd", "clwb": "#2ca02c", "ntstore": "#8c564b", "seq": "#1f77b4",
          "rand": "#d62728", "local": "#1f77b4", "remote": "#d62728"}
SERIES_STYLES = (("o", "-"), ("s", "--"), ("D", "-."), ("^", ":"), ("v", (0, (5, 1))), ("P", (0, (1, 2))))


def _positive(value: Any) -> bool:
    return _number(value) and value > 0


def _ok(runs: Sequence[Run], case: str, metric: str) -> list[Run]:
    return [r for r in runs if r.case == case and r.ok and _positive(r.value(metric))]


def _media(runs: Sequence[Run]) -> list[Any]:
    return distinct(runs, "medium", MEDIA) or [None]


def _size_axis(ax, sizes: Sequence[float]) -> None:
    log2_axis(ax, sizes, size_label, labelsize=7, rotation=45)


def _grid(fig: Figure, ncols: int, nrows: int = 1):
    return fig.subplots(nrows, ncols, squeeze=False)


def _fmt(value: Any, digits: int = 3) -> str:
    if not _number(value):
        return "—"
    return f"{value:.{digits}g}"


# ----------------------------------------------------------------------------------------- I1


@figure("idio", title="I1 — load and p-store latency versus LLC hit ratio",
        caption=("Median per-operation latency (latency_p50, ns, log scale) of one 8-byte load and of one "
                 "p-store (store + flush + fence) per flush instruction, against the fraction f of the "
                 "region's lines primed into the cache ([PMIdioBench] Fig. 3a). Lower panels: the hit ratio "
                 "the priming achieved, measured from the loads' latencies, against f (the diagonal is "
                 "perfect priming). One column per medium; the smallest thread count is shown."),
        case="i1_latency", metrics=("latency_p50", "hit_ratio_measured"))
def i1_latency(runs: Sequence[Run]) -> Figure | None:
    rows = _ok(runs, "i1_latency", "latency_p50")
    if not rows:
        return None
    threads = distinct(rows, "threads")[0] if distinct(rows, "threads") else None
    rows = [r for r in rows if r.param("threads") == threads]
    media = _media(rows)
    fig = Figure(figsize=(2.5 + 4.2 * len(media), 6.2), layout="constrained")
    axes = fig.subplots(2, len(media), squeeze=False, sharex=True, height_ratios=(2.2, 1))
    for col, medium in enumerate(media):
        ax, hax = axes[0][col], axes[1][col]
        cell = [r for r in rows if r.param("medium") == medium]
        series = [("load", None)] + [("pstore", f) for f in distinct(cell, "flush", FLUSHES)]
        floor_x, floor_y = [], []
        for k, (op, flush) in enumerate(series):
            chosen = {r.param("hit_ratio"): r for r in cell
                      if r.param("op") == op and (flush is None or r.param("flush") == flush)}
            if not chosen:
                continue
            xs = sorted(chosen)
            label = "load" if op == "load" else f"p-store · {flush}"
            color = COLORS["load"] if op == "load" else COLORS.get(flush, "#555")
            # Series that coincide (clflush and clflushopt often do) stay visible: each has its own marker,
            # hollow and smaller than the one drawn before it, and its own dash pattern.
            style = SERIES_STYLES[k % len(SERIES_STYLES)]
            ax.plot(xs, [chosen[x].value("latency_p50") for x in xs], marker=style[0], linestyle=style[1],
                    markersize=max(3.0, 8.0 - 1.2 * k), markerfacecolor=color if k == 0 else "none",
                    linewidth=1.6 if op == "load" else 1.1, color=color, label=label)
            for x in xs:
                metric = chosen[x].metrics.get("latency_p50")
                if metric is not None and metric.at_timer_floor:
                    floor_x.append(x)
                    floor_y.append(metric.value)
        mark_timer_floor(ax, floor_x, floor_y)
        plain_log_y(ax)
        ax.grid(True, linewidth=0.4, alpha=0.5)
        ax.set_title(f"medium: {medium}", fontsize=10)
        if col == 0:
            ax.set_ylabel("latency p50 (ns)", fontsize=9)
        if col == len(media) - 1:
            legend_outside(ax)
        loads = sorted((r.param("hit_ratio"), r.value("hit_ratio_measured")) for r in cell
                       if r.param("op") == "load" and _number(r.value("hit_ratio_measured")))
        if loads:
            hax.plot([x for x, _ in loads], [y for _, y in loads], marker="o", markersize=4,
                     color=COLORS["load"], label="measured")
        hax.plot([0, 1], [0, 1], linestyle="--", color="0.5", linewidth=0.8, label="f")
        hax.set_ylim(-0.05, 1.05)
        hax.grid(True, linewidth=0.4, alpha=0.5)
        hax.set_xlabel("primed fraction f", fontsize=9)
        if col == 0:
            hax.set_ylabel("hit ratio", fontsize=9)
    fig.suptitle(f"I1 — latency versus LLC hit ratio (threads = {threads})", fontsize=12)
    return fig


# ----------------------------------------------------------------------------------------- I2


def _series_label(r: Run) -> str:
    op = r.param("op")
    if op == "pstore":
        return "p-store · nt-store" if r.param("flush") == "ntstore" else f"p-store · {r.param('flush')}"
    return str(op)


@figure("idio", title="I2 — load, store and p-store bandwidth",
        caption=("Sequential bandwidth (MiB/s, log scale) against access size (log\u2082), one line per "
                 "operation: loads, cached stores without flush, p-stores with store + flush and with "
                 "nt-stores ([PMIdioBench] Fig. 3b–d). Solid lines: all threads; dashed: one thread. One "
                 "panel per medium."),
        case="i2_bandwidth", metrics=("bandwidth",))
def i2_bandwidth(runs: Sequence[Run]) -> Figure | None:
    rows = _ok(runs, "i2_bandwidth", "bandwidth")
    if not rows:
        return None
    media = _media(rows)
    sizes = distinct(rows, "size")
    threads = distinct(rows, "threads")
    ends = [threads[-1]] + ([threads[0]] if threads[0] != threads[-1] else [])
    fig = Figure(figsize=(2.8 + 4.2 * len(media), 3.9), layout="constrained")
    axes = _grid(fig, len(media))[0]
    palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#8c564b", "#9467bd", "#d62728"]
    labels = sorted({_series_label(r) for r in rows})
    for ax, medium in zip(axes, media):
        for i, label in enumerate(labels):
            for t in ends:
                pts = {r.param("size"): r.value("bandwidth") for r in rows if r.param("medium") == medium
                       and _series_label(r) == label and r.param("threads") == t}
                if not pts:
                    continue
                xs = sorted(pts)
                ax.plot(xs, [pts[x] for x in xs], color=palette[i % len(palette)], marker="o", markersize=3,
                        linestyle="-" if t == threads[-1] else "--", linewidth=1.3)
        _size_axis(ax, sizes)
        plain_log_y(ax)
        ax.grid(True, linewidth=0.4, alpha=0.5)
        ax.set_title(f"medium: {medium}", fontsize=10)
        ax.set_xlabel("access size", fontsize=9)
    axes[0].set_ylabel("bandwidth (MiB/s)", fontsize=9)
    handles = [Line2D([], [], color=palette[i % len(palette)], label=lab) for i, lab in enumerate(labels)]
    handles += [Line2D([], [], color="0.3", linestyle="-", label=f"threads = {threads[-1]}")]
    if len(ends) > 1:
        handles.append(Line2D([], [], color="0.3", linestyle="--", label=f"threads = {threads[0]}"))
    fig.legend(handles=handles, loc="outside right upper", fontsize=8, frameon=False)
    fig.suptitle("I2 — sequential bandwidth versus access size", fontsize=12)
    return fig


# ------------------------------------------------------------------ [PMemIO] Fig. 2 and Fig. 3

SCALING_SIZE = 256  # four cache lines, the media's access unit: [PMemIO] Fig. 2's access


def _scaling_series(r: Run) -> str | None:
    """The line of [PMemIO] Fig. 2 a run belongs to: load, store, store + flush (p-store) or nt-store."""
    op = r.param("op")
    if op == "pstore":
        return "nt-store" if r.param("flush") == "ntstore" else "store + flush"
    return op if op in ("load", "store") else None


SCALING_COLORS = {"load": "#1f77b4", "store": "#ff7f0e", "store + flush": "#2ca02c", "nt-store": "#8c564b"}


@figure("idio", title="Bandwidth versus threads: load, store, store + flush, nt-store ([PMemIO] Fig. 2)",
        caption=("Sequential bandwidth (MiB/s, log scale, measured by idio.i2_bandwidth) of 256 B accesses — four "
                 "cache lines, the media's access unit, as in [PMemIO] Fig. 2 — against the number of threads "
                 "(log₂), one line per operation: vector loads, cached stores left to the cache, stores each "
                 "followed by a line flush and a fence (store + flush, the run's flush instruction), and "
                 "non-temporal stores with a fence. One panel per medium. Dashed lines with hollow markers: "
                 "published by [OptaneGuide] Fig. 4 for the same operation and thread counts (256 B accesses on "
                 "six interleaved Optane DC PMMs, or DRAM); [PMemIO] itself publishes only the shape: nt-stores "
                 "peak near 3 threads and stores + clwb near 12, stores without clwb fall behind from about 4 "
                 "threads, and PMem's read bandwidth is 2.6× and its write bandwidth 7.5× below DRAM's. [PMemIO] "
                 "accessed random 256 B blocks; i2_bandwidth streams them sequentially."),
        case="i2_bandwidth", metrics=("bandwidth", "published_bandwidth"))
def thread_scaling(runs: Sequence[Run]) -> Figure | NotMeasured | None:
    rows = [r for r in _ok(runs, "i2_bandwidth", "bandwidth") if _scaling_series(r) is not None]
    if not rows:
        return None
    sizes = distinct(rows, "size")
    size = SCALING_SIZE if SCALING_SIZE in sizes else min(sizes, key=lambda s: abs(math.log2(s / SCALING_SIZE)))
    rows = [r for r in rows if r.param("size") == size]
    threads = distinct(rows, "threads")
    if len(threads) < 2:
        return NotMeasured(f"bandwidth against threads needs two thread counts or more; this run measured "
                           f"{size_label(size)} accesses at {threads[0]} thread(s) only (this machine has one CPU, "
                           "or the sweep was narrowed with --set threads=…)")
    media = _media(rows)
    series = [s for s in SCALING_COLORS if any(_scaling_series(r) == s for r in rows)]
    fig = Figure(figsize=(2.8 + 4.3 * len(media), 3.9), layout="constrained")
    axes = _grid(fig, len(media))[0]
    any_published = False
    for ax, medium in zip(axes, media):
        cell = [r for r in rows if r.param("medium") == medium]
        for name in series:
            points = {r.param("threads"): r for r in cell if _scaling_series(r) == name}
            if not points:
                continue
            xs = sorted(points)
            color = SCALING_COLORS[name]
            ax.plot(xs, [points[x].value("bandwidth") for x in xs], marker="o", markersize=4, linewidth=1.6,
                    color=color)
            published = [(x, points[x].value("published_bandwidth")) for x in xs
                         if _positive(points[x].value("published_bandwidth"))]
            if published:
                any_published = True
                ax.plot([x for x, _ in published], [y for _, y in published], linestyle="--", marker="o",
                        markersize=6, markerfacecolor="none", linewidth=1.0, color=color, alpha=0.8)
        log2_axis(ax, threads)
        plain_log_y(ax)
        ax.grid(True, linewidth=0.4, alpha=0.5)
        ax.set_title(f"medium: {medium}", fontsize=10)
        ax.set_xlabel("threads (count, log\u2082 scale)", fontsize=9)
    axes[0].set_ylabel("bandwidth (MiB/s)", fontsize=9)
    handles = [Line2D([], [], color=SCALING_COLORS[n], marker="o", markersize=4, label=f"{n} (measured)")
               for n in series]
    if any_published:
        handles.append(Line2D([], [], color="0.3", linestyle="--", marker="o", markerfacecolor="none",
                              label="published, [OptaneGuide] Fig. 4"))
    fig.legend(handles=handles, loc="outside right upper", fontsize=8, frameon=False)
    fig.suptitle(f"Bandwidth versus threads, {size_label(size)} accesses", fontsize=12)
    return fig


CACHE_STYLES = {1: ":", 2: "-.", 3: "--", 4: "--"}


def _data_caches(context: dict) -> list[tuple[str, float]]:
    """(label, bytes) of each data or unified cache level in the context, smallest first (one per level)."""
    out: dict[int, float] = {}
    for cache in ((context.get("cpu") or {}).get("caches") or []):
        if not isinstance(cache, dict) or cache.get("type") == "instruction":
            continue
        level, size = cache.get("level"), cache.get("size_bytes")
        if isinstance(level, int) and _positive(size):
            out[level] = max(out.get(level, 0.0), float(size))
    return [(f"L{level}", out[level]) for level in sorted(out)]


@figure("idio", title="Dependent-load latency versus working set ([PMemIO] Fig. 3)",
        caption=("Time per load (ns, log scale) of a single thread chasing pointers through a random cycle of every "
                 "cache line of the working set (log₂ x axis, 4 KiB to well past the last-level cache): each "
                 "load's address is the previous load's value, so loads cannot overlap. Measured by "
                 "idio.dependent_load in timed batches of many loads (batch time / loads): solid, the best batch "
                 "(other load on the machine only adds time); dotted, the median batch with its 95% interval; "
                 "one colour per medium. Vertical lines: this machine's cache "
                 "sizes (from the results' context). Horizontal dashed lines: published idle random-read latency, "
                 "[OptaneGuide] Fig. 2 (DRAM and Optane DC PMM). [PMemIO] §2.3 publishes the ratio only: DRAM's "
                 "dependent-load latency 3.2× below PMem's; the label at the right gives this run's pool / DRAM "
                 "ratio at the largest working set (measured)."),
        case="dependent_load", metrics=("load_latency", "load_latency_median", "published_load_latency"),
        with_context=True)
def dependent_load(runs: Sequence[Run], context: dict | None = None) -> Figure | None:
    rows = _ok(runs, "dependent_load", "load_latency")
    if not rows:
        return None
    media = _media(rows)
    sizes = distinct(rows, "wss")
    fig = Figure(figsize=(10.5, 4.4), layout="constrained")
    ax = fig.subplots()
    colors = {"dram": "#1f77b4", "pool": "#d62728"}
    largest: dict[Any, float] = {}
    for medium in media:
        points = {r.param("wss"): r for r in rows if r.param("medium") == medium}
        xs = sorted(points)
        ys = [points[x].value("load_latency") for x in xs]
        color = colors.get(medium, "#555555")
        ax.plot(xs, ys, marker="o", markersize=4, linewidth=1.6, color=color, label=f"{medium}: best batch (measured)")
        medians = [(x, points[x].metrics["load_latency_median"]) for x in xs
                   if "load_latency_median" in points[x].metrics and _positive(points[x].value("load_latency_median"))]
        if medians:
            mx = [x for x, _ in medians]
            my = [m.value for _, m in medians]
            low = [max(m.value - (m.stats or {}).get("ci_low", m.value), 0) for _, m in medians]
            high = [max((m.stats or {}).get("ci_high", m.value) - m.value, 0) for _, m in medians]
            ax.errorbar(mx, my, yerr=[low, high], linestyle=":", linewidth=1.0, marker="", capsize=2, color=color,
                        alpha=0.7, label=f"{medium}: median batch, 95% interval (measured)")
        floor = [(x, y) for x, y in zip(xs, ys) if points[x].metrics["load_latency"].at_timer_floor]
        mark_timer_floor(ax, [x for x, _ in floor], [y for _, y in floor])
        largest[medium] = ys[-1]
        published = [points[x].metrics["published_load_latency"] for x in xs
                     if "published_load_latency" in points[x].metrics and _positive(points[x].value("published_load_latency"))]
        if published:
            ax.axhline(published[0].value, color=color, linestyle="--", linewidth=1.0, alpha=0.8,
                       label=f"{medium}: published {published[0].value:g} ns ([OptaneGuide] Fig. 2, "
                             f"{'Optane' if medium == 'pool' else 'DRAM'})")
    for label, size in _data_caches(context or {}):
        if sizes[0] / 2 <= size <= sizes[-1] * 2:
            ax.axvline(size, color="0.35", linestyle=CACHE_STYLES.get(int(label[1:]), "--"), linewidth=0.9)
            ax.text(size, 0.98, f" {label} {size_label(size)}", transform=ax.get_xaxis_transform(), fontsize=8,
                    va="top", ha="left", color="0.25")
    if "pool" in largest and "dram" in largest and largest["dram"] > 0:
        ax.text(0.99, 0.03, f"largest working set: pool / DRAM = {largest['pool'] / largest['dram']:.2f}× (measured)",
                transform=ax.transAxes, ha="right", va="bottom", fontsize=8,
                bbox={"facecolor": "white", "edgecolor": "0.7", "linewidth": 0.5})
    _size_axis(ax, sizes)
    plain_log_y(ax)
    ax.grid(True, linewidth=0.4, alpha=0.5)
    ax.set_xlabel("working set (bytes, log\u2082 scale)", fontsize=9)
    ax.set_ylabel("time per dependent load (ns)", fontsize=9)
    legend_outside(ax)
    fig.suptitle("Dependent-load latency versus working-set size (1 thread)", fontsize=12)
    return fig


# ----------------------------------------------------------------------------------- I3 and I6


def _pattern_curves(runs: Sequence[Run], case: str, title: str) -> Figure | None:
    rows = _ok(runs, case, "bandwidth")
    if not rows:
        return None
    threads = distinct(rows, "threads")[-1]
    rows = [r for r in rows if r.param("threads") == threads]
    media = _media(rows)
    sizes = distinct(rows, "size")
    fig = Figure(figsize=(2.2 + 4.0 * len(media), 3.6), layout="constrained")
    axes = _grid(fig, len(media))[0]
    for ax, medium in zip(axes, media):
        for pattern in ("seq", "rand"):
            pts = {r.param("size"): r.value("bandwidth") for r in rows
                   if r.param("medium") == medium and r.param("pattern") == pattern}
            if pts:
                xs = sorted(pts)
                ax.plot(xs, [pts[x] for x in xs], marker="o", markersize=4, color=COLORS[pattern],
                        label="sequential" if pattern == "seq" else "random permutation")
        _size_axis(ax, sizes)
        plain_log_y(ax)
        ax.grid(True, linewidth=0.4, alpha=0.5)
        ax.set_title(f"medium: {medium}", fontsize=10)
        ax.set_xlabel("access size", fontsize=9)
    legend_outside(axes[-1])
    axes[0].set_ylabel("bandwidth (MiB/s)", fontsize=9)
    fig.suptitle(f"{title} (threads = {threads})", fontsize=12)
    return fig


@figure("idio", title="I3 — small sequential versus random p-store bandwidth",
        caption=("P-store (store + flush + fence) bandwidth (MiB/s, log scale) of 64–512 B writes, "
                 "sequential and in a random permutation of size-aligned slots ([PMIdioBench] Fig. 4a), at "
                 "the largest thread count. One panel per medium."),
        case="i3_small_writes", metrics=("bandwidth",))
def i3_small_writes(runs: Sequence[Run]) -> Figure | None:
    return _pattern_curves(runs, "i3_small_writes", "I3 — small writes, sequential versus random")


# ----------------------------------------------------------------------------- heatmaps I4, I5


def _heatmap(fig: Figure, ax, values: dict, sizes: list, threads: list, title: str) -> None:
    import numpy as np

    grid = np.full((len(threads), len(sizes)), np.nan)
    for (t, s), v in values.items():
        grid[threads.index(t)][sizes.index(s)] = v
    # Within ±100 % the colours are linear, as in the heatmaps of [PMIdioBench]; beyond that (a store 66 times
    # slower than a p-store is -6600 %) a symmetric log scale keeps the cells apart instead of saturating them.
    largest = float(np.nanmax(np.abs(grid))) if np.isfinite(grid).any() else 100.0
    if largest > 100:
        norm = SymLogNorm(linthresh=10, linscale=0.5, vmin=-largest, vmax=largest, base=10)
    else:
        norm = Normalize(vmin=-100, vmax=100)
    image = ax.imshow(grid, cmap="RdBu_r", norm=norm, aspect="auto", origin="lower")
    for i in range(len(threads)):
        for j in range(len(sizes)):
            v = grid[i][j]
            dark = np.isfinite(v) and abs(norm(v) - 0.5) > 0.3  # white text on the deep colours
            ax.text(j, i, "—" if not np.isfinite(v) else f"{v:.0f}", ha="center", va="center", fontsize=8,
                    color="white" if dark else "black")
    ax.set_xticks(range(len(sizes)), [size_label(s) for s in sizes], fontsize=7, rotation=45)
    ax.set_yticks(range(len(threads)), [str(t) for t in threads], fontsize=8)
    ax.set_xlabel("access size", fontsize=9)
    ax.set_ylabel("threads", fontsize=9)
    ax.set_title(title, fontsize=10)
    bar = fig.colorbar(image, ax=ax, shrink=0.8, label="difference (%)" + (", symmetric log" if largest > 100 else ""))
    bar.ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:,.0f}"))


def _percent_heatmaps(runs: Sequence[Run], case: str, key: str, better: str, worse: str,
                      suptitle: str) -> Figure | None:
    rows = _ok(runs, case, "bandwidth")
    if not rows:
        return None
    media = _media(rows)
    patterns = distinct(rows, "pattern", ("seq", "rand")) or [None]
    panels = [(m, p) for m in media for p in patterns]
    fig = Figure(figsize=(1.5 + 4.6 * len(patterns), 0.8 + 3.4 * len(media)), layout="constrained")
    axes = fig.subplots(len(media), len(patterns), squeeze=False)
    for idx, (medium, pattern) in enumerate(panels):
        ax = axes[idx // len(patterns)][idx % len(patterns)]
        cell = [r for r in rows if r.param("medium") == medium and r.param("pattern") == pattern]
        sizes, threads = distinct(cell, "size"), distinct(cell, "threads")
        values = {}
        for t in threads:
            for s in sizes:
                good = [r.value("bandwidth") for r in cell if r.param("threads") == t
                        and r.param("size") == s and r.param(key) == better]
                bad = [r.value("bandwidth") for r in cell if r.param("threads") == t
                       and r.param("size") == s and r.param(key) == worse]
                if good and bad:
                    values[(t, s)] = 100.0 * (good[0] - bad[0]) / good[0]
        if not values:
            ax.text(0.5, 0.5, "no pairs", ha="center", va="center", transform=ax.transAxes, color="0.5")
            ax.set_axis_off()
            continue
        _heatmap(fig, ax, values, sizes, threads, f"medium: {medium} · pattern: {pattern}")
    fig.suptitle(suptitle, fontsize=12)
    return fig


@figure("idio", title="I4 — local versus remote NUMA p-store bandwidth",
        caption=("Heatmap of the difference between local and remote p-store bandwidth, "
                 "100 × (local − remote) / local, over access size × threads ([PMIdioBench] Fig. 5): positive = "
                 "remote is worse. Needs two NUMA nodes; on one node the runs are skipped and the "
                 "figure states the reason."),
        case="i4_numa", metrics=("bandwidth",))
def i4_numa(runs: Sequence[Run]) -> Figure | None:
    cases = [r for r in runs if r.case == "i4_numa"]
    if not cases:
        return None
    fig = _percent_heatmaps(runs, "i4_numa", "locality", "local", "remote",
                            "I4 — (local − remote) / local p-store bandwidth (%)")
    if fig is not None:
        return fig
    reasons = sorted({r.reason for r in cases if r.reason})
    return NotMeasured(f"{len(cases)} runs skipped — " + ("; ".join(reasons) or "no run succeeded"))


@figure("idio", title="I5 — store versus p-store bandwidth",
        caption=("Heatmap of 100 × (p-store − store) / p-store bandwidth over access size × threads "
                 "([PMIdioBench] Fig. 6): positive = the un-flushed store is slower than the p-store. One "
                 "row per medium, one column per pattern; colours are linear within ±100 % and on a symmetric log "
                 "scale beyond, labels are exact."),
        case="i5_store_vs_pstore", metrics=("bandwidth",))
def i5_store_vs_pstore(runs: Sequence[Run]) -> Figure | None:
    return _percent_heatmaps(runs, "i5_store_vs_pstore", "op", "pstore", "store",
                             "I5 — (p-store − store) / p-store bandwidth (%)")


@figure("idio", title="I6 — sequential versus random read bandwidth",
        caption=("Read bandwidth (MiB/s, log scale) against access size for consecutive reads and for a "
                 "random permutation of the same slots — the order, not an MSR write, defeats the "
                 "prefetchers ([PMIdioBench] Fig. 7a). Largest thread count; one panel per medium."),
        case="i6_read", metrics=("bandwidth",))
def i6_read(runs: Sequence[Run]) -> Figure | None:
    return _pattern_curves(runs, "i6_read", "I6 — reads, sequential versus random")


# ----------------------------------------------------------------------------------- I7 and I8


@figure("idio", title="I7 and I8 — rewrite and dirty-cache latencies",
        caption=("Left (I7): median latency of a 256 B p-store rewriting one block against p-stores "
                 "spread over consecutive blocks, per flush ([PMIdioBench] Fig. 7d measures this with media "
                 "counters, which only a device model provides here). Right (I8): median load latency "
                 "after filling the cache with stores that were flushed (ADR) or left dirty (eADR)."),
        case=None, metrics=("latency_p50",))
def i7_i8(runs: Sequence[Run]) -> Figure | None:
    i7 = _ok(runs, "i7_rewrite", "latency_p50")
    i8 = _ok(runs, "i8_dirty_load", "latency_p50")
    if not i7 and not i8:
        return None
    fig = Figure(figsize=(10, 3.6), layout="constrained")
    left, right = _grid(fig, 2)[0]
    for ax, rows, key, order, title in ((left, i7, "target", ("same", "spread"), "I7 — 256 B p-store"),
                                        (right, i8, "domain", ("adr", "eadr"), "I8 — load after stores")):
        if not rows:
            ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes, color="0.5")
            ax.set_axis_off()
            continue
        groups = [(m, f) for m in _media(rows) for f in (distinct(rows, "flush") if key == "target" else [None])]
        width = 0.38
        for gi, (medium, flush) in enumerate(groups):
            for k, value in enumerate(order):
                match = [r.value("latency_p50") for r in rows if r.param("medium") == medium
                         and r.param(key) == value and (flush is None or r.param("flush") == flush)]
                if match:
                    ax.bar(gi + (k - 0.5) * width, match[0], width * 0.95,
                           color=("#1f77b4", "#d62728")[k], label=value if gi == 0 else None)
        ax.set_xticks(range(len(groups)), [f"{m}" + (f"\n{f}" if f else "") for m, f in groups], fontsize=8)
        ax.set_ylabel("latency p50 (ns)", fontsize=9)
        ax.grid(True, axis="y", linewidth=0.4, alpha=0.5)
        legend_outside(ax)
        ax.set_title(title, fontsize=10)
    return fig


# ------------------------------------------------------------------------------------ peers


@figure("idio", title="Peers — our loops beside likwid-bench and fio",
        caption=("Our bandwidth divided by the peer's, measured side by side in the same run: "
                 "sequential 64 KiB loads and nt-stores against likwid-bench's load / store_mem kernels "
                 "(target ≥ 0.9, dashed), and 256 B p-stores against fio's libpmem engine on a file "
                 "beside the pool (target ≥ 2, dashed). Bars below their target are red."),
        case=None, metrics=("ratio_vs_likwid", "ratio_vs_fio"))
def peers(runs: Sequence[Run]) -> Figure | None:
    likwid = _ok(runs, "vs_likwid", "ratio_vs_likwid")
    fio = _ok(runs, "vs_fio", "ratio_vs_fio")
    if not likwid and not fio:
        return None
    fig = Figure(figsize=(10, 3.8), layout="constrained")
    for ax, rows, metric, label_keys, title in (
            (fig.add_subplot(1, 2, 1), likwid, "ratio_vs_likwid", ("medium", "pages", "kernel", "threads"), "vs likwid-bench"),
            (fig.add_subplot(1, 2, 2), fio, "ratio_vs_fio", ("medium", "flush", "size", "threads"), "vs fio libpmem")):
        if not rows:
            ax.text(0.5, 0.5, "no peer runs (skipped?)", ha="center", va="center", transform=ax.transAxes,
                    color="0.5")
            ax.set_axis_off()
            continue
        target = rows[0].threshold(metric)
        values = [r.value(metric) for r in rows]
        ax.bar(range(len(rows)), values,
               color=["#d62728" if r.verdict(metric) in ("missed", "unclear") else "#2ca02c" for r in rows])
        for i, v in enumerate(values):
            ax.text(i, v, f"{v:.2f}", ha="center", va="bottom", fontsize=7)
        if _number(target):
            ax.axhline(target, color="0.2", linestyle="--", linewidth=1)
        ax.set_xticks(range(len(rows)), ["\n".join(str(r.param(k)) for k in label_keys if r.param(k) is not None)
                                         for r in rows], fontsize=7)
        ax.set_ylabel("ours / peer", fontsize=9)
        ax.set_title(title, fontsize=10)
        ax.grid(True, axis="y", linewidth=0.4, alpha=0.5)
    return fig
