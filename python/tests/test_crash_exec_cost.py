"""The table of what tracing a program costs (`crash.exec_cost`), beside Valgrind with no tool, on hand-built
runs shaped as the case writes them."""

from pmlab_report.model import Metric, Run
from pmlab_report.suites import crash


def _cost_run(index, map_name, valgrind=True):
    def ratio(samples):
        ordered = sorted(samples)
        return Metric(ordered[len(ordered) // 2], "ratio", "measured", stats={"n": len(samples), "samples": samples})

    metrics = {"native_seconds": Metric(0.025, "s", "measured"), "traced_seconds": Metric(0.15, "s", "measured"),
               "tracing_slowdown": ratio([5.8, 6.0, 6.4]), "native_us_per_insert": Metric(4.0, "us", "measured"),
               "traced_us_per_insert": Metric(50.0, "us", "measured")}
    notes = {}
    if valgrind:
        metrics.update({"valgrind_none_seconds": Metric(0.45, "s", "measured"),
                        "valgrind_none_slowdown": ratio([17.0, 18.0, 19.5]),
                        "traced_vs_valgrind_none": ratio([0.31, 0.33, 0.36]),
                        "valgrind_none_us_per_insert": Metric(40.0, "us", "measured")})
    else:
        notes["valgrind"] = "not installed: no Valgrind peer (apt-get install valgrind)"
    return Run(index=index, name=f"crash.exec_cost/map:{map_name}/inserts:2000", suite="crash", case="exec_cost",
               params={"map": map_name, "inserts": 2000}, status="ok", reason=None, metrics=metrics, notes=notes)


def test_each_side_is_a_column_with_the_spread_of_its_rounds():
    (table,) = crash.exec_cost_table([_cost_run(0, "btree")])
    row = dict(zip(table.columns, table.rows[0]))
    assert row["traced (ms)"] == "150" and row["Valgrind, no tool (ms)"] == "450"
    assert row["traced / native"] == "6× (5.8–6.4)"
    assert row["traced / Valgrind"] == "0.33× (0.31–0.36)"
    assert row["Valgrind (µs/insert)"] == "40" and row["traced (µs/insert)"] == "50"
    assert table.note == ""


def test_a_run_without_valgrind_says_why_its_columns_are_empty():
    (table,) = crash.exec_cost_table([_cost_run(0, "rbtree", valgrind=False), _cost_run(1, "btree")])
    rows = {row[0]: dict(zip(table.columns, row)) for row in table.rows}
    assert rows["rbtree"]["traced / Valgrind"] == "–" and rows["rbtree"]["Valgrind, no tool (ms)"] == "–"
    assert rows["btree"]["traced / Valgrind"] == "0.33× (0.31–0.36)"
    assert "not installed" in table.note


def test_no_table_without_the_case():
    assert crash.exec_cost_table([]) == []
