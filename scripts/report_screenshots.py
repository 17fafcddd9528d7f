"""Screenshots of the reports in headless Chromium at 1,280 px, for a person to look at.

Builds the README's demo comparison report::

    schedlab compare -w examples/jobs.csv -c examples/cluster.yaml \\
        -p fifo,drf,examples/smallest_job_first.py --seeds 3 -o DIR/compare

and a reproduction report from each archived full run in ``schedlab/data/expected/<paper>/``,
then takes, for each report, a full-page screenshot (``<name>.png``, as tall as the page)
and a first-screen one (``<name>-first-screen.png``, 1,280 × 800 px, what a reader sees
on opening it). It prints what it measured: each page's height, and where the first table
of each reproduction report starts and which columns it has. ``screenshots.json`` in the
output folder holds the same figures.

    python scripts/report_screenshots.py OUT [--papers dress,drs,hybrid,rose] [--work DIR]

The pages are measured by rendering a copy with a small script appended (the reports hold
no script); the screenshots are of the reports as written. Chromium is Debian's
``/usr/bin/chromium`` (``CHROMIUM`` overrides it).
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
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WIDTH = 1280
FIRST_SCREEN = 800
#: the tallest full-page screenshot taken (a page taller than this is cut, and says so)
MAX_HEIGHT = 16000
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--virtual-time-budget=5000"]
DEMO = ["-w", "examples/jobs.csv", "-c", "examples/cluster.yaml",
        "-p", "fifo,drf,examples/smallest_job_first.py", "--seeds", "3"]

PROBE = """<script>
window.addEventListener("load", function () {
  var d = document.documentElement, t = document.querySelector("table");
  d.setAttribute("data-page-height", String(Math.ceil(d.scrollHeight)));
  d.setAttribute("data-page-width", String(Math.ceil(d.scrollWidth)));
  if (t) {
    var r = t.getBoundingClientRect(), heads = t.querySelectorAll("thead th"), names = [];
    for (var i = 0; i < heads.length; i++) names.push(heads[i].textContent);
    d.setAttribute("data-table-top", String(Math.round(r.top)));
    d.setAttribute("data-table-bottom", String(Math.round(r.bottom)));
    d.setAttribute("data-table-columns", names.join("|"));
  }
});
</script>"""


def chromium_path() -> str | None:
    """Debian's chromium, or ``$CHROMIUM``; None when there is none."""
    for p in (os.environ.get("CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
              shutil.which("chromium-browser")):
        if p and Path(p).exists():
            return p
    return None


def _chromium(browser: str, args: list[str], scratch: Path) -> subprocess.CompletedProcess:
    prof = Path(tempfile.mkdtemp(prefix="profile-", dir=scratch))
    return subprocess.run([browser, *FLAGS, f"--user-data-dir={prof}", *args],
                          capture_output=True, text=True, timeout=180,
                          env={**os.environ, "HOME": str(scratch)}, check=False)


def measure(browser: str, page: Path, scratch: Path) -> dict[str, str]:
    """The probe's figures for ``page`` at 1,280 px: page height and width, and the first
    table's top, bottom and column names."""
    probed = scratch / f"probed-{page.parent.name}-{page.name}"
    probed.write_text(page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"),
                      encoding="utf-8")
    r = _chromium(browser, ["--dump-dom", f"--window-size={WIDTH},{FIRST_SCREEN}",
                            probed.resolve().as_uri()], scratch)
    if r.returncode != 0:
        msg = f"chromium could not render {page}: {r.stderr[-1000:]}"
        raise RuntimeError(msg)
    head = re.search(r"<html[^>]*>", r.stdout)
    return dict(re.findall(r'data-([a-z-]+)="([^"]*)"', head.group(0) if head else ""))


def screenshot(browser: str, page: Path, png: Path, height: int, scratch: Path) -> Path:
    r = _chromium(browser, [f"--screenshot={png}", f"--window-size={WIDTH},{height}",
                            page.resolve().as_uri()], scratch)
    if r.returncode != 0 or not png.exists():
        msg = f"chromium took no screenshot of {page}: {r.stderr[-1000:]}"
        raise RuntimeError(msg)
    return png


def build_compare(work: Path) -> Path:
    """The README's demo comparison, through the command line, into ``work/compare``."""
    out = work / "compare"
    cmd = [sys.executable, "-m", "schedlab", "compare", *DEMO, "-o", str(out), "--overwrite"]
    r = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=900, check=False)
    if r.returncode != 0:
        msg = f"{' '.join(cmd)} exited {r.returncode}:\n{r.stderr[-2000:]}"
        raise RuntimeError(msg)
    return out / "report.html"


def build_reproduction(paper: str, work: Path) -> Path:
    """The report of the archived full run of ``paper``."""
    import schedlab
    from schedlab.reports.html import write_html
    from schedlab.reproduce.report import archived_result, report_sections
    folder = Path(schedlab.__file__).parent / "data" / "expected" / paper
    res = archived_result(folder, paper)
    return write_html(work / f"reproduce-{paper}" / "report.html",
                      f"{paper.upper()} reproduction", report_sections(res),
                      meta={"command": f"schedlab reproduce {paper}",
                            "archived run": f"schedlab/data/expected/{paper}/"})


def take(out: Path, *, papers: list[str], work: Path | None = None,
         browser: str | None = None) -> dict[str, dict[str, object]]:
    """Build the reports and screenshot them into ``out``; returns what was measured per
    report (also written to ``out/screenshots.json``)."""
    browser = browser or chromium_path()
    if browser is None:
        msg = "no chromium found: apt-get install -y chromium, or set CHROMIUM"
        raise RuntimeError(msg)
    out.mkdir(parents=True, exist_ok=True)
    work = work or out / "reports"
    work.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="shots-"))
    pages = {"compare": build_compare(work)}
    pages.update({f"reproduce-{p}": build_reproduction(p, work) for p in papers})
    found: dict[str, dict[str, object]] = {}
    try:
        for name, page in pages.items():
            m = measure(browser, page, scratch)
            height = int(m.get("page-height", FIRST_SCREEN))
            full = screenshot(browser, page, out / f"{name}.png", min(height, MAX_HEIGHT), scratch)
            first = screenshot(browser, page, out / f"{name}-first-screen.png", FIRST_SCREEN,
                               scratch)
            found[name] = {"report": str(page), "page_height": height,
                           "page_width": int(m.get("page-width", 0)),
                           "first_table_top": int(m["table-top"]) if "table-top" in m else None,
                           "first_table_bottom": int(m["table-bottom"]) if "table-bottom" in m else None,
                           "first_table_columns": m.get("table-columns", "").split("|"),
                           "full_page": str(full), "first_screen": str(first),
                           "cut": height > MAX_HEIGHT}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    (out / "screenshots.json").write_text(json.dumps(found, indent=2))
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, help="folder for the screenshots")
    ap.add_argument("--papers", default="dress,drs,hybrid,rose",
                    help="archived reproductions to render (comma-separated)")
    ap.add_argument("--work", type=Path, default=None,
                    help="folder for the reports themselves (default: OUT/reports)")
    args = ap.parse_args(argv)
    papers = [p.strip() for p in args.papers.split(",") if p.strip()]
    found = take(args.out, papers=papers, work=args.work)
    for name, f in found.items():
        cut = f" (cut at {MAX_HEIGHT:,} px)" if f["cut"] else ""
        print(f"{name}: page {f['page_width']} x {f['page_height']:,} px{cut}; first table at "
              f"y = {f['first_table_top']}-{f['first_table_bottom']} px, columns "
              f"{' | '.join(f['first_table_columns'])}")
        print(f"  {f['full_page']}\n  {f['first_screen']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
