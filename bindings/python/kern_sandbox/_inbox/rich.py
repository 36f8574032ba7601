# Mime bundles of Python values (spec §5.2, §15.1). Runs in the box.
# Each bundle is a flat {mime: str}; images are base64. Capture never
# writes to stdout or stderr: a value whose _repr_*_ raises simply offers
# fewer types.

import sys

_REPR_METHODS = (
    ("text/html", "_repr_html_"),
    ("text/markdown", "_repr_markdown_"),
    ("image/svg+xml", "_repr_svg_"),
    ("text/latex", "_repr_latex_"),
    ("application/json", "_repr_json_"),
    ("image/png", "_repr_png_"),
    ("image/jpeg", "_repr_jpeg_"),
)
_BINARY = ("image/png", "image/jpeg")


def _b64(data):
    import base64
    return base64.b64encode(data).decode("ascii")


def _as_text(mime, value):
    """A _repr_*_ result as the string a bundle holds, or None."""
    if isinstance(value, tuple) and len(value) == 2:
        value = value[0]  # (data, metadata)
    if value is None:
        return None
    if mime in _BINARY:
        if isinstance(value, (bytes, bytearray)):
            return _b64(bytes(value))
        return value if isinstance(value, str) else None
    if mime == "application/json":
        if isinstance(value, str):
            return value
        import json
        try:
            return json.dumps(value)
        except (TypeError, ValueError):
            return None
    return value if isinstance(value, str) else None


def bundle(value):
    """One value's bundle: every _repr_*_ it offers, and text/plain always."""
    data = {}
    if not isinstance(value, type):  # a class's _repr_html_ is unbound
        for mime, name in _REPR_METHODS:
            method = getattr(value, name, None)
            if not callable(method):
                continue
            try:
                text = _as_text(mime, method())
            except Exception:
                continue
            if text is not None:
                data[mime] = text
    try:
        data["text/plain"] = repr(value)
    except Exception:
        data["text/plain"] = "<%s object>" % type(value).__name__
    return data


def figures():
    """Every open matplotlib figure as PNG, then closed (no savefig needed;
    a kernel's next cell does not see them again)."""
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return []
    import io
    out = []
    try:
        numbers = list(plt.get_fignums())
    except Exception:
        return []
    for num in numbers:
        try:
            fig = plt.figure(num)
            buf = io.BytesIO()
            fig.savefig(buf, format="png", bbox_inches="tight")
            out.append({"text/plain": repr(fig), "image/png": _b64(buf.getvalue())})
        except Exception:
            continue
    try:
        plt.close("all")
    except Exception:
        pass
    return out


def bundles_within(bundles, cap):
    """The leading bundles whose JSON fits in ``cap`` bytes."""
    import json
    out, used = [], 2
    for b in bundles:
        size = len(json.dumps(b)) + 1
        if used + size > cap:
            break
        out.append(b)
        used += size
    return out
