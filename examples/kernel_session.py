#!/usr/bin/env python3
"""A kernel() session: one warm interpreter in one long-lived box.

An agent that explores data step by step wants the last step's variables
in the next one. Sandbox.run_code gives every call a fresh box (files
persist, memory does not); Sandbox.kernel() keeps one python3 running, so
cells share state and a cell costs a fraction of a millisecond. A fault
(here, a cell past its deadline) ends the kernel: the workspace survives,
the memory does not, and the next call says so.

    examples/kernel_session.py [IMAGE]      (default: the built-in host image)
"""

import statistics
import sys
import time

import kern_sandbox as kern

image = sys.argv[1] if len(sys.argv) > 1 else "host"

with kern.Sandbox(image=image, timeout_s=10) as sbx, sbx.kernel() as k:
    # Step 1: load. The variable lives on in the interpreter.
    k.run_code("import statistics\nreadings = [3, 1, 4, 1, 5, 9, 2, 6]")
    # Step 2: the model asks for more, building on step 1.
    k.run_code("readings += [5, 3, 5]\nsummary = {'n': len(readings), 'max': max(readings)}")
    # Step 3: a trailing expression comes back as a rich result.
    r = k.run_code("summary['mean'] = round(statistics.mean(readings), 2)\nsummary")
    print("summary:", r.results[0].text)
    # Files written by a cell are in the workspace, for the host to read.
    r = k.run_code("open('readings.txt', 'w').write('\\n'.join(map(str, readings)))")
    print("files:", [f.path for f in r.files])
    print("host reads:", sbx.read_file("readings.txt").decode().split())

    # A warm cell against a cold box, measured here.
    def median_ms(call, times):
        samples = []
        for _ in range(times):
            start = time.perf_counter()
            call("pass")
            samples.append((time.perf_counter() - start) * 1000)
        return statistics.median(samples)

    w, c = median_ms(k.run_code, 200), median_ms(sbx.run_code, 5)
    print("timing: warm cell %.3f ms, cold run_code %.1f ms (%.0fx)" % (w, c, c / w))

    # A runaway cell: the deadline tears the kernel down.
    r = k.run_code("while True: pass", timeout_s=1)
    print("runaway cell:", r.fault.type, "-", r.fault.message)
    try:
        k.run_code("summary")
    except kern.SandboxError as e:
        print("next call:", str(e).split(";")[0])
    print("workspace kept:", [f.path for f in sbx.list_files()])
