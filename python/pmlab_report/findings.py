"""The report's first screen: what a reader can act on, each line linking to its evidence.

In order: a banner when the pool is not persistent memory (or a device model shaped the numbers); which
design to use on this machine (decisions.py); the speed targets, met / missed / unclear; the warnings
(violated plausibility rules and cross-checks, values at the timer floor, what was skipped or failed and
why, each reason once); then the idiosyncrasies I1–I8 and recommendations R1–R7 of [PMIdioBench] as
judged from this run, as text rather than a picture so they can be searched and copied.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Callable, Sequence

from . import decisions as decision_rules
from . import figures as figure_registry
from . import idio_sentences, tiers
from .model import MEASURED, Metric, Results, Run, is_number
from .units import DASH, format_quantity, sig

Badge = Callable[[Metric], str]
CLOSE_CALL = 0.05  # pmlab compare's default threshold: smaller single-sample differences are not called


def _anchor_text(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in text)


def table_anchor(suite: str, case: str) -> str:
    return f"table-{_anchor_text(suite)}-{_anchor_text(case)}"


class Evidence:
    """Where a finding's evidence is: the figure of its case when one is registered, else its run table."""

    def __init__(self, runs: Sequence[Run]):
        self.suites = {r.suite for r in runs}
        self.cases = {(r.suite, r.case) for r in runs}

    def figure(self, key: str) -> str | None:
        suite = key.split(".", 1)[0]
        known = any(spec.key == key for spec in figure_registry.figures_for(suite))
        return figure_registry.anchor(key) if known and suite in self.suites else None

    def for_case(self, suite: str, case: str, metric: str | None = None) -> str | None:
        specs = figure_registry.figures_for(suite)
        for spec in specs:
            if spec.case == case:
                return figure_registry.anchor(spec.key)
        for spec in specs:
            if metric and spec.case is None and metric in spec.metrics:
                return figure_registry.anchor(spec.key)
        return table_anchor(suite, case) if (suite, case) in self.cases else None

    @staticmethod
    def link(anchor: str | None, text: str = "evidence") -> str:
        return f'<a href="#{escape(anchor)}">{escape(text)}</a>' if anchor else DASH


# --------------------------------------------------------------------------- banner


def banner(results: Results) -> str:
    ctx = results.context
    pool = ctx.get("pool")
    lines = []
    if isinstance(pool, dict) and (pool.get("medium") == "emulated" or pool.get("filesystem") == "tmpfs"):
        lines.append(
            f"<b>The pool is emulated, not persistent memory.</b> <code>{escape(str(pool.get('path', '?')))}</code> is "
            f"a file on {escape(str(pool.get('filesystem', '?')))} (medium {escape(str(pool.get('medium', '?')))}): "
            "every number measured “on the pool” is DRAM behind a file mapping. Flushes and fences cost what "
            "they cost on this CPU, but nothing reaches a persistent medium, so latencies and bandwidths are "
            "DRAM’s and no idiosyncrasy found here can be PMEM-specific. Use the results to compare designs’ "
            "instruction costs on this machine, not to predict their speed on PMEM.")
    elif pool is None:
        lines.append("<b>No pool was used.</b> Every number comes from DRAM.")
    emulation = {k: v for k, v in ctx.items() if k in ("emulation", "device_model") and v}
    modelled = sorted({m.model for r in results.runs for m in r.metrics.values()
                       if m.kind == "modelled" and m.model and " " not in m.model})
    if emulation:
        lines.append("<b>Device model / emulation is on</b> (" + escape(", ".join(
            f"{k}: {v}" for k, v in emulation.items())) + "): latencies on the emulated medium include "
            "modelled delays; those numbers are labelled modelled.")
    elif modelled:
        lines.append(f"Numbers labelled <i>modelled</i> come from a device model ({escape(', '.join(modelled[:4]))}"
                     f"{' …' if len(modelled) > 4 else ''}) fed with this run’s measurements, not from a device.")
    if ctx.get("interrupted"):
        lines.append("<b>The run was interrupted</b>: some suites did not finish; what is missing is listed "
                     "under warnings.")
    if not lines:
        return ""
    return '<div class="banner">' + "<br>".join(lines) + "</div>"


# --------------------------------------------------------------------------- use


def _ratio_text(answer: decision_rules.Answer) -> str:
    if answer.ratio is None:
        return DASH
    text = f"{sig(answer.ratio)}×"
    if answer.ci is None:
        # With one sample a side, a difference below pmlab compare's default threshold is noise as far as
        # anyone can tell.
        close = (' <span class="caution">— too close to call</span>' if answer.ratio < 1 + CLOSE_CALL else "")
        return text + ' <span class="muted">(one sample, no CI)</span>' + close
    low, high = answer.ci
    overlap = " — not distinguishable" if low <= 1.0 else ""
    return (text + f' <span class="ci" title="95 % bootstrap CI of the ratio of medians, '
            f'{answer.samples[0]} and {answer.samples[1]} samples">[{sig(low)}, {sig(high)}]</span>'
            f'<span class="caution">{overlap}</span>')


def _rate(value: float, label: str) -> str:
    """9.39e6 and "appends/s" -> "9.39 M appends/s" (the prefix apart, so the label stays readable)."""
    return f"{format_quantity(value, '')} {label}"


def use_section(results: Results, evidence: Evidence) -> str:
    outcomes = decision_rules.answer_all(results.context, results.runs)
    rows = []
    not_run = []
    for outcome in outcomes:
        d = outcome.decision
        link = evidence.figure(d.figure) or evidence.for_case(d.suite, d.case)
        if (d.suite, d.case) not in evidence.cases:
            not_run.append(f"{d.question.split(',')[0].lower()} ({d.suite}.{d.case})")
            continue
        if outcome.missing:
            rows.append(f"<tr><th>{escape(d.question)}</th><td colspan=\"5\" class=\"muted\">not answered: "
                        f"{escape(outcome.missing)}</td><td>{Evidence.link(link)}</td></tr>")
            continue
        first = True
        for answer in outcome.answers:
            by = ", ".join(f"{k} {v}" for k, v in answer.by.items())
            rivals = (f"{' '.join(map(str, d.challenger))} against the best of {answer.contenders - 1} others"
                     if d.challenger else f"{answer.contenders} contenders")
            head = (f'<th rowspan="{len(outcome.answers)}">{escape(d.question)}'
                    f'<div class="compared">{escape(outcome.compared)}; {escape(rivals)}, '
                    "each at its best option</div></th>" if first else "")
            reference = (f'<div class="reference">{escape(answer.reference[0])}: '
                         f"{escape(_rate(answer.reference[1], d.metric_label))}</div>" if answer.reference else "")
            rows.append(
                f"<tr>{head}<td>{escape(by)}</td><td><b>{escape(answer.winner)}</b>{reference}</td>"
                f'<td class="rate">{escape(_rate(answer.winner_value, d.metric_label))}</td>'
                f"<td>{escape(answer.runner_up or DASH)}</td><td>{_ratio_text(answer)}</td>"
                f"<td>{Evidence.link(link) if first else ''}</td></tr>")
            first = False
    kind = '<span class="badge kind-measured" title="measured in this run">meas</span>'
    absent = (f'<p class="muted">Not answered by this run (its case did not run): {escape(", ".join(not_run))}.</p>'
              if not_run else "")
    if not rows:
        return f'<h3 id="use">On this machine, use</h3>{absent}'
    return (f'<h3 id="use">On this machine, use {kind}</h3>{absent}'
            '<div class="scroll"><table class="use"><thead><tr><th>decision</th><th>for</th><th>winner</th>'
            "<th>winner’s median</th><th>runner-up</th><th>winner / runner-up (95 % CI)</th><th></th></tr></thead>"
            "<tbody>"
            + "".join(rows) + "</tbody></table></div>"
            '<p class="muted small">Under each decision: the case, the metric and what was held fixed. Ratios are '
            "of medians (geometric means of medians where a decision aggregates); the interval resamples each "
            "side’s repetitions independently (2000 bootstrap resamples, fixed seed). Choosing each "
            "contender’s best option first makes a close call look slightly surer than it is.</p>")


# --------------------------------------------------------------------------- targets


@dataclass
class TargetResult:
    suite: str
    case: str
    label: str
    verdict: str            # met | missed | unclear
    run: Run
    value: float | None
    unit: str
    threshold: float | None
    direction: str | None   # at_least | at_most
    ci: tuple[float, float] | None = None
    why: str = ""
    metric: str = ""


def collect_targets(runs: Sequence[Run]) -> list[TargetResult]:
    found = []
    for run in runs:
        if not run.ok:
            continue
        for t in run.targets:
            metric = run.metrics.get(str(t.get("metric")))
            ci = (t["ci_low"], t["ci_high"]) if is_number(t.get("ci_low")) and is_number(t.get("ci_high")) else None
            found.append(TargetResult(run.suite, run.case, str(t.get("label") or t.get("metric")),
                                      str(t.get("verdict")), run, t.get("value"), metric.unit if metric else "",
                                      t.get("threshold"), t.get("direction"), ci, str(t.get("why") or ""),
                                      str(t.get("metric"))))
    return found


def _point(run: Run, keys: Sequence[str]) -> str:
    return ", ".join(f"{k} {run.params.get(k)}" for k in keys) or "the one run"


def _varying(runs: Sequence[Run]) -> list[str]:
    keys: dict[str, set] = {}
    for run in runs:
        for k, v in run.params.items():
            keys.setdefault(k, set()).add(repr(v))
    return [k for k, values in keys.items() if len(values) > 1]


def _value_text(t: TargetResult) -> str:
    if not is_number(t.value):
        return DASH
    sign = {"at_least": "≥", "at_most": "≤"}.get(t.direction or "", "vs")
    text = format_quantity(t.value, t.unit)
    if t.ci:
        text += f" [{format_quantity(t.ci[0], t.unit)}, {format_quantity(t.ci[1], t.unit)}]"
    if is_number(t.threshold):
        text += f" (target {sign} {format_quantity(t.threshold, t.unit)})"
    return text


def targets_section(runs: Sequence[Run], evidence: Evidence) -> tuple[str, int, int]:
    """HTML, and how many target checks were missed and unclear."""
    targets = collect_targets(runs)
    if not targets:
        return ('<h3 id="targets">Targets</h3><p class="muted">This run checked no speed targets.</p>', 0, 0)
    groups: dict[tuple, list[TargetResult]] = {}
    for t in targets:
        groups.setdefault((t.suite, t.case, t.label), []).append(t)
    rows = []
    order = {"missed": 0, "unclear": 1, "met": 2}
    for (suite, case, label), items in sorted(groups.items(), key=lambda kv: (
            min(order.get(t.verdict, 3) for t in kv[1]), kv[0])):
        counts = {v: sum(1 for t in items if t.verdict == v) for v in ("met", "missed", "unclear")}
        verdict = "missed" if counts["missed"] else "unclear" if counts["unclear"] else "met"
        link = evidence.for_case(suite, case, items[0].metric)
        shown = [t for t in items if t.verdict != "met"][:4] or items[:1]
        keys = _varying([t.run for t in items])
        detail = "<br>".join(
            f"{escape(_point(t.run, keys))}: {escape(_value_text(t))}"
            + (f' <span class="muted">— {escape(t.why)}</span>' if t.why else "") for t in shown)
        more = len([t for t in items if t.verdict != "met"]) - len([t for t in shown if t.verdict != "met"])
        if more > 0:
            detail += f'<br><span class="muted">… and {more} more (see the table)</span>'
        tally = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
        rows.append(f'<tr class="t-{verdict}"><td><span class="badge verdict-{verdict}">{verdict}</span></td>'
                    f"<td><code>{escape(suite)}.{escape(case)}</code> {escape(label)}</td><td>{escape(tally)}</td>"
                    f'<td class="small">{detail}</td><td>{Evidence.link(link)}</td></tr>')
    missed = sum(1 for t in targets if t.verdict == "missed")
    unclear = sum(1 for t in targets if t.verdict == "unclear")
    html = (f'<h3 id="targets">Targets: {len(targets) - missed - unclear} met, {missed} missed, {unclear} unclear '
            f'<span class="muted">(of {len(targets)} checks)</span></h3>'
            '<div class="scroll"><table class="targets"><thead><tr><th>verdict</th><th>target</th><th>checks</th>'
            "<th>where missed or unclear (else one example) — measured value</th><th></th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table></div>")
    return html, missed, unclear


# --------------------------------------------------------------------------- warnings


def warnings_section(results: Results) -> tuple[str, int]:
    items = []
    checks = list(results.checks)
    row_of = {run.name: run.index for run in results.runs}

    def run_link(name: str) -> str:
        index = row_of.get(name)
        return f'<a href="#run-{index}">{escape(name)}</a>' if index is not None else escape(name)

    def violation(check: dict) -> str:
        explained = check.get("explained")
        runs = [str(name) for name in check.get("runs") or []]
        return (
            f"<li><b>{escape(str(check.get('kind', 'check')))} violated</b> "
            f"<code>{escape(str(check.get('rule', '?')))}</code>: {escape(str(check.get('description', '')))}"
            + (f" — {escape(str(check['detail']))}" if check.get("detail") else "")
            + (f' <span class="muted">(runs: {", ".join(run_link(n) for n in runs[:3])}'
               f'{f" and {len(runs) - 3} more" if len(runs) > 3 else ""})</span>' if runs else "")
            + (f" Explained in <code>{escape(str(explained))}</code>." if explained else "") + "</li>")

    violated = [c for c in checks if c.get("verdict") == "violated"]
    # Unexplained violations are what a reader must look at; explained ones (a property of the machine the
    # docs show with a measurement) are folded behind one line.
    items.extend(violation(c) for c in violated if not c.get("explained"))
    explained_items = [violation(c) for c in violated if c.get("explained")]
    if explained_items:
        items.append(f"<li><details><summary>{len(explained_items)} explained violation"
                     f"{'s' if len(explained_items) != 1 else ''} (properties of this machine the docs show "
                     f"with a measurement)</summary><ul>{''.join(explained_items)}</ul></details></li>")
    floor: dict[str, int] = {}
    for run in results.runs:
        for metric in run.metrics.values():
            if metric.at_timer_floor:
                floor[f"{run.suite}.{run.case}"] = floor.get(f"{run.suite}.{run.case}", 0) + 1
    if floor:
        total = sum(floor.values())
        items.append(f"<li><b>{total} value{'s' if total != 1 else ''} at the timer floor</b> (within 3× of the "
                     "timer’s measured resolution; shown as ≤ in the tables, an upper bound): "
                     + escape(", ".join(f"{case} ({n})" for case, n in sorted(floor.items()))) + "</li>")
    reasons: dict[tuple[str, str], list[str]] = {}
    for run in results.runs:
        if not run.ok:
            reasons.setdefault((run.status, run.reason or "no reason given"), []).append(f"{run.suite}.{run.case}")
    for skipped in results.context.get("skipped") or []:
        if isinstance(skipped, dict):
            reasons.setdefault(("skipped", str(skipped.get("reason") or "no reason given")), []).append(
                str(skipped.get("name", "?")))
    for (status, reason), where in sorted(reasons.items(), key=lambda kv: (kv[0][0] != "error", -len(kv[1]))):
        cases: dict[str, int] = {}
        for case in where:
            cases[case] = cases.get(case, 0) + 1
        place = ", ".join(f"{case}" + (f" ×{n}" if n > 1 else "") for case, n in cases.items())
        items.append(f'<li><span class="badge status-{escape(status)}">{escape(status)}</span> '
                     f"{escape(place)}: {escape(reason)}</li>")
    ok_checks = [c for c in checks if c.get("verdict") != "violated"]
    html = ('<h3 id="warnings">Warnings</h3>'
            + (f'<ul class="warnings">{"".join(items)}</ul>' if items else '<p class="muted">None.</p>'))
    if ok_checks:
        html += (f"<details><summary>{len(ok_checks)} plausibility rule{'s' if len(ok_checks) != 1 else ''} and "
                 "cross-checks that passed or did not apply</summary><ul>" + "".join(
                     f"<li>{escape(str(c.get('verdict')))}: <code>{escape(str(c.get('rule')))}</code> "
                     f"{escape(str(c.get('description', '')))}"
                     + (f" — {escape(str(c['detail']))}" if c.get("detail") else "") + "</li>" for c in ok_checks)
                 + "</ul></details>")
    return html, len(items)


# --------------------------------------------------------------------------- idiosyncrasies


def _ratio(run: Run, name: str, badge: Badge) -> str:
    metric = run.metrics.get(name)
    if metric is None or not is_number(metric.value):
        return DASH
    return f"{sig(metric.value)}×{badge(metric) if metric.kind != MEASURED else ''}"


def _idio_figure(ident: str, evidence: Evidence) -> str | None:
    token = ident.lower()
    for spec in figure_registry.figures_for("idio"):
        if token in spec.key.split(".")[-1].split("_"):
            return evidence.figure(spec.key)
    return None


def idio_section(runs: Sequence[Run], evidence: Evidence, badge: Badge) -> str:
    # The pool's rows; a NUMA tier's (parameter `tier`) are in the tier table (tiers.py).
    rows = sorted((r for r in runs if r.suite == "idio" and r.case == "classification" and r.ok
                   and r.param("tier") is None),
                  key=lambda r: str(r.param("idiosyncrasy")))
    rules = sorted((r for r in runs if r.suite == "idio" and r.case == "recommendation" and r.ok),
                   key=lambda r: str(r.param("rule")))
    if not rows and not rules:
        return ""
    published = next((m for r in rows for m in r.metrics.values() if m.kind == "published"), None)
    pub = badge(published) if published else ""
    parts = []
    if rows:
        body = []
        for r in rows:
            n = r.notes
            ident = str(r.param("idiosyncrasy"))
            verdict = n.get("verdict", "?")
            css = {"present": "present", "absent": "absent"}.get(verdict, "na")
            body.append(
                f'<tr><td><b>{escape(ident)}</b></td><td>{escape(n.get("idiosyncrasy", ""))}</td>'
                f'<td><span class="badge verdict-{css}">{escape(idio_sentences.verdict_word(verdict))}</span></td>'
                f'<td>{escape(n.get("pmem_specific", "?"))}</td>'
                f'<td class="num">{_ratio(r, "effect_pool", badge)} / {_ratio(r, "effect_dram", badge)}</td>'
                f'<td class="num">{_ratio(r, "effect_published_pmem", lambda m: "")} / '
                f'{_ratio(r, "effect_published_dram", lambda m: "")}</td>'
                f'<td class="small">{escape(n.get("effect", ""))}</td>'
                f"<td>{Evidence.link(_idio_figure(ident, evidence), 'figure')}</td></tr>")
        reasoning = "".join(f"<li><b>{escape(str(r.param('idiosyncrasy')))}</b>: "
                            f"{escape(idio_sentences.classification_reason(r))}</li>" for r in rows)
        parts.append(
            '<h3 id="idiosyncrasies">Idiosyncrasies I1–I8 on this machine ([PMIdioBench] Table 1 method)</h3>'
            '<div class="scroll"><table class="idio"><thead><tr><th>ID</th><th>idiosyncrasy</th><th>verdict</th>'
            f'<th>PMEM-specific</th><th>effect here, pool / DRAM {badge(Metric(None, "", MEASURED))}</th>'
            f"<th>published PMEM / DRAM {pub}</th><th>effect measured as</th><th></th></tr></thead>"
            f'<tbody>{"".join(body)}</tbody></table></div>'
            f"<details><summary>Reasoning behind each verdict</summary><ul>{reasoning}</ul></details>")
    if rules:
        body = []
        for r in rules:
            n = r.notes
            first = (n.get("follows_from") or "").split(",")[0].strip()
            link = _idio_figure(first, evidence) if first.startswith("I") else evidence.figure("lockfree.list_throughput")
            body.append(
                f'<tr><td><b>{escape(str(r.param("rule")))}</b></td><td>{escape(n.get("rule", ""))}</td>'
                f'<td class="small">{escape(n.get("recommendation", ""))}</td>'
                f'<td class="num">{_ratio(r, "impact_pool", badge)} / {_ratio(r, "impact_dram", badge)}</td>'
                f'<td>{escape(idio_sentences.impact_class_word(n.get("impact_class", "")))}</td>'
                f'<td class="small">{escape(n.get("published_impact", ""))}</td>'
                f'<td class="small">{escape(n.get("follows_from", ""))}</td>'
                f"<td>{Evidence.link(link, 'figure')}</td></tr>")
        source = next((r.notes.get("published_source") for r in rules if r.notes.get("published_source")), "")
        impacts = "".join(f"<li><b>{escape(str(r.param('rule')))}</b>: "
                          f"{escape(idio_sentences.recommendation_reason(r, rows))}</li>" for r in rules)
        parts.append(
            '<h3 id="recommendations">Recommendations R1–R7 with the impact measured here</h3>'
            '<div class="scroll"><table class="idio"><thead><tr><th>ID</th><th>rule</th><th>recommendation</th>'
            f'<th>impact here, pool / DRAM {badge(Metric(None, "", MEASURED))}</th><th>class here</th>'
            '<th>published impact <span class="badge kind-published">pub</span></th><th>follows from</th>'
            f'<th></th></tr></thead><tbody>{"".join(body)}</tbody></table></div>'
            + (f'<p class="muted">Published impact: {escape(source)}. Impact classes: none &lt; 1.1×, low &lt; '
               "1.5×, moderate 1.5–3×, high &gt; 3×.</p>" if source else "")
            + f"<details><summary>What each impact measures</summary><ul>{impacts}</ul></details>")
    return "".join(parts)


# --------------------------------------------------------------------------- the section


def section(results: Results, badge: Badge) -> str:
    evidence = Evidence(results.runs)
    targets_html, missed, unclear = targets_section(results.runs, evidence)
    warnings_html, warnings = warnings_section(results)
    summary = (f'<p class="summary">{missed} target check{"s" if missed != 1 else ""} missed, {unclear} unclear; '
               f'{warnings} warning{"s" if warnings != 1 else ""}. '
               '<a href="#use">Use</a> · <a href="#targets">Targets</a> · <a href="#warnings">Warnings</a>'
               + (' · <a href="#idiosyncrasies">Idiosyncrasies</a> · <a href="#recommendations">Recommendations</a>'
                  if any(r.case == "classification" for r in results.runs) else "") + "</p>")
    tier_html = tiers.section(results.runs, results.context)
    if tier_html:
        summary = summary.replace("</p>", ' · <a href="#tiers">Memory tiers</a></p>')
    return ('<section id="findings"><h2>Findings</h2>' + banner(results) + summary
            + use_section(results, evidence) + targets_html + warnings_html
            + idio_section(results.runs, evidence, badge) + tier_html + "</section>")
