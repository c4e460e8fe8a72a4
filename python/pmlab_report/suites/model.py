"""Figures of the `model` suite: the PMEM device model beside published DCPMM data.

Reads (modelled numbers carry kind `modelled` with the device's name, published ones kind `published`
with their source; the figures draw the two differently so they are never confused):
  model.xpbuffer      params device, region; metrics write_amplification, write_amplification_published
  model.small_writes  params device, pattern, size; metrics ewr, ewr_published
  model.rmw           params device; metrics ewr, rwr, write_hit_ratio (+ _published)
  model.reads         params device, pattern, size, streams; metrics read_hit_ratio (+ _published)
  model.emulation     params device; metrics pstore_{one_line,seq,rand}_{dram,emulated}_ns, pstore_*_ratio,
                      pstore_one_line_ratio_published,
                      bandwidth_{seq,rand}_{dram,emulated}, seq_rand_ratio_{dram,emulated}
  model.cost          params device, stream; metrics trace_ns_per_request, live_ns_per_request
Every figure tolerates missing combinations and runs that are not ok, and returns None without data.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from ..figures import figure
from ..model import Run, distinct, is_number as _number
from ..units import size_label

MODEL_COLOR = "#1f77b4"
PUBLISHED_COLOR = "#7f7f7f"
DRAM_COLOR = "#2ca02c"
EMULATED_COLOR = "#d62728"
KNEE_BAND = (16384, 20480)  # FAST'20: the XPBuffer's write-amplification knee lies between these


def _ok(runs: Sequence[Run], case: str) -> list[Run]:
    return [r for r in runs if r.case == case and r.ok]


def _model_label(runs: Sequence[Run], metric: str, fallback: str = "model") -> str:
    for r in runs:
        m = r.metrics.get(metric)
        if m is not None and m.model:
            return f"modelled ({m.model})"
    return fallback


def _published_label(runs: Sequence[Run], metric: str) -> str:
    for r in runs:
        m = r.metrics.get(metric)
        if m is not None and m.source:
            return f"published: {m.source}"
    return "published"


def _bars(ax, labels: Sequence[str], modelled: Sequence[Any], published: Sequence[Any]) -> None:
    """Modelled (solid) and published (hatched grey) side by side per label; absent values are skipped."""
    width = 0.38
    for i, (mv, pv) in enumerate(zip(modelled, published)):
        if _number(mv):
            ax.bar(i - width / 2, mv, width, color=MODEL_COLOR)
            ax.text(i - width / 2, mv, f"{mv:.2f}", ha="center", va="bottom", fontsize=7)
        if _number(pv):
            ax.bar(i + width / 2, pv, width, color="white", edgecolor=PUBLISHED_COLOR, hatch="///")
            ax.text(i + width / 2, pv, f"{pv:.2f}", ha="center", va="bottom", fontsize=7, color="0.3")
    ax.set_xticks(range(len(labels)), labels, fontsize=8)
    ax.set_xlim(-0.6, len(labels) - 0.4)
    ax.grid(True, axis="y", linewidth=0.4, alpha=0.5)
    ax.tick_params(axis="y", labelsize=8)


def _legend(fig: Figure, model_text: str, published_text: str) -> None:
    fig.legend(handles=[Patch(color=MODEL_COLOR, label=model_text),
                        Patch(facecolor="white", edgecolor=PUBLISHED_COLOR, hatch="///",
                              label=published_text)],
               loc="outside lower center", fontsize=8, frameon=False, ncols=2)


# --------------------------------------------------------------------------- model.xpbuffer


@figure(
    "model",
    title="model.xpbuffer — the XPBuffer knee, model vs published",
    caption=("Write amplification (media bytes written / bytes written by the CPU) of half-XPLine writes "
             "over a region of the given size on one DIMM, against the region size (log\u2082). Blue: the "
             "device model; grey dashed: FAST'20 fig. 9 as published. The shaded band is 16-20 KB, where "
             "the published knee lies: regions that fit the 16 KB write-combining buffer combine the two "
             "halves (about 1), larger ones do not (about 2)."),
    case="xpbuffer",
    metrics=("write_amplification", "write_amplification_published"),
)
def xpbuffer_knee(runs: Sequence[Run]) -> Figure | None:
    rows = [r for r in _ok(runs, "xpbuffer") if _number(r.param("region"))]
    devices = distinct(rows, "device", ("dcpmm",))
    modelled = [r for r in rows if _number(r.value("write_amplification"))]
    if not modelled:
        return None
    fig = Figure(figsize=(8.0, 4.2), layout="constrained")
    ax = fig.subplots()
    ax.axvspan(*KNEE_BAND, color="#fde9c8", alpha=0.7, linewidth=0)
    handles = []
    for device in devices:
        points = sorted((r.param("region"), r.value("write_amplification"))
                        for r in modelled if r.param("device") == device)
        if points:
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", markersize=4,
                    color=MODEL_COLOR, linewidth=1.5)
            handles.append(Line2D([], [], color=MODEL_COLOR, marker="o",
                                  label=_model_label(modelled, "write_amplification")))
    published = sorted((r.param("region"), r.value("write_amplification_published"))
                       for r in rows if _number(r.value("write_amplification_published")))
    if published:
        ax.plot([p[0] for p in published], [p[1] for p in published], linestyle="--", marker="s",
                markersize=4, color=PUBLISHED_COLOR, linewidth=1.4)
        handles.append(Line2D([], [], color=PUBLISHED_COLOR, linestyle="--", marker="s",
                              label=_published_label(rows, "write_amplification_published")))
    handles.append(Patch(color="#fde9c8", label="16-20 KB"))
    regions = sorted({r.param("region") for r in rows})
    ax.set_xscale("log", base=2)
    ticks = [v for v in regions if math.log2(v).is_integer()] or regions
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: size_label(v)))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.tick_params(labelsize=8)
    ax.set_xlabel("region size (log\u2082)", fontsize=9)
    ax.set_ylabel("write amplification", fontsize=9)
    ax.grid(True, linewidth=0.4, alpha=0.5)
    fig.legend(handles=handles, loc="outside lower center", fontsize=8, frameon=False, ncols=3)
    fig.suptitle("XPBuffer capacity: model vs FAST'20", fontsize=11)
    return fig


# --------------------------------------------------------------------------- model.small_writes


@figure(
    "model",
    title="model.small_writes — EWR of small writes (I3), model vs published",
    caption=("Effective write ratio (bytes written by the CPU / bytes written to the media; 1 = no "
             "amplification) of 16 interleaved write streams per write size, sequential and random. "
             "Solid blue: the device model; hatched grey: PMIdioBench's ipmwatch counters (I3). The "
             "model's tolerance is 0.20-0.30 for random 64 B writes and at least 0.90 for sequential."),
    case="small_writes",
    metrics=("ewr", "ewr_published"),
)
def small_writes_ewr(runs: Sequence[Run]) -> Figure | None:
    rows = [r for r in _ok(runs, "small_writes") if r.param("device") in (None, "dcpmm")]
    rows = [r for r in rows if _number(r.value("ewr"))]
    if not rows:
        return None
    patterns = distinct(rows, "pattern", ("seq", "rand"))
    sizes = distinct(rows, "size")
    fig = Figure(figsize=(3.2 + 3.0 * len(patterns), 3.6), layout="constrained")
    axes = fig.subplots(1, len(patterns), sharey=True, squeeze=False)[0]
    for ax, pattern in zip(axes, patterns):
        cell = {r.param("size"): r for r in rows if r.param("pattern") == pattern}
        _bars(ax, [size_label(s) for s in sizes], [cell[s].value("ewr") if s in cell else None for s in sizes],
              [cell[s].value("ewr_published") if s in cell else None for s in sizes])
        ax.set_title(f"pattern: {pattern}", fontsize=10)
        ax.set_xlabel("bytes per write", fontsize=9)
        ax.set_ylim(0, 1.15)
    axes[0].set_ylabel("EWR", fontsize=9)
    _legend(fig, _model_label(rows, "ewr"), _published_label(rows, "ewr_published"))
    fig.suptitle("I3: small writes — EWR", fontsize=11)
    return fig


# --------------------------------------------------------------------------- model.rmw + model.reads


@figure(
    "model",
    title="model.rmw and model.reads — XPBuffer counters (I7, I6), model vs published",
    caption=("Left: repeated full-XPLine non-temporal stores to one line (I7): EWR, RWR (media bytes read / "
             "written) and the write hit ratio. Right: on-DIMM read hit ratio of 16 interleaved 256 B read "
             "streams, sequential and random (I6). Solid blue: the device model; hatched grey: "
             "PMIdioBench's ipmwatch counters."),
    case="rmw",
    metrics=("ewr", "rwr", "write_hit_ratio", "read_hit_ratio"),
)
def xpbuffer_counters(runs: Sequence[Run]) -> Figure | None:
    rmw = [r for r in _ok(runs, "rmw") if r.param("device") in (None, "dcpmm") and _number(r.value("ewr"))]
    reads = [r for r in _ok(runs, "reads") if r.param("device") in (None, "dcpmm")
             and r.param("size") in (None, 256) and r.param("streams") in (None, 16)
             and _number(r.value("read_hit_ratio"))]
    panels = [p for p in (("rmw", rmw), ("reads", reads)) if p[1]]
    if not panels:
        return None
    fig = Figure(figsize=(2.8 + 3.2 * len(panels), 3.6), layout="constrained")
    axes = fig.subplots(1, len(panels), sharey=True, squeeze=False)[0]
    for ax, (kind, rows) in zip(axes, panels):
        if kind == "rmw":
            run = rows[0]
            names = ["ewr", "rwr", "write_hit_ratio"]
            _bars(ax, ["EWR", "RWR", "write hit"], [run.value(n) for n in names],
                  [run.value(n + "_published") for n in names])
            ax.set_title("I7: repeated 256 B writes to one XPLine", fontsize=9)
        else:
            patterns = distinct(rows, "pattern", ("seq", "rand"))
            cell = {r.param("pattern"): r for r in rows}
            _bars(ax, [f"{p} read hit" for p in patterns], [cell[p].value("read_hit_ratio") for p in patterns],
                  [cell[p].value("read_hit_ratio_published") for p in patterns])
            ax.set_title("I6: 16 readers, 256 B", fontsize=9)
        ax.set_ylim(0, 1.2)
    axes[0].set_ylabel("ratio", fontsize=9)
    every = [r for _, rows in panels for r in rows]
    # The two panels quote different sheets: the legend names the kind, the run table each source.
    _legend(fig, _model_label(every, "ewr", _model_label(every, "read_hit_ratio")),
            "published: PMIdioBench counters (sources in the run table)")
    fig.suptitle("XPBuffer counters", fontsize=11)
    return fig


# --------------------------------------------------------------------------- model.emulation


@figure(
    "model",
    title="model.emulation — DRAM versus the emulated device, same run",
    caption=("Left: p-store latency at LLC hit ratio 1 on plain DRAM (green) and on DRAM emulating the "
             "device (red). 'one line' is PMIdioBench's own method (test_i1.c: every core stores to its "
             "lines and persists the region's first line; pass time / stores per thread), on which the "
             "published Optane/DRAM ratio (grey label) was measured with 8 threads; the emulation's target "
             "(the run's target on pstore_one_line_ratio) is on it. 'seq' and 'rand': one thread persists each line it stores, in "
             "address or random order (medians). Labels are emulated / DRAM. Right: 64 B persist bandwidth, "
             "sequential and random, over a region larger than the LLC; the label is sequential / random, "
             "against the run's target on seq_rand_ratio_emulated."),
    case="emulation",
    metrics=("pstore_one_line_ratio", "pstore_rand_ratio", "seq_rand_ratio_emulated"),
)
def emulation(runs: Sequence[Run]) -> Figure | None:
    rows = [r for r in _ok(runs, "emulation") if _number(r.value("pstore_rand_emulated_ns"))]
    if not rows:
        return None
    run = rows[0]
    fig = Figure(figsize=(9.0, 3.7), layout="constrained")
    left, right = fig.subplots(1, 2)
    width = 0.38
    for i, pattern in enumerate(("one_line", "seq", "rand")):
        dram = run.value(f"pstore_{pattern}_dram_ns")
        emul = run.value(f"pstore_{pattern}_emulated_ns")
        if _number(dram):
            left.bar(i - width / 2, dram, width, color=DRAM_COLOR)
        if _number(emul):
            left.bar(i + width / 2, emul, width, color=EMULATED_COLOR)
        ratio = run.value(f"pstore_{pattern}_ratio")
        if _number(ratio) and _number(emul):
            # The target is on the published method only; the run says whether it was met.
            met = pattern != "one_line" or run.verdict("pstore_one_line_ratio") in (None, "met")
            left.text(i + width / 2, emul, f"{ratio:.1f}\u00d7", ha="center", va="bottom", fontsize=8,
                      fontweight="bold", color="black" if met else EMULATED_COLOR)
        published = run.value(f"pstore_{pattern}_ratio_published")
        if _number(published) and _number(dram):
            left.text(i - width / 2, dram, f"pub. {published:.1f}\u00d7", ha="center", va="bottom", fontsize=7,
                      color="grey")
        if pattern == "one_line":
            continue
        i -= 1
        bw_dram = run.value(f"bandwidth_{pattern}_dram")
        bw_emul = run.value(f"bandwidth_{pattern}_emulated")
        if _number(bw_dram):
            right.bar(i - width / 2, bw_dram, width, color=DRAM_COLOR)
        if _number(bw_emul):
            right.bar(i + width / 2, bw_emul, width, color=EMULATED_COLOR)
    left.set_xticks([0, 1, 2], ["one line", "seq", "rand"], fontsize=9)
    right.set_xticks([0, 1], ["seq", "rand"], fontsize=9)
    for ax, unit in ((left, "p-store latency (ns)"), (right, "64 B persist bandwidth (MiB/s)")):
        ax.set_ylabel(unit, fontsize=9)
        ax.grid(True, axis="y", linewidth=0.4, alpha=0.5)
        ax.tick_params(axis="y", labelsize=8)
    left.set_title("p-store at LLC hit ratio 1", fontsize=10)
    ratio = run.value("seq_rand_ratio_emulated")
    goal = run.threshold("seq_rand_ratio_emulated")
    right.set_title("persist bandwidth" + (f" — emulated seq/rand {ratio:.1f}" if _number(ratio) else "")
                    + (f" (target {goal:g})" if _number(goal) else ""),
                    fontsize=10, color=EMULATED_COLOR if run.verdict("seq_rand_ratio_emulated") in ("missed", "unclear") else "black")
    device = run.param("device") or "?"
    fig.legend(handles=[Patch(color=DRAM_COLOR, label="DRAM (measured)"),
                        Patch(color=EMULATED_COLOR, label=f"DRAM emulating {device} (modelled)")],
               loc="outside lower center", fontsize=8, frameon=False, ncols=2)
    fig.suptitle("Emulation on this machine", fontsize=11)
    return fig


# --------------------------------------------------------------------------- model.cost


@figure(
    "model",
    title="model.cost — the device model's cost per request",
    caption=("Median time the device model spends per 64 B memory-controller request (ns, measured): the "
             "trace-driven model alone, and the live model a --model run attaches to its persister (lock, "
             "clock read, model), per request stream."),
    case="cost",
    metrics=("trace_ns_per_request", "live_ns_per_request"),
)
def cost(runs: Sequence[Run]) -> Figure | None:
    rows = [r for r in _ok(runs, "cost") if _number(r.value("live_ns_per_request"))]
    if not rows:
        return None
    streams = distinct(rows, "stream", ("seq-write", "rand-write", "seq-read", "rand-read"))
    cell = {r.param("stream"): r for r in rows}
    fig = Figure(figsize=(2.5 + 1.3 * len(streams), 3.4), layout="constrained")
    ax = fig.subplots()
    width = 0.38
    for i, s in enumerate(streams):
        for offset, metric, color in ((-width / 2, "trace_ns_per_request", "#9ecae1"),
                                      (width / 2, "live_ns_per_request", MODEL_COLOR)):
            v = cell[s].value(metric)
            if _number(v):
                ax.bar(i + offset, v, width, color=color)
                ax.text(i + offset, v, f"{v:.0f}", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(streams)), [str(s) for s in streams], fontsize=8)
    ax.set_ylabel("ns per 64 B request", fontsize=9)
    ax.grid(True, axis="y", linewidth=0.4, alpha=0.5)
    ax.tick_params(axis="y", labelsize=8)
    fig.legend(handles=[Patch(color="#9ecae1", label="trace-driven"), Patch(color=MODEL_COLOR, label="live")],
               loc="outside right upper", fontsize=8, frameon=False)
    fig.suptitle("Model cost", fontsize=11)
    return fig
