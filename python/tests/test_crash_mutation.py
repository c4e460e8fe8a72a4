"""The mutation-score tables of `pmlab crash --mutate`: both scores, and the equivalent mutants by reason,
on hand-built runs shaped as the CLI writes them."""

from pmlab_report.model import Metric, Run
from pmlab_report.suites import crash


def _mutant(site, call, killed=False, equivalent=False, because=None):
    return {"site": site, "function": "F::g", "call": call, "mutation": "split" if call == "atomic_store" else "drop",
            "killed": killed, "equivalent": equivalent, "equivalent_because": because, "inert_calls": {},
            "killed_in": "adr/line" if killed else None, "evidence": None, "survived_in": []}


def _mutation_run(index, design, mutants, strict=True):
    killed = sum(m["killed"] for m in mutants)
    equivalent = sum(m["equivalent"] for m in mutants)
    metrics = {"sites": Metric(len(mutants), "count", "measured"),
               "mutants": Metric(len(mutants), "count", "measured"),
               "killed": Metric(killed, "count", "measured"),
               "equivalent": Metric(equivalent, "count", "measured"),
               "survivors": Metric(len(mutants) - equivalent - killed, "count", "measured"),
               "mutation_score": Metric(killed / (len(mutants) - equivalent), "ratio", "measured")}
    if strict:
        metrics["strict_mutation_score"] = Metric(killed / len(mutants), "ratio", "measured")
    return Run(index=index, name=f"crash.{design}/test:mutation", suite="crash", case=design,
               params={"test": "mutation"}, status="ok", reason=None, metrics=metrics,
               extra={"mutants": mutants})


def test_the_strict_score_counts_an_equivalent_mutant_as_not_killed():
    runs = [_mutation_run(0, "log.zero", [_mutant("a.cpp:1:1", "fence", killed=True),
                                          _mutant("a.cpp:2:1", "flush", killed=True),
                                          _mutant("a.cpp:3:1", "fence", equivalent=True, because="nothing_to_order"),
                                          _mutant("a.cpp:4:1", "atomic_store", equivalent=True, because="below_2_32")]),
            # A file written before the strict score was recorded: the table works it out.
            _mutation_run(1, "log.classic", [_mutant("b.cpp:1:1", "fence", killed=True),
                                             _mutant("b.cpp:2:1", "atomic_store")], strict=False)]
    tables = crash.mutation_tables(runs)
    family = next(t for t in tables if "strict score (%)" in t.columns)
    rows = {row[0]: row for row in family.rows}
    strict = family.columns.index("strict score (%)")
    score = family.columns.index("score (%)")
    assert rows["log.zero"][score] == "100" and rows["log.zero"][strict] == "50"
    assert rows["log.classic"][score] == "50" and rows["log.classic"][strict] == "50"
    survivors = next(t for t in tables if t.title.startswith("Survivors"))
    assert "strict: 3 of all 6 (50.0%)" in survivors.note


def test_equivalent_mutants_are_listed_with_their_reason_and_what_they_are():
    runs = [_mutation_run(0, "ptm.redo", [_mutant("r.cpp:9:1", "fence", equivalent=True, because="nothing_to_order"),
                                          _mutant("r.cpp:7:1", "atomic_store", equivalent=True, because="one_half"),
                                          _mutant("r.cpp:8:1", "flush", killed=True)])]
    tables = crash.mutation_tables(runs)
    listing = next(t for t in tables if t.title.startswith("Equivalent mutants (2)"))
    by_site = {row[1]: row for row in listing.rows}
    assert by_site["r.cpp:9:1"][4:] == ("a fence with nothing to order", "redundant call")
    assert by_site["r.cpp:7:1"][4:] == ("every store changed one half of the word", "on this stream")
    # Redundant calls first: they are findings about the design.
    assert listing.rows[0][5] == "redundant call"


def test_no_equivalent_mutants_no_listing():
    runs = [_mutation_run(0, "page.ulog", [_mutant("p.cpp:1:1", "fence", killed=True)])]
    assert not [t for t in crash.mutation_tables(runs) if t.title.startswith("Equivalent")]
