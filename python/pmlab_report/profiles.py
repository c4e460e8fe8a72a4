"""The report's profile section: for a run made with `pmlab run --profile`, each run's time breakdown
(share of perf samples in persistence, logging, allocation, search and the rest), the measured profiling
slowdown, and each run's flame graph SVG embedded inline (its zoom script dropped: the report has no
scripts; the tooltips still name each frame, and the standalone file in profiles/ zooms on click).
"""

from __future__ import annotations

import os
import re
import statistics
from html import escape
from typing import Sequence

from .model import Results, Run

ACTIVITIES = ("persistence", "logging", "allocation", "search", "other")
_SCRIPT = re.compile(r"<script\b.*?</script>\s*", re.S)
_ONCLICK = re.compile(r'\sonclick="[^"]*"')


def inline_svg(run_dir: str, relative: str) -> str | None:
    """The SVG at run_dir/relative, script-free, or None when it is missing or outside run_dir."""
    root = os.path.realpath(run_dir)
    path = os.path.realpath(os.path.join(root, relative))
    if not path.startswith(root + os.sep) or not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    if "<svg" not in text:
        return None
    return _ONCLICK.sub("", _SCRIPT.sub("", text))


def _percent(run: Run, activity: str) -> str:
    value = run.value(f"profile_share_{activity}")
    return "—" if value is None else f"{100 * value:.1f}%"


def slowdown_summary(runs: Sequence[Run]) -> str:
    values = [v for v in (r.value("profile_slowdown") for r in runs) if v is not None]
    if not values:
        return "No run reports a profiling slowdown (none has a throughput to compare)."
    return (f"Profiling slowdown (measured: each run's throughput without perf ÷ with perf, same run "
            f"back to back): median {statistics.median(values):.3f}×, range "
            f"{min(values):.3f}–{max(values):.3f}× over {len(values)} runs.")


def profile_section(results: Results, run_dir: str | None) -> str:
    """HTML for context.profile, or '' when the run was not profiled."""
    profile = results.context.get("profile")
    if not isinstance(profile, dict) or not profile.get("enabled"):
        return ""
    parts = ['<section id="profiles"><h2>Profiles</h2>']
    if not profile.get("available"):
        parts.append('<p class="note">No profile: ' + escape(str(profile.get("reason") or "unknown reason"))
                     + ". The runs went on without it.</p></section>")
        return "".join(parts)
    parts.append(f'<p class="muted">Sampled with <code>{escape(str(profile.get("event")))}</code> '
                 f'({escape(str(profile.get("method", "")))}, {profile.get("frequency_hz", "?")} Hz). '
                 "Breakdown: share of sampled time by what the sampled code was doing — measured from the "
                 "profile, not inferred by switching features off (rules in docs/profiling.md).</p>")
    runs = [r for r in results.runs if "profile_samples" in r.metrics or "profile_missing" in r.notes]
    parts.append(f"<p>{escape(slowdown_summary(runs))}</p>")
    head = ("<tr><th>run</th><th>samples</th>" + "".join(f"<th>{a}</th>" for a in ACTIVITIES)
            + "<th>slowdown</th></tr>")
    rows = []
    for r in runs:
        samples = r.value("profile_samples")
        slow = r.value("profile_slowdown")
        rows.append(f'<tr><td><a href="#profile-{r.index}"><code>{escape(r.name)}</code></a></td>'
                    f"<td>{'—' if samples is None else int(samples)}</td>"
                    + "".join(f"<td>{_percent(r, a)}</td>" for a in ACTIVITIES)
                    + f"<td>{'—' if slow is None else f'{slow:.3f}×'}</td></tr>")
    parts.append('<div class="scroll"><table class="runs"><thead>' + head + "</thead><tbody>"
                 + "".join(rows) + "</tbody></table></div>")
    parts.append('<p class="muted">All shares and slowdowns are <b>measured</b> on this machine.</p>')
    for r in runs:
        parts.append(f'<details id="profile-{r.index}"><summary><code>{escape(r.name)}</code> — '
                     f"persistence {_percent(r, 'persistence')}</summary>")
        svg = None
        if "profile_svg" in r.notes and run_dir is not None:
            svg = inline_svg(run_dir, r.notes["profile_svg"])
        if svg is not None:
            parts.append(f'<div class="scroll">{svg}</div>')
        else:
            why = r.notes.get("profile_missing") or "flame graph file missing from the run directory"
            parts.append(f'<p class="note">No flame graph: {escape(why)}</p>')
        parts.append("</details>")
    parts.append("</section>")
    return "".join(parts)
