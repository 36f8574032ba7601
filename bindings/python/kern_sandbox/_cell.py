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

# Only modules a bare interpreter has already loaded, or that are built in
# (_ast, binascii), are imported here: a cold one-shot call pays for every
# import before the cell runs, and json, base64, ast, traceback and
# linecache each pull in re, enum or tokenize (together several times what
# the runner itself costs). Those are imported where a cell needs them:
# json for a rich result, traceback for an exception.
import _ast as _kern_ast
import binascii as _kern_binascii
import builtins as _kern_builtins
import io as _kern_io
import sys as _kern_sys

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
        import json
        return json.dumps(value)
    if kind == "b64":
        if isinstance(value, (bytes, bytearray, memoryview)):
            return _kern_b64(bytes(value))
        return value if isinstance(value, str) else None
    return value if isinstance(value, str) else None


def _kern_b64(data):
    # What base64.b64encode gives, without importing base64 (and re).
    return _kern_binascii.b2a_base64(data, newline=False).decode("ascii")


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
        import json
        # Counted as the JSON the bundle travels as, escapes included.
        size = len(json.dumps(bundle, ensure_ascii=False).encode("utf-8", "replace"))
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
                      "image/png": _kern_b64(buf.getvalue())})
        except Exception:
            continue
    # Shown once, as a notebook does: the next cell starts with no figures.
    try:
        plt.close("all")
    except Exception:
        pass


def _kern_remember(source, filename):
    import linecache
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)


def _kern_print_exception(exc, source, filename):
    tb = exc.__traceback__
    # Drop the frames above the cell (this file's), keep the cell's and below.
    while tb is not None and tb.tb_frame.f_code.co_filename != filename:
        tb = tb.tb_next
    try:
        _kern_remember(source, filename)
        import traceback
    except BaseException:  # e.g. no memory left for an import: Python's own printer
        # (which prints the exception's own __traceback__, not its tb argument)
        _kern_sys.__excepthook__(type(exc), exc.with_traceback(tb), tb)
        return
    if isinstance(exc, SyntaxError) and tb is None:
        lines = traceback.format_exception_only(type(exc), exc)
    else:
        lines = traceback.format_exception(type(exc), exc, tb)
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
    # Tracebacks, warnings and inspect show the cell's lines (also for
    # later cells calling a function this one defines) once linecache has
    # them. linecache costs an import of re and tokenize, so a cell that
    # never says "import" (and so cannot reach traceback, inspect, logging
    # or a library's warnings) gets it only for an uncaught exception; a
    # compiler warning about such a cell (SyntaxWarning) shows no line.
    if "linecache" in _kern_sys.modules or "import" in source:
        _kern_remember(source, filename)
    rc = 0
    try:
        tree = compile(source, filename, "exec", _kern_ast.PyCF_ONLY_AST, dont_inherit=True)
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
        _kern_print_exception(exc, source, filename)
        rc = 1
    finally:
        _kern_figures(sink)
        _kern_current[0] = None
    return rc, sink.bundles, sink.cut
