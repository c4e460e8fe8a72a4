"""In-memory model of a validated results document.

Light frozen dataclasses plus pure helpers to group runs by suite and case and
to look at runs as a table whose columns are the parameters.
"""

from __future__ import annotations

import math

from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

MEASURED, MODELLED, PUBLISHED = "measured", "modelled", "published"


@dataclass(frozen=True)
class Metric:
    value: float | None
    unit: str
    kind: str
    model: str | None = None    # set when kind == "modelled"
    source: str | None = None   # set when kind == "published"
    # Repetitions or rounds behind the value (then their median): n, samples, ci_low, ci_high, over …
    stats: dict[str, Any] | None = None
    # A latency within a few timer steps of the measured resolution: an upper bound, not a value.
    at_timer_floor: bool = False

    def samples(self) -> list[float]:
        """The repetitions' values when the run kept them, else the value alone (or nothing)."""
        raw = (self.stats or {}).get("samples") or []
        kept = [float(v) for v in raw if is_number(v)]
        if kept:
            return kept
        return [float(self.value)] if is_number(self.value) else []


@dataclass(frozen=True)
class Run:
    index: int                  # position in results.json's runs array
    name: str
    suite: str
    case: str
    params: dict[str, Any]
    status: str
    reason: str | None
    metrics: dict[str, Metric]
    config_hash: str | None = None
    histogram: dict | None = None
    notes: dict[str, str] = field(default_factory=dict)  # text of derived rows (verdicts, reasoning)
    # Lists a run carries besides its metrics: a crash run's "failures", a mutation run's "mutants".
    extra: dict[str, Any] = field(default_factory=dict)
    # Structured speed targets judged by the runner: metric, label, threshold, direction, value, verdict …
    targets: tuple[dict[str, Any], ...] = ()

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def value(self, metric: str) -> float | None:
        """The metric's value, or None when absent or null."""
        m = self.metrics.get(metric)
        return None if m is None else m.value

    def verdict(self, metric: str) -> str | None:
        """The runner's verdict on `metric` (met, missed or unclear), None when no target judged it. A
        metric held to a range carries two targets: missed when either is, met when both are."""
        verdicts = {str(t.get("verdict")) for t in self.targets if t.get("metric") == metric}
        for v in ("missed", "unclear", "met"):
            if v in verdicts:
                return v
        return None

    def threshold(self, metric: str) -> float | None:
        """The threshold of the runner's target on `metric`, None when no target judged it (a metric held to a
        range has two: the first is given)."""
        for t in self.targets:
            if t.get("metric") == metric and isinstance(t.get("threshold"), (int, float)):
                return float(t["threshold"])
        return None

    def param(self, key: str, default: Any = None) -> Any:
        return self.params.get(key, default)


@dataclass(frozen=True)
class Results:
    schema_version: int
    pmlab_version: str
    context: dict[str, Any]
    runs: tuple[Run, ...] = field(default_factory=tuple)
    # Plausibility rules and cross-checks the runner judged over the whole run.
    checks: tuple[dict[str, Any], ...] = ()


EXTRA_LISTS = ("failures", "mutants", "findings")
EXTRA_OBJECTS = ("trace",)  # crash exec: the traced run behind a run (its files, its notes)


def metric_from_dict(raw: dict) -> Metric:
    stats = raw.get("stats")
    return Metric(value=raw.get("value"), unit=raw.get("unit", ""), kind=raw["kind"],
                  model=raw.get("model"), source=raw.get("source"),
                  stats=stats if isinstance(stats, dict) else None,
                  at_timer_floor=raw.get("at_timer_floor") is True)


def run_from_dict(index: int, raw: dict) -> Run:
    return Run(
        index=index,
        name=raw["name"],
        suite=raw["suite"],
        case=raw["case"],
        params=dict(raw.get("params") or {}),
        status=raw["status"],
        reason=raw.get("reason"),
        metrics={k: metric_from_dict(v) for k, v in (raw.get("metrics") or {}).items()},
        config_hash=raw.get("config_hash"),
        histogram=raw.get("histogram"),
        notes=dict(raw.get("notes") or {}),
        extra={**{k: raw[k] for k in EXTRA_LISTS if isinstance(raw.get(k), list)},
               **{k: raw[k] for k in EXTRA_OBJECTS if isinstance(raw.get(k), dict)}},
        targets=tuple(t for t in raw.get("targets") or () if isinstance(t, dict)),
    )


def from_document(doc: dict) -> Results:
    """Build the model from a document that schema.load() returned (validated, in the current version)."""
    return Results(
        schema_version=doc["schema_version"],
        pmlab_version=doc.get("pmlab_version", ""),
        context=doc.get("context") or {},
        runs=tuple(run_from_dict(i, r) for i, r in enumerate(doc.get("runs") or [])),
        checks=tuple(c for c in doc.get("checks") or () if isinstance(c, dict)),
    )


# --------------------------------------------------------------------------- grouping


def group_by(runs: Iterable[Run], attr: str) -> dict[str, list[Run]]:
    """Runs grouped by an attribute, groups in order of first appearance."""
    groups: dict[str, list[Run]] = {}
    for run in runs:
        groups.setdefault(getattr(run, attr), []).append(run)
    return groups


def group_by_suite(runs: Iterable[Run]) -> dict[str, list[Run]]:
    return group_by(runs, "suite")


def group_by_case(runs: Iterable[Run]) -> dict[str, list[Run]]:
    return group_by(runs, "case")


def select(runs: Iterable[Run], *, case: str | None = None, ok_only: bool = True,
           **params: Any) -> list[Run]:
    """Runs of `case` (any case when None) whose params equal the given ones."""
    chosen = []
    for run in runs:
        if case is not None and run.case != case:
            continue
        if ok_only and not run.ok:
            continue
        if any(run.params.get(k) != v for k, v in params.items()):
            continue
        chosen.append(run)
    return chosen


def status_counts(runs: Iterable[Run]) -> dict[str, int]:
    counts = {"ok": 0, "error": 0, "skipped": 0}
    for run in runs:
        counts[run.status] = counts.get(run.status, 0) + 1
    return counts


# --------------------------------------------------------------------------- tabular view


def _union_in_order(keys: Iterable[Iterable[str]]) -> list[str]:
    seen: dict[str, None] = {}
    for group in keys:
        for key in group:
            seen.setdefault(key, None)
    return list(seen)


def param_columns(runs: Sequence[Run]) -> list[str]:
    """Every parameter used by `runs`, in first-seen (i.e. the case's) order."""
    return _union_in_order(run.params for run in runs)


def metric_columns(runs: Sequence[Run]) -> list[str]:
    """Every metric reported by `runs`, in first-seen order."""
    return _union_in_order(run.metrics for run in runs)


def rows(runs: Sequence[Run], metrics: Sequence[str] = ()) -> list[dict[str, Any]]:
    """Runs as flat rows: params as columns, plus name, status and the requested metric values."""
    columns = param_columns(runs)
    table = []
    for run in runs:
        row = {key: run.params.get(key) for key in columns}
        row["name"] = run.name
        row["status"] = run.status
        for metric in metrics:
            row[metric] = run.value(metric)
        table.append(row)
    return table


def distinct(runs: Iterable[Run], key: str, preferred: Sequence[Any] = ()) -> list[Any]:
    """Distinct values of param `key`: those in `preferred` first (in that order), then the rest
    sorted (numbers numerically, everything else as text)."""
    values = {run.params.get(key) for run in runs if key in run.params}
    head = [v for v in preferred if v in values]
    rest = [v for v in values if v not in head]
    numbers = sorted(v for v in rest if isinstance(v, (int, float)) and not isinstance(v, bool))
    others = sorted((v for v in rest if v not in numbers), key=str)
    return head + numbers + others


def unit_of(runs: Iterable[Run], metric: str) -> str | None:
    """The metric's unit when all runs agree on it, else None."""
    units = {run.metrics[metric].unit for run in runs if metric in run.metrics}
    return units.pop() if len(units) == 1 else None


def kinds_of(runs: Iterable[Run], metrics: Iterable[str]) -> list[Metric]:
    """One representative Metric per distinct (kind, model, source) among the given metrics."""
    wanted = set(metrics)
    found: dict[tuple, Metric] = {}
    for run in runs:
        for name, m in run.metrics.items():
            if name in wanted and m.value is not None:
                found.setdefault((m.kind, m.model, m.source), m)
    order = {MEASURED: 0, MODELLED: 1, PUBLISHED: 2}
    return sorted(found.values(), key=lambda m: (order.get(m.kind, 3), m.model or "", m.source or ""))


def is_number(value: Any) -> bool:
    """A finite number (not a bool, not None, not NaN): what a metric's value must be to be drawn."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
