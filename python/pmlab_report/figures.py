"""Figure registry.

A suite module registers figure functions with the `figure` decorator::

    @figure("core", title="Cost per persist", caption="...", case="persist",
            metrics=("latency_p50",))
    def persist_latency(runs): ...

A figure function takes all runs of its suite (any status) and returns a
matplotlib Figure, or None when the data it needs is not there.  One registered
with ``with_context=True`` also gets the results' context block (the machine's
caches, the timer), as a second argument.  It must not
use pyplot (figures are built with matplotlib.figure.Figure, which needs no GUI
backend and keeps no global state).

Where the answer is a list of names and numbers (a reader searches and copies
them), a suite registers a table function instead, with the `table` decorator;
it returns Table objects (or an empty list), which the report renders as HTML.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from matplotlib.figure import Figure

from .model import Run

FigureFunc = Callable[[Sequence[Run]], "Figure | None"]


@dataclass(frozen=True)
class FigureSpec:
    suite: str
    key: str                      # unique id, e.g. "core.persist_latency"
    title: str
    caption: str
    func: FigureFunc
    case: str | None = None       # the case whose runs the figure reads (for the report's notes)
    metrics: tuple[str, ...] = ()  # metrics it plots (so the report can label their kinds)
    with_context: bool = False    # func(runs, context) instead of func(runs)


@dataclass
class FigureResult:
    spec: FigureSpec
    figure: Figure | None = None
    error: str | None = None      # set when the figure function raised
    not_measured: str | None = None  # why there is nothing to draw, said as text in place of the figure


@dataclass(frozen=True)
class NotMeasured:
    """What a figure function returns when its data was not measured in this run (an empty figure would
    look like a result); the report prints `reason`."""
    reason: str


_REGISTRY: dict[str, list[FigureSpec]] = {}


def figure(suite: str, *, title: str, caption: str, case: str | None = None,
           metrics: Sequence[str] = (), key: str | None = None, with_context: bool = False):
    """Decorator registering a figure function for `suite`."""

    def register(func: FigureFunc) -> FigureFunc:
        spec = FigureSpec(suite=suite, key=key or f"{suite}.{func.__name__}", title=title,
                          caption=caption, func=func, case=case, metrics=tuple(metrics),
                          with_context=with_context)
        specs = _REGISTRY.setdefault(suite, [])
        specs[:] = [s for s in specs if s.key != spec.key]  # re-registration replaces
        specs.append(spec)
        return func

    return register


def anchor(key: str) -> str:
    """The HTML id of a figure's place in the report, from its registry key (e.g. primitives.log_throughput)."""
    return "fig-" + "".join(c if c.isalnum() or c in "-_" else "-" for c in key)


def log2_axis(ax, ticks, label=lambda v: str(int(v)), labelsize: float = 8, rotation: float = 0) -> None:
    """A log₂ x axis ticked only at the values swept, labelled in plain words ('2', '4 KiB'), never 2⁰ or 2¹:
    two thread counts get two integer ticks."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    ticks = sorted(set(ticks))
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: label(v)))
    ax.xaxis.set_minor_locator(NullLocator())
    if len(ticks) == 1:
        ax.set_xlim(ticks[0] / 2, ticks[0] * 2)
    else:
        ax.set_xlim(ticks[0] / 1.25, ticks[-1] * 1.25)
    ax.tick_params(axis="x", labelsize=labelsize, labelrotation=rotation)


FLOOR_LABEL = "at the timer floor: an upper bound"


def mark_timer_floor(ax, xs, ys) -> None:
    """Ring the points whose latency lies within a few timer steps of the measured resolution: what is
    drawn there is an upper bound, not the operation's cost."""
    if xs:
        ax.scatter(xs, ys, marker="v", s=70, facecolors="none", edgecolors="black", linewidths=0.9, zorder=5,
                   label=FLOOR_LABEL)


def plain_log_y(ax, axis: str = "y") -> None:
    """A log axis ticked at 1, 2 and 5 per decade and labelled in plain numbers (200, 1k, 5k), never
    6×10³-style minor labels or 10² exponents."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    from .units import compact

    target = ax.yaxis if axis == "y" else ax.xaxis
    (ax.set_yscale if axis == "y" else ax.set_xscale)("log")
    target.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    target.set_major_formatter(FuncFormatter(lambda v, _pos: compact(v)))
    target.set_minor_formatter(NullFormatter())


def legend_outside(ax, below: bool = False, **kwargs):
    """The axes' legend outside its plot area (to the right, or under the axis labels where panels sit side
    by side), where it cannot hide a bar or a line; constrained layout makes room for it."""
    options = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "fontsize": 8, "frameon": False,
               "borderaxespad": 0.0}
    if below:
        options.update(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=2)
    options.update(kwargs)
    return ax.legend(**options)


def figures_for(suite: str) -> list[FigureSpec]:
    """Registered figures of `suite`, in registration order."""
    return list(_REGISTRY.get(suite, []))


def registered_suites() -> list[str]:
    return list(_REGISTRY)


@dataclass(frozen=True)
class Table:
    title: str
    columns: tuple[str, ...]           # with the unit in the header where a column has one
    rows: tuple[tuple[str, ...], ...]  # text, one per column
    note: str = ""
    collapsed: bool = False            # long listings start folded


TableFunc = Callable[[Sequence[Run]], "list[Table]"]


@dataclass(frozen=True)
class TableSpec:
    suite: str
    key: str
    title: str
    caption: str
    func: TableFunc


_TABLES: dict[str, list[TableSpec]] = {}


def table(suite: str, *, title: str, caption: str, key: str | None = None):
    """Decorator registering a table function for `suite`."""

    def register(func: TableFunc) -> TableFunc:
        spec = TableSpec(suite=suite, key=key or f"{suite}.{func.__name__}", title=title, caption=caption, func=func)
        specs = _TABLES.setdefault(suite, [])
        specs[:] = [s for s in specs if s.key != spec.key]
        specs.append(spec)
        return func

    return register


def build_tables(suite: str, runs: Sequence[Run]) -> list[tuple[TableSpec, list[Table], str | None]]:
    """Call every table function of `suite`; one that raises keeps its error in place of its tables."""
    out = []
    for spec in _TABLES.get(suite, []):
        try:
            out.append((spec, list(spec.func(runs)), None))
        except Exception as exc:  # noqa: BLE001 - one broken table must not lose the report
            out.append((spec, [], f"{type(exc).__name__}: {exc}"))
    return out


def build(suite: str, runs: Sequence[Run], context: dict | None = None) -> list[FigureResult]:
    """Call every figure function of `suite` (those that want it get `context`, the results' context block).

    A figure function that raises does not abort the report: its error is kept
    and shown in place of the figure.
    """
    results = []
    for spec in figures_for(suite):
        try:
            fig = spec.func(runs, context or {}) if spec.with_context else spec.func(runs)
        except Exception as exc:  # noqa: BLE001 - one broken figure must not lose the report
            results.append(FigureResult(spec, error=f"{type(exc).__name__}: {exc}"))
            continue
        if isinstance(fig, NotMeasured):
            results.append(FigureResult(spec, not_measured=fig.reason))
            continue
        if fig is not None and not isinstance(fig, Figure):
            results.append(FigureResult(spec, error=f"returned {type(fig).__name__}, not a Figure"))
            continue
        results.append(FigureResult(spec, figure=fig))
    return results
