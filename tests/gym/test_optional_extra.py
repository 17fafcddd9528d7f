"""The [gym] extra is optional: schedlab imports without gymnasium, schedlab.gym says why not."""
from __future__ import annotations

import subprocess
import sys
import textwrap


def test_without_gymnasium():
    code = textwrap.dedent("""
        import sys
        sys.modules["gymnasium"] = None          # as if it were not installed
        import schedlab
        res = schedlab.simulate("builtin:demo", "builtin:demo", "fifo", seed=0)
        assert res.summary["jobs_finished"] > 0
        assert "schedlab.gym" not in sys.modules
        try:
            import schedlab.gym
        except ImportError as exc:
            print("ImportError:", exc)
        else:
            raise SystemExit("schedlab.gym imported without gymnasium")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert "pip install 'schedlab[gym]'" in out.stdout
