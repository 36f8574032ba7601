"""examples/agent_loop.py runs and tells its "model" what happened."""

import os
import subprocess
import sys

from conftest import PACKAGE_ROOT, TOP


def test_agent_loop(kern_bin):
    env = dict(os.environ, PYTHONPATH=str(PACKAGE_ROOT))
    out = subprocess.run([sys.executable, str(TOP / "examples" / "agent_loop.py")],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "5 rows; columns: region, month, units" in text
    assert "[exited with code 1]\nstderr: KeyError: 'Region'" in text
    assert "value: {'north': 270, 'south': 175, 'east': 40}\nfiles: totals.json (created)" in text
    assert "[sandbox: timeout] exceeded the 2s time limit (killed by the binding)" in text
    assert text.rstrip().endswith("bytes of SVG, 3 bars")
