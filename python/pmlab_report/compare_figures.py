"""Figures of `pmlab compare --html`: A and B overlaid, one figure per suite.

Each row of a figure is one metric that changed significantly (the verdict of compare.py: better, worse or
changed). Both sides are drawn on one axis, as B relative to A's median: every repetition of A and of B
is a dot (so the spread the test saw is visible), the medians are bars' ends, and the label gives the
change. Only significant changes are drawn, the largest first, because a figure of everything would
show mostly noise; the table below the figures lists every metric.
"""

from __future__ import annotations

import base64
import html
import io
from typing import Sequence

MOST_PER_SUITE = 16
COLORS = {"worse": "#b3261e", "better": "#1e6f3d", "changed": "#8a4b00"}


def _png(fig) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight", facecolor="white")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _labels(rows: Sequence) -> list[str]:
    """Case, the parameters that differ between the rows drawn (the others are said in the caption) and
    the metric: long composed run names would squeeze the plot to nothing."""
    parsed = []
    for row in rows:
        head, *params = row.run.split("/")
        parsed.append((head.split(".", 1)[-1], dict(p.split(":", 1) for p in params if ":" in p)))
    keys = {k for _, params in parsed for k in params}
    varying = [k for k in keys if len({params.get(k) for _, params in parsed}) > 1]
    order = list(dict.fromkeys(k for _, params in parsed for k in params if k in varying))
    return [" · ".join([case, *(f"{k} {params[k]}" for k in order if k in params), row.metric])
            for (case, params), row in zip(parsed, rows)]


def _common(rows: Sequence) -> str:
    """The parameters every row drawn shares, in words."""
    sets = [set(p for p in row.run.split("/")[1:] if ":" in p) for row in rows]
    shared = set.intersection(*sets) if sets else set()
    return ", ".join(p.replace(":", " ") for p in rows[0].run.split("/")[1:] if p in shared) if rows else ""


def _suite_figure(suite: str, rows: Sequence, a, b):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10.0, 1.1 + 0.42 * len(rows)), layout="constrained")
    ax = fig.subplots()
    for y, row in enumerate(rows):
        key = (row.run, row.metric)
        scale = row.old if row.old else 1.0
        olds = [v / scale for v in a.series[key].values]
        news = [v / scale for v in b.series[key].values]
        color = COLORS.get(row.verdict, "0.3")
        ax.plot([1.0, row.new / scale], [y, y], color=color, linewidth=2.2, alpha=0.6)
        ax.scatter(olds, [y - 0.12] * len(olds), s=14, color="0.45", zorder=3,
                   label="A repetitions" if y == 0 else None)
        ax.scatter(news, [y + 0.12] * len(news), s=14, color=color, zorder=3, marker="D",
                   label="B repetitions" if y == 0 else None)
        ax.annotate(f"{100 * (row.change or 0):+.1f}% ({row.verdict})", (max(max(news), max(olds), 1.0), y),
                    xytext=(6, 0), textcoords="offset points", va="center", fontsize=8, color=color)
    ax.axvline(1.0, color="0.2", linewidth=0.8)
    ax.set_yticks(range(len(rows)), _labels(rows), fontsize=8)
    ax.invert_yaxis()
    ax.margins(x=0.25)
    ax.set_xlabel("value relative to A's median (A = 1)")
    ax.grid(True, axis="x", linewidth=0.4, alpha=0.5)
    ax.set_title(f"suite {suite}: significant changes, A (grey) and B overlaid", fontsize=10)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False, borderaxespad=0)
    return fig


def overlay_html(rows: Sequence, a, b) -> str:
    """The figures as HTML, or a sentence saying there is nothing significant to draw."""
    changed = [r for r in rows if r.verdict in COLORS]
    if not changed:
        return ("<p><b>No metric changed significantly</b> (Mann-Whitney U at 0.05 over the repetitions, beyond "
                "the threshold), so no figure is drawn.</p>")
    by_suite: dict[str, list] = {}
    for row in changed:
        by_suite.setdefault(row.run.split(".", 1)[0], []).append(row)
    parts = []
    for suite, suite_rows in sorted(by_suite.items()):
        shown = sorted(suite_rows, key=lambda r: -abs(r.change or 0))[:MOST_PER_SUITE]
        fig = _suite_figure(suite, shown, a, b)
        more = len(suite_rows) - len(shown)
        note = f" The {more} smaller significant changes are in the table." if more > 0 else ""
        common = _common(shown)
        note += f" Every row drawn has {html.escape(common)}." if common else ""
        parts.append(f'<figure id="suite-{html.escape(suite)}"><img alt="suite {html.escape(suite)}" '
                     f'src="{_png(fig)}"><figcaption>Suite <code>{html.escape(suite)}</code>: '
                     f"{len(suite_rows)} significant change(s), the {len(shown)} largest drawn.{note} Grey dots: "
                     "A's repetitions; coloured diamonds: B's; the line joins the medians.</figcaption></figure>")
    return "".join(parts)
