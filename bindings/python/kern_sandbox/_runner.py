"""Host side of the in-box scripts: their source text, ready to write into
the workspace (spec §15.1).

The scripts live in ``_inbox/`` as ordinary files, so they can be read,
linted and tested like any module; a box gets ``rich.py`` followed by the
script, below a header that sets the paths and caps of this call.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from typing import List

from .results import Result

# The largest result file the host reads; the runner keeps below it.
RESULTS_MAX = 64 << 20
_HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_inbox")


@lru_cache(maxsize=None)
def inbox_source(name: str) -> str:
    """The text of ``_inbox/<name>.py``."""
    with open(os.path.join(_HERE, name + ".py"), encoding="utf-8") as f:
        return f.read()


def runner_source(cell: str, result: str, results_cap: int = RESULTS_MAX - 4096) -> str:
    """The one-shot runner for one call: runs the file ``cell`` (a box
    path) and writes rich results to ``result``."""
    header = "import sys\nCELL = %r\nRESULT = %r\nRESULTS_CAP = %d\n\n" % (cell, result, results_cap)
    return header + inbox_source("rich") + "\n\n" + inbox_source("runner")


def parse_results(blob: bytes) -> List[Result]:
    """The runner's JSON array of flat {mime: str} objects; anything else
    in it (the box wrote the file, so it is untrusted) is dropped."""
    try:
        data = json.loads(blob.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return []
    if not isinstance(data, list):
        return []
    out = []
    for item in data:
        if isinstance(item, dict) and item and \
                all(isinstance(k, str) and isinstance(v, str) for k, v in item.items()):
            out.append(Result(dict(item)))
    return out
