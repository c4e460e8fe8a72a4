"""Older results.json documents brought to the current schema, so every reader sees one shape.

Version 1 stated a speed target two ways: structured `targets` and, on some runs, a bool metric `*_met`
(`target_met`, `<prefix>_target_met`, `<prefix>_met`) beside a threshold metric. Version 2 keeps only
`targets`. A version-1 run's flags are dropped; a run that had flags and no `targets` (written before
pmlab judged targets itself) gets the targets the flags stood for, read from the names the writer used:
the threshold `<prefix>_target` / `target_<prefix>` (`target` / `target_ratio` without a prefix) and the
judged metric `<prefix>`, else a ratio naming it, else the run's first comparison ratio. Such a target
has no interval: its verdict is the flag's. A flag without a threshold metric beside it states no target
and is dropped.
"""
from __future__ import annotations

import copy
from typing import Any

from .model import is_number

CURRENT_VERSION = 2


def _is_flag(name: str, metric: Any) -> bool:
    return isinstance(metric, dict) and metric.get("unit") == "bool" and (name == "target_met" or name.endswith("_met"))


def _prefix(flag: str) -> str:
    if flag == "target_met":
        return ""
    for suffix in ("_target_met", "_met"):
        if flag.endswith(suffix):
            return flag[: -len(suffix)]
    return ""


def _value(metrics: dict, name: str | None) -> float | None:
    m = metrics.get(name) if name else None
    return m.get("value") if isinstance(m, dict) and is_number(m.get("value")) else None


def _threshold_name(metrics: dict, prefix: str) -> str | None:
    names = [f"{prefix}_target", f"target_{prefix}"] if prefix else ["target", "target_ratio"]
    return next((n for n in names if _value(metrics, n) is not None), None)


def _judged_name(metrics: dict, prefix: str, flag: dict) -> str | None:
    candidates = [n for n, m in metrics.items() if isinstance(m, dict) and m.get("unit") == "ratio"
                  and "target" not in n and m.get("kind") != "published" and is_number(m.get("value"))
                  and "of_best_rounds" not in n]
    if prefix and prefix in candidates:
        return prefix
    named = [n for n in candidates if prefix and prefix in n]
    same_kind = [n for n in named if metrics[n].get("kind") == flag.get("kind")]
    if same_kind or named:
        return (same_kind or named)[0]
    if not prefix:
        vs = [n for n in candidates if "_vs_" in n or n.startswith("ratio")]
        return (vs or candidates or [None])[0]
    return None


def _targets_of_flags(metrics: dict, flags: list[str]) -> list[dict]:
    targets = []
    for name in flags:
        flag = metrics[name]
        prefix = _prefix(name)
        judged = _judged_name(metrics, prefix, flag)
        value = _value(metrics, judged)
        threshold = _value(metrics, _threshold_name(metrics, prefix))
        if threshold is None:
            continue  # a target states its threshold: a flag the run recorded none for is dropped
        met = is_number(flag.get("value")) and flag["value"] >= 0.5
        direction = "at_least"
        if value is not None and threshold is not None and value != threshold:
            direction = "at_least" if (value > threshold) == met else "at_most"
        targets.append({"metric": judged or prefix or name, "label": judged or prefix or name,
                        "threshold": threshold, "direction": direction, "value": value,
                        "verdict": "met" if met else "missed"})
    return targets


def _upgrade_run(run: dict) -> None:
    metrics = run.get("metrics")
    if not isinstance(metrics, dict):
        return
    flags = [n for n, m in metrics.items() if _is_flag(n, m)]
    if not flags:
        return
    if not run.get("targets"):
        run["targets"] = _targets_of_flags(metrics, flags)
    for n in flags:
        del metrics[n]


def upgrade(doc: dict) -> dict:
    """`doc` (a document schema.validate accepted) in the current version; the argument is left as it was."""
    if doc.get("schema_version") == CURRENT_VERSION:
        return doc
    out = copy.deepcopy(doc)
    for run in out.get("runs") or ():
        if isinstance(run, dict):
            _upgrade_run(run)
    out["schema_version"] = CURRENT_VERSION
    return out
