"""Every packaged data file (presets, stored calibrations) is listed in pyproject's
package-data, so a regular (non-editable) install carries it too."""
from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

import schedlab

REPO = Path(__file__).resolve().parents[2]
PKG = Path(schedlab.__file__).parent


def test_package_data_covers_every_data_file():
    patterns = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]["schedlab"]
    files = [p.relative_to(PKG).as_posix() for folder in ("data", "papers")
             for p in (PKG / folder).rglob("*") if p.is_file() and p.suffix != ".py"
             and "__pycache__" not in p.parts]
    assert sum(f.endswith("/calibration.json") for f in files) == 4
    missing = [f for f in files if not any(fnmatch.fnmatchcase(f, pat) and
                                           f.count("/") == pat.count("/") for pat in patterns)]
    assert not missing, f"not in [tool.setuptools.package-data]: {missing}"
