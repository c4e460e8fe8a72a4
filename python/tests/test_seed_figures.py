"""The studies' figures added for issue 22 on hand-built runs: [PMemIO] Fig. 2, 3 and 4, [StoredsBench]'s
update-share sweep and the table of crash-tested designs. Each draws from synthetic runs and says nothing
(None, or a reason) when its data is absent."""

from matplotlib.figure import Figure

from pmlab_report import figures
from pmlab_report.figures import NotMeasured
from pmlab_report.model import Metric, Run
from pmlab_report.suites import core, crash, ds, idio

PUBLISHED = {"kind": "published", "source": "a study"}


def _run(index, suite, case, params, metrics, status="ok", notes=None):
    built = {}
    for name, value in metrics.items():
        if isinstance(value, Metric):
            built[name] = value
        else:
            built[name] = Metric(value=value, unit="x", kind="measured")
    return Run(index=index, name=f"{suite}.{case}/" + "/".join(f"{k}:{v}" for k, v in params.items()), suite=suite,
               case=case, params=params, status=status, reason=None if status == "ok" else "why", metrics=built,
               notes=notes or {})


def _published(value):
    return Metric(value=value, unit="x", **PUBLISHED)


# ----------------------------------------------------------------------- bandwidth versus threads


def _i2(threads=(1, 2, 4)):
    runs = []
    for medium in ("dram", "pool"):
        for op, flush in (("load", "auto"), ("store", "auto"), ("pstore", "clwb"), ("pstore", "ntstore")):
            for t in threads:
                metrics = {"bandwidth": 1000.0 * t}
                if op != "store":
                    metrics["published_bandwidth"] = _published(900.0 * t)
                runs.append(_run(len(runs), "idio", "i2_bandwidth",
                                 {"medium": medium, "op": op, "flush": flush, "size": 256, "threads": t}, metrics))
    return runs


def test_thread_scaling_draws_every_operation_and_the_published_curves():
    fig = idio.thread_scaling(_i2())
    assert isinstance(fig, Figure)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert {"load (measured)", "store (measured)", "store + flush (measured)", "nt-store (measured)"} <= set(labels)
    assert any("published" in label for label in labels)
    assert len(fig.axes) == 2  # a panel per medium


def test_thread_scaling_needs_two_thread_counts_and_data():
    assert isinstance(idio.thread_scaling(_i2(threads=(1,))), NotMeasured)
    assert idio.thread_scaling([]) is None


# ----------------------------------------------------------------------- dependent loads


CONTEXT = {"cpu": {"caches": [{"level": 1, "type": "data", "size_bytes": 32768},
                              {"level": 1, "type": "instruction", "size_bytes": 32768},
                              {"level": 2, "type": "unified", "size_bytes": 1 << 20},
                              {"level": 3, "type": "unified", "size_bytes": 32 << 20}]}}


def _chase():
    runs = []
    for medium, far in (("dram", 100.0), ("pool", 300.0)):
        for wss in (4096, 1 << 16, 1 << 20, 1 << 24, 1 << 28):
            latency = 1.5 if wss <= 32768 else 5 if wss <= 1 << 20 else 20 if wss <= 32 << 20 else far
            metrics = {"load_latency": Metric(value=latency, unit="ns", kind="measured"),
                       "load_latency_median": Metric(value=latency * 1.2, unit="ns", kind="measured",
                                                     stats={"ci_low": latency, "ci_high": latency * 1.5, "n": 9})}
            if wss > 32 << 20:
                metrics["published_load_latency"] = _published(305.0 if medium == "pool" else 101.5)
            runs.append(_run(len(runs), "idio", "dependent_load", {"medium": medium, "wss": wss, "threads": 1},
                             metrics))
    return runs


def test_dependent_load_marks_caches_from_the_context_and_gives_the_ratio():
    fig = idio.dependent_load(_chase(), CONTEXT)
    assert isinstance(fig, Figure)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert any(t.strip().startswith("L3 32 MiB") for t in texts)
    assert not any("instruction" in t for t in texts)
    assert any("pool / DRAM = 3.00×" in t for t in texts)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert any("published 305 ns" in label for label in labels)


def test_dependent_load_absent_or_failed_is_none():
    assert idio.dependent_load([], CONTEXT) is None
    failed = [_run(0, "idio", "dependent_load", {"medium": "dram", "wss": 4096}, {}, status="error")]
    assert idio.dependent_load(failed, {}) is None


def test_registry_hands_the_context_to_figures_that_want_it():
    results = {r.spec.key: r for r in figures.build("idio", _chase(), CONTEXT)}
    assert results["idio.dependent_load"].figure is not None
    assert results["idio.dependent_load"].error is None


# ----------------------------------------------------------------------- same line


def _persist(patterns=("same", "seq", "rand")):
    runs = []
    for medium in ("dram", "pool"):
        for flush in ("clflush", "clflushopt", "clwb", "ntstore"):
            for pattern in patterns:
                latency = {"same": 400.0, "seq": 120.0, "rand": 150.0}[pattern]
                runs.append(_run(len(runs), "core", "persist",
                                 {"medium": medium, "domain": "adr", "flush": flush, "size": 64, "pattern": pattern,
                                  "threads": 1},
                                 {"latency_p50": Metric(value=latency, unit="ns", kind="measured"),
                                  "throughput": 1e9 / latency,
                                  **({"published_latency": _published(62.3)} if flush == "clwb" else {})}))
    return runs


def test_same_line_figure_has_a_bar_per_pattern_and_flush():
    fig = core.persist_same_line(_persist())
    assert isinstance(fig, Figure)
    bars = sum(len(ax.patches) for ax in fig.axes)
    assert bars == 2 * 4 * 3
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels[:3] == ["same bytes again", "sequential lines", "random lines"]
    assert any(label.startswith("published, [OptaneGuide]") for label in labels)
    assert sum(len(ax.collections) for ax in fig.axes) == 2  # one published line per panel, at clwb


def test_same_line_figure_needs_the_same_pattern():
    assert core.persist_same_line(_persist(patterns=("seq", "rand"))) is None
    # and the size sweeps leave `same` out of their columns
    fig = core.persist_latency(_persist())
    assert all("same" not in ax.get_title() for ax in fig.axes)


# ----------------------------------------------------------------------- update share


def _updates():
    runs = []
    for mode in ("dram", "pmem-volatile", "persist", "tx"):
        for structure in ("array", "hashtable", "skiplist", "bptree"):
            for u in (0, 25, 50, 75, 100):
                metrics = {"throughput": Metric(value=1e6 / (1 + u / 25), unit="ops/s", kind="measured")}
                if u == 100 and structure == "bptree" and mode in ("dram", "tx"):
                    metrics["published_throughput"] = _published(1420e3 if mode == "dram" else 49e3)
                runs.append(_run(len(runs), "ds", "update_ratio",
                                 {"structure": structure, "mode": mode, "updates": u, "threads": 1}, metrics))
    return runs


def test_update_ratio_draws_a_panel_per_mode_with_published_stars():
    fig = ds.update_ratio(_updates())
    assert isinstance(fig, Figure)
    assert [ax.get_title() for ax in fig.axes] == ["mode: dram", "mode: pmem-volatile", "mode: persist", "mode: tx"]
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels[:4] == ["array", "hashtable", "skiplist", "bptree"]
    assert "published, [StoredsBench] §4" in labels


def test_update_ratio_absent_is_none():
    assert ds.update_ratio([]) is None
    assert ds.update_ratio([r for r in _updates() if r.param("mode") == "x"]) is None


# ----------------------------------------------------------------------- designs


def _designs():
    rows = []
    for design, family, role in (("log.zero", "log", "design"), ("ds.bptree", "ds", "design"),
                                 ("corpus.wrap-log", "corpus", "simulator test program")):
        rows.append(_run(len(rows), "crash", "designs", {"design": design}, {},
                         notes={"family": family, "role": role, "domains": "adr, eadr", "description": "d",
                                "tests": "the test suite crash-tests every registered design"}))
    return rows


def _crash_run(index, design, domain, failures):
    return _run(index, "crash", design, {"domain": domain, "granularity": "line"},
                {"states_checked": 100.0, "failures": float(failures)}, status="error" if failures else "ok")


def test_design_table_without_crash_runs_says_so():
    tables = crash.design_table(_designs())
    assert len(tables) == 1
    table = tables[0]
    assert table.collapsed
    assert [row[0] for row in table.rows] == ["ds.bptree", "log.zero", "corpus.wrap-log"]
    assert all(row[4] == "not crash-tested in this run" for row in table.rows)
    assert "crash-tests every registered design" in table.note


def test_design_table_takes_the_status_from_crash_runs():
    runs = _designs()
    runs += [_crash_run(len(runs), "log.zero", "adr", 0), _crash_run(len(runs) + 1, "log.zero", "eadr", 0),
             _crash_run(len(runs) + 2, "ds.bptree", "adr", 3)]
    rows = {row[0]: row for row in crash.design_table(runs)[0].rows}
    assert rows["log.zero"][4].startswith("passed in adr/line, eadr/line: 200 crash states")
    assert rows["ds.bptree"][4].startswith("FAILED in adr/line: 3 failing")
    assert rows["corpus.wrap-log"][4] == "not crash-tested in this run"
    # a crash-only results file: the tested designs, from their runs
    only = crash.design_table([_crash_run(0, "log.zero", "adr", 0)])[0]
    assert [row[0] for row in only.rows] == ["log.zero"]


def test_design_table_absent_is_empty():
    assert crash.design_table([]) == []


# ----------------------------------------------------------------------- pmlab crash exec


def _exec_run(index, granularity, failures, findings):
    run = _run(index, "crash", "exec:pmdk-map", {"domain": "adr", "granularity": granularity},
               {"crash_points": 17, "states_checked": 40, "duplicate_states": 3, "failures": len(failures),
                "states_per_second": 200}, status="ok" if not failures else "error")
    run.extra["failures"] = failures
    run.extra["findings"] = findings
    return run


def test_a_traced_runs_notes_survive_loading():
    from pmlab_report.model import run_from_dict
    raw = {"name": "crash.exec:redo/domain:adr/granularity:line", "suite": "crash", "case": "exec:redo",
           "params": {"domain": "adr", "granularity": "line"}, "status": "ok", "metrics": {},
           "findings": [], "trace": {"notes": ["put /dev/shm/p back as the first traced run found it"]}}
    run = run_from_dict(0, raw)
    assert crash.exec_tables([run])[-1].rows == (("redo", "adr", "put /dev/shm/p back as the first traced run found it"),)


def test_exec_table_names_programs_first_failures_and_findings_once():
    finding = {"kind": "empty_fence", "site": "pmemobj_tx_commit (tx.c:12)", "count": 4}
    failure = {"replay": "3:1", "site": "btree_map_insert (btree_map.c:310)", "property": "exited with 1: key #4 missing"}
    runs = [_exec_run(0, "line", [], [finding]), _exec_run(1, "word", [failure], [finding])]
    main, findings = crash.exec_tables(runs)
    assert [row[2] for row in main.rows] == ["line", "word"]
    assert main.rows[0][-1] == "–"
    assert main.rows[1][-1] == "3:1: btree_map_insert (btree_map.c:310) — exited with 1: key #4 missing"
    assert findings.rows == (("pmdk-map", "adr", "empty_fence", "pmemobj_tx_commit (tx.c:12)", "4"),)
    # a program's runs are not registered designs
    assert crash.design_table(runs) == []
    # what a traced run noted, once per program and domain
    note = "--check passed an image of random bytes too: …"
    for r in runs:
        r.extra["trace"] = {"notes": [note]}
    assert crash.exec_tables(runs)[2].rows == (("pmdk-map", "adr", note),)
    assert crash.exec_tables([_crash_run(0, "log.zero", "adr", 0)]) == []


def test_exec_rows_of_later_schedules_name_their_schedule_and_keep_their_own_findings():
    finding = {"kind": "empty_fence", "site": "append (log.c:12)", "count": 4}
    own, later = _exec_run(0, "line", [], [finding]), _exec_run(1, "line", [], [dict(finding, count=6)])
    later.params["schedule"] = 2
    main, findings = crash.exec_tables([own, later])
    assert [row[1] for row in main.rows] == ["adr", "adr, schedule 2"]
    assert [(row[1], row[-1]) for row in findings.rows] == [("adr", "4"), ("adr, schedule 2", "6")]
