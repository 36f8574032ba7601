"""Host side of the one-shot runner (spec §15.1): its source for one call
(``_inbox``: ``_cell.py`` + ``_oneshot.py``) and the results file it leaves.
"""

from __future__ import annotations

import json
from typing import List

from . import _inbox
from .results import Result

# The largest result file the host reads; the runner keeps below it.
RESULTS_MAX = 64 << 20


def runner_source(cell: str, result: str) -> str:
    """The one-shot runner for one call: runs the file ``cell`` (a box
    path) and writes rich results to ``result`` (both box paths)."""
    return _inbox.runner_source(cell, result, RESULTS_MAX - 4096)


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
