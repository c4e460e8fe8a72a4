"""The words behind the idio suite's verdicts: why each idiosyncrasy I1–I8 is present, absent or not
applicable here, and what each recommendation's impact R1–R7 measures.

The C++ summary (src/pmlab/suites/idio/classification.cpp) decides and records tokens and numbers: a
classification row's notes carry `verdict` (present | absent | not_applicable), `pmem_specific` (yes | no |
unknown), `pool_emulated` (yes | no), the thresholds `present_at` and `specific_at`, and for a verdict of
not_applicable `not_applicable_because` (no_pool_runs | no_paired_runs | no_media_counters | runs_skipped,
the last with the runs' `skip_reason`); its metrics carry the effects. A recommendation row's notes carry
`impact_class` (none | low | moderate | high | not_measured). Nothing here decides anything: each sentence
only says what the row records.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from .model import Run, is_number

VERDICT_WORDS = {"present": "present", "absent": "absent", "not_applicable": "not applicable here"}
IMPACT_CLASS_WORDS = {"not_measured": "not measured here"}

NOT_APPLICABLE_BECAUSE = {
    "no_pool_runs": "no successful run measured the effect on the pool.",
    "no_paired_runs": "no local/remote pair of runs succeeded.",
    "no_media_counters": ("a read-modify-write inside the device shows only in media counters (EWR, RWR); this "
                          "platform exposes none and no device model was attached (latency_same_over_spread is "
                          "printed for reference)."),
}

# What each rule's impact is, as a ratio (the impact itself is computed by the C++ summary).
IMPACT_MEASURES = {
    "R1": "A p-store costs this many loads (I1, cached data).",
    "R2": "Best p-store bandwidth over any thread count / the bandwidth with every CPU writing (I2, largest access).",
    "R3": "Random p-store bandwidth at the best of 64-512 B / at the smallest (I3).",
    "R4": "Local / remote p-store bandwidth (I4).",
    "R5": "The larger of p-store / store bandwidth (I5) and dirty / flushed-cache load latency (I8).",
    "R6": "The larger of sequential / random read (I6) and write (I3) bandwidth.",
    "R7": ("Not measured by this suite: R7 comes from the lock-free ring buffer and linked list study of "
           "[PMIdioBench], which the lockfree suite runs (pmlab run lockfree: TX versus TX-free rings, TLog "
           "versus SOFT and Link-free sets)."),
}


def verdict_word(token: str) -> str:
    return VERDICT_WORDS.get(token, token)


def impact_class_word(token: str) -> str:
    return IMPACT_CLASS_WORDS.get(token, token)


def _number(run: Run, metric: str) -> float | None:
    value = run.value(metric)
    return value if is_number(value) else None


def _times(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}×"


def _threshold(notes: Mapping[str, str], key: str) -> float | None:
    try:
        return float(notes[key])
    except (KeyError, ValueError):
        return None


def not_applicable_text(notes: Mapping[str, str]) -> str:
    """Why the row's idiosyncrasy could not be judged here: one sentence, ending in a full stop."""
    because = notes.get("not_applicable_because", "")
    if because == "runs_skipped":
        reason = notes.get("skip_reason", "").rstrip(".")
        return f"{reason}." if reason else "its runs were skipped."
    return NOT_APPLICABLE_BECAUSE.get(because, "it was not measured.")


def _present_text(row: Run, pool: float, dram: float | None) -> str:
    n = row.notes
    cause, classes = n.get("root_cause", "?"), n.get("applicability", "?")
    against_dram = _times(pool / dram) if dram else "n/a"
    if n.get("pool_emulated") == "yes" and dram is not None:
        return ("Present, but the pool is emulated (DRAM pages behind a file), so nothing here is PMEM-specific: the "
                f"pool/DRAM difference ({against_dram}) comes from the mapping or from noise ([PMIdioBench] names "
                f"{cause}; classes {classes}).")
    specific = n.get("pmem_specific")
    if specific == "yes":
        return (f"Present and PMEM-specific here: the pool shows it {against_dram} as strongly as DRAM, which points "
                f"at the memory device ([PMIdioBench]: {cause}, classes {classes}).")
    if specific == "no":
        return ("Present, but DRAM shows it as well, so here it is not PMEM-specific: the cause lies outside the "
                f"memory device ([PMIdioBench] names {cause}; classes {classes}).")
    return ("Present on the pool; without a DRAM effect to compare, PMEM-specificity is unknown ([PMIdioBench]: "
            f"{cause}, classes {classes}).")


def classification_reason(row: Run) -> str:
    """Why an idio.classification row has its verdict, in words."""
    n = row.notes
    pool, dram = _number(row, "effect_pool"), _number(row, "effect_dram")
    cause, classes = n.get("root_cause", "?"), n.get("applicability", "?")
    verdict = n.get("verdict")
    if verdict == "not_applicable" or pool is None:
        text = (f"Not applicable here: {not_applicable_text(n)} [PMIdioBench] attributes it to {cause} "
                f"(classes {classes}).")
    else:
        text = f"{n.get('effect', 'effect')}: pool {_times(pool)}, DRAM {_times(dram)}. "
        if verdict == "present":
            text += _present_text(row, pool, dram)
        else:
            text += (f"Absent: below the {_times(_threshold(n, 'present_at'))} threshold on the pool. [PMIdioBench] "
                     f"attributes it to {cause} (classes {classes}); memory without that component does not show it.")
        effect = row.metrics.get("effect_pool")
        if effect is not None and effect.kind == "modelled":
            text += " The effect is modelled (device model), not measured."
    published_pmem, published_dram = _number(row, "effect_published_pmem"), _number(row, "effect_published_dram")
    if published_pmem is not None or published_dram is not None:
        text += f" Published on DCPMM: {_times(published_pmem)} (DRAM {_times(published_dram)})."
    return text


def recommendation_reason(rule: Run, classifications: Sequence[Run] = ()) -> str:
    """What an idio.recommendation row's impact measures and how large it is here, in words. The
    classification rows say why an impact resting on an unjudged idiosyncrasy (I4) is not measured."""
    n = rule.notes
    ident = str(rule.param("rule"))
    pool, dram = _number(rule, "impact_pool"), _number(rule, "impact_dram")
    measure = IMPACT_MEASURES.get(ident, "")
    if ident == "R4" and pool is None:
        i4 = next((r for r in classifications if r.param("idiosyncrasy") == "I4"), None)
        if i4 is not None and _number(i4, "effect_pool") is None:
            measure = f"Not measured: {not_applicable_text(i4.notes)}"
    impact_class = impact_class_word(n.get("impact_class", "?"))
    return (f"{measure} Impact here: pool {_times(pool)} ({impact_class}), DRAM {_times(dram)}. Published impact "
            f"([PMIdioBench] Table 4): {n.get('published_impact', '?')}.").lstrip()
