"""Figures of crash testing (`pmlab crash`) and of the simulator's cost (`pmlab run crash`).

Reads:
  crash.<design>  params domain, granularity; metrics states_explored, failures, states_per_second
  crash.cost      params design, domain, granularity; metrics tracking_slowdown, states_per_second
"""

from __future__ import annotations

from typing import Sequence

from matplotlib.figure import Figure

from ..figures import figure
from ..model import Run
from ..units import compact

PASS_COLOR, FAIL_COLOR = "#2ca02c", "#d62728"


def _label(run: Run) -> str:
    return f"{run.case} · {run.param('domain')} · {run.param('granularity')}"


@figure("crash", title="Crash states explored per design",
        caption="Crash states checked with the design's own recovery, per design, durability domain and crash "
                "granularity (line, or torn 8-byte words). Red bars had failures; the label gives failures and "
                "states checked per second. Measured in this run.",
        metrics=("states_explored", "failures", "states_per_second"))
def states_per_design(runs: Sequence[Run]) -> Figure | None:
    tested = [r for r in runs if r.case != "cost" and r.value("states_explored") is not None]
    if not tested:
        return None
    tested.sort(key=_label)
    fig = Figure(figsize=(9.0, 0.9 + 0.32 * len(tested)), layout="constrained")
    ax = fig.subplots()
    ys = range(len(tested))
    values = [r.value("states_explored") or 0 for r in tested]
    colors = [FAIL_COLOR if (r.value("failures") or 0) > 0 else PASS_COLOR for r in tested]
    ax.barh(list(ys), values, color=colors)
    ax.set_yticks(list(ys), [_label(r) for r in tested], fontsize=8)
    ax.invert_yaxis()
    for y, r, v in zip(ys, tested, values):
        rate = r.value("states_per_second")
        ax.text(v, y, f"  {compact(r.value('failures') or 0)} failures, {compact(rate) if rate else '?'} states/s",
                va="center", fontsize=7)
    ax.set_xlabel("crash states checked (count)")
    ax.margins(x=0.35)
    ax.grid(True, axis="x", linewidth=0.4, alpha=0.5)
    return fig


@figure("crash", title="Simulator cost", case="cost",
        caption="Left: an operation stream with the simulated durability domain attached, relative to the same "
                "stream without it (ratio of median times, same run). Right: crash states checked per second "
                "(each in a forked child running the design's recovery). Measured.",
        metrics=("tracking_slowdown", "states_per_second"))
def simulator_cost(runs: Sequence[Run]) -> Figure | None:
    cost = [r for r in runs if r.case == "cost" and r.ok]
    if not cost:
        return None
    labels = [f"{r.param('design')} · {r.param('domain')} · {r.param('granularity')}" for r in cost]
    fig = Figure(figsize=(10.0, 1.2 + 0.35 * len(cost)), layout="constrained")
    left, right = fig.subplots(1, 2, sharey=True)
    ys = list(range(len(cost)))
    left.barh(ys, [r.value("tracking_slowdown") or 0 for r in cost], color="#1f77b4")
    left.axvline(1.0, color="0.3", linewidth=0.8)
    left.set_xlabel("tracked / plain time (ratio)")
    right.barh(ys, [r.value("states_per_second") or 0 for r in cost], color="#9467bd")
    right.set_xlabel("crash states per second")
    left.set_yticks(ys, labels, fontsize=8)
    left.invert_yaxis()
    for ax in (left, right):
        ax.grid(True, axis="x", linewidth=0.4, alpha=0.5)
    return fig
