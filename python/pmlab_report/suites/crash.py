"""Figures of crash testing (`pmlab crash`) and of the simulator's cost (`pmlab run crash`).

Reads:
  crash.<design>  params domain, granularity; metrics states_checked, failures, states_per_second,
                  state_space, coverage, exhaustive_points, crash_points, deviation_depth
  crash.<design>  params test=mutation; metrics sites, mutants, killed, equivalent, survivors,
                  mutation_score, strict_mutation_score, equivalent_redundant_calls; list "mutants" (site,
                  function, call, mutation, killed, equivalent, equivalent_because)
  crash.cost      params design, domain, granularity; metrics tracking_slowdown, states_per_second
  crash.designs   derived rows (pmlab run with the crash suite): params design; notes family, role,
                  description, domains, tests — every registered persistent design, whatever was tested
  crash.exec:<program>  (pmlab crash exec) params domain, granularity, schedule (past the program's own,
                  with --schedules); metrics as a design's, plus fences,
                  traced_seconds; lists "failures" (stack, lines, checker output), "findings", "trace"
  crash.exec_cost params map, inserts; metrics native_seconds, traced_seconds, tracing_slowdown,
                  native_us_per_insert, traced_us_per_insert, valgrind_none_seconds, valgrind_none_slowdown,
                  traced_vs_valgrind_none, valgrind_none_us_per_insert, traced_vs_valgrind_none_per_insert,
                  states_per_second; note "valgrind"
"""

from __future__ import annotations

from typing import Sequence

from matplotlib.figure import Figure

from ..figures import NotMeasured, Table, figure, table
from ..model import Run
from ..units import compact

PASS_COLOR, FAIL_COLOR = "#2ca02c", "#d62728"


def _label(run: Run) -> str:
    return f"{run.case} · {run.param('domain')} · {run.param('granularity')}"


def _is_mutation(run: Run) -> bool:
    return run.param("test") == "mutation"


def _family(run: Run) -> str:
    return run.case.split(".", 1)[0]


def _is_exec(run: Run) -> bool:
    """A run of `pmlab crash exec`: a program of the user's own, not a registered design."""
    return run.case.startswith("exec:")


def _exec_run(run: Run) -> str:
    """The traced run an exec row comes from: its domain, and its schedule past the program's own."""
    schedule = run.param("schedule")
    return str(run.param("domain")) + ("" if schedule is None else f", schedule {schedule}")


def _is_crash_test(run: Run) -> bool:
    """A crash-simulator run of one design (`pmlab crash`): not the cost case, the design list, or mutation."""
    return (run.case not in ("cost", "designs", "exec_cost") and not _is_mutation(run) and not _is_exec(run)
            and "domain" in run.params)


def _by_family(runs: Sequence[Run]) -> dict[str, list[Run]]:
    out: dict[str, list[Run]] = {}
    for r in sorted(runs, key=lambda r: (_family(r), r.name)):
        out.setdefault(_family(r), []).append(r)
    return out


def _count(value: float | None) -> str:
    return "–" if value is None else f"{value:,.0f}"


def _space(value: float | None) -> str:
    if value is None:
        return "–"
    if value < 1e6:
        return f"{value:,.0f}"
    exponent = len(f"{value:.0f}") - 1 if value < 1e300 else 300
    return f"≥ 10^{exponent}" if value >= 1e300 else f"{value / 10 ** exponent:.1f}·10^{exponent}"


@figure("crash", title="Crash states explored per design",
        caption="Crash states checked with the design's own recovery, per design, durability domain and crash "
                "granularity (line, or torn 8-byte words). Red bars had failures; the label gives failures and "
                "states checked per second. Measured in this run.",
        metrics=("states_checked", "failures", "states_per_second"))
def states_per_design(runs: Sequence[Run]) -> Figure | None:
    tested = [r for r in runs if r.case != "cost" and not _is_mutation(r) and not _is_exec(r)
              and r.value("states_checked") is not None]
    if not tested:
        if any(r.case == "cost" for r in runs):
            return NotMeasured("no design was crash-tested in this run, only the simulator's cost was measured "
                               "(pmlab run crash tests every registered design)")
        return None
    tested.sort(key=_label)
    fig = Figure(figsize=(9.0, 0.9 + 0.32 * len(tested)), layout="constrained")
    ax = fig.subplots()
    ys = range(len(tested))
    values = [r.value("states_checked") or 0 for r in tested]
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


@table("crash", title="Crash-state coverage",
       caption="Per design, domain and granularity (line: cache lines persist whole; word: aligned 8-byte words; "
               "byte: plain stores tear byte by byte). State space: crash states of every crash point together; "
               "exhaustive: crash points whose every state was checked; depth: the shallowest whole-line "
               "deviation level complete at a point not covered exhaustively; kinds of failure: failures at the same "
               "site that persisted the same pieces and broke the same property, but for their numbers, are one "
               "kind. Measured in this run.")
def coverage_tables(runs: Sequence[Run]) -> list[Table]:
    tested = [r for r in runs if r.case != "cost" and not _is_mutation(r) and not _is_exec(r)
              and r.value("states_checked") is not None]
    tables = []
    for family, members in _by_family(tested).items():
        rows = []
        for r in members:
            coverage = r.value("coverage")
            rows.append((r.case, str(r.param("domain")), str(r.param("granularity")), _count(r.value("states_checked")),
                         _space(r.value("state_space")), "–" if coverage is None else f"{100 * coverage:.3g}",
                         f"{_count(r.value('exhaustive_points'))} / {_count(r.value('crash_points'))}",
                         _count(r.value("deviation_depth")), _count(r.value("recovery_states_checked")),
                         _count(r.value("failures")), _count(r.value("failure_kinds")),
                         _count(r.value("states_per_second"))))
        tables.append(Table(title=f"{family} ({len(members)} runs)",
                            columns=("design", "domain", "granularity", "states checked (count)", "state space (count)",
                                     "coverage (%)", "exhaustive / crash points", "depth (lines)",
                                     "recovery states (count)", "failures (count)", "kinds of failure (count)",
                                     "speed (states/s)"),
                            rows=tuple(rows), collapsed=True))
    return tables


@table("crash", title="Mutation score",
       caption="pmlab crash --mutate: each persistence call site of a design removed or weakened in turn (a flush or "
               "fence dropped, non-temporal stores made cached stores, an 8-byte atomic store made two plain halves); "
               "killed: the simulator failed the mutant. Equivalent: the mutant never changed what a crash could "
               "leave, so nothing could kill it; not counted in the score (killed / counted), counted as not killed "
               "in the strict score (killed / all mutants). Measured in this run.")
def mutation_tables(runs: Sequence[Run]) -> list[Table]:
    mutated = [r for r in runs if _is_mutation(r)]
    if not mutated:
        return []
    tables = []
    total_killed = total_counted = total_all = 0.0
    for family, members in _by_family(mutated).items():
        rows = []
        for r in members:
            if not r.ok:
                rows.append((r.case, "–", "–", "–", "–", "–", "–", r.reason or "error"))
                continue
            mutants = r.value("mutants") or 0
            killed, counted = r.value("killed") or 0, mutants - (r.value("equivalent") or 0)
            total_killed += killed
            total_counted += counted
            total_all += mutants
            score = r.value("mutation_score")
            strict = r.value("strict_mutation_score")
            if strict is None and mutants:
                strict = killed / mutants  # files written before the strict score was recorded
            rows.append((r.case, _count(r.value("sites")), _count(counted), _count(killed), _count(r.value("equivalent")),
                         _count(r.value("survivors")), "–" if score is None else f"{100 * score:.0f}",
                         "–" if strict is None else f"{100 * strict:.0f}"))
        tables.append(Table(title=f"{family}", columns=("design", "sites (count)", "mutants (count)", "killed (count)",
                                                       "equivalent (count)", "survivors (count)", "score (%)",
                                                       "strict score (%)"),
                            rows=tuple(rows)))
    survivors = []
    for r in mutated:
        for m in r.extra.get("mutants", []):
            if not m.get("killed") and not m.get("equivalent"):
                survivors.append((r.case, str(m.get("site")), str(m.get("function")), str(m.get("call")),
                                  str(m.get("mutation")), ", ".join(m.get("survived_in") or [])))
    overall = f"Overall: {total_killed:.0f} of {total_counted:.0f} counted mutants killed"
    if total_counted:
        overall += f" ({100 * total_killed / total_counted:.1f}%)"
    if total_all:
        overall += f"; strict: {total_killed:.0f} of all {total_all:.0f} ({100 * total_killed / total_all:.1f}%)"
    overall += "."
    tables.append(Table(title=f"Survivors ({len(survivors)})",
                        columns=("design", "site", "function", "call", "mutation", "survived in (domain/granularity)"),
                        rows=tuple(survivors), note=overall, collapsed=len(survivors) > 12))
    equivalent = []
    for r in mutated:
        for m in r.extra.get("mutants", []):
            if m.get("equivalent"):
                because = m.get("equivalent_because")
                why, what = _EQUIVALENT_BECAUSE.get(because, (because or "not recorded", "–"))
                equivalent.append((r.case, str(m.get("site")), str(m.get("function")), str(m.get("call")), why, what))
    if equivalent:
        tables.append(Table(title=f"Equivalent mutants ({len(equivalent)}), by reason",
                            columns=("design", "site", "function", "call", "why no crash could differ", "what it is"),
                            rows=tuple(sorted(equivalent, key=lambda row: (row[5] != "redundant call", row[5], row[4], row[0]))),
                            note="A redundant call is a performance finding: the design's call had nothing to do on "
                                 "every crash state explored. A store on this stream is a limit of the operation "
                                 "stream, not of the design.", collapsed=len(equivalent) > 12))
    return tables


# equivalent_because (results.json) -> (why, what it is)
_EQUIVALENT_BECAUSE = {
    "nothing_to_order": ("a fence with nothing to order", "redundant call"),
    "nothing_to_write_back": ("a flush of lines with nothing pending", "redundant call"),
    "written_back_again": ("its lines written back again before the fence", "redundant call"),
    "below_2_32": ("every value stored stayed below 2^32", "on this stream"),
    "one_half": ("every store changed one half of the word", "on this stream"),
    "volatile_word": ("a word declared volatile", "not persistent"),
}


def _crash_status(tested: Sequence[Run]) -> str:
    """One design's crash runs in these results, said in a cell: passed / failed, where, and how much was checked."""
    if not tested:
        return "not crash-tested in this run"
    failed = [r for r in tested if not r.ok or (r.value("failures") or 0) > 0]
    states = sum(r.value("states_checked") or 0 for r in tested)
    where = ", ".join(sorted({f"{r.param('domain')}/{r.param('granularity')}" for r in (failed or tested)}))
    if failed:
        failures = sum(r.value("failures") or 0 for r in failed)
        return f"FAILED in {where}: {failures:,.0f} failing crash states ({len(failed)} of {len(tested)} runs)"
    return f"passed in {where}: {states:,.0f} crash states, no failure"


@table("crash", title="Persistent designs and their crash-test status (cf. [PMIdioBench] Table 3)",
       caption="Every persistent design pmlab has registered with the crash simulator (the list is written into "
               "results.json by the crash suite's summary; deliberately broken twins left out), with its family, "
               "the durability domains it claims, and its crash-test status from the crash runs in these results "
               "(`pmlab crash`, whose results hold one run per design, domain and granularity); a design without "
               "one reads 'not crash-tested in this run'. [PMIdioBench] Table 3 lists its lock-free designs and "
               "their guarantees; this is pmlab's counterpart for all of its designs. Simulator test programs "
               "(corpus, selftest) are the correct twins of the bug shapes that test the simulator itself.")
def design_table(runs: Sequence[Run]) -> list[Table]:
    listed = [r for r in runs if r.case == "designs" and r.ok and r.param("design")]
    tests: dict[str, list[Run]] = {}
    for r in runs:
        if _is_crash_test(r):
            tests.setdefault(r.case, []).append(r)
    if not listed and not tests:
        return []
    rows = []
    if listed:
        for r in sorted(listed, key=lambda r: (r.notes.get("role") != "design", str(r.param("design")))):
            design = str(r.param("design"))
            rows.append((design, r.notes.get("family", design.split(".", 1)[0]), r.notes.get("role", "design"),
                         r.notes.get("domains", "–"), _crash_status(tests.get(design, [])),
                         r.notes.get("description", "")))
        note = next((r.notes["tests"] for r in listed if r.notes.get("tests")), "")
        unlisted = sorted(set(tests) - {str(r.param("design")) for r in listed})
        if unlisted:
            note += f" Crash-tested here but not registered in this build: {', '.join(unlisted)}."
    else:
        # Results of `pmlab crash` alone: the designs it tested, from their runs (the registry was not written).
        for design in sorted(tests):
            members = tests[design]
            # What it claims is in the registry, not in these results; the status names the domains tested.
            rows.append((design, design.split(".", 1)[0], "–", "–", _crash_status(members), ""))
        note = ("These results hold crash runs only: the designs listed are those tested here (a `pmlab run` with the "
                "crash suite writes the whole registry).")
    tested_count = sum(1 for row in rows if not row[4].startswith("not "))
    return [Table(title=f"{len(rows)} designs, {tested_count} crash-tested in this run",
                  columns=("design", "family", "role", "domains claimed", "crash test in these results", "what it is"),
                  rows=tuple(rows), note=note, collapsed=True)]


@table("crash", title="Programs crash-tested from outside (pmlab crash exec)",
       caption="pmlab crash exec: the program ran under the tracing runtime (libpmem, libpmem2, libpmemobj, msync and "
               "pmlab/trace.h calls seen; plain stores found by write-protected pages), and the user's checker judged "
               "each distinct crash image. Duplicates: states whose image was judged before, in this or an earlier "
               "schedule (--schedules: later traced runs with threads paused at persistence calls). A failure names the "
               "crash point's fence in the program's own source and replays with --replay. Kinds of failure: failures "
               "alike (the same crash point's stack, sites of what persisted, and checker message but for its numbers) "
               "are one kind. Measured in this run.")
def exec_tables(runs: Sequence[Run]) -> list[Table]:
    execs = [r for r in runs if _is_exec(r)]
    if not execs:
        return []
    rows = []
    for r in sorted(execs, key=lambda r: r.name):
        failures = r.extra.get("failures") or []
        first = failures[0] if failures else None
        rows.append((r.case.split(":", 1)[1], _exec_run(r), str(r.param("granularity")),
                     _count(r.value("crash_points")), _count(r.value("states_checked")), _count(r.value("duplicate_states")),
                     _count(r.value("failures")), _count(r.value("failure_kinds")),
                     _count(r.value("states_per_second")),
                     "–" if first is None else f"{first.get('replay')}: {first.get('site') or '?'} — {first.get('property')}"))
    tables = [Table(title=f"{len(execs)} runs", columns=("program", "traced run", "granularity", "crash points (count)",
                                                         "states judged (count)", "duplicates (count)", "failures (count)",
                                                         "kinds of failure (count)", "speed (states/s)", "first failure"),
                   rows=tuple(rows))]
    findings = []
    seen = set()
    for r in execs:
        for f in r.extra.get("findings") or []:
            key = (r.case, _exec_run(r), f.get("kind"), f.get("site"))
            if key in seen:  # the same traced run's findings, repeated per granularity
                continue
            seen.add(key)
            site = str(f.get("site")) + (" (a library's code)" if f.get("in_library") else "")
            findings.append((r.case.split(":", 1)[1], _exec_run(r), str(f.get("kind")), site, _count(f.get("count"))))
    if findings:
        tables.append(Table(title=f"Performance findings ({len(findings)} call sites)",
                            columns=("program", "traced run", "finding", "call site", "count"), rows=tuple(findings),
                            note="redundant_writeback: lines written back with nothing new to write back; empty_fence: a "
                                 "fence with nothing of its thread to order; non_pm_writeback: a write-back outside "
                                 "every persistent mapping; unflushed_at_exit: lines whose content at exit was never "
                                 "written back (ADR). A site in a library's code (libpmem, libpmemobj, pmlab's own) "
                                 "is the library's cost, not the program's.", collapsed=len(findings) > 12))
    notes = _exec_notes(execs)
    if notes:
        tables.append(Table(title=f"What the traced runs noted ({len(notes)})", columns=("program", "traced run", "note"),
                            rows=tuple(notes), collapsed=len(notes) > 12))
    return tables


def _exec_notes(execs: Sequence[Run]) -> list[tuple[str, str, str]]:
    """Each traced run's notes once (its granularities repeat them): a check that passed random bytes, files put
    back before a domain's run, instructions the program did not report, a fallback in how stores were found."""
    notes, seen = [], set()
    for r in execs:
        for note in (r.extra.get("trace") or {}).get("notes") or []:
            key = (r.case, _exec_run(r), note)
            if key not in seen:
                seen.add(key)
                notes.append((r.case.split(":", 1)[1], _exec_run(r), str(note)))
    return notes


def _ratio(run: Run, metric: str) -> str:
    """A ratio with the range of the rounds or repetitions behind it: '2.6× (2.4–2.7)'."""
    m = run.metrics.get(metric)
    if m is None or m.value is None:
        return "–"
    samples = m.samples()
    spread = f" ({min(samples):.3g}–{max(samples):.3g})" if len(samples) > 1 else ""
    return f"{m.value:.3g}×{spread}"


def _seconds_ms(value: float | None) -> str:
    return "–" if value is None else f"{1000 * value:.3g}"


def _micros(value: float | None) -> str:
    return "–" if value is None else f"{value:.3g}"


@table("crash", title="What tracing a program costs, beside Valgrind",
       caption="crash.exec_cost: a PMDK example map inserting keys, run natively, under pmlab's tracing runtime and "
               "under Valgrind with no tool (--tool=none) by turns in one run; whole processes (medians, with the "
               "range of the rounds or repetitions behind them in brackets) and per insert (net of each side's "
               "process with no insert). Every Valgrind tool, pmemcheck among them, runs the program through the "
               "same translation and adds its own instrumentation, so Valgrind with no tool is a lower bound for "
               "pmemcheck. Measured in this run.")
def exec_cost_table(runs: Sequence[Run]) -> list[Table]:
    cost = [r for r in runs if r.case == "exec_cost" and r.ok]
    if not cost:
        return []
    rows = []
    for r in sorted(cost, key=lambda r: (str(r.param("map")), r.param("inserts") or 0)):
        rows.append((str(r.param("map")), _count(r.param("inserts")), _seconds_ms(r.value("native_seconds")),
                     _seconds_ms(r.value("traced_seconds")), _ratio(r, "tracing_slowdown"),
                     _seconds_ms(r.value("valgrind_none_seconds")), _ratio(r, "valgrind_none_slowdown"),
                     _ratio(r, "traced_vs_valgrind_none"), _micros(r.value("native_us_per_insert")),
                     _micros(r.value("traced_us_per_insert")), _micros(r.value("valgrind_none_us_per_insert"))))
    missing = sorted({r.notes["valgrind"] for r in cost if "valgrind" in r.notes})
    return [Table(title=f"{len(cost)} run" + ("" if len(cost) == 1 else "s"),
                  columns=("map", "inserts", "native (ms)", "traced (ms)", "traced / native", "Valgrind, no tool (ms)",
                           "Valgrind / native", "traced / Valgrind", "native (µs/insert)", "traced (µs/insert)",
                           "Valgrind (µs/insert)"),
                  rows=tuple(rows), note="; ".join(f"Valgrind: {m}" for m in missing))]
