"""Render the report in real headless Chromium at 1,280 px: no JS errors, every image decodes,
nothing wider than the window, and a screenshot that is not blank.

The report itself holds no script; the test renders a copy with a probe script appended,
which writes what it measured into attributes of ``<html>`` for ``--dump-dom`` to return.
"""
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from scripts.report_screenshots import chromium_path

CHROMIUM = chromium_path()

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", "--disable-sync", "--hide-scrollbars",
         "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000"]
WIDTH = 1280

# deselected by tests/reports/conftest.py where no chromium is installed
pytestmark = pytest.mark.browser

PROBE = """<script>
window.addEventListener("load", function () {
  var imgs = document.images, ok = 0;
  for (var i = 0; i < imgs.length; i++) { if (imgs[i].complete && imgs[i].naturalWidth > 0) ok++; }
  var d = document.documentElement, vw = d.clientWidth, wide = [];
  var els = document.querySelectorAll("body *");
  for (var j = 0; j < els.length; j++) {
    var r = els[j].getBoundingClientRect();
    if (r.width > 0 && r.right > vw + 1 && !els[j].closest(".tw")) wide.push(els[j].tagName);
  }
  var boxes = document.querySelectorAll(".tw"), scrolled = 0;
  for (var k = 0; k < boxes.length; k++) { if (boxes[k].scrollWidth > boxes[k].clientWidth + 1) scrolled++; }
  d.setAttribute("data-images-ok", String(ok));
  d.setAttribute("data-images-total", String(imgs.length));
  d.setAttribute("data-viewport", String(vw));
  d.setAttribute("data-scroll-width", String(d.scrollWidth));
  d.setAttribute("data-too-wide", wide.slice(0, 5).join(","));
  d.setAttribute("data-tables-scrolled", String(scrolled));
});
</script>"""


def _chromium(args, tmp_path, name):
    prof = tmp_path / f"profile-{name}"
    r = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={prof}", *args], capture_output=True,
                       text=True, timeout=120, env={**os.environ, "HOME": str(tmp_path)})
    return r


def _probe(report: Path, tmp_path: Path) -> tuple[dict[str, str], str]:
    page = tmp_path / "probed.html"
    page.write_text(report.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"),
                    encoding="utf-8")
    r = _chromium(["--dump-dom", f"--window-size={WIDTH},2000", page.resolve().as_uri()], tmp_path, "dom")
    assert r.returncode == 0, r.stderr[-2000:]
    assert "Uncaught" not in r.stderr and "SyntaxError" not in r.stderr
    head = re.search(r"<html[^>]*>", r.stdout)
    assert head, r.stdout[:500]
    return dict(re.findall(r'data-([a-z-]+)="([^"]*)"', head.group(0))), r.stdout


def test_report_renders_in_chromium(compare_report, tmp_path):
    _, out = compare_report
    report = out / "report.html"
    attrs, dom = _probe(report, tmp_path)
    for sec in ("headline", "summary", "utilization", "cdfs", "jobs", "evictions", "heatmap", "rerun"):
        assert f'id="{sec}"' in dom, sec
    assert "images-ok" in attrs, "the probe script did not run"
    n_img = int(attrs["images-total"])
    assert n_img >= 4 and int(attrs["images-ok"]) == n_img
    # at 1,280 px: no horizontal scroll bar, no element past the right edge, and the tables fit
    assert int(attrs["viewport"]) <= WIDTH
    assert int(attrs["scroll-width"]) <= int(attrs["viewport"]), attrs
    assert attrs["too-wide"] == "", attrs
    assert attrs["tables-scrolled"] == "0", attrs
    # nothing meant for tests on the page
    assert "images decoded" not in dom and "render-check" not in dom

    shot = tmp_path / "shot.png"
    r = _chromium([f"--screenshot={shot}", f"--window-size={WIDTH},2400", report.resolve().as_uri()],
                  tmp_path, "shot")
    assert r.returncode == 0 and shot.exists(), r.stderr[-2000:]
    keep = os.environ.get("SCHEDLAB_KEEP_SCREENSHOT")
    if keep:
        shutil.copy(shot, keep)
    import matplotlib.image as mpimg
    img = mpimg.imread(shot)[..., :3]
    assert img.shape[0] >= 2000 and img.shape[1] == WIDTH
    # not blank: many distinct colours and a good share of non-white pixels
    flat = (img.reshape(-1, 3) * 255).astype(np.uint8)
    assert len(np.unique(flat[:: 37], axis=0)) > 50
    assert (flat.min(axis=1) < 200).mean() > 0.05
    # the header band (dark blue) spans the full width: the page is laid out at 1,280 px
    top = (img[10] * 255).astype(int)
    assert (top[:, 2] > top[:, 0] + 20).mean() > 0.95
    # the right-most 28 px (inside the page padding) are background, not clipped content
    right = (img[200:, -28:] * 255).reshape(-1, 3)
    assert (right.min(axis=1) > 235).mean() > 0.97
