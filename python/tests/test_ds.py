"""The ds suite's figures and derived ratios on hand-built runs (inputs to the report logic, not results)."""

from matplotlib.figure import Figure

from pmlab_report import figures
from pmlab_report.model import Metric, Run
from pmlab_report.suites import ds


def _run(index, structure, mode, workload, throughput, status="ok", breakdown="none"):
    metrics = {"throughput": Metric(value=throughput, unit="ops/s", kind="measured"),
               "latency_p50": Metric(value=1e9 / throughput, unit="ns", kind="measured"),
               "latency_p99": Metric(value=4e9 / throughput, unit="ns", kind="measured")}
    return Run(index=index, name=f"ds.ycsb/{structure}/{mode}/{workload}", suite="ds", case="ycsb",
               params={"structure": structure, "mode": mode, "workload": workload, "threads": 1,
                       "breakdown": breakdown},
               status=status, reason=None, metrics=metrics)


def _runs():
    # On DRAM the bptree beats the skiplist; persisted, the order flips (the shape [StoredsBench] reports).
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
    # The null structures measure the harness: never ranked as the fastest design.
    with_null = _runs() + [_run(90, "null", "dram", "write-only", 9e8), _run(91, "null-predictable", "dram", "write-only", 9e8)]
    assert ds.rankings(with_null)[("dram", "write-only")] == ["bptree", "skiplist"]


def _derived(index, case, params, metrics, notes=None):
    return Run(index=index, name=f"ds.{case}/" + "/".join(f"{k}:{v}" for k, v in params.items()), suite="ds",
               case=case, params=params, status="ok", reason=None,
               metrics={k: Metric(value=v, unit="x", kind="measured") for k, v in metrics.items()},
               notes=notes or {})


def _full_runs():
    runs = _runs()
    runs += [_run(len(runs), "bptree", "tx", "write-only", 50e3),
             _run(len(runs) + 1, "bptree", "tx", "write-only", 80e3, breakdown="no-flush"),
             _run(len(runs) + 2, "pmdk-btree", "pmdk", "write-only", 60e3)]
    runs.append(_derived(len(runs), "target", {"structure": "bptree", "peer": "pmdk-btree", "workload": "a"},
                         {"ratio": 2.0, "target_ratio": 1.5, "flushes_per_op": 3.0,
                          "peer_flushes_per_op": 9.0, "fences_per_op": 2.0, "peer_fences_per_op": 6.0}))
    runs.append(_derived(len(runs), "overhead", {"structure": "bptree", "workload": "a"},
                         {"ns_pmem_volatile": 500.0, "ns_tx": 3000.0, "tx_flush_ns": 800.0, "tx_fence_ns": 600.0,
                          "tx_log_ns": -50.0}))
    return runs


def test_breakdown_runs_and_peers_stay_out_of_the_design_tables():
    ratios = ds.overhead_ratios(_full_runs())
    # tx / persist from the breakdown=none tx run only (the no-flush run is faster and must not win)
    assert abs(ratios[("bptree", "write-only")]["tx_cost"] - 50 / 150) < 1e-12
    assert "pmdk-btree" not in ds.rankings(_full_runs())[("dram", "write-only")]


def test_breakdown_parts_split_the_tx_time_and_clip_noise():
    parts = ds.breakdown_parts(_full_runs())[("bptree", "a", "tx")]
    assert parts["base"] == 500.0 and parts["flush"] == 800.0 and parts["fence"] == 600.0
    assert parts["log"] == 0.0  # a negative saving is noise, drawn as nothing
    assert abs(parts["rest"] - (3000.0 - 500 - 800 - 600)) < 1e-9


def test_targets_read_the_derived_rows():
    rows = ds.targets(_full_runs())
    assert len(rows) == 1 and rows[0].value("ratio") == 2.0


def test_every_figure_draws_and_tolerates_no_runs():
    specs = figures.figures_for("ds")
    assert len(specs) == 7
    for spec in specs:
        drawn = spec.func(_full_runs())
        if spec.case == "update_ratio":  # its own case, absent here (drawn in test_seed_figures.py)
            assert drawn is None
        else:
            assert isinstance(drawn, Figure), spec.key
        assert spec.func([]) is None


def test_a_nodes_runs_stay_out_of_the_figures_and_are_tabulated_against_the_modes_own_memory():
    runs = _runs()
    on_node = _run(len(runs), "bptree", "dram", "write-only", 350e3)
    on_node.params["medium"] = "numa:2"
    runs.append(on_node)
    # DRAM mode's bptree stays at its own memory's 1400 K ops/s: the node's 350 K is not a DRAM-mode sample.
    assert abs(ds.overhead_ratios(runs)[("bptree", "write-only")]["pmem_cost"] - 0.5) < 1e-12
    runs.append(_derived(len(runs), "tier", {"structure": "bptree", "mode": "dram", "workload": "write-only",
                                             "tier": "numa:2"},
                         {"throughput": 350e3, "throughput_own_memory": 1400e3, "throughput_ratio": 0.25},
                         {"own_memory": "dram"}))
    [table] = ds.tier_tables(runs)
    assert table.rows == (("numa:2", "bptree", "dram", "write-only", "350 kops/s", "dram", "1.40 Mops/s", "0.25×"),)
    assert ds.tier_tables(_runs()) == []
