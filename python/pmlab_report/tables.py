"""The run table of one case: each parameter its own column, each metric's unit and kind in its header.

A column's numbers share one scale (ns or µs, Mops/s, MiB/s …) chosen from its values, so a cell holds
only digits and the header says what they are. Parameters that are the same in every run are said once
above the table instead of filling a column. Settings (thresholds, target verdicts, pinned threads,
forced flags) are listed apart from what was measured, so a reader does not take a threshold for a
result. Every cell carries its raw value (data-v) for the page's sort script.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Any, Callable, Sequence

from .model import PUBLISHED, Metric, Run, is_number, param_columns
from .units import DASH, sig

# Metrics that record how a run was set up or judged, not what it measured.
_SETTING_NAMES = {"threads_pinned", "rounds", "pmem_is_pmem_force", "region_huge_page_fraction"}
_SETTING_UNITS = {"bool", "flag"}


def is_setting(name: str, unit: str) -> bool:
    """Thresholds, verdicts and forced flags: metrics a reader must not mistake for measurements."""
    return unit in _SETTING_UNITS or name in _SETTING_NAMES or "target" in name


# --------------------------------------------------------------------------- scales

_TIME = [("ns", 1.0), ("µs", 1e3), ("ms", 1e6), ("s", 1e9)]
_TIME_IN_NS = {"ps": 1e-3, "ns": 1.0, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}
_BYTES = [("B", 1.0), ("KiB", 1024.0), ("MiB", 1024.0**2), ("GiB", 1024.0**3), ("TiB", 1024.0**4)]
_BYTES_IN_B = dict(_BYTES)
_SI = [("", 1.0), ("k", 1e3), ("M", 1e6), ("G", 1e9), ("T", 1e12)]
_SI_WORDS = {"": "", "k": "thousands", "M": "millions", "G": "billions", "T": "trillions"}


@dataclass(frozen=True)
class Scale:
    """Divide a raw value by `divisor` to show it in `unit`."""
    unit: str
    divisor: float

    def show(self, value: float) -> str:
        # A rescaled value keeps its digits (1.00 Mops/s), an unscaled integer stays one (64 B).
        return sig(value / self.divisor, keep_integers=self.divisor == 1)


def _ladder(typical: float, ladder: Sequence[tuple[str, float]], base: float) -> tuple[str, float]:
    """The largest step of `ladder` not above the typical magnitude (in the ladder's base unit)."""
    chosen = ladder[0]
    for name, size in ladder:
        if typical * base >= size:
            chosen = (name, size)
    return chosen


def column_scale(values: Sequence[float], unit: str) -> Scale:
    """One scale for a column, from the median magnitude of its non-zero values."""
    magnitudes = sorted(abs(v) for v in values if is_number(v) and v != 0)
    typical = magnitudes[len(magnitudes) // 2] if magnitudes else 0.0
    if unit in _TIME_IN_NS:
        name, size = _ladder(typical, _TIME, _TIME_IN_NS[unit])
        return Scale(name, size / _TIME_IN_NS[unit])
    if unit in _BYTES_IN_B:
        name, size = _ladder(typical, _BYTES, _BYTES_IN_B[unit])
        return Scale(name, size / _BYTES_IN_B[unit])
    if unit.endswith("/s") and unit[:-2] in _BYTES_IN_B:
        base = _BYTES_IN_B[unit[:-2]]
        name, size = _ladder(typical, _BYTES, base)
        return Scale(name + "/s", size / base)
    if unit.endswith("/s"):
        name, size = _ladder(typical, _SI, 1.0)
        return Scale(name + unit, size)
    if unit in ("", "count") and typical >= 1e4:
        name, size = _ladder(typical, _SI, 1.0)
        return Scale(f"{unit or 'value'}, {_SI_WORDS[name]}", size)
    return Scale(unit, 1.0)


# --------------------------------------------------------------------------- cells


def _param_text(value: Any) -> str:
    if value is None:
        return DASH
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _sort_key(value: Any) -> str:
    if isinstance(value, bool):
        return str(int(value))
    if is_number(value):
        return repr(float(value))
    return "" if value is None else str(value)


def _kind_key(metric: Metric) -> tuple:
    return (metric.kind, metric.model, metric.source)


@dataclass(frozen=True)
class Column:
    name: str
    scale: Scale
    uniform_kind: Metric | None  # the kind every cell shares, shown once in the header


def _columns(runs: Sequence[Run], names: Sequence[str]) -> list[Column]:
    columns = []
    for name in names:
        metrics = [r.metrics[name] for r in runs if name in r.metrics]
        units = {m.unit for m in metrics}
        kinds = {_kind_key(m): m for m in metrics if m.value is not None} or {_kind_key(metrics[0]): metrics[0]}
        uniform = next(iter(kinds.values())) if len(kinds) == 1 else None
        scale = column_scale([m.value for m in metrics], units.pop()) if len(units) == 1 \
            else Scale("mixed units", 1.0)
        columns.append(Column(name, scale, uniform))
    return columns


def _metric_cell(metric: Metric | None, column: Column, badge: Callable[[Metric], str]) -> str:
    if metric is None or not is_number(metric.value):
        return f'<td class="num" data-v="">{DASH}</td>'
    if column.scale.unit == "mixed units":
        text = escape(f"{sig(metric.value)} {metric.unit}")
    else:
        text = escape(column.scale.show(metric.value))
    if metric.at_timer_floor:
        text = ('<span class="floor" title="within 3× of the timer’s measured resolution: an upper bound, '
                f'not a measurement">≤{text}</span>')
    stats = metric.stats or {}
    if is_number(stats.get("ci_low")) and is_number(stats.get("ci_high")):
        low, high = column.scale.show(stats["ci_low"]), column.scale.show(stats["ci_high"])
        text += f' <span class="ci" title="{escape(str(stats.get("ci_level", 0.95)))} CI over ' \
                f'{escape(str(stats.get("n", "?")))} {escape(str(stats.get("over", "samples")))}">' \
                f"[{escape(low)}, {escape(high)}]</span>"
    if column.uniform_kind is None:
        text += badge(metric)
    return f'<td class="num" data-v="{_sort_key(metric.value)}">{text}</td>'


def _header(column: Column, badge: Callable[[Metric], str]) -> str:
    unit = f' <span class="unit">({escape(column.scale.unit)})</span>' if column.scale.unit else ""
    kind = badge(column.uniform_kind) if column.uniform_kind is not None else \
        ' <span class="muted" title="the cells differ in kind; each is labelled">(mixed)</span>'
    return f"<th>{escape(column.name)}{unit}{kind}</th>"


def _table(runs: Sequence[Run], params: Sequence[str], columns: Sequence[Column],
           badge: Callable[[Metric], str], with_status: bool, row_ids: bool) -> str:
    head = "".join(f"<th>{escape(p)}</th>" for p in params)
    if with_status:
        head += "<th>status</th>"
    head += "".join(_header(c, badge) for c in columns)
    body = []
    for run in runs:
        cells = [f'<td data-v="{escape(_sort_key(run.params.get(p)))}">{escape(_param_text(run.params.get(p)))}</td>'
                 for p in params]
        if with_status:
            cells.append(f'<td data-v="{escape(run.status)}"><span class="badge status-{escape(run.status)}">'
                         f"{escape(run.status)}</span></td>")
        if not run.ok and not run.metrics and columns:
            cells.append(f'<td class="reason" colspan="{len(columns)}">{escape(run.reason or DASH)}</td>')
        else:
            cells += [_metric_cell(run.metrics.get(c.name), c, badge) for c in columns]
        row_id = f' id="run-{run.index}"' if row_ids else ""
        css = "" if run.ok else f' class="{"skipped" if run.status == "skipped" else "notok"}"'
        body.append(f"<tr{row_id}{css}>{''.join(cells)}</tr>")
    return (f'<div class="scroll"><table class="runs sortable"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>")


def case_tables(runs: Sequence[Run], badge: Callable[[Metric], str]) -> str:
    """The measurements of one case's runs and, apart, their settings; HTML without the <details>."""
    params = param_columns(runs)
    constant = {p: runs[0].params.get(p) for p in params
                if len({_param_text(r.params.get(p)) for r in runs}) == 1 and len(runs) > 1}
    varying = [p for p in params if p not in constant]
    names: dict[str, str] = {}
    for run in runs:
        for name, metric in run.metrics.items():
            names.setdefault(name, metric.unit)
    measured = [n for n, u in names.items() if not is_setting(n, u)]
    settings = [n for n, u in names.items() if is_setting(n, u)]
    with_status = any(not r.ok for r in runs)
    parts = []
    if constant:
        parts.append('<p class="muted">Every run: ' + ", ".join(
            f"{escape(p)} = <code>{escape(_param_text(v))}</code>" for p, v in constant.items()) + "</p>")
    parts.append(_table(runs, varying, _columns(runs, measured), badge, with_status, row_ids=True))
    if settings:
        parts.append("<p class=\"muted\">Settings and target checks of these runs (thresholds, verdicts "
                     "as 1 = yes / 0 = no, pinned threads, forced flags, the memory's share in huge pages), "
                     "apart from the measurements:</p>")
        parts.append(_table(runs, varying, _columns(runs, settings), badge, False, row_ids=False))
    used = sorted({m.source for r in runs for m in r.metrics.values() if m.kind == PUBLISHED and m.source})
    if used:
        parts.append('<p class="muted">Published values quote: ' + "; ".join(escape(s) for s in used) + "</p>")
    return "".join(parts)


# Click a header to sort by that column; numbers numerically (data-v), a second click reverses.
SORT_SCRIPT = """
document.addEventListener('click', function (event) {
  var th = event.target.closest('table.sortable thead th');
  if (!th) return;
  var table = th.closest('table'), body = table.tBodies[0];
  var col = Array.prototype.indexOf.call(th.parentNode.children, th);
  var up = th.getAttribute('data-sort') !== 'up';
  table.querySelectorAll('thead th').forEach(function (h) { h.removeAttribute('data-sort'); });
  th.setAttribute('data-sort', up ? 'up' : 'down');
  var key = function (row) {
    var cell = row.children[col];
    if (!cell) return '';
    var raw = cell.hasAttribute('data-v') ? cell.getAttribute('data-v') : cell.textContent;
    var number = parseFloat(raw);
    return raw !== '' && isFinite(number) && String(number) !== 'NaN' && /^[-+0-9.eE]+$/.test(raw.trim()) ? number : raw;
  };
  var rows = Array.prototype.slice.call(body.rows);
  rows.sort(function (a, b) {
    var x = key(a), y = key(b);
    if (x === y) return 0;
    if (x === '') return 1;
    if (y === '') return -1;
    var order = (typeof x === 'number' && typeof y === 'number') ? x - y : String(x).localeCompare(String(y));
    return up ? order : -order;
  });
  rows.forEach(function (row) { body.appendChild(row); });
});
"""
