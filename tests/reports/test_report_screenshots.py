"""scripts/report_screenshots.py in real headless Chromium at 1,280 px: the demo comparison
and the DRESS reproduction (from its archived run), screenshotted whole and first screen.

The screenshots are kept as test artefacts in ``$SCHEDLAB_SCREENSHOTS`` when it is set
(CI uploads that folder), else in the test's temporary folder.
"""
import os
from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
import pytest

from scripts.report_screenshots import FIRST_SCREEN, WIDTH, take

# deselected by tests/reports/conftest.py where no chromium is installed
pytestmark = pytest.mark.browser

#: the demo comparison is about 5,800 px tall (7 figures); a reproduction report keeps its
#: per-job tables folded away, so it stays near 1,500 px
MAX_COMPARE_HEIGHT = 9000
MAX_REPRODUCTION_HEIGHT = 2500


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    out = Path(os.environ.get("SCHEDLAB_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    return take(out, papers=["dress"], work=tmp_path_factory.mktemp("reports"))


def _png(path) -> np.ndarray:
    img = mpimg.imread(path)[..., :3]
    assert img.shape[1] == WIDTH, (path, img.shape)
    return img


def test_screenshots_are_1280_wide_and_bounded(shots):
    assert set(shots) == {"compare", "reproduce-dress"}
    for name, f in shots.items():
        assert f["page_width"] <= WIDTH, f            # nothing wider than the window
        full, first = _png(f["full_page"]), _png(f["first_screen"])
        assert full.shape[0] == f["page_height"] and first.shape[0] == FIRST_SCREEN
        # not blank: a good share of non-white pixels
        assert (full.min(axis=2) < 0.8).mean() > 0.03, name
    assert shots["compare"]["page_height"] <= MAX_COMPARE_HEIGHT
    assert shots["reproduce-dress"]["page_height"] <= MAX_REPRODUCTION_HEIGHT


def test_reproduction_first_screen_shows_the_claims_table(shots):
    f = shots["reproduce-dress"]
    assert f["first_table_columns"] == ["claim", "paper", "accept", "measured (95% CI)",
                                        "verdict", "robust", "mechanism", "evidence"]
    assert f["first_table_top"] < FIRST_SCREEN // 2
    # the table's header row (light grey-blue band) is inside the first screen
    img = _png(f["first_screen"])
    row = img[f["first_table_top"] + 4, 40:WIDTH - 40]
    assert np.allclose(row.mean(axis=0), [0xF1 / 255, 0xF4 / 255, 0xF8 / 255], atol=0.06)


def test_compare_opens_with_the_headline_figure(shots):
    """The first screen of the comparison holds the ratio figure (its metric rows are
    banded in light grey) below the header, before any table."""
    f = shots["compare"]
    img = _png(f["first_screen"])
    assert f["first_table_top"] > FIRST_SCREEN            # the tables come after the figure
    band = img[250:FIRST_SCREEN - 20, 40:1000]
    assert (band.min(axis=2) < 0.985).mean() > 0.2
