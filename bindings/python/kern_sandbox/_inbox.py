"""The sources of the scripts that run inside a box, as text.

`_cell.py` (one notebook-style cell: rich results, tracebacks),
`_oneshot.py` (the one-shot runner of spec 15.1) and `_kernel_driver.py`
(the kernel loop of spec 15.2) are never imported on the host; they are read here and handed to the box's own python3.
"""

import os
from functools import lru_cache

_HERE = os.path.dirname(os.path.abspath(__file__))


@lru_cache(maxsize=None)
def _read(name: str) -> str:
    with open(os.path.join(_HERE, name), encoding="utf-8") as f:
        return f.read()


def cell_source() -> str:
    """`_cell.py`: defines kern_run_cell(), kern_bundle() and kern_display()."""
    return _read("_cell.py")


def driver_source(out_cap: int, res_cap: int, hello: bool, one_call: bool = False) -> str:
    """The kernel driver, ready for `python3 -c` or a script file.
    ``one_call``: a pool box, frozen after its first reply."""
    text = _read("_kernel_driver.py")
    for token, value in (("__KERN_OUT_CAP__", int(out_cap)), ("__KERN_RES_CAP__", int(res_cap)),
                         ("__KERN_HELLO__", 1 if hello else 0),
                         ("__KERN_ONE_CALL__", 1 if one_call else 0)):
        # Each token is assigned exactly once; anything else is a broken file.
        if text.count(token) != 1:
            raise RuntimeError("kern_sandbox: %s appears %d times in _kernel_driver.py"
                               % (token, text.count(token)))
        text = text.replace(token, str(value))
    return cell_source() + "\n" + text


def runner_source(cell: str, result: str, results_cap: int) -> str:
    """The one-shot runner for one call: runs the box file `cell` and
    writes its rich results (at most `results_cap` bytes) to `result`."""
    header = "CELL = %r\nRESULT = %r\nRESULTS_CAP = %d\n" % (cell, result, int(results_cap))
    return cell_source() + "\n" + header + "\n" + _read("_oneshot.py")
