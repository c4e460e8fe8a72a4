"""Older results.json documents brought to the current schema, so every reader sees one shape.

Version 1 stated a speed target two ways: structured `targets` and, on some runs, a bool metric `*_met`
(`target_met`, `<prefix>_target_met`, `<prefix>_met`) beside a threshold metric. Version 2 keeps only
`targets`. A version-1 run's flags are dropped; a run that had flags and no `targets` (written before
pmlab judged targets itself) gets the targets the flags stood for, read from the names the writer used:
the threshold `<prefix>_target` / `target_<prefix>` (`target` / `target_ratio` without a prefix) and the
judged metric `<prefix>`, else a ratio naming it, else the run's first comparison ratio. Such a target
has no interval: its verdict is the flag's. A flag without a threshold metric beside it states no target
and is dropped.

Version 2 wrote the idio suite's verdicts as English prose: a `reasoning` note on each idio.classification
and idio.recommendation row, a verdict `not applicable here` and an impact class `not measured here`.
Version 3 records tokens and numbers only (the report writes the sentences, idio_sentences.py): the verdict
`not_applicable`, the class `not_measured`, `pool_emulated`, the thresholds `present_at` and `specific_at`,
and why a verdict is not applicable (`not_applicable_because`, `skip_reason`), read here from the prose
(whether the pool was emulated, where the prose does not say, from context.pool as the writer read it).
"""
from __future__ import annotations

import copy
from typing import Any

from .model import is_number

CURRENT_VERSION = 3

# The thresholds of the idio verdicts; every version-2 writer used these.
_PRESENT_AT, _SPECIFIC_AT = "1.2", "1.25"
# Version-2 prose of a verdict that is not applicable, by the cause it names.
_NOT_APPLICABLE_PROSE = (("no successful run measured", "no_pool_runs"), ("no local/remote pair", "no_paired_runs"),
                         ("media counters", "no_media_counters"))


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


def _not_applicable_cause(reasoning: str) -> dict[str, str]:
    prefix, suffix = "Not applicable here: ", " [PMIdioBench] attributes"
    why = reasoning[len(prefix):].split(suffix)[0] if reasoning.startswith(prefix) else ""
    for prose, cause in _NOT_APPLICABLE_PROSE:
        if prose in why:
            return {"not_applicable_because": cause}
    if not why:
        return {"not_applicable_because": "no_pool_runs"}
    return {"not_applicable_because": "runs_skipped", "skip_reason": why.rstrip(".")}


def _upgrade_idio_row(run: dict, pool_emulated: bool) -> None:
    notes = run.get("notes")
    if run.get("suite") != "idio" or not isinstance(notes, dict):
        return
    if run.get("case") == "classification":
        reasoning = notes.pop("reasoning", "")
        if notes.get("verdict") == "not applicable here":
            notes["verdict"] = "not_applicable"
            notes.update(_not_applicable_cause(reasoning))
        # A present verdict's prose says whether the writer took the pool as emulated; the others say nothing.
        emulated = "the pool is emulated" in reasoning if notes.get("verdict") == "present" else pool_emulated
        notes.setdefault("pool_emulated", "yes" if emulated else "no")
        notes.setdefault("present_at", _PRESENT_AT)
        notes.setdefault("specific_at", _SPECIFIC_AT)
    elif run.get("case") == "recommendation":
        notes.pop("reasoning", None)
        if notes.get("impact_class") == "not measured here":
            notes["impact_class"] = "not_measured"


def upgrade(doc: dict) -> dict:
    """`doc` (a document schema.validate accepted) in the current version; the argument is left as it was."""
    version = doc.get("schema_version")
    if version == CURRENT_VERSION:
        return doc
    out = copy.deepcopy(doc)
    pool = (out.get("context") or {}).get("pool")
    pool_emulated = isinstance(pool, dict) and pool.get("medium") == "emulated"
    for run in out.get("runs") or ():
        if not isinstance(run, dict):
            continue
        if version == 1:
            _upgrade_run(run)
        _upgrade_idio_row(run, pool_emulated)
    out["schema_version"] = CURRENT_VERSION
    return out
