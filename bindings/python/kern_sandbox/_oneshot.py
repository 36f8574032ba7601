# In-box source: the one-shot runner (spec 15.1). Never imported by the host.
#
# The host writes it into the workspace as .run-<id>.py after the text of
# _cell.py and three assignments (CELL, RESULT, RESULTS_CAP), and the box
# runs `python3 -u /workspace/.run-<id>.py`. It runs the cell file the way
# `python3 file` would (same stdout, stderr and exit status) and writes
# the cell's rich results, if any, to RESULT as a JSON array of bundles.

import types as _kern_types


def _kern_oneshot():
    with open(CELL, encoding="utf-8") as f:
        source = f.read()
    # The cell is __main__, in a module of its own: pickle and
    # multiprocessing find what it defines, and none of the runner's names.
    main = _kern_types.ModuleType("__main__")
    main.__dict__["__builtins__"] = _kern_builtins
    _kern_sys.modules["__main__"] = main
    _kern_sys.argv = [""]
    rc, bundles, _cut = kern_run_cell(source, "<cell>", main.__dict__, RESULTS_CAP)
    if bundles:
        import json
        with open(RESULT, "w", encoding="utf-8") as f:
            json.dump(bundles, f)
    return rc


_kern_sys.exit(_kern_oneshot())
