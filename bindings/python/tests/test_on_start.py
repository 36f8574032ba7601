"""Sandbox.run_code/run's on_start hook: the stop() it hands out ends the
running box from another thread (kern-mcp cancels requests with it)."""

import subprocess
import threading
import time

from kern_sandbox import Sandbox


def test_stop_from_another_thread_ends_the_box_and_leaves_nothing(kern_bin, tmp_path):
    stops = []
    with Sandbox(image="host", workspace=str(tmp_path), timeout_s=60) as sbx:
        def on_start(stop):
            stops.append(stop)
            threading.Timer(0.5, stop).start()

        t0 = time.monotonic()
        r = sbx.run_code("import time; time.sleep(30); open('late.txt', 'w').write('x')",
                         on_start=on_start)
        took = time.monotonic() - t0
    assert len(stops) == 1
    assert took < 10, took
    assert r.fault is not None and not r.success
    assert not (tmp_path / "late.txt").exists()
    ps = subprocess.run([kern_bin, "ps", "-q"], capture_output=True, text=True, check=True)
    assert ps.stdout.split() == []


def test_run_hands_out_stop_too_and_a_late_stop_is_harmless(kern_bin, tmp_path):
    stops = []
    with Sandbox(image="host", workspace=str(tmp_path)) as sbx:
        r = sbx.run(["true"], on_start=stops.append)
        assert r.success and len(stops) == 1
        stops[0]()  # the box is gone: nothing happens, nothing raises
        assert sbx.run(["echo", "again"]).stdout == "again\n"
