"""The report's profile section: breakdown table, slowdown, inline flame graphs, the no-perf path."""

from pmlab_report import model, render
from pmlab_report.profiles import inline_svg, profile_section, slowdown_summary

SVG = ('<svg xmlns="http://www.w3.org/2000/svg" class="pmlab-flame"><g class="f" onclick="pmlabZoom(this)">'
       '<title>pmlab::persist::Persister::copy_nt (30 ns sampled, 30.00%; persistence)</title></g>'
       '<script><![CDATA[function pmlabZoom(g){}]]></script></svg>\n')


def _metric(value, unit="ratio"):
    return {"value": value, "unit": unit, "kind": "measured"}


def _profiled(doc, tmp_path, available=True):
    doc["context"]["profile"] = {"enabled": True, "available": available,
                                 "event": "cpu-clock" if available else None,
                                 "method": "perf record -e cpu-clock -a", "frequency_hz": 4999,
                                 "reason": None if available else "perf not found in PATH (install linux-perf)"}
    ok_runs = [r for r in doc["runs"] if r["status"] == "ok"]
    for i, run in enumerate(ok_runs[:2]):
        if available:
            run["metrics"]["profile_samples"] = _metric(100, "count")
            run["metrics"]["profile_share_persistence"] = _metric(0.25 + 0.5 * i)
            run["metrics"]["profile_share_other"] = _metric(0.75 - 0.5 * i)
            run["metrics"]["profile_slowdown"] = _metric(1.1 + 0.2 * i)
            run["notes"] = {"profile_event": "cpu-clock", "profile_svg": f"profiles/run{i}.svg"}
        else:
            run["notes"] = {"profile_missing": "perf not found in PATH (install linux-perf)"}
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "run0.svg").write_text(SVG, encoding="utf-8")
    return model.from_document(doc)


def test_breakdown_slowdown_and_inline_flame_graph(partial_doc, tmp_path):
    html = profile_section(_profiled(partial_doc, tmp_path), str(tmp_path))
    assert '<section id="profiles">' in html
    assert "25.0%" in html and "75.0%" in html          # persistence shares of the two runs
    assert "median 1.200×" in html and "1.100–1.300×" in html
    assert "Persister::copy_nt" in html                  # the flame graph is inline
    assert "<script" not in html and "onclick" not in html
    # The second run's SVG is missing: the report says so instead of failing.
    assert "flame graph file missing" in html


def test_no_perf_says_why(partial_doc, tmp_path):
    html = profile_section(_profiled(partial_doc, tmp_path, available=False), str(tmp_path))
    assert "No profile: perf not found in PATH (install linux-perf)" in html


def test_unprofiled_run_has_no_section(partial_doc):
    assert profile_section(model.from_document(partial_doc), None) == ""


def test_the_report_carries_the_section(partial_doc, tmp_path):
    results = _profiled(partial_doc, tmp_path, available=False)
    empty = model.Results(results.schema_version, results.pmlab_version, results.context, ())
    assert '<section id="profiles">' in render.render_report(empty, str(tmp_path))


def test_svg_outside_the_run_dir_is_refused(tmp_path):
    (tmp_path / "outside.svg").write_text(SVG, encoding="utf-8")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    assert inline_svg(str(run_dir), "../outside.svg") is None
    assert inline_svg(str(run_dir), "profiles/none.svg") is None


def test_slowdown_summary_without_throughput():
    assert "No run reports" in slowdown_summary([])
