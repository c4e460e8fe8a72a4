"""Memory tiers side by side (pmlab_report.tiers): a column per medium the idio runs measured, ratios
against local DRAM, a finding per tier, and nothing when one tier was measured."""

import json
import pathlib

from pmlab_report import findings, migrate, model, tiers
from pmlab_report.model import Metric, Run

IDIO_QUICK = pathlib.Path(__file__).resolve().parent / "fixtures" / "idio_quick.json"
CXL_PLACEMENT = ("memory bound to node 2, every page checked on it; the node is cxl (no CPUs; CXL memdev mem0 "
                 "in region0, ram); threads on node 0 (CPUs 0,1), the nearest node with CPUs")


def _run(index, case, params, metrics, notes=None):
    name = f"idio.{case}" + "".join(f"/{k}:{v}" for k, v in params.items())
    return Run(index=index, name=name, suite="idio", case=case, params=params, status="ok", reason=None,
               metrics={k: Metric(v, "ns" if "latency" in k else "MiB/s", "measured") for k, v in metrics.items()},
               notes=notes or {})


def _two_tiers():
    runs = []
    for medium, load_ns, bw, notes in (("dram", 100.0, {1: 8000.0, 2: 10000.0}, None),
                                       ("numa:2", 230.0, {1: 3000.0, 2: 4500.0}, {"placement": CXL_PLACEMENT})):
        runs.append(_run(len(runs), "i1_latency", {"medium": medium, "op": "load", "hit_ratio": 0.0, "threads": 1},
                         {"latency_p50": load_ns}, notes))
        runs.append(_run(len(runs), "i1_latency", {"medium": medium, "op": "load", "hit_ratio": 1.0, "threads": 1},
                         {"latency_p50": 5.0}, notes))
        for threads, value in bw.items():
            runs.append(_run(len(runs), "i2_bandwidth", {"medium": medium, "op": "load", "size": 4096,
                                                         "threads": threads}, {"bandwidth": value}, notes))
    return runs


def test_a_cxl_node_is_named_from_its_placement_and_compared_with_local_dram():
    found = tiers.measure_tiers(_two_tiers())
    assert [t.medium for t in found] == ["dram", "numa:2"]
    cxl = found[1]
    assert cxl.label == "node 2 (cxl)"
    assert "CXL memdev mem0" in cxl.evidence
    assert cxl.values["load_ns"] == 230.0  # the uncached point only
    assert cxl.values["load_bw"] == 4500.0 and cxl.peak_threads["load_bw"] == 2
    assert tiers.finding(cxl, found[0]) == ("On node 2 (cxl): load latency, uncached 2.30× local; "
                                            "peak load bandwidth 0.450× local, highest at 2 threads.")


def test_the_section_has_a_column_per_tier_and_the_findings():
    html = tiers.section(_two_tiers())
    assert '<th title="the process&#x27;s own memory">local DRAM</th>' in html
    assert ">node 2 (cxl)</th>" in html
    assert "230 ns (2.30×)" in html and "4.39 GiB/s (0.450×)" in html
    assert "On node 2 (cxl): load latency, uncached 2.30× local" in html
    # A measure no tier has is left out; one tier has and another lacks shows a dash.
    assert "p-store latency" not in html


def test_the_pointer_chase_is_compared_at_the_largest_working_set_every_tier_measured():
    runs = _two_tiers()
    for medium, sizes in (("dram", {4096: 2.0, 64 << 20: 100.0, 128 << 20: 110.0}),
                          ("numa:2", {4096: 2.0, 64 << 20: 250.0}), ("pool", {64 << 20: 300.0})):
        for wss, ns in sizes.items():
            runs.append(_run(len(runs), "dependent_load", {"medium": medium, "wss": wss, "threads": 1},
                             {"load_latency": ns}, {"placement": CXL_PLACEMENT} if medium == "numa:2" else None))
    found = tiers.measure_tiers(runs)
    # 128 MiB only DRAM measured: every tier is read at 64 MiB, where all three ran.
    assert [t.values["chase_ns"] for t in found] == [100.0, 250.0, 300.0]
    assert tiers.finding(found[1], found[0]).endswith("pointer-chase latency at 64 MiB 2.50× local.")
    html = tiers.section(runs)
    assert "<td>pointer-chase latency (dependent loads), wss 64 MiB</td>" in html
    assert "250 ns (2.50×)" in html and "300 ns (3×)" in html
    # A tier that ran no size in common with the others shows a dash.
    apart = [r for r in runs if not (r.case == "dependent_load" and r.param("medium") == "numa:2")]
    apart.append(_run(len(apart), "dependent_load", {"medium": "numa:2", "wss": 4 << 30, "threads": 1},
                      {"load_latency": 400.0}))
    assert [t.values.get("chase_ns") for t in tiers.measure_tiers(apart)] == [None, None, None]


def test_one_tier_gives_no_section():
    runs = [r for r in _two_tiers() if r.param("medium") == "dram"]
    assert tiers.section(runs) == ""


def test_a_quick_run_shows_dram_and_the_pool_side_by_side_in_the_report():
    results = model.from_document(migrate.upgrade(json.loads(IDIO_QUICK.read_text(encoding="utf-8"))))
    found = tiers.measure_tiers(results.runs, results.context)
    assert [t.medium for t in found] == ["dram", "pool"]
    assert found[1].label.startswith("pool (")
    html = findings.section(results, lambda m: "")
    assert 'href="#tiers"' in html and 'id="tiers"' in html and "On pool (" in html


def _classification(index, ident, verdict, specific, effect, tier=None):
    params = {"idiosyncrasy": ident} | ({"tier": tier} if tier else {})
    name = f"idio.classification/idiosyncrasy:{ident}" + (f"/tier:{tier}" if tier else "")
    notes = {"idiosyncrasy": f"idiosyncrasy {ident}", "verdict": verdict,
             ("tier_specific" if tier else "pmem_specific"): specific}
    metric = "effect_tier" if tier else "effect_pool"
    return Run(index=index, name=name, suite="idio", case="classification", params=params, status="ok",
               reason=None, metrics={metric: Metric(effect, "ratio", "measured")}, notes=notes)


def test_each_tier_has_its_idiosyncrasy_verdicts_and_a_finding_names_them():
    runs = _two_tiers()
    runs += [_classification(len(runs), "I1", "present", "no", 2.0, "numa:2"),
             _classification(len(runs) + 1, "I3", "present", "yes", 4.0, "numa:2"),
             _classification(len(runs) + 2, "I5", "absent", "unknown", 1.0, "numa:2")]
    html = tiers.section(runs)
    assert "<td>I3: idiosyncrasy I3</td><td class=\"small\">reference</td>" \
           "<td class=\"small\">present, specific (4×)</td>" in html
    assert "present (2×)" in html and "absent (1×)" in html
    assert "I1, I3 present (I3 beyond local DRAM&#x27;s)" in html
    # The pool's rows (no tier parameter) stay in the idiosyncrasy table, not a NUMA node's.
    assert set(tiers.classifications(runs)) == {"numa:2"}


def test_a_tier_no_idiosyncrasy_case_ran_on_is_not_said_to_have_none():
    runs = _two_tiers()
    runs += [_classification(len(runs) + i, f"I{i + 1}", "not_applicable", "unknown", None, "numa:2")
             for i in range(8)]
    html = tiers.section(runs)
    assert "none of I1–I8 present" not in html and "I1–I8 not assessed" in html
    runs.append(_classification(len(runs), "I9", "absent", "unknown", 1.0, "numa:2"))
    assert "none of I1–I8 present" in tiers.section(runs)


def test_the_idiosyncrasy_table_keeps_the_pools_rows_only():
    runs = _two_tiers()
    runs += [_classification(len(runs), "I1", "present", "no", 5.0),
             _classification(len(runs) + 1, "I1", "absent", "unknown", 1.0, "numa:2")]
    html = findings.idio_section(runs, findings.Evidence(runs), lambda m: "")
    assert html.count("<td><b>I1</b></td>") == 1 and "present" in html


def test_a_pool_on_a_cxl_pmem_region_is_named_by_what_the_runner_traced():
    context = {"pool": {"medium": "pmem", "filesystem": "xfs",
                        "backing": {"label": "cxl-pmem", "persistence_domain": "memory_controller",
                                    "evidence": "/dev/pmem1 in nvdimm region region1, provided by CXL "
                                                "persistent-memory region region0"}}}
    runs = [r for r in _two_tiers() if r.param("medium") == "dram"]
    runs.append(_run(len(runs), "i1_latency", {"medium": "pool", "op": "load", "hit_ratio": 0.0, "threads": 1},
                     {"latency_p50": 300.0}))
    found = tiers.measure_tiers(runs, context)
    assert found[1].label == "pool (cxl-pmem)"
    assert "CXL persistent-memory region region0" in found[1].evidence


def _with_page_sizes(dram_fraction, node_fraction):
    runs = _two_tiers()
    for r in runs:
        fraction = dram_fraction if r.param("medium") == "dram" else node_fraction
        r.metrics[tiers.HUGE_FRACTION] = Metric(fraction, "ratio", "measured")
    return runs


def test_tiers_whose_memory_had_other_page_sizes_are_cautioned():
    html = tiers.section(_with_page_sizes(0.0, 1.0))
    assert "<td>memory in 2 MiB pages (median over runs)</td>" in html
    assert '<td class="num">0 %</td><td class="num">100 %</td>' in html
    assert ("The tiers&#x27; memory had different page sizes (in 2 MiB pages: local DRAM 0 %, node 2 (cxl) 100 %)"
            in html)


def test_a_pool_in_huge_pages_beside_dram_in_base_pages_names_the_remedy():
    runs = _with_page_sizes(0.0, 0.0)
    for r in runs:
        if r.param("medium") != "dram":
            r.params["medium"] = "pool"
            r.metrics[tiers.HUGE_FRACTION] = Metric(1.0, "ratio", "measured")
    assert "`pmlab run --pages huge` gives DRAM and node memory 2 MiB pages too." in tiers.section(runs)
    assert "--pages huge" not in tiers.section(_with_page_sizes(0.0, 1.0))  # a node: its own page size


def test_tiers_with_the_same_page_size_get_no_caution():
    html = tiers.section(_with_page_sizes(0.0, 0.0))
    assert '<td class="num">0 %</td><td class="num">0 %</td>' in html
    assert "different page sizes" not in html
    # Runs that did not record it show no row.
    assert "2 MiB pages" not in tiers.section(_two_tiers())


def _same_memory(node_load_ns, repetitions=1, memory_nodes=(0,)):
    """Local DRAM and node 0 at 100 ns and `node_load_ns`, each value the median of `repetitions`."""
    runs = []
    for medium, load_ns in (("dram", 100.0), ("numa:0", node_load_ns)):
        stats = {"n": repetitions} if repetitions > 1 else None
        runs.append(Run(index=len(runs), name=f"idio.i1_latency/medium:{medium}", suite="idio", case="i1_latency",
                        params={"medium": medium, "op": "load", "hit_ratio": 0.0, "threads": 1}, status="ok",
                        reason=None, metrics={"latency_p50": Metric(load_ns, "ns", "measured", stats=stats)}))
    context = {"memory_tiers": {"nodes": [{"node": n, "label": "local", "memory_bytes": 1 << 34}
                                          for n in memory_nodes]}}
    return runs, context


def test_the_only_memory_node_against_local_dram_shows_the_runs_noise():
    runs, context = _same_memory(130.0)
    html = tiers.section(runs, context)
    assert ("node 0 (local) is the same memory as local DRAM (the only node with memory), yet its load latency, "
            "uncached measured 1.30× local (one sample per point): in this run, differences of that size between "
            "tiers are noise, not the memory; `pmlab run --repetitions 3` gives every point a median and a spread."
            in html.replace("&#x27;", "'"))
    runs, context = _same_memory(96.0, repetitions=3)
    assert tiers.noise_finding(tiers.measure_tiers(runs, context), context) == (
        "node 0 (local) is the same memory as local DRAM (the only node with memory): its values were 0.960× "
        "local's, the noise of this run's comparisons.")


def test_without_a_same_memory_node_one_sample_per_point_is_cautioned():
    runs, context = _same_memory(230.0, memory_nodes=(0, 2))  # node 0 is not the only memory: no control
    found = tiers.measure_tiers(runs, context)
    assert [t.samples for t in found] == [1, 1]
    assert tiers.noise_finding(found, context) == (
        "Each value rests on one sample per point: a ratio near 1× may be noise; `pmlab run --repetitions 3` "
        "gives every point a median and a spread.")
    runs, context = _same_memory(230.0, repetitions=5, memory_nodes=(0, 2))
    found = tiers.measure_tiers(runs, context)
    assert [t.samples for t in found] == [5, 5]
    assert tiers.noise_finding(found, context) is None
