#!/usr/bin/env python3
"""prewarm=N: boxes started while the agent thinks, used by a burst of calls.

An agent often fires several tool calls at once (run the tests, lint, a
quick check). With prewarm=8 the Sandbox keeps eight boxes started, each a
booted python3 that has run nothing; each call takes one and the box is
destroyed after it, so isolation is the one-shot run's. A worker thread
starts the replacements. The pool covers a burst, not a rate: a call that
finds it empty starts a cold box.

    examples/prewarm_burst.py [IMAGE]       (default: the built-in host image)
"""

import statistics
import sys
import time

import kern_sandbox as kern

image = sys.argv[1] if len(sys.argv) > 1 else "host"
CALLS = 8

with kern.Sandbox(image=image, prewarm=CALLS) as sbx:
    time.sleep(3)   # the agent thinks; the pool fills meanwhile

    # The burst: eight tool calls back to back, each in a box of its own.
    results, took = [], []
    for i in range(CALLS):
        start = time.perf_counter()
        results.append(sbx.run_code("import socket\nprint(%d * %d)\nsocket.gethostname()" % (i, i)))
        took.append((time.perf_counter() - start) * 1000)
    ok = all(r.success and r.stdout == "%d\n" % (i * i) for i, r in enumerate(results))
    boxes = {r.results[0].text for r in results}
    print("%d calls, all ok: %s, each in its own box: %s" % (CALLS, ok, len(boxes) == CALLS))

    # The same call in a box started for it (callbacks always start cold).
    cold = []
    for _ in range(3):
        start = time.perf_counter()
        sbx.run_code("pass", on_stdout=lambda _text: None)
        cold.append((time.perf_counter() - start) * 1000)
    burst_ms, cold_ms = statistics.median(took), statistics.median(cold)
    print("timing: burst p50 %.2f ms, cold run_code %.1f ms (ratio %.3f)"
          % (burst_ms, cold_ms, burst_ms / cold_ms))
