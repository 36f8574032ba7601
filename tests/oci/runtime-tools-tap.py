#!/usr/bin/env python3
"""Classify one runtime-tools validation's TAP (tests/oci/runtime-tools-validation).

usage: runtime-tools-tap.py TAP EXIT-STATUS EXPECTED-FILE UNEXPLAINED-OUT

Prints "RESULT OK SKIP NOT-OK" (the counts of the validation's own test
lines) and writes the failing checks no "deviation" line of EXPECTED-FILE
explains to UNEXPLAINED-OUT, one a line.

A failing check is a "not ok" line's description; where the validation ran
runtimetest inside the container (its harness writes runtimetest's output
as the "stdout" of a YAML block, then one test line for the whole run), the
failing checks are runtimetest's own not-oks instead, so that a known
difference of kern's does not hide another. An "ok" for such a run whose
runtimetest printed nothing is a failing check too: the harness passes it,
though nothing ran. A "not ok ... # TODO" is upstream's own known gap.

RESULT is fail when the program exited non-zero or printed no test line;
else pass (no failing check, one ok at least), skip (every test skipped),
deviates (every failing check is a listed deviation) or fail.
"""
import json
import re
import sys

TEST = re.compile(r"(not ok|ok)\b[ \t]*\d*[ \t]*(?:- )?(.*)$")


def items(text):
    """The test lines and YAML blocks (JSON, as tap-go writes them), in order."""
    out, cur = [], None
    for line in text.split("\n"):
        if cur is not None:
            if line.strip() == "...":
                try:
                    out.append(("yaml", json.loads("\n".join(cur))))
                except ValueError:
                    pass
                cur = None
            else:
                cur.append(line)
        elif line.strip() == "---":
            cur = []
        else:
            m = TEST.match(line)
            if m:
                out.append((m.group(1), m.group(2)))
    return out


def failures(text, inside=False):
    ok = skip = bad = 0
    fails = []
    run = None  # runtimetest's output, for the next test line
    for it in items(text):
        if it[0] == "yaml":
            if not inside and isinstance(it[1], dict) and "stdout" in it[1]:
                run = it[1].get("stdout") or ""
            continue
        kind, desc = it
        if kind == "ok":
            if re.search(r"#\s*skip", desc, re.I):
                skip += 1
            else:
                ok += 1
                if run is not None and not run.strip():
                    fails.append("runtimetest printed nothing (the container's process did not run)")
        elif not re.search(r"#\s*todo", desc, re.I):
            bad += 1
            if run is not None and "not ok" in run:
                fails += failures(run, True)[3]
            else:
                fails.append(desc.strip())
        run = None
    return ok, skip, bad, fails


def main():
    tap, status, expected, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    devs = []
    with open(expected) as f:
        for line in f:
            if line.startswith("deviation "):
                rx = line[len("deviation "):].split(" :: ", 1)[0].strip()
                devs.append(re.compile(rx))
    with open(tap, errors="replace") as f:
        ok, skip, bad, fails = failures(f.read())
    unexplained = [x for x in fails if not any(d.search(x) for d in devs)]
    if status != 0 or ok + skip + bad == 0:
        res = "fail"
    elif not fails:
        res = "pass" if ok else "skip"
    elif not unexplained:
        res = "deviates"
    else:
        res = "fail"
    with open(out, "w") as f:
        for x in dict.fromkeys(unexplained):
            f.write(x + "\n")
    print(res, ok, skip, bad)


main()
