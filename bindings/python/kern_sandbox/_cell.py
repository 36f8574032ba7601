# In-box source: runs one cell of Python the way a notebook does.
#
# This file is never imported by the host package. Its text is placed at
# the top of the two scripts that run inside a box: the one-shot runner
# (spec 15.1) and the kernel driver (spec 15.2), so both produce exactly
# the same rich results and tracebacks. It must run on any python3 >= 3.8
# an image may have, with the standard library only.
#
# kern_run_cell(source, filename, namespace, res_cap) -> (rc, bundles, cut)
#   rc       the exit status a `python3 file` run of the cell would have had
#            (0; 1 for an uncaught exception; SystemExit's code)
#   bundles  one {mime: str} dict per rich value, in the order a notebook
#            shows them: display() calls, the trailing expression, then
#            every open matplotlib figure as image/png
#   cut      True when bundles were dropped to stay within res_cap bytes
# It never writes to stdout and writes to stderr only what Python itself
# would have printed (a traceback limited to the cell's own frames, or a
# non-integer SystemExit argument). The caller flushes the streams.

import ast as _kern_ast
import base64 as _kern_base64
import builtins as _kern_builtins
import io as _kern_io
import json as _kern_json
import linecache as _kern_linecache
import sys as _kern_sys
import traceback as _kern_traceback

# (method, mime, kind): kind "b64" takes bytes and base64-encodes them,
# "json" serialises a structure, "text" takes a str as it is.
_KERN_REPRS = (
    ("_repr_html_", "text/html", "text"),
    ("_repr_markdown_", "text/markdown", "text"),
    ("_repr_svg_", "image/svg+xml", "text"),
    ("_repr_latex_", "text/latex", "text"),
    ("_repr_json_", "application/json", "json"),
    ("_repr_png_", "image/png", "b64"),
    ("_repr_jpeg_", "image/jpeg", "b64"),
)


def _kern_repr_value(value, kind):
    # IPython lets a _repr_*_ return (data, metadata); the data is what counts.
    if isinstance(value, tuple) and value:
        value = value[0]
    if kind == "json":
        return _kern_json.dumps(value)
    if kind == "b64":
        if isinstance(value, (bytes, bytearray, memoryview)):
            return _kern_base64.b64encode(bytes(value)).decode("ascii")
        return value if isinstance(value, str) else None
    return value if isinstance(value, str) else None


def kern_bundle(obj):
    """The mime bundle of one value: every _repr_*_ it answers, and its repr."""
    data = {}
    # A class has the methods of its instances, unbound: only its repr counts.
    if not isinstance(obj, type):
        for method, mime, kind in _KERN_REPRS:
            try:
                fn = getattr(obj, method, None)
                if fn is None or not callable(fn):
                    continue
                text = _kern_repr_value(fn(), kind)
            except Exception:  # a broken _repr_ must not fail the cell
                continue
            if text is not None:
                data[mime] = text
    try:
        data["text/plain"] = repr(obj)
    except Exception as exc:
        data["text/plain"] = "<repr failed: %s>" % type(exc).__name__
    return data


class _KernResults:
    """The bundles of one cell, kept within a byte budget."""

    def __init__(self, cap):
        self.cap = cap
        self.size = 0
        self.bundles = []
        self.cut = False

    def add(self, bundle):
        # Counted as the JSON the bundle travels as, escapes included.
        size = len(_kern_json.dumps(bundle, ensure_ascii=False).encode("utf-8", "replace"))
        if self.size + size > self.cap:
            self.cut = True
            return
        self.size += size
        self.bundles.append(bundle)


_kern_current = [None]


def kern_display(*objs, **_options):
    """display(obj, ...): show each value as a rich result of this cell."""
    sink = _kern_current[0]
    for obj in objs:
        bundle = kern_bundle(obj)
        if sink is not None:
            sink.add(bundle)


def _kern_figures(sink):
    # Only a cell that imported pyplot can have figures; never import it here.
    plt = _kern_sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return
    try:
        numbers = list(plt.get_fignums())
    except Exception:
        return
    for num in numbers:
        try:
            fig = plt.figure(num)
            buf = _kern_io.BytesIO()
            fig.savefig(buf, format="png", bbox_inches="tight")
            sink.add({"text/plain": repr(fig),
                      "image/png": _kern_base64.b64encode(buf.getvalue()).decode("ascii")})
        except Exception:
            continue
    # Shown once, as a notebook does: the next cell starts with no figures.
    try:
        plt.close("all")
    except Exception:
        pass


def _kern_print_exception(exc, filename):
    tb = exc.__traceback__
    # Drop the frames above the cell (this file's), keep the cell's and below.
    while tb is not None and tb.tb_frame.f_code.co_filename != filename:
        tb = tb.tb_next
    if isinstance(exc, SyntaxError) and tb is None:
        lines = _kern_traceback.format_exception_only(type(exc), exc)
    else:
        lines = _kern_traceback.format_exception(type(exc), exc, tb)
    _kern_sys.stderr.write("".join(lines))


def _kern_exit_status(exc):
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, bool) or not isinstance(code, int):
        # What the interpreter does with sys.exit("message").
        _kern_sys.stderr.write("%s\n" % (code,))
        return 1
    return code & 0xFF


def kern_run_cell(source, filename, namespace, res_cap):
    sink = _KernResults(res_cap)
    _kern_current[0] = sink
    _kern_builtins.display = kern_display
    # Tracebacks and inspect show the cell's lines, also for later cells
    # calling a function this one defines.
    _kern_linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    rc = 0
    try:
        tree = _kern_ast.parse(source, filename, "exec")
        tail = None
        if tree.body and isinstance(tree.body[-1], _kern_ast.Expr):
            tail = _kern_ast.Expression(tree.body.pop().value)
        body = compile(tree, filename, "exec", dont_inherit=True)
        exec(body, namespace)
        if tail is not None:
            value = eval(compile(tail, filename, "eval", dont_inherit=True), namespace)
            if value is not None:
                sink.add(kern_bundle(value))
    except SystemExit as exc:
        rc = _kern_exit_status(exc)
    except BaseException as exc:  # KeyboardInterrupt too: the cell failed, the caller goes on
        _kern_print_exception(exc, filename)
        rc = 1
    finally:
        _kern_figures(sink)
        _kern_current[0] = None
    return rc, sink.bundles, sink.cut
