"""Render the report in real headless Chromium: no JS errors, images decode, not blank."""
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

CHROMIUM = next((p for p in (os.environ.get("CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
                             shutil.which("chromium-browser")) if p and Path(p).exists()), None)
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", "--disable-sync", "--hide-scrollbars",
         "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000"]

pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="headless browser test skipped: Debian's chromium is not installed "
           "(apt-get install -y chromium; .ci/run installs it where it can)")


def _chromium(args, tmp_path, name):
    prof = tmp_path / f"profile-{name}"
    r = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={prof}", *args], capture_output=True,
                       text=True, timeout=120, env={**os.environ, "HOME": str(tmp_path)})
    return r


def test_report_renders_in_chromium(compare_report, tmp_path):
    _, out = compare_report
    url = (out / "report.html").resolve().as_uri()
    r = _chromium(["--dump-dom", url], tmp_path, "dom")
    assert r.returncode == 0, r.stderr[-2000:]
    dom = r.stdout
    for sec in ("rerun", "summary", "utilization", "cdfs", "jobs", "evictions", "heatmap"):
        assert f'id="{sec}"' in dom, sec
    m = re.search(r'data-images-ok="(\d+)" data-images-total="(\d+)"', dom)
    assert m, "the page's load script did not run"
    assert m.group(1) == m.group(2) == "5"
    assert "Uncaught" not in r.stderr and "SyntaxError" not in r.stderr

    shot = tmp_path / "shot.png"
    r = _chromium([f"--screenshot={shot}", "--window-size=1280,2400", url], tmp_path, "shot")
    assert r.returncode == 0 and shot.exists(), r.stderr[-2000:]
    import matplotlib.image as mpimg
    img = mpimg.imread(shot)[..., :3]
    assert img.shape[0] >= 2000 and img.shape[1] >= 1200
    # not blank: many distinct colours and a good share of non-white pixels
    flat = (img.reshape(-1, 3) * 255).astype(np.uint8)
    assert len(np.unique(flat[:: 37], axis=0)) > 50
    assert (flat.min(axis=1) < 200).mean() > 0.05
