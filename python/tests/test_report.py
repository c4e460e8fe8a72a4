import re

import pytest

from pmlab_report import model, render

EXTERNAL = re.compile(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", re.IGNORECASE)


@pytest.fixture(scope="module")
def quick_html():
    from conftest import _QUICK
    return render.render_report(model.from_document(_QUICK))


@pytest.fixture(scope="module")
def partial_html():
    from conftest import _PARTIAL
    return render.render_report(model.from_document(_PARTIAL))


def test_report_is_a_full_page(quick_html):
    assert quick_html.startswith("<!DOCTYPE html>")
    assert quick_html.rstrip().endswith("</html>")


def test_report_embeds_the_core_figures(quick_html):
    images = re.findall(r'<img [^>]*src="data:image/png;base64,[A-Za-z0-9+/=]+"', quick_html)
    assert len(images) == 3
    assert quick_html.count("<figcaption>") == 3
    assert "vocabulary time / raw-intrinsics time" in quick_html
    assert 'class="warn"' not in quick_html  # no figure failed


def test_report_is_offline(quick_html):
    assert not EXTERNAL.search(quick_html)
    scripts = re.findall(r"<script([^>]*)>", quick_html, re.IGNORECASE)
    assert scripts == [""]  # the one inline sort script, loading nothing
    assert "@import" not in quick_html and "url(" not in quick_html


def test_header(quick_html):
    for text in ("20261121-214000", "2026-11-21T21:40:00Z",
                 "pmlab run core --quick --out results/x", "quick run"):
        assert text in quick_html


def test_context(quick_html):
    for text in ("AMD EPYC (fixture)", "clflushopt", "movdir64b", "L3 unified: 32 MiB",
                 "NUMA nodes", "Linux 6.1.0 x86_64", "/dev/shm/pmlab-0.pool", "emulated on tmpfs",
                 "page", "Durability domain", "adr", "Flush instruction", "clwb",
                 "perf_event_open: not supported", "0123456789abcdef", "Git revision", "unknown",
                 "9.10 ns", "2.45 GHz"):
        assert text in quick_html, text
    assert "<code>idio.numa</code></td><td>one NUMA node" in quick_html


def test_error_run_and_reason(quick_html):
    assert "region of 64 MiB needed, pool has 32 MiB" in quick_html
    assert 'class="badge status-error"' in quick_html


def test_badges_for_the_three_kinds(quick_html):
    assert 'class="badge kind-measured"' in quick_html
    assert 'model: dcpmm</span>' in quick_html
    assert 'title="published: PMIdioBench artifact, pmem-idiosyncrasies.txt (I3)">pub [1]' in quick_html
    assert '<li value="1">PMIdioBench artifact, pmem-idiosyncrasies.txt (I3)</li>' in quick_html
    for kind in ("<b>measured</b>", "<b>modelled</b>", "<b>published</b>"):
        assert kind in quick_html  # the legend


def test_every_metric_column_or_cell_has_a_badge(quick_html):
    tables = re.findall(r'<table class="runs sortable">(.*?)</table>', quick_html, re.S)
    assert tables
    checked = 0
    for table in tables:
        head = re.findall(r"<th>(.*?)</th>", table.split("</thead>")[0], re.S)
        rows = re.findall(r"<tr[^>]*>(.*?)</tr>", table.split("<tbody>")[1], re.S)
        for row in rows:
            cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
            if len(cells) != len(head):
                continue  # a run without metrics: its reason spans the metric columns
            for header, cell in zip(head, cells):
                if 'class="num"' not in row or not re.search(r"\d", cell):
                    continue
                if 'class="unit"' in header or "(mixed)" in header:
                    checked += 1
                    assert 'class="badge kind-' in header or 'class="badge kind-' in cell, (header, cell)
    assert checked


def test_suite_without_figures_gets_a_table(quick_html):
    section = quick_html[quick_html.index('<section id="suite-other">'):]
    assert "No figures are registered for suite" in section
    assert '<table class="runs sortable">' in section
    assert "Runs of <code>other.thing</code>" in section
    assert '<th>throughput <span class="unit">(Mops/s)</span>' in section
    assert '<td class="num" data-v="1000000.0">1.00</td>' in section


def test_numbers_are_formatted(quick_html):
    # Units sit in the column headers; the cells hold the digits on the column's scale.
    assert '<span class="unit">(Mops/s)</span>' in quick_html and ">89.9</td>" in quick_html
    assert '<th>bandwidth <span class="unit">(MiB/s)</span>' in quick_html and ">5490</td>" in quick_html
    assert '<span class="unit">(ns)</span>' in quick_html and ">10.6</td>" in quick_html


def test_partial_report(partial_html):
    assert len(re.findall(r"<img ", partial_html)) == 3
    assert "no pool used" in partial_html
    assert "TSC not used" in partial_html
    assert "No case or sweep was left out before the run" in partial_html
    assert "size 256 not in quick sweep" in partial_html
    assert "clflush faulted on pool mapping" in partial_html
    assert 'class="badge status-skipped"' in partial_html
    assert "Not plotted: 1 skipped run" in partial_html


def test_figure_not_drawn_is_explained(partial_doc):
    partial_doc["runs"] = [r for r in partial_doc["runs"] if r["case"] == "overhead"]
    html = render.render_report(model.from_document(partial_doc))
    assert len(re.findall(r"<img ", html)) == 1
    assert html.count("not drawn: this run has no usable core.persist data") == 3


def test_html_is_escaped(partial_doc):
    partial_doc["context"]["command_line"] = "pmlab run <script>alert(1)</script>"
    partial_doc["runs"][2]["metrics"]["bandwidth"]["unit"] = "<b>"
    partial_doc["runs"] = partial_doc["runs"][2:4]
    html = render.render_report(model.from_document(partial_doc))
    assert "<script>alert" not in html and "&lt;script&gt;" in html
    assert "<b>)" not in html


def test_missing_published_data_is_named(partial_doc):
    partial_doc["context"]["reference_data"] = {
        "directory": "/nowhere", "found_by": "PMLAB_REFERENCE_DIR",
        "missing": [{"file": "optane-study/02-best_case_latency.csv", "reason": "not found"}]}
    html = render.render_report(model.from_document(partial_doc))
    assert "Published comparisons missing" in html
    assert "optane-study/02-best_case_latency.csv" in html and "/nowhere" in html


def test_no_warning_when_every_published_file_was_read(partial_doc):
    partial_doc["context"]["reference_data"] = {"directory": "/src/data/reference", "found_by": "source tree",
                                                "missing": []}
    assert "Published comparisons missing" not in render.render_report(model.from_document(partial_doc))
    partial_doc["context"].pop("reference_data")  # results written before the data was tracked
    assert "Published comparisons missing" not in render.render_report(model.from_document(partial_doc))


def test_memory_tiers_are_a_table_with_their_evidence(partial_doc):
    partial_doc["context"]["memory_tiers"] = {
        "initiator_node": 0, "cxl_memdevs": [], "cxl_regions": [], "dax_devices": [],
        "nodes": [{"node": 0, "label": "local", "evidence": "the initiator node", "cpus": 2,
                   "memory_bytes": 8 << 30, "distances": [10, 14], "hmat": []},
                  {"node": 2, "label": "cxl", "evidence": "dax0.0 of CXL region0 <onlined>", "cpus": 0,
                   "memory_bytes": 64 << 30, "distances": [14, 10], "hmat": []}],
        "notes": ["no HMAT access attributes"]}
    html = render.render_report(model.from_document(partial_doc))
    assert "Memory tiers" in html and "<td>cxl</td>" in html
    assert "dax0.0 of CXL region0 &lt;onlined&gt;" in html and "no HMAT access attributes" in html
    assert "&quot;cxl_memdevs&quot;" not in html  # not dumped as JSON


def test_the_pool_memory_and_its_persistence_domain_as_the_runner_traced_them():
    cxl = {"label": "cxl-pmem", "persistence_domain": "memory_controller",
           "evidence": "/dev/pmem1 in nvdimm region region1, provided by CXL persistent-memory region region0"}
    html = render._pool_backing(cxl)
    assert html.startswith("cxl-pmem — durable once written back to the memory controller (the ADR model")
    assert "CXL persistent-memory region region0" in html
    assert "persistence domain not reported: unknown" in render._pool_backing({"label": "devdax"})
    assert render._pool_backing({"label": "dram", "evidence": "a tmpfs file system"}).startswith(
        "dram — not persistent")
    assert render._pool_backing(None) == render.DASH
