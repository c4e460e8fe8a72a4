"""The ds suite's figures and derived ratios on hand-built runs (inputs to the report logic, not results)."""

from matplotlib.figure import Figure

from pmlab_report import figures
from pmlab_report.model import Metric, Run
from pmlab_report.suites import ds


def _run(index, structure, mode, workload, throughput, status="ok"):
    metrics = {"throughput": Metric(value=throughput, unit="ops/s", kind="measured"),
               "latency_p50": Metric(value=1e9 / throughput, unit="ns", kind="measured"),
               "latency_p99": Metric(value=4e9 / throughput, unit="ns", kind="measured")}
    return Run(index=index, name=f"ds.ycsb/{structure}/{mode}/{workload}", suite="ds", case="ycsb",
               params={"structure": structure, "mode": mode, "workload": workload, "threads": 1},
               status=status, reason=None, metrics=metrics)


def _runs():
    # On DRAM the bptree beats the skiplist; persisted, the order flips (the shape seed 001 reports).
    table = {("bptree", "dram"): 1400, ("skiplist", "dram"): 1000, ("bptree", "pmem-volatile"): 700,
             ("skiplist", "pmem-volatile"): 600, ("bptree", "persist"): 150, ("skiplist", "persist"): 300}
    runs = [_run(i, s, m, "write-only", v * 1e3) for i, ((s, m), v) in enumerate(table.items())]
    runs.append(_run(len(runs), "array", "dram", "write-only", 5e6, status="failed"))
    return runs


def test_overhead_ratios_divide_same_run_throughputs():
    ratios = ds.overhead_ratios(_runs())
    assert abs(ratios[("bptree", "write-only")]["pmem_cost"] - 0.5) < 1e-12
    assert abs(ratios[("skiplist", "write-only")]["persist_cost"] - 0.5) < 1e-12


def test_ranking_change_is_found_and_failed_runs_ignored():
    changes = ds.ranking_changes(_runs())
    assert ("write-only", "persist", ["bptree", "skiplist"], ["skiplist", "bptree"]) in changes
    assert all(m != "pmem-volatile" for _, m, _, _ in changes)
    assert "array" not in ds.rankings(_runs())[("dram", "write-only")]


def test_every_figure_draws_and_tolerates_no_runs():
    specs = figures.figures_for("ds")
    assert len(specs) == 4
    for spec in specs:
        assert isinstance(spec.func(_runs()), Figure), spec.key
        assert spec.func([]) is None
