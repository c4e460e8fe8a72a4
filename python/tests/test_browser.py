"""The report in a real browser (headless Chromium): a report of several suites' fixtures must open with
its findings, stay under the height limit with its tables folded, keep every table inside the page when
unfolded, and load every figure. The screenshot is kept in python/tests/artifacts/ (ignored by git).

Chromium is part of the setup (scripts/setup.sh), so a missing browser fails the test; a developer without
it may set PMLAB_ALLOW_NO_BROWSER=1 to skip instead.
"""

import copy
import json
import os
import pathlib

import pytest

import browser
from pmlab_report import model, render

FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures"
ARTIFACTS = pathlib.Path(__file__).resolve().parent / "artifacts"
HEIGHT_LIMIT = 40_000  # px at 1400 px wide, the limit a `make run` report must meet
SUITES = ("core_quick", "primitives_quick", "idio_quick", "ptm_quick")


def _browser_or_fail():
    try:
        return browser.chromium()
    except browser.BrowserMissing as exc:
        if os.environ.get("PMLAB_ALLOW_NO_BROWSER") == "1":
            pytest.skip(f"{exc}; skipped because PMLAB_ALLOW_NO_BROWSER=1")
        pytest.fail(f"{exc}; install it with scripts/setup.sh, or set PMLAB_ALLOW_NO_BROWSER=1 to skip")


def _combined_document():
    """The core fixture's context with the runs of several suites' fixtures."""
    docs = [json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8")) for name in SUITES]
    combined = copy.deepcopy(docs[0])
    combined["runs"] = [run for doc in docs for run in doc["runs"]]
    # A long selection without spaces (a --filter regular expression) must wrap, not widen the page.
    combined["context"]["command_line"] = "pmlab run all --quick --filter '" + "|".join(
        f"suite{i}\\.case{i}/param:(a|b|c)" for i in range(40)) + "'"
    return combined


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    _browser_or_fail()
    html = render.render_report(model.from_document(_combined_document()))
    page = tmp_path_factory.mktemp("browser") / "report.html"
    page.write_text(html, encoding="utf-8")
    ARTIFACTS.mkdir(exist_ok=True)
    screenshot = ARTIFACTS / "report.png"
    result = browser.measure(str(page), screenshot=str(screenshot))
    print(f"browser screenshot: {screenshot}")
    return result, screenshot


def test_findings_open_the_page(measured):
    result, _ = measured
    assert result["findings"]
    assert 0 <= result["findings_top"] < 900  # on the first screen, under the header


def test_height_with_tables_folded(measured):
    result, _ = measured
    assert result["height"] < HEIGHT_LIMIT, result
    # Folding must be what keeps it short: the unfolded page is much taller.
    assert result["height_unfolded"] > result["height"]


def test_no_table_wider_than_the_page(measured):
    result, _ = measured
    assert result["tables"] > 10
    assert result["wide_tables"] == []
    assert result["scroll_width"] <= result["page_width"]


def test_every_figure_loaded(measured):
    result, _ = measured
    assert result["images"] > 10
    assert result["broken_images"] == []


def test_screenshot_kept(measured):
    _, screenshot = measured
    assert screenshot.stat().st_size > 10_000


def test_a_missing_browser_fails_unless_allowed(monkeypatch):
    def missing():
        raise browser.BrowserMissing("no chromium on PATH")

    monkeypatch.setattr(browser, "chromium", missing)
    monkeypatch.delenv("PMLAB_ALLOW_NO_BROWSER", raising=False)
    with pytest.raises(pytest.fail.Exception, match="scripts/setup.sh"):
        _browser_or_fail()
    monkeypatch.setenv("PMLAB_ALLOW_NO_BROWSER", "1")
    with pytest.raises(pytest.skip.Exception, match="PMLAB_ALLOW_NO_BROWSER=1"):
        _browser_or_fail()
