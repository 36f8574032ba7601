#!/usr/bin/env python3
"""An agent-style loop on kern_sandbox: write data, run the analysis a model
proposes, feed back what happened, read the chart the code drew.

The "model" here is the list of steps an LLM might propose, mistakes
included; each step runs in a fresh box on one workspace, and the loop hands
back what a model should see: stdout, the value of a trailing expression,
code_stderr (kern's own notes left out) and, when the sandbox acted, the
fault. Offline on the built-in host image:

    python3 examples/agent_loop.py [IMAGE]
"""

import sys

import kern_sandbox as kern

SALES = "region,month,units\nnorth,1,120\nsouth,1,80\nnorth,2,150\nsouth,2,95\neast,2,40\n"

# (what the model meant, the code it wrote, its time limit in seconds)
STEPS = [
    ("look at the data",
     "import csv\nrows = list(csv.DictReader(open('sales.csv')))\n"
     "print(len(rows), 'rows;', 'columns:', ', '.join(rows[0]))",
     10),
    ("total per region (first try)",
     "import csv\ntotals = {}\nfor r in csv.DictReader(open('sales.csv')):\n"
     "    totals[r['Region']] = totals.get(r['Region'], 0) + int(r['units'])\n",
     10),
    ("total per region (fixed after reading the traceback)",
     "import csv, json\ntotals = {}\nfor r in csv.DictReader(open('sales.csv')):\n"
     "    totals[r['region']] = totals.get(r['region'], 0) + int(r['units'])\n"
     "json.dump(totals, open('totals.json', 'w'))\ntotals",
     10),
    ("draw a bar chart",
     "import json\ntotals = json.load(open('totals.json'))\ntop = max(totals.values())\n"
     "bars = ''.join('<rect x=\"%d\" y=\"%d\" width=\"40\" height=\"%d\"/>'\n"
     "               % (10 + 60 * i, 210 - 200 * v // top, 200 * v // top)\n"
     "               for i, v in enumerate(totals.values()))\n"
     "open('chart.svg', 'w').write('<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"200\" '\n"
     "                             'height=\"220\">' + bars + '</svg>')\n"
     "print('bars:', len(totals))",
     10),
    ("try a smarter algorithm (that never ends)",
     "best = 0\nwhile True:\n    best += 1\n",
     2),
]


def feedback(r: kern.ExecutionResult) -> str:
    """What goes back to the model after one step."""
    if r.fault is not None:
        head = "[sandbox: %s] %s" % (r.fault.type, r.fault.message)
    elif r.exit_code != 0:
        head = "[exited with code %d]" % r.exit_code
    else:
        head = "[ok]"
    parts = [head, r.stdout.rstrip()]
    parts += ["value: " + res.text for res in r.results if res.text]
    if r.code_stderr.strip():
        parts.append("stderr: " + r.code_stderr.strip().splitlines()[-1])
    if r.files:
        parts.append("files: " + ", ".join("%s (%s)" % (f.path, f.change) for f in r.files))
    return "\n".join(p for p in parts if p)


def main() -> int:
    image = sys.argv[1] if len(sys.argv) > 1 else "host"
    with kern.Sandbox(image=image, timeout_s=10) as sbx:
        sbx.write_file("sales.csv", SALES)
        for title, code, limit in STEPS:
            r = sbx.run_code(code, timeout_s=limit)
            print("== %s\n%s" % (title, feedback(r)))
        chart = sbx.read_file("chart.svg", max_bytes=1 << 20)
        print("== the chart, read back: %d bytes of SVG, %d bars"
              % (len(chart), chart.count(b"<rect")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
