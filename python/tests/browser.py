"""Measure a report page in headless Chromium: its height, tables wider than the page, images that did not
load, whether the findings section is there. Also usable by hand:

    python3 python/tests/browser.py results/<run>/report.html [--screenshot page.png]

The page is copied with a measuring script appended (the report itself carries none of this); Chromium's
--dump-dom then returns the DOM, into which the script wrote its measurements as JSON. No DevTools client
is needed, so the check has no dependency beyond the browser.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

WIDTH = 1400
MARKER = "pmlab-browser-measure"

# Runs once the page and its images have loaded: the height as the page opens (tables folded), then, with
# every <details> unfolded, the tables. A table inside a horizontally scrolling box may be wider than the
# page as long as the box itself fits.
_MEASURE = """
<script>
window.addEventListener('load', function () {
  var page = document.documentElement.clientWidth;
  var height = document.body.scrollHeight;
  var findingsTop = document.getElementById('findings') ? document.getElementById('findings').offsetTop : -1;
  // Tables are measured unfolded: a reader who opens one must not get a page wider than the window.
  document.querySelectorAll('details').forEach(function (d) { d.open = true; });
  var wide = [];
  document.querySelectorAll('table').forEach(function (t, i) {
    var r = t.getBoundingClientRect();
    if (r.width === 0) return;
    var box = t, right = r.right;
    for (var p = t.parentElement; p; p = p.parentElement) {
      var o = getComputedStyle(p).overflowX;
      if (o === 'auto' || o === 'scroll' || o === 'hidden') { right = p.getBoundingClientRect().right; break; }
    }
    if (right > page + 1) wide.push({index: i, right: right, text: (t.innerText || '').slice(0, 60)});
  });
  var images = Array.from(document.images);
  var broken = images.filter(function (im) { return !(im.complete && im.naturalWidth > 0); })
                     .map(function (im) { return im.alt || im.src.slice(0, 40); });
  var out = {
    height: height,
    height_unfolded: document.body.scrollHeight,
    findings_top: findingsTop,
    page_width: page,
    scroll_width: document.documentElement.scrollWidth,
    tables: document.querySelectorAll('table').length,
    wide_tables: wide,
    images: images.length,
    broken_images: broken,
    findings: !!document.getElementById('findings'),
  };
  var pre = document.createElement('pre');
  pre.id = '%s';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
""" % MARKER


class BrowserMissing(RuntimeError):
    pass


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    raise BrowserMissing("no chromium on PATH (scripts/setup.sh installs Debian's chromium)")


def _flags(width: int, height: int) -> list[str]:
    return ["--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars", "--mute-audio",
            "--no-first-run", "--disable-extensions", f"--window-size={width},{height}",
            "--virtual-time-budget=10000"]


def measure(html_path: str, width: int = WIDTH, screenshot: str | None = None, timeout: float = 120) -> dict:
    """The measurements of the page at `width` CSS pixels; with `screenshot`, also a PNG of its top
    (as tall as the page, capped at 16,000 px so a long page stays a readable file)."""
    browser = chromium()
    with open(html_path, encoding="utf-8") as handle:
        page = handle.read()
    cut = page.rfind("</body>")
    probe = page[:cut] + _MEASURE + page[cut:] if cut >= 0 else page + _MEASURE
    with tempfile.TemporaryDirectory(prefix="pmlab-browser-") as tmp:
        probe_path = os.path.join(tmp, "probe.html")
        with open(probe_path, "w", encoding="utf-8") as handle:
            handle.write(probe)
        # The screenshot shows the page as a reader opens it: without the probe, which unfolds the tables.
        page_path = os.path.join(tmp, "page.html")
        with open(page_path, "w", encoding="utf-8") as handle:
            handle.write(page)
        profile = ["--user-data-dir=" + os.path.join(tmp, "profile")]
        done = subprocess.run([browser, *_flags(width, 900), *profile, "--dump-dom", "file://" + probe_path],
                              capture_output=True, text=True, timeout=timeout)
        found = re.search(r'<pre id="%s">(.*?)</pre>' % MARKER, done.stdout, re.S)
        if not found:
            raise RuntimeError(f"chromium returned no measurements (exit {done.returncode}): "
                               f"{done.stderr.strip()[-400:]}")
        result = json.loads(found.group(1).replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
                            .replace("&quot;", '"'))
        if screenshot:
            height = max(200, min(int(result["height"]), 16000))
            subprocess.run([browser, *_flags(width, height), *profile,
                            "--screenshot=" + os.path.abspath(screenshot), "file://" + page_path],
                           capture_output=True, text=True, timeout=timeout, check=True)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("html")
    parser.add_argument("--width", type=int, default=WIDTH)
    parser.add_argument("--screenshot")
    args = parser.parse_args(argv)
    print(json.dumps(measure(args.html, args.width, args.screenshot), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
