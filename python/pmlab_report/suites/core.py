"""Figures of the `core` suite: cost of a persist, and the vocabulary's overhead.

Reads (all `kind: measured` in practice, but the report labels whatever kind it finds):
  core.persist   params medium, pattern (seq | rand | same), domain, flush, size[, threads]
                 metrics latency_p50 (ns), throughput (ops/s), bandwidth (MiB/s), published_latency (ns,
                 [OptaneGuide] Fig. 2, at 64 B under adr with clwb or ntstore)
  core.overhead  params medium, flush, size
                 metrics overhead_ratio (ratio)
Every figure tolerates missing combinations and runs whose status is not ok.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import matplotlib
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.transforms import blended_transform_factory

from ..figures import FLOOR_LABEL, figure, log2_axis, mark_timer_floor, plain_log_y
from ..model import Run, distinct, is_number as _number
from ..units import size_label

MEDIA = ("dram", "pool")
PATTERNS = ("seq", "rand")  # the size sweeps; `same` has a figure of its own
SAME_LINE_PATTERNS = ("same", "seq", "rand")
PATTERN_COLORS = {"same": "#d62728", "seq": "#1f77b4", "rand": "#2ca02c"}
DOMAINS = ("none", "adr", "eadr")
FLUSHES = ("clflush", "clflushopt", "clwb", "ntstore")

FLUSH_COLORS = {"clflush": "#1f77b4", "clflushopt": "#ff7f0e", "clwb": "#2ca02c",
                "ntstore": "#9467bd"}
DOMAIN_STYLES = {"none": (":", "s"), "adr": ("-", "o"), "eadr": ("--", "^")}
EXTRA_COLORS = ("#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
NOT_OK_COLOR = "#555555"
EXCEED_COLOR = "#d62728"


def _positive(value: Any) -> bool:
    return _number(value) and value > 0


def _flush_color(flush: Any) -> str:
    if flush in FLUSH_COLORS:
        return FLUSH_COLORS[flush]
    return EXTRA_COLORS[sum(map(ord, str(flush))) % len(EXTRA_COLORS)]


def _domain_style(domain: Any) -> tuple[str, str]:
    return DOMAIN_STYLES.get(domain, ("-.", "D"))


def _rank(value: Any, preferred: Sequence[Any]) -> tuple:
    return (preferred.index(value) if value in preferred else len(preferred), str(value))


def _overlap_marker(index: int) -> dict:
    """Later lines get smaller, hollow markers, so one that coincides with an earlier one (clflush and
    clflushopt often do) still shows around or inside it."""
    color = {} if index == 0 else {"markerfacecolor": "none"}
    return {"markersize": max(3.0, 7.0 - 0.7 * index), **color}


def _size_axis(ax, sizes: Sequence[float]) -> None:
    log2_axis(ax, sizes, size_label)


def _log_y_axis(ax) -> None:
    plain_log_y(ax)
    ax.tick_params(axis="y", labelsize=8)


# --------------------------------------------------------------------------- core.persist


def _persist_grid(runs: Sequence[Run], metric: str, ylabel: str, title: str) -> Figure | None:
    persist = [r for r in runs if r.case == "persist" and _positive(r.param("size"))]
    plotted = [r for r in persist if r.ok and _positive(r.value(metric))]
    if not plotted:
        return None

    # Several thread counts would overlay different experiments: plot the smallest only.
    thread_counts = distinct(plotted, "threads")
    threads = thread_counts[0] if thread_counts else None
    if len(thread_counts) > 1:
        plotted = [r for r in plotted if r.param("threads") == threads]
        persist = [r for r in persist if r.param("threads") == threads]
        title = f"{title} (threads = {threads})"
    failed = [r for r in persist if not r.ok]

    media = distinct(persist, "medium", MEDIA) or [None]
    patterns = [p for p in distinct(persist, "pattern", PATTERNS) if p != "same"] or [None]
    sizes = distinct(persist, "size")
    combos = sorted({(r.param("domain"), r.param("flush")) for r in plotted},
                    key=lambda c: (_rank(c[0], DOMAINS), _rank(c[1], FLUSHES)))

    nrows, ncols = len(media), len(patterns)
    fig = Figure(figsize=(2.2 + 4.0 * ncols, 0.8 + 2.9 * nrows), layout="constrained")
    axes = fig.subplots(nrows, ncols, sharex=True, sharey=True, squeeze=False)
    any_floor = False
    for row, medium in enumerate(media):
        for col, pattern in enumerate(patterns):
            ax = axes[row][col]
            cell = [r for r in plotted
                    if r.param("medium") == medium and r.param("pattern") == pattern]
            floor: list[tuple[float, float]] = []
            for k, (domain, flush) in enumerate(combos):
                points: dict[float, float] = {}
                for r in cell:
                    if r.param("domain") == domain and r.param("flush") == flush:
                        points.setdefault(r.param("size"), r.value(metric))
                        if r.metrics[metric].at_timer_floor:
                            floor.append((r.param("size"), r.value(metric)))
                if not points:
                    continue
                xs = sorted(points)
                linestyle, marker = _domain_style(domain)
                ax.plot(xs, [points[x] for x in xs], linestyle=linestyle, marker=marker,
                        linewidth=1.4, color=_flush_color(flush), **_overlap_marker(k))
            mark_timer_floor(ax, [x for x, _ in floor], [y for _, y in floor])
            any_floor = any_floor or bool(floor)
            bad = [r for r in failed
                   if r.param("medium") == medium and r.param("pattern") == pattern]
            if bad:
                mark = blended_transform_factory(ax.transData, ax.transAxes)
                ax.plot([r.param("size") for r in bad], [0.04] * len(bad), linestyle="none",
                        marker="x", markersize=7, markeredgewidth=1.8, color=NOT_OK_COLOR,
                        transform=mark, clip_on=False)
            if not cell:
                ax.text(0.5, 0.5, "no data", transform=ax.transAxes, ha="center", va="center",
                        color="0.5")
            _size_axis(ax, sizes)
            _log_y_axis(ax)
            ax.grid(True, which="major", linewidth=0.4, alpha=0.5)
            heading = " · ".join(f"{k}: {v}" for k, v in (("medium", medium), ("pattern", pattern))
                                 if v is not None)
            ax.set_title(heading or metric, fontsize=10)
            if row == nrows - 1:
                ax.set_xlabel("size per persist (log\u2082)", fontsize=9)
            if col == 0:
                ax.set_ylabel(ylabel, fontsize=9)

    handles = []
    for k, (domain, flush) in enumerate(combos):
        linestyle, marker = _domain_style(domain)
        handles.append(Line2D([], [], linestyle=linestyle, marker=marker, color=_flush_color(flush),
                              label=f"{domain} · {flush}", **_overlap_marker(k)))
    if any_floor:
        handles.append(Line2D([], [], linestyle="none", marker="v", markersize=8, markerfacecolor="none",
                              color="black", label=FLOOR_LABEL.replace(": ", ":\n")))
    if failed:
        handles.append(Line2D([], [], linestyle="none", marker="x", markeredgewidth=1.8,
                              color=NOT_OK_COLOR, label="run not ok\n(see table)"))
    fig.legend(handles=handles, loc="outside right upper", title="domain · flush",
               fontsize=8, title_fontsize=9, frameon=False)
    fig.suptitle(title, fontsize=12)
    return fig


@figure(
    "core",
    title="core.persist — cost per persist",
    caption=("Median latency of one persist (latency_p50, ns, log scale) against the size "
             "written per persist (64 B … 16 KiB, log\u2082 scale). One line per durability domain "
             "× flush instruction (colour = flush, line style = domain); rows are the medium, "
             "columns the access pattern. × marks a run that errored or was skipped at that size."),
    case="persist",
    metrics=("latency_p50",),
)
def persist_latency(runs: Sequence[Run]) -> Figure | None:
    return _persist_grid(runs, "latency_p50", "latency p50 (ns)", "core.persist — cost per persist")


@figure(
    "core",
    title="core.persist — bandwidth",
    caption=("Bytes persisted per second (bandwidth, MiB/s, log scale) against the size written "
             "per persist (log\u2082 scale); same layout and line encoding as the latency figure."),
    case="persist",
    metrics=("bandwidth",),
)
def persist_bandwidth(runs: Sequence[Run]) -> Figure | None:
    return _persist_grid(runs, "bandwidth", "bandwidth (MiB/s)", "core.persist — bandwidth")


# ------------------------------------------------------------------- same line ([PMemIO] Fig. 4)


def _same_line_rows(runs: Sequence[Run]) -> tuple[list[Run], Any, Any]:
    """The ok persist runs of the same-line comparison: one domain that flushes (adr when present), the
    smallest size at which `same` ran, one thread."""
    rows = [r for r in runs if r.case == "persist" and r.ok and _positive(r.value("latency_p50"))]
    same = [r for r in rows if r.param("pattern") == "same"]
    if not same:
        return [], None, None
    domains = [d for d in distinct(same, "domain", DOMAINS) if d != "none"]
    domain = "adr" if "adr" in domains else (domains[0] if domains else None)
    size = min(s for s in distinct(same, "size") if _positive(s))
    threads = distinct(same, "threads")
    rows = [r for r in rows if r.param("domain") == domain and r.param("size") == size
            and (not threads or r.param("threads") == threads[0])]
    return rows, domain, size


@figure(
    "core",
    title="Persisting the same line again versus sequential and random lines ([PMemIO] Fig. 4)",
    caption=("Median latency of one persist (latency_p50, ns; store + flush + fence, or nt-store + fence) of "
             "the smallest size swept with pattern same (64 B in the quick run), per flush instruction: same = "
             "every persist writes the same bytes again (a counter or a size field), seq = consecutive lines, rand "
             "= random lines of a span twice the LLC; one panel per medium, domain adr. Measured by core.persist; "
             "each bar is labelled with its value and the throughput of persists (M/s). [PMemIO] §2.3 publishes "
             "the shape only (its Fig. 4 has no numbers in the text): persisting one line repeatedly is slowest "
             "with flushes and should use nt-stores, and clflush, clflushopt and clwb do not differ on Cascade "
             "Lake, which implements clwb as clflushopt. Dashed black lines: published by [OptaneGuide] Fig. 2, "
             "the idle latency of one 64 B write by store + clwb and by nt-store (Optane DC PMM on the pool panel, "
             "DRAM on the dram panel; pattern not stated there)."),
    case="persist",
    metrics=("latency_p50", "throughput", "published_latency"),
)
def persist_same_line(runs: Sequence[Run]) -> Figure | None:
    rows, domain, size = _same_line_rows(runs)
    if not rows:
        return None
    media = distinct(rows, "medium", MEDIA) or [None]
    flushes = distinct(rows, "flush", FLUSHES)
    patterns = [p for p in SAME_LINE_PATTERNS if any(r.param("pattern") == p for r in rows)]
    width = 0.8 / len(patterns)
    fig = Figure(figsize=(2.2 + max(4.4, 1.5 * len(flushes)) * len(media), 3.9), layout="constrained")
    axes = fig.subplots(1, len(media), sharey=True, squeeze=False)[0]
    any_floor = False
    any_published = False
    for ax, medium in zip(axes, media):
        published_at: dict[int, float] = {}
        for j, pattern in enumerate(patterns):
            for i, flush in enumerate(flushes):
                match = [r for r in rows if r.param("medium") == medium and r.param("pattern") == pattern
                         and r.param("flush") == flush]
                if not match:
                    continue
                metric = match[0].metrics["latency_p50"]
                x = i - 0.4 + width * (j + 0.5)
                ax.bar(x, metric.value, width * 0.92, color=PATTERN_COLORS.get(pattern, EXTRA_COLORS[0]),
                       hatch="..." if metric.at_timer_floor else None, edgecolor="black" if metric.at_timer_floor else None,
                       label=pattern if i == 0 else None)
                any_floor = any_floor or metric.at_timer_floor
                published = match[0].value("published_latency")
                if _positive(published):  # once per flush group: the study's number is not per pattern
                    published_at.setdefault(i, published)
                rate = match[0].value("throughput")
                text = f"{metric.value:.0f}" + (f"\n{rate / 1e6:.2g}M/s" if _positive(rate) else "")
                ax.text(x, metric.value, text, ha="center", va="bottom", fontsize=6.5)
        for i, value in published_at.items():
            ax.hlines(value, i - 0.45, i + 0.45, colors="black", linestyles="--", linewidth=1.3, zorder=4)
            any_published = True
        ax.set_xticks(range(len(flushes)), [str(f) for f in flushes], fontsize=8)
        ax.set_xlabel("flush instruction", fontsize=9)
        ax.set_title(f"medium: {medium}", fontsize=10)
        ax.grid(True, axis="y", linewidth=0.4, alpha=0.5)
        ax.margins(y=0.2)
    axes[0].set_ylabel("latency per persist, p50 (ns)", fontsize=9)
    handles = [Patch(color=PATTERN_COLORS.get(p, EXTRA_COLORS[0]), label={"same": "same bytes again",
               "seq": "sequential lines", "rand": "random lines"}.get(p, p)) for p in patterns]
    if any_floor:
        handles.append(Patch(facecolor="white", edgecolor="black", hatch="...", label=FLOOR_LABEL.replace(": ", ":\n")))
    if any_published:
        handles.append(Line2D([], [], color="black", linestyle="--", label="published, [OptaneGuide] Fig. 2:\nidle 64 B write"))
    fig.legend(handles=handles, loc="outside right upper", title="pattern", fontsize=8, title_fontsize=9, frameon=False)
    fig.suptitle(f"core.persist — {size_label(size)} persists, domain {domain}", fontsize=12)
    return fig


# --------------------------------------------------------------------------- core.overhead


@figure(
    "core",
    title="core.overhead — vocabulary overhead",
    caption=("overhead_ratio = vocabulary time / raw-intrinsics time, both measured in the same "
             "run, per flush instruction (groups) and write size (bars), one panel per medium. "
             "Bars start at parity (1.0); the dashed line is the target the run recorded "
             "(its target on overhead_ratio) and bars whose target the run judged missed or unclear are red "
             "(hatched) with their value."),
    case="overhead",
    metrics=("overhead_ratio",),
)
def overhead(runs: Sequence[Run]) -> Figure | None:
    cases = [r for r in runs if r.case == "overhead"]
    ok = [r for r in cases if r.ok and _number(r.value("overhead_ratio"))]
    if not ok:
        return None
    # The target as the run recorded it (older results without it: no line); parity stands in for the axis.
    targets = [r.threshold("overhead_ratio") for r in ok if _number(r.threshold("overhead_ratio"))]
    target = targets[0] if targets else None
    bound = target if target is not None else 1.0
    media = distinct(cases, "medium", MEDIA) or [None]
    flushes = distinct(cases, "flush", FLUSHES) or [None]
    sizes = distinct(cases, "size") or [None]

    cmap = matplotlib.colormaps["Blues"]
    shades = [cmap(0.45 + 0.45 * (i / max(1, len(sizes) - 1))) for i in range(len(sizes))]
    edges = [cmap(1.0)] * len(sizes)  # an outline keeps bars at parity (height ~0) visible
    values = [r.value("overhead_ratio") for r in ok]
    low = min(min(values), 1.0 - (bound - 1.0))
    high = max(max(values), bound)
    pad = (high - low) * 0.12

    width = 0.8 / len(sizes)
    fig = Figure(figsize=(2.4 + max(4.2, 1.25 * len(flushes)) * len(media), 3.8),
                 layout="constrained")
    axes = fig.subplots(1, len(media), sharey=True, squeeze=False)[0]
    for ax, medium in zip(axes, media):
        for j, size in enumerate(sizes):
            for i, flush in enumerate(flushes):
                x = i - 0.4 + width * (j + 0.5)
                slot = [r for r in cases if r.param("medium") == medium
                        and r.param("flush") == flush and r.param("size") == size]
                good = [r for r in slot if r.ok and _number(r.value("overhead_ratio"))]
                if not good:
                    label = "n/a" if not slot else slot[0].status
                    ax.text(x, 1.0, label, rotation=90, ha="center", va="bottom", fontsize=7,
                            color=EXCEED_COLOR if slot else "0.55")
                    continue
                ratio = good[0].value("overhead_ratio")
                over = good[0].verdict("overhead_ratio") in ("missed", "unclear")
                ax.bar(x, ratio - 1.0, bottom=1.0, width=width * 0.92,
                       color=EXCEED_COLOR if over else shades[j],
                       edgecolor="black" if over else edges[j], linewidth=0.8,
                       hatch="///" if over else None)
                if over:
                    ax.text(x, ratio + pad * 0.1, f"{ratio:.3g}", ha="center", va="bottom",
                            fontsize=7, color=EXCEED_COLOR, fontweight="bold")
        ax.axhline(1.0, color="0.25", linewidth=0.8)
        if target is not None:
            ax.axhline(target, color=EXCEED_COLOR, linestyle="--", linewidth=1.2)
        ax.set_xticks(range(len(flushes)), [str(f) for f in flushes], fontsize=8)
        ax.set_xlim(-0.6, len(flushes) - 0.4)
        ax.set_ylim(low - pad, high + pad * 2)
        ax.grid(True, axis="y", linewidth=0.4, alpha=0.5)
        ax.set_title(f"medium: {medium}" if medium is not None else "overhead", fontsize=10)
        ax.set_xlabel("flush instruction", fontsize=9)
        ax.tick_params(axis="y", labelsize=8)
    axes[0].set_ylabel("overhead ratio (vocabulary / raw)", fontsize=9)

    handles: list[Any] = [Patch(color=shades[j], label=size_label(s) if _number(s) else str(s))
                          for j, s in enumerate(sizes)]
    if target is not None:
        handles.append(Line2D([], [], color=EXCEED_COLOR, linestyle="--", label=f"target {target:g}"))
    handles.append(Patch(facecolor=EXCEED_COLOR, edgecolor="black", hatch="///",
                         label="exceeds target"))
    fig.legend(handles=handles, loc="outside right upper", title="size", fontsize=8,
               title_fontsize=9, frameon=False)
    fig.suptitle("core.overhead — vocabulary / raw intrinsics", fontsize=12)
    return fig
