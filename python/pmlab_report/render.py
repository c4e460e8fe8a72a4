"""Render a Results model as one self-contained, offline HTML page.

Inline CSS, figures embedded as base64 PNG, one inline script (sorting tables by a
clicked header) and no external URLs. Every number shown carries a badge naming its
kind (measured, modelled with the model's name, published with a numbered source or, in "Against
the field", its docs/references.md key), per cell or, where a whole column shares it, once in the
column's header.
"""

from __future__ import annotations

import base64
import io
import json
from html import escape
from typing import Any, Iterable, Sequence

from . import figures as figure_registry
from . import suites  # noqa: F401  (imports every suite module so its figures register)
from .model import MEASURED, MODELLED, PUBLISHED, Metric, Results, Run, group_by_case
from .model import group_by_suite, kinds_of, status_counts
from .units import DASH, format_quantity
from .profiles import profile_section
from .tables import SORT_SCRIPT, case_tables
from .figures import anchor as figure_anchor
from . import field, findings

DPI = 110

CSS = """
:root { --fg:#1d1d1f; --muted:#5f6368; --line:#d9dce1; --bg-alt:#f6f7f9;
        --meas:#1e6f3d; --meas-bg:#e3f3e8; --model:#8a4b00; --model-bg:#fdecd5;
        --pub:#1f4e9c; --pub-bg:#e1ebfa; --err:#b3261e; --err-bg:#fbe4e2;
        --skip:#5f6368; --skip-bg:#eceef1; --ok:#1e6f3d; --ok-bg:#e3f3e8; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
       margin: 0 auto; padding: 24px 32px 64px; max-width: 1400px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 36px 0 8px; padding-bottom: 4px; border-bottom: 2px solid var(--line); }
h3 { font-size: 16px; margin: 24px 0 8px; }
code, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 12.5px; }
.muted { color: var(--muted); }
nav ul { margin: 4px 0; padding-left: 20px; }
table { border-collapse: collapse; margin: 6px 0 12px; }
th, td { border-bottom: 1px solid var(--line); padding: 4px 10px 4px 6px; text-align: left;
         vertical-align: top; }
thead th { position: sticky; top: 0; background: #fff; border-bottom: 2px solid var(--line);
           white-space: nowrap; }
table.kv th { width: 190px; font-weight: 600; }
table.runs td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
table.runs tbody tr:nth-child(even) { background: var(--bg-alt); }
table.runs td.name { font-size: 12px; max-width: 380px; word-break: break-word; }
table.runs tr.notok td { background: var(--err-bg); }
table.runs tr.skipped td { background: var(--skip-bg); }
.scroll { overflow-x: auto; max-width: 100%; }
details { margin: 4px 0; } details > summary { cursor: pointer; padding: 2px 0; }
table.sortable thead th { cursor: pointer; }
table.sortable thead th[data-sort=up]::after { content: " ▲"; }
table.sortable thead th[data-sort=down]::after { content: " ▼"; }
.unit { color: var(--muted); font-weight: normal; }
.floor { border-bottom: 1px dotted var(--muted); }
.ci { color: var(--muted); font-size: 11.5px; }
nav ul ul { columns: 2; font-size: 13px; }
.banner { border: 2px solid var(--model); background: var(--model-bg); border-radius: 6px; padding: 8px 14px;
          margin: 8px 0; }
.summary { font-size: 15px; }
.facts { margin: 2px 0 0; font-size: 13px; } .fact { white-space: nowrap; } .fact code { white-space: normal; overflow-wrap: anywhere; }
table.use th[rowspan] { width: 330px; } table.use td, table.targets td, table.idio td { font-size: 13px; }
table.use td, table.use th { padding: 2px 8px 2px 6px; } td.rate { white-space: nowrap; color: var(--muted); }
td.small { font-size: 12px; max-width: 520px; }
p.small { font-size: 12px; }
.compared { font-weight: normal; font-size: 11.5px; color: var(--muted); margin-top: 2px; }
.reference { font-size: 11.5px; color: var(--muted); white-space: nowrap; }
.verdict-met, .verdict-absent { color: var(--ok); background: var(--ok-bg); }
.verdict-missed, .verdict-present { color: var(--err); background: var(--err-bg); }
.verdict-unclear, .verdict-na { color: var(--skip); background: var(--skip-bg); }
ul.warnings li { margin: 2px 0; }
.badge { display: inline-block; border-radius: 4px; padding: 0 5px; margin-left: 4px; font-size: 10.5px;
         line-height: 16px; font-weight: 600; vertical-align: 1px; white-space: nowrap; }
.kind-measured { color: var(--meas); background: var(--meas-bg); }
.kind-modelled { color: var(--model); background: var(--model-bg); }
.kind-published { color: var(--pub); background: var(--pub-bg); }
.status-ok { color: var(--ok); background: var(--ok-bg); margin-left: 0; }
.status-error { color: var(--err); background: var(--err-bg); margin-left: 0; border: 1px solid var(--err); }
.status-skipped { color: var(--skip); background: var(--skip-bg); margin-left: 0; border: 1px solid var(--skip); }
.flag-on { color: var(--ok); background: var(--ok-bg); margin: 0 4px 2px 0; }
.flag-off { color: var(--muted); background: var(--skip-bg); margin: 0 4px 2px 0; text-decoration: line-through; }
.legend { border: 1px solid var(--line); border-radius: 6px; padding: 8px 14px; background: var(--bg-alt); }
.legend dl { display: grid; grid-template-columns: max-content 1fr; gap: 4px 12px; margin: 6px 0; }
.legend dt { text-align: right; } .legend dd { margin: 0; }
figure { margin: 16px 0 24px; }
figure img { max-width: 100%; height: auto; border: 1px solid var(--line); }
figcaption { max-width: 900px; color: #333; margin-top: 6px; }
.note { color: var(--muted); font-style: italic; }
.warn { color: var(--err); }
.caution { color: var(--model); }
.reason { color: var(--err); }
ol.sources { margin: 4px 0; }
table.field thead th { white-space: normal; vertical-align: bottom; }
table.field td.pub { font-size: 12px; min-width: 200px; max-width: 320px; }
table.field td.nowrap { white-space: nowrap; }
"""


# --------------------------------------------------------------------------- badges


class Sources:
    """Numbers the `source` strings of published metrics, in first-seen order."""

    def __init__(self, runs: Iterable[Run]):
        self.numbers: dict[str, int] = {}
        for run in runs:
            for metric in run.metrics.values():
                if metric.kind == PUBLISHED and metric.source:
                    self.numbers.setdefault(metric.source, len(self.numbers) + 1)

    def number(self, source: str | None) -> int | None:
        return self.numbers.get(source or "")


def kind_badge(metric: Metric, sources: Sources | None = None) -> str:
    """The small coloured label naming a number's kind."""
    if metric.kind == MEASURED:
        return '<span class="badge kind-measured" title="measured in this run">meas</span>'
    if metric.kind == MODELLED:
        model = metric.model or "?"
        return (f'<span class="badge kind-modelled" title="modelled by {escape(model)}, not measured">'
                f"model: {escape(model)}</span>")
    if metric.kind == PUBLISHED:
        source = metric.source or "?"
        number = sources.number(source) if sources else None
        text = f"pub [{number}]" if number else f"pub: {escape(source)}"
        return (f'<span class="badge kind-published" title="published: {escape(source)}">'
                f"{text}</span>")
    return f'<span class="badge">{escape(str(metric.kind))}</span>'


def measured_badge() -> str:
    return kind_badge(Metric(None, "", MEASURED))


def status_badge(status: str) -> str:
    return f'<span class="badge status-{escape(status)}">{escape(status)}</span>'


def _value(metric: Metric, sources: Sources | None = None) -> str:
    return f"{escape(format_quantity(metric.value, metric.unit))}{kind_badge(metric, sources)}"


def _measured(value: Any, unit: str) -> str:
    if value is None:
        return DASH
    return f"{escape(format_quantity(value, unit))}{measured_badge()}"


def _breakable(name: str) -> str:
    return "/<wbr>".join(escape(part) for part in name.split("/"))


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _anchor(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in text)


# --------------------------------------------------------------------------- figures


def figure_to_data_uri(fig, dpi: int = DPI) -> str:
    """PNG of `fig` as a data: URI."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight", facecolor="white")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


# --------------------------------------------------------------------------- sections


def _header(results: Results) -> str:
    ctx = results.context
    counts = status_counts(results.runs)
    quick = ctx.get("quick")
    quick_text = ("yes — quick run: fewer sweep values and shorter measurements" if quick
                  else "no" if quick is not None else DASH)
    rows = [
        ("Run id", f"<code>{escape(str(ctx.get('run_id', DASH)))}</code>"),
        ("Date", escape(str(ctx.get("date", DASH)))),
        ("Command line", f"<code>{escape(str(ctx.get('command_line', DASH)))}</code>"),
        ("Quick", escape(quick_text)),
        ("Host", escape(str(ctx.get("host", DASH)))),
        ("pmlab version", escape(results.pmlab_version or DASH)
         + f' <span class="muted">(results schema v{results.schema_version})</span>'),
        ("Runs", f"{len(results.runs)}: " + ", ".join(
            f"{n} {escape(s)}" for s, n in counts.items())),
    ]
    # One line per pair of facts, so the findings below start high on the first screen.
    body = " · ".join(f'<span class="fact"><b>{k}</b> {v}</span>' for k, v in rows)
    return (f"<header><h1>pmlab report — {escape(str(ctx.get('run_id', '')))}</h1>"
            f'<p class="facts">{body}</p></header>')


def _reference_warning(ctx: dict) -> str:
    """The published data the run could not read: the comparisons it feeds are missing, and the reader is told."""
    data = ctx.get("reference_data") or {}
    missing = data.get("missing") or []
    if not missing and data.get("found_by") != "none":
        return ""
    where = data.get("directory") or "no directory"
    files = "".join(f"<li><code>{escape(str(m.get('file')))}</code>: {escape(str(m.get('reason')))}</li>"
                    for m in missing)
    return ('<section class="banner" id="reference-data"><strong class="warn">Published comparisons missing.</strong> '
            f"This run could not read the published data below (looked in <code>{escape(str(where))}</code>, "
            f"found by: {escape(str(data.get('found_by', DASH)))}); every published number that comes from it "
            "is left out of this report. pmlab reads it from <code>$PMLAB_REFERENCE_DIR</code>, the source "
            "tree's <code>data/reference</code> or <code>share/pmlab/reference</code> where it is installed."
            f"<ul>{files}</ul></section>")


def _legend(results: Results, sources: Sources) -> str:
    models = sorted({m.model for r in results.runs for m in r.metrics.values()
                     if m.kind == MODELLED and m.model})
    model_text = (" Models used: " + ", ".join(f"<code>{escape(m)}</code>" for m in models) + "."
                  if models else "")
    parts = [
        '<section class="legend" id="legend"><strong>How to read the numbers.</strong> '
        "Every number carries a badge saying where it comes from (in the run tables once, in the column's "
        "header, when the whole column shares it; ≤ marks a latency at the timer floor, an upper bound):<dl>",
        f'<dt>{kind_badge(Metric(None, "", MEASURED))}</dt>'
        "<dd><b>measured</b> — timed on this machine in this run.</dd>",
        f'<dt>{kind_badge(Metric(None, "", MODELLED, model="‹name›"))}</dt>'
        "<dd><b>modelled</b> — computed by the named model from measured inputs; not a measurement."
        f"{model_text}</dd>",
        f'<dt><span class="badge kind-published">pub [n]</span></dt>'
        "<dd><b>published</b> — quoted from the numbered source below (in <i>Against the field</i>, from the "
        "source its docs/references.md key names), for comparison; not produced by this run.</dd></dl>",
    ]
    if sources.numbers:
        parts.append("Sources:<ol class=\"sources\">" + "".join(
            f"<li value=\"{n}\">{escape(s)}</li>" for s, n in sources.numbers.items()) + "</ol>")
    parts.append('<div class="muted">Unbadged numbers in the context section (cache sizes, core '
                 "counts …) describe the machine as reported by the system; they are not "
                 "measurements.</div></section>")
    return "".join(parts)


def _caches(caches: Sequence[dict]) -> str:
    lines = []
    for cache in caches:
        lines.append(
            f"L{escape(str(cache.get('level', '?')))} {escape(str(cache.get('type', '')))}: "
            f"{escape(format_quantity(cache.get('size_bytes'), 'B'))}, "
            f"{escape(format_quantity(cache.get('line_bytes'), 'B'))} lines, "
            f"shared by {escape(str(cache.get('shared_by', '?')))} logical CPU(s)")
    return "<br>".join(lines) or DASH


def _flags(isa: dict) -> str:
    if not isa:
        return DASH
    return "".join(
        f'<span class="badge {"flag-on" if on else "flag-off"}" '
        f'title="{"present" if on else "absent"}">{escape(name)}</span>'
        for name, on in isa.items())


_KNOWN_CONTEXT = {"run_id", "date", "command_line", "quick", "host", "kernel", "git_revision",
                  "config_hash", "cpu", "numa_nodes", "timer", "hardware_counters", "counters", "pool",
                  "durability_domain", "flush_instruction", "skipped", "memory_tiers", "reference_data"}


def _memory_tiers(tiers: Any) -> str:
    """Each NUMA node with its label and the facts the label rests on (docs/memory-tiers.md)."""
    if not isinstance(tiers, dict) or not tiers.get("nodes"):
        return DASH
    rows = "".join(
        f"<tr><td>{escape(str(n.get('node')))}</td><td>{escape(str(n.get('label')))}</td>"
        f"<td>{escape(format_quantity(n.get('memory_bytes'), 'B'))}</td><td>{escape(str(n.get('cpus')))}</td>"
        f'<td class="small">{escape(str(n.get("evidence")))}</td></tr>' for n in tiers["nodes"])
    notes = "".join(f'<p class="muted">{escape(str(note))}</p>' for note in tiers.get("notes") or [])
    return ('<table class="kv"><thead><tr><th>Node</th><th>Tier</th><th>Memory</th><th>CPUs</th>'
            f"<th>What the tier rests on</th></tr></thead><tbody>{rows}</tbody></table>{notes}")


# What a pool's persistence domain, as the kernel reports it for the pool's nvdimm region, means.
PERSISTENCE_DOMAIN_WORDS = {
    "memory_controller": "durable once written back to the memory controller (the ADR model: flushes needed)",
    "cpu_cache": "durable from the CPU caches (the eADR model)",
}


def _pool_backing(backing: Any) -> str:
    """What memory the pool is on, its persistence domain, and the sysfs facts both rest on."""
    if not isinstance(backing, dict):
        return DASH
    domain = backing.get("persistence_domain")
    if backing.get("label") == "dram":
        words = "not persistent"
    else:
        words = PERSISTENCE_DOMAIN_WORDS.get(domain, domain) if domain else "persistence domain not reported: unknown"
    return (f"{escape(str(backing.get('label', 'unknown')))} — {escape(str(words))}"
            f'<br><span class="small">{escape(str(backing.get("evidence", "")))}</span>')


def _context(ctx: dict) -> str:
    cpu = ctx.get("cpu") or {}
    timer = ctx.get("timer") or {}
    counters = ctx.get("hardware_counters") or {}
    pool = ctx.get("pool")

    def text(value: Any) -> str:
        return DASH if value is None else escape(str(value))

    tsc = cpu.get("tsc_ghz")
    cores = cpu.get("cores_used") or []
    rows = [
        ("CPU", f"{text(cpu.get('vendor'))} — {text(cpu.get('model'))}"),
        ("Logical CPUs / cores used",
         f"{text(cpu.get('logical_cpus'))} logical; benchmark pinned to "
         f"{escape(', '.join(str(c) for c in cores)) or DASH}"),
        ("ISA flags", _flags(cpu.get("isa") or {})),
        ("Caches", _caches(cpu.get("caches") or [])),
        ("TSC frequency", _measured(tsc, "GHz") if tsc is not None else "TSC not used"),
        ("NUMA nodes", text(ctx.get("numa_nodes"))),
        ("Memory tiers", _memory_tiers(ctx.get("memory_tiers"))),
        ("Kernel", text(ctx.get("kernel"))),
        ("Timer", f"source <code>{text(timer.get('source'))}</code>; overhead "
                  f"{_measured(timer.get('overhead_ns'), 'ns')}; resolution "
                  f"{_measured(timer.get('resolution_ns'), 'ns')}"),
        ("Hardware counters",
         "available" if counters.get("available")
         else f"not available — {text(counters.get('reason'))}"),
    ]
    sources = ctx.get("counters") or {}
    for key, label in (("core", "Core counters per run"), ("memory_traffic", "Memory traffic per run"),
                       ("pmem_dimms", "PMEM DIMM media counters")):
        src = sources.get(key)
        if isinstance(src, dict):
            rows.append((label, ("counted: " + escape(", ".join(src.get("events") or [])) if src.get("events")
                                 else "counted") if src.get("available")
                         else f"not counted — {text(src.get('reason'))}"))
    if isinstance(pool, dict):
        rows += [
            ("Pool path", f"<code>{text(pool.get('path'))}</code>"),
            ("Pool medium / filesystem", f"{text(pool.get('medium'))} on {text(pool.get('filesystem'))}"),
            ("Pool size", escape(format_quantity(pool.get("size_bytes"), "B"))),
            ("Store granularity", text(pool.get("store_granularity"))),
            ("Pool memory", _pool_backing(pool.get("backing"))),
        ]
        if pool.get("placement_step_bytes"):
            rows.append(("Repetitions placed", "every " + escape(format_quantity(pool["placement_step_bytes"], "B"))
                         + " through the pool, as far as it has room (pages differ in speed)"))
    else:
        rows.append(("Pool", "no pool used"))
    rows += [
        ("Durability domain", f"{text(ctx.get('durability_domain'))} "
                              '<span class="muted">(run-wide default; runs may override)</span>'),
        ("Flush instruction", f"{text(ctx.get('flush_instruction'))} "
                              '<span class="muted">(run-wide default; runs may override)</span>'),
        ("Git revision", f"<code>{text(ctx.get('git_revision'))}</code>"),
        ("Config hash", f"<code>{text(ctx.get('config_hash'))}</code>"),
    ]
    reference = ctx.get("reference_data")
    if isinstance(reference, dict):
        rows.append(("Published data", f"<code>{text(reference.get('directory'))}</code> "
                     f"(found by: {text(reference.get('found_by'))}; "
                     f"{len(reference.get('missing') or [])} file(s) missing)"))
    for key, value in ctx.items():
        if key not in _KNOWN_CONTEXT:
            shown = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
            rows.append((escape(key), f"<code>{escape(shown)}</code>"))
    body = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)

    skipped = ctx.get("skipped") or []
    if skipped:
        skipped_html = ('<table class="kv"><thead><tr><th>Skipped</th><th>Reason</th></tr></thead>'
                        "<tbody>" + "".join(
                            f"<tr><td><code>{text(s.get('name'))}</code></td>"
                            f"<td>{text(s.get('reason'))}</td></tr>" for s in skipped)
                        + "</tbody></table>")
    else:
        skipped_html = ('<p class="muted">No case or sweep was left out before the run; a run skipped as it '
                        'ran says why in the warnings and in its case.</p>')
    return (f'<section id="context"><h2>Context</h2><table class="kv">{body}</table>'
            f'<h3 id="skipped">Skipped cases and sweeps</h3>{skipped_html}</section>')


def _why_not_measured(case_runs: Sequence[Run]) -> str | None:
    """When every run of a figure's case was skipped or failed: their reasons, each said once."""
    if not case_runs or any(r.ok for r in case_runs):
        return None
    reasons: dict[str, int] = {}
    for run in case_runs:
        key = run.reason or "no reason given"
        reasons[key] = reasons.get(key, 0) + 1
    return "; ".join(f"{reason} ({_plural(n, 'run')} not ok)" for reason, n in reasons.items())


def _figure_block(result: figure_registry.FigureResult, runs: Sequence[Run],
                  sources: Sources) -> str:
    spec = result.spec
    anchor = figure_anchor(spec.key)
    if result.error:
        return (f'<p class="warn" id="{anchor}">Figure “{escape(spec.title)}” could not be drawn: '
                f"{escape(result.error)}</p>")
    case_runs = [r for r in runs if spec.case is None or r.case == spec.case]
    if result.figure is None:
        why = result.not_measured or _why_not_measured(case_runs)
        if why:
            return (f'<p class="note" id="{anchor}"><b>{escape(spec.title)}</b>: not measured here — '
                    f"{escape(why)}</p>")
        what = f"{spec.suite}.{spec.case}" if spec.case else spec.suite
        return (f'<p class="note" id="{anchor}">Figure “{escape(spec.title)}” not drawn: this run has no usable '
                f"{escape(what)} data for it.</p>")
    uri = figure_to_data_uri(result.figure)
    notes = []
    kinds = kinds_of(case_runs, spec.metrics)
    if kinds:
        notes.append("Plotted values: " + "".join(kind_badge(m, sources) for m in kinds) + ".")
    bad = [r for r in case_runs if not r.ok]
    if bad:
        counts = status_counts(bad)
        listed = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
        notes.append(f"Not plotted: {listed} run(s) — see the table for the reason.")
    return (f'<figure id="{anchor}"><img alt="{escape(spec.title)}" src="{uri}">'
            f"<figcaption><b>{escape(spec.title)}.</b> {escape(spec.caption)} "
            f"{' '.join(notes)}</figcaption></figure>")


def _table_block(spec: figure_registry.TableSpec, tables: Sequence[figure_registry.Table],
                 error: str | None) -> str:
    if error:
        return f'<p class="warn">Table “{escape(spec.title)}” could not be made: {escape(error)}</p>'
    if not tables:
        return ""
    parts = [f"<h3>{escape(spec.title)}</h3><p class=\"muted\">{escape(spec.caption)}</p>"]
    for t in tables:
        head = "<thead><tr>" + "".join(f"<th>{escape(c)}</th>" for c in t.columns) + "</tr></thead>"
        body = "".join("<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>" for row in t.rows)
        inner = f'<div class="scroll"><table class="runs sortable">{head}<tbody>{body}</tbody></table></div>'
        if t.note:
            inner += f'<p class="muted">{escape(t.note)}</p>'
        parts.append(f"<details><summary><b>{escape(t.title)}</b> "
                     f'<span class="muted">({_plural(len(t.rows), "row")})</span></summary>{inner}</details>')
    return "".join(parts)


def _suite_section(suite: str, runs: Sequence[Run], sources: Sources, context: dict | None = None) -> str:
    counts = status_counts(runs)
    parts = [f'<section id="suite-{_anchor(suite)}"><h2>Suite <code>{escape(suite)}</code></h2>',
             f'<p class="muted">{_plural(len(runs), "run")}: '
             + ", ".join(f"{n} {escape(s)}" for s, n in counts.items()) + "</p>"]
    bad = [r for r in runs if not r.ok]
    if bad:
        parts.append("<p><b>Runs not ok:</b></p><ul>" + "".join(
            f'<li>{status_badge(r.status)} <a href="#run-{r.index}"><code>{escape(r.name)}</code></a>'
            f' — <span class="reason">{escape(r.reason or "no reason given")}</span></li>'
            for r in bad) + "</ul>")

    results = figure_registry.build(suite, runs, context)
    if not results:
        parts.append(f'<p class="note">No figures are registered for suite '
                     f"<code>{escape(suite)}</code>; its runs are listed below.</p>")
    for result in results:
        parts.append(_figure_block(result, runs, sources))
        result.figure = None  # release the matplotlib figure
    for spec, tables, error in figure_registry.build_tables(suite, runs):
        parts.append(_table_block(spec, tables, error))

    parts.append("<h3>Runs</h3>")
    badge = lambda metric: kind_badge(metric, sources)  # noqa: E731
    for case, case_runs in group_by_case(runs).items():
        counts = status_counts(case_runs)
        parts.append(f'<details id="table-{_anchor(suite)}-{_anchor(case)}"><summary><b>Runs of '
                     f"<code>{escape(suite)}.{escape(case)}</code></b> "
                     f'<span class="muted">({", ".join(f"{n} {escape(s)}" for s, n in counts.items() if n)})'
                     f"</span></summary>{case_tables(case_runs, badge)}</details>")
    parts.append("</section>")
    return "".join(parts)


def _nav(suite_names: Sequence[str], with_field: bool = False) -> str:
    items = ['<li><a href="#findings">Findings</a></li>']
    if with_field:
        items.append('<li><a href="#field">Against the field</a></li>')
    items.append('<li><a href="#context">Context</a></li>')
    for suite in suite_names:
        figures = "".join(f'<li><a href="#{figure_anchor(spec.key)}">{escape(spec.title)}</a></li>'
                          for spec in figure_registry.figures_for(suite))
        items.append(f'<li><a href="#suite-{_anchor(suite)}">Suite {escape(suite)}</a>'
                     + (f"<ul>{figures}</ul>" if figures else "") + "</li>")
    return f"<nav><details><summary><b>Contents</b> (suites and their figures)</summary><ul>{''.join(items)}" \
           "</ul></details></nav>"


def render_report(results: Results, run_dir: str | None = None) -> str:
    """The whole report as an HTML string (run_dir: where profiles/*.svg of a --profile run are)."""
    sources = Sources(results.runs)
    by_suite = group_by_suite(results.runs)
    title = f"pmlab report — {results.context.get('run_id', '')}"
    badge = lambda metric: kind_badge(metric, sources)  # noqa: E731
    against = field.section(results, badge)
    sections = [_header(results), _reference_warning(results.context), findings.section(results, badge), against,
                _nav(list(by_suite), bool(against)), _legend(results, sources), _context(results.context)]
    if not by_suite:
        sections.append('<p class="note">This run has no runs.</p>')
    sections += [_suite_section(suite, runs, sources, results.context) for suite, runs in by_suite.items()]
    sections.append(profile_section(results, run_dir))
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(title)}</title><style>{CSS}</style></head><body>"
            + "\n".join(sections) + f"<script>{SORT_SCRIPT}</script></body></html>\n")
