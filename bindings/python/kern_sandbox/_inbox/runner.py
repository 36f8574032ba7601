# The one-shot runner (spec §15.1). Runs in the box as
#   python3 -u /workspace/.run-<id>.py
# after the host has put CELL, RESULT and RESULTS_CAP above rich.py. It
# runs the cell like `python3 -c` would (same stdout, stderr and exit
# status), and also records rich values: a trailing bare expression, each
# display(obj), every open matplotlib figure.

def _kern_run():
    import _ast
    import builtins
    import types

    with open(CELL, encoding="utf-8") as f:
        source = f.read()
    filename = "<cell>"
    results = []

    def display(*objs, **_options):
        for obj in objs:
            results.append(bundle(obj))

    builtins.display = display
    # The cell runs as __main__ in a module of its own, so pickle and
    # multiprocessing find what it defines, and nothing of the runner.
    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = main
    sys.argv = [""]
    status = 0
    try:
        tree = compile(source, filename, "exec", _ast.PyCF_ONLY_AST)
        tail = None
        if tree.body and isinstance(tree.body[-1], _ast.Expr):
            tail = _ast.Expression(tree.body.pop().value)
        exec(compile(tree, filename, "exec"), main.__dict__)
        if tail is not None:
            value = eval(compile(tail, filename, "eval"), main.__dict__)
            if value is not None:
                results.append(bundle(value))
    except SystemExit as e:
        status = _exit_status(e.code)
    except BaseException as e:
        _print_user_traceback(e, source, filename)
        status = 1
    results.extend(figures())
    if results:
        import json
        with open(RESULT, "w", encoding="utf-8") as f:
            json.dump(bundles_within(results, RESULTS_CAP), f)
    return status


def _exit_status(code):
    """What the interpreter would exit with for SystemExit(code)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    try:
        sys.stderr.write(str(code) + "\n")
    except Exception:
        pass
    return 1


def _print_user_traceback(exc, source, filename):
    """The traceback from the cell's first frame on: the runner's own
    frames are not the user's business."""
    import linecache
    import traceback
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != filename:
        tb = tb.tb_next
    try:
        sys.stdout.flush()
    except Exception:
        pass
    traceback.print_exception(type(exc), exc, tb)


sys.exit(_kern_run())
