""""On this machine, use": the winner of each design decision, from the runs of this results file.

A decision names a case, the parameter(s) whose values compete (the contenders), their options (a
writer's padding, a structure's persistence mode: each contender is taken at its best option, which the
answer names), the parameter the answer depends on (one row per value), parameters pinned to one value
(the run-wide default, one thread …) and parameters the answer is aggregated over (geometric mean of the
contender's medians). Any other parameter that still varies within a row becomes an option too, so
nothing is averaged silently.

Only real choices compete. A design that lacks what the decision requires (the volatile PTM promises
nothing after a crash) is a reference: its median is shown beside the answer, and it never wins. A design
that fits only some uses (the array indexes dense integer keys only) is excluded from the general decision
and gets one of its own, as a challenger set against the best of the others.

The ratio winner / runner-up is the ratio of their (aggregated) medians. Its 95 % confidence interval is
bootstrapped: each side's samples (the metric's `stats.samples`: repetitions or rounds) are resampled
independently, 2000 times, with a fixed seed, so a report is reproducible. A point with a single sample
has no interval: the text says so rather than pretending to one.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from .model import Run, is_number

RESAMPLES = 2000
SEED = 20261124
CI_LEVEL = 0.95


@dataclass(frozen=True)
class Reference:
    """A design shown beside each answer, never among the contenders."""
    contender: tuple[Any, ...]         # its values of the decision's contenders: ("volatile",)
    why: str                           # what it lacks: "no failure atomicity"


@dataclass(frozen=True)
class Decision:
    question: str                      # "Log writer, by entry size"
    suite: str
    case: str
    metric: str
    metric_label: str                  # "appends/s"
    contenders: tuple[str, ...]        # parameters whose value combinations compete
    options: tuple[str, ...] = ()      # a contender's settings: each contender runs at its best option
    by: tuple[str, ...] = ()           # one answer per value of these
    aggregate: tuple[str, ...] = ()    # geometric mean over these
    fixed: dict[str, Any] = field(default_factory=dict)  # param -> value, or a chooser of the values
    only: dict[str, tuple] = field(default_factory=dict)  # param -> the values taken into account
    exclude: dict[str, tuple] = field(default_factory=dict)  # param -> values left out
    challenger: tuple[Any, ...] = ()   # a contender set against the best of the others, win or lose
    reference: Reference | None = None
    note: str = ""                     # why the contenders are these, for the reader
    figure: str = ""                   # registry key of the figure that shows the evidence


def _smallest(values: Sequence[Any]) -> Any:
    return min(values)


def _prefer(*preferred: Any) -> Callable[[Sequence[Any]], Any]:
    def choose(values: Sequence[Any]) -> Any:
        for value in preferred:
            if value in values:
                return value
        return sorted(values, key=str)[0]
    return choose


def decisions(context: dict) -> list[Decision]:
    """The decisions a reader of a pmlab report asks about, pinned to this run's defaults."""
    domain = context.get("durability_domain") or "adr"
    flush = context.get("flush_instruction") or "clwb"
    common = {"threads": _smallest, "medium": _prefer("pool"), "domain": _prefer(domain),
              "flush": _prefer(flush)}
    ycsb = {**common, "breakdown": _prefer("none")}
    crash_consistent = {"mode": ("persist", "tx", "pmdk")}
    return [
        Decision("Log writer, by entry size", "primitives", "log_append", "throughput", "appends/s",
                 contenders=("writer",), options=("padding", "stores"), by=("size",), fixed=common,
                 figure="primitives.log_throughput"),
        Decision("Page flusher, by dirty lines per page", "primitives", "page_flush", "throughput",
                 "page flushes/s", contenders=("flusher",), by=("dirty",),
                 fixed={**common, "page": _prefer(4096)}, figure="primitives.page_flush"),
        Decision("Crash-consistent map for any keys, by YCSB workload", "ds", "ycsb", "throughput", "ops/s",
                 contenders=("structure",), options=("mode",), by=("workload",), fixed=ycsb,
                 only=crash_consistent, exclude={"structure": ("array",)},
                 note="the array is left out: it indexes dense integer keys only", figure="ds.throughput"),
        Decision("Dense integer keys: the array or the best map, by YCSB workload", "ds", "ycsb", "throughput",
                 "ops/s", contenders=("structure",), options=("mode",), by=("workload",), fixed=ycsb,
                 only=crash_consistent, challenger=("array",),
                 note="the array (one slot per key 0 … N−1) against the fastest map", figure="ds.throughput"),
        Decision("PTM, by durability domain", "ptm", "tx", "throughput", "transactions/s",
                 contenders=("ptm",), by=("durability",), aggregate=("workload",),
                 fixed={"threads": _smallest}, reference=Reference(("volatile",), "no failure atomicity"),
                 note="failure-atomic designs only", figure="ptm.throughput"),
        Decision("Flush instruction on the pool, by persist size", "core", "persist", "throughput", "persists/s",
                 contenders=("flush",), by=("size",), aggregate=("pattern",),
                 fixed={"threads": _smallest, "medium": _prefer("pool"), "domain": _prefer(domain)},
                 figure="core.persist_latency"),
    ]


# --------------------------------------------------------------------------- answers


@dataclass
class Answer:
    by: dict[str, Any]                  # the row's values of the `by` parameters
    winner: str
    runner_up: str | None
    winner_value: float
    runner_up_value: float | None
    ratio: float | None                 # winner / runner-up (higher-is-better metrics)
    ci: tuple[float, float] | None      # bootstrapped, or None: one sample
    samples: tuple[int, int] = (1, 1)   # fewest samples behind a cell of the winner, of the runner-up
    contenders: int = 0
    reference: tuple[str, float] | None = None  # the decision's reference: its label, its (aggregated) median


@dataclass
class Outcome:
    decision: Decision
    compared: str = ""                  # what was held fixed, in words
    answers: list[Answer] = field(default_factory=list)
    missing: str | None = None          # why there is no answer


def _label(contender: dict[str, Any], option: dict[str, Any]) -> str:
    name = " ".join(str(v) for v in contender.values())
    return name + (f" ({', '.join(f'{k} {v}' for k, v in option.items())})" if option else "")


def _geomean(values: Sequence[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def bootstrap_ratio(winner: Sequence[Sequence[float]], runner: Sequence[Sequence[float]],
                    resamples: int = RESAMPLES, seed: int = SEED) -> tuple[float, float] | None:
    """95 % percentile interval of geomean(medians of winner cells) / geomean(medians of runner cells),
    resampling every cell's samples independently; None when a cell has a single sample."""
    if any(len(cell) < 2 for cell in (*winner, *runner)):
        return None
    import numpy as np

    rng = np.random.default_rng(seed)

    def resampled_geomean(cells: Sequence[Sequence[float]]):
        logs = []
        for cell in cells:
            data = np.asarray(cell, dtype=float)
            picks = rng.integers(0, len(data), size=(resamples, len(data)))
            logs.append(np.log(np.median(data[picks], axis=1)))
        return np.exp(np.mean(logs, axis=0))

    ratios = resampled_geomean(winner) / resampled_geomean(runner)
    tail = (1 - CI_LEVEL) / 2 * 100
    low, high = np.percentile(ratios, [tail, 100 - tail])
    return float(low), float(high)


def _values(runs: Sequence[Run], key: str) -> list[Any]:
    seen: dict[str, Any] = {}
    for run in runs:
        if key in run.params:
            seen.setdefault(repr(run.params[key]), run.params[key])
    return list(seen.values())


def _sorted(values: Sequence[Any]) -> list[Any]:
    numbers = sorted(v for v in values if is_number(v))
    return numbers + sorted((v for v in values if not is_number(v)), key=str)


def decide(decision: Decision, all_runs: Sequence[Run]) -> Outcome:
    outcome = Outcome(decision)
    runs = [r for r in all_runs if r.suite == decision.suite and r.case == decision.case and r.ok
            and is_number(r.value(decision.metric)) and r.value(decision.metric) > 0]
    runs = [r for r in runs if all(r.params.get(k) in allowed for k, allowed in decision.only.items())
            and not any(r.params.get(k) in left_out for k, left_out in decision.exclude.items())]
    if not runs:
        outcome.missing = f"no successful {decision.suite}.{decision.case} runs in this results file"
        return outcome
    pinned: dict[str, Any] = {}
    for key, rule in decision.fixed.items():
        values = _values(runs, key)
        if not values:
            continue
        pinned[key] = rule(values) if callable(rule) else rule
        runs = [r for r in runs if r.params.get(key) == pinned[key]]
    if not runs:
        outcome.missing = "no run matches " + ", ".join(f"{k} {v}" for k, v in pinned.items())
        return outcome
    if decision.challenger and not any(_contender(decision, r) == decision.challenger for r in runs):
        outcome.missing = f"no {' '.join(map(str, decision.challenger))} run to set against the others"
        return outcome
    # What the contenders vary and hold is theirs alone: the reference's own settings name nothing.
    competing = [r for r in runs if not _is_reference(decision, r)] or runs
    named = set(decision.contenders) | set(decision.by) | set(decision.aggregate) | set(pinned)
    others = [k for k in _params_in_order(competing) if k not in named]
    varying = [k for k in others if len(_values(competing, k)) > 1]
    constant = {k: competing[0].params.get(k) for k in others if k not in varying}
    option_keys = [k for k in decision.options if k in _params_in_order(competing)] + varying
    held = {**pinned, **constant}
    outcome.compared = (f"{decision.suite}.{decision.case}, {decision.metric} ({decision.metric_label}); "
                        + (", ".join(f"{k} {v}" for k, v in held.items()) or "no parameter pinned")
                        + (f"; geometric mean over {', '.join(decision.aggregate)}" if decision.aggregate else "")
                        + (f"; {decision.note}" if decision.note else ""))

    groups: dict[tuple, list[Run]] = {}
    for run in runs:
        groups.setdefault(tuple(run.params.get(k) for k in decision.by), []).append(run)
    order = {key: i for i, key in enumerate(
        sorted(groups, key=lambda key: [(0, v, "") if is_number(v) else (1, 0, str(v)) for v in key]))}
    for key in sorted(groups, key=order.get):
        answer = _answer(decision, dict(zip(decision.by, key)), groups[key], option_keys)
        if answer is not None:
            outcome.answers.append(answer)
    if not outcome.answers:
        outcome.missing = "fewer than two contenders were measured on the same points"
    return outcome


def _contender(decision: Decision, run: Run) -> tuple:
    return tuple(run.params.get(k) for k in decision.contenders)


def _is_reference(decision: Decision, run: Run) -> bool:
    return decision.reference is not None and _contender(decision, run) == decision.reference.contender


def _params_in_order(runs: Sequence[Run]) -> list[str]:
    keys: dict[str, None] = {}
    for run in runs:
        for key in run.params:
            keys.setdefault(key, None)
    return list(keys)


def _answer(decision: Decision, by: dict[str, Any], runs: Sequence[Run], option_keys: Sequence[str]) -> Answer | None:
    # Options that do not vary in this row (a PTM's medium follows its durability domain) name nothing.
    competing = [r for r in runs if not _is_reference(decision, r)]
    option_keys = [k for k in option_keys if len(_values(competing, k)) > 1]
    cells: dict[tuple, dict[tuple, list[float]]] = {}
    reference_cells: dict[tuple, dict[tuple, list[float]]] = {}
    for run in runs:
        who = (_contender(decision, run), tuple(run.params.get(k) for k in option_keys))
        point = tuple(run.params.get(k) for k in decision.aggregate)
        into = reference_cells if _is_reference(decision, run) else cells
        into.setdefault(who, {}).setdefault(point, []).extend(run.metrics[decision.metric].samples())
    # Contenders are compared on the points they all share, so none wins by missing a hard one.
    shared = set.intersection(*(set(points) for points in cells.values())) if cells else set()
    contenders = {who[0] for who in cells}
    if len(contenders) < 2 or not shared:
        return None
    points = sorted(shared, key=str)
    scores = {who: _geomean([statistics.median(cells[who][p]) for p in points]) for who in cells}
    best: dict[tuple, tuple] = {}
    for who, score in scores.items():
        if who[0] not in best or score > scores[best[who[0]]]:
            best[who[0]] = who
    if decision.challenger:
        if decision.challenger not in best:
            return None
        rival = max((who for c, who in best.items() if c != decision.challenger), key=scores.get)
        ranked = sorted((best[decision.challenger], rival), key=scores.get, reverse=True)
    else:
        ranked = sorted(best.values(), key=scores.get, reverse=True)
    winner, runner = ranked[0], ranked[1]
    win_cells = [cells[winner][p] for p in points]
    run_cells = [cells[runner][p] for p in points]

    def name(who: tuple) -> str:
        return _label(dict(zip(decision.contenders, who[0])), dict(zip(option_keys, who[1])))

    # The reference is measured on the contenders' points, or not shown: a median over other points
    # would not be comparable.
    reference_scores = {who: _geomean([statistics.median(by_point[p]) for p in points])
                        for who, by_point in reference_cells.items() if all(p in by_point for p in points)}
    reference = None
    if reference_scores:
        who = max(reference_scores, key=reference_scores.get)
        reference = (f"{name(who)} ({decision.reference.why}, reference)", reference_scores[who])

    return Answer(by=by, winner=name(winner), runner_up=name(runner), winner_value=scores[winner],
                  runner_up_value=scores[runner], ratio=scores[winner] / scores[runner],
                  ci=bootstrap_ratio(win_cells, run_cells),
                  samples=(min(len(c) for c in win_cells), min(len(c) for c in run_cells)),
                  contenders=len(contenders), reference=reference)


def answer_all(context: dict, runs: Sequence[Run]) -> list[Outcome]:
    return [decide(d, runs) for d in decisions(context)]
