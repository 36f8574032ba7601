"""The shared box-case table (bindings/shared/box-cases.json) on real boxes.

The Node package runs the same file through its own API
(bindings/node/test/cases.test.mjs), so the two packages cannot drift:
one case, one set of inputs, one expected outcome in language-neutral
terms. This file is the Python adapter: it maps the table's steps to
kern_sandbox calls and checks each expectation. An op or an expectation
key it does not know fails the case (never a silent pass), and the last
test checks that every case of the table ran here.
"""

import binascii
import gzip
import io
import json
import os
import pathlib
import re
import shutil
import stat
import subprocess
import tarfile
import time

import pytest

import kern_sandbox as kern
from kern_sandbox import MountRefused, SandboxError
from conftest import kern_ps

TABLE_PATH = pathlib.Path(__file__).resolve().parents[2] / "shared" / "box-cases.json"
TABLE = json.loads(TABLE_PATH.read_text())
CASES = TABLE["cases"]
RAN = set()

# Rich result formats, in the order Node's Result.formats() lists them.
FORMATS = ("text", "html", "markdown", "svg", "latex", "json", "png", "jpeg")
RESULT_KEYS = {
    "exit_code", "fault", "fault_message", "fault_message_matches", "success", "stdout",
    "stderr", "stdout_matches", "stderr_matches", "stdout_excludes", "stderr_excludes",
    "code_stderr", "code_stderr_matches", "runtime_notes", "runtime_notes_match", "truncated",
    "stdout_bytes", "stderr_bytes", "files", "results_text", "results", "results_formats",
    "duration_under_s", "duration_over_s", "stream_stdout", "stream_stderr",
    "stream_interleaved", "stream_sequence", "stream_steps_ordered",
    "stream_first_before_end_s", "kernel_alive", "pool_served", "stderr_split_whole",
}
RAISE_KEYS = {"raises", "message_matches"}
STEP_KEYS = {"do", "expect", "code", "language", "timeout_s", "stream", "argv", "path", "text",
             "hex", "max_bytes", "members", "format", "raw_text", "sparse_tar", "cut_tar_to",
             "cut_gzip_end", "kind", "target",
             "count", "under_s"}
CASE_KEYS = {"id", "category", "rule", "matrix", "sandbox", "steps", "open_expect"}


def _sub(value, decoy):
    """The case's strings with {decoy} replaced by this run's decoy directory."""
    if isinstance(value, str):
        return value.replace("{decoy}", decoy)
    if isinstance(value, list):
        return [_sub(v, decoy) for v in value]
    if isinstance(value, dict):
        return {k: _sub(v, decoy) for k, v in value.items()}
    return value


def _sandbox_kwargs(opts):
    kw = dict(opts)
    if "mounts" in kw:
        kw["mounts"] = {src: tuple(spec) if isinstance(spec, list) else spec
                        for src, spec in kw["mounts"].items()}
    return kw


def _check_raise(excinfo, want, where):
    unknown = set(want) - RAISE_KEYS
    assert not unknown, "%s: unknown expectation keys %s" % (where, sorted(unknown))
    kind = want["raises"]
    err = excinfo
    if kind == "not_found":
        assert isinstance(err, FileNotFoundError), "%s: %r" % (where, err)
    elif kind == "MountRefused":
        assert isinstance(err, MountRefused), "%s: %r" % (where, err)
    elif kind == "SandboxError":
        assert isinstance(err, SandboxError) and not isinstance(err, MountRefused), \
            "%s: %r" % (where, err)
    else:
        raise AssertionError("%s: unknown exception kind %r" % (where, kind))
    if "message_matches" in want:
        assert re.search(want["message_matches"], str(err)), "%s: %s" % (where, err)


def _attempt(fn, want, where):
    """Run fn; when `want` expects a raise, check it and return None."""
    if want and "raises" in want:
        try:
            fn()
        except Exception as e:  # the expectation names which kind is right
            _check_raise(e, want, where)
            return None
        raise AssertionError("%s: did not raise %s" % (where, want["raises"]))
    return fn()


def _all_match(patterns, text):
    """A `*_matches` value: one regular expression or a list of them, each found in text."""
    return all(re.search(p, text) for p in ([patterns] if isinstance(patterns, str) else patterns))


def _steps_ordered(seen, n):
    """Every chunk naming step i (a number in its text) came before any naming step i+1."""
    steps = [{int(w) for w in re.findall(r"\d+", text)} for _, text, _ in seen]
    for i in range(n - 1):
        last = max(k for k, s in enumerate(steps) if i in s)
        first = min(k for k, s in enumerate(steps) if i + 1 in s)
        if last >= first:
            return False
    return True


def _check_result(r, want, where, seen, took, extra):
    unknown = set(want) - RESULT_KEYS
    assert not unknown, "%s: unknown expectation keys %s" % (where, sorted(unknown))
    ctx = "%s: %r" % (where, r)
    fault = r.fault.type if r.fault else None
    checks = {
        "exit_code": lambda v: r.exit_code == v,
        "fault": lambda v: fault == v,
        "fault_message": lambda v: r.fault is not None and r.fault.message == v,
        "fault_message_matches": lambda v: r.fault is not None and _all_match(v, r.fault.message),
        "success": lambda v: r.success == v,
        "stdout": lambda v: r.stdout == v,
        "stderr": lambda v: r.stderr == v,
        "stdout_matches": lambda v: _all_match(v, r.stdout),
        "stderr_matches": lambda v: _all_match(v, r.stderr),
        "stdout_excludes": lambda v: v not in r.stdout,
        "stderr_excludes": lambda v: v not in r.stderr,
        "code_stderr": lambda v: r.code_stderr == v,
        "code_stderr_matches": lambda v: _all_match(v, r.code_stderr),
        "runtime_notes": lambda v: r.runtime_notes == v,
        # Each stderr line is a runtime note or a line of code_stderr.
        "stderr_split_whole": lambda v: all(
            line in r.runtime_notes or line in r.code_stderr.split("\n")
            for line in r.stderr.split("\n")) == v,
        "runtime_notes_match": lambda v: r.runtime_notes and all(
            re.search(v, n) for n in r.runtime_notes) and all(n in r.stderr
                                                              for n in r.runtime_notes),
        "truncated": lambda v: r.truncated == v,
        "stdout_bytes": lambda v: len(r.stdout.encode("utf-8", "surrogateescape")) == v,
        "stderr_bytes": lambda v: len(r.stderr.encode("utf-8", "surrogateescape")) == v,
        "files": lambda v: sorted([f.path, f.change, f.size] for f in r.files) == sorted(v),
        "results_text": lambda v: [x.text for x in r.results] == v,
        "results": lambda v: [{k: getattr(x, k) for k in w} for x, w in zip(r.results, v)] == v
        and len(r.results) == len(v),
        "results_formats": lambda v: [[f for f in FORMATS if getattr(x, f) is not None]
                                      for x in r.results] == v,
        "duration_under_s": lambda v: took < v,
        "duration_over_s": lambda v: took >= v,
        "stream_stdout": lambda v: "".join(c for k, c, _ in seen if k == "o") == v,
        "stream_stderr": lambda v: "".join(c for k, c, _ in seen if k == "e") == v,
        "stream_interleaved": lambda v: bool(re.search("oe.*o", "".join(k for k, _, _ in seen)))
        == v,
        "stream_sequence": lambda v: [[k, c] for k, c, _ in seen] == v,
        "stream_steps_ordered": lambda v: _steps_ordered(seen, v),
        # The first stdout chunk came at least v seconds before the call returned.
        "stream_first_before_end_s": lambda v: took - min(t for k, _, t in seen if k == "o") >= v,
        "kernel_alive": lambda v: extra["kernel"].alive == v,
        "pool_served": lambda v: extra["served"] == v,
    }
    for key, value in want.items():
        assert checks[key](value), "%s: %s != %r (took %.2fs)" % (ctx, key, value, took)


def _archive(path, members, fmt):
    """members: [name, type char, data, linkname, pax records (optional)],
    as Node's helper makes them."""
    with tarfile.open(path, "w:gz", compresslevel=1, format=getattr(tarfile, fmt)) as t:
        for name, kind, data, link, *pax in members:
            info = tarfile.TarInfo(name)
            info.type = kind.encode()
            info.linkname = link or ""
            info.pax_headers = pax[0] if pax else {}
            body = (data or "").encode()
            info.size = len(body) if kind == "0" else 0
            t.addfile(info, io.BytesIO(body) if kind == "0" else None)


def _sparse_tar(path, spec, work):
    """An archive GNU tar wrote with --sparse from a file with holes:
    spec's size, and its text at each [offset, text] of writes."""
    os.mkdir(work)
    fd = os.open(os.path.join(work, spec["name"]), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.ftruncate(fd, spec["size"])
        for offset, text in spec["writes"]:
            os.pwrite(fd, text.encode(), offset)
    finally:
        os.close(fd)
    argv = ["tar", "--sparse", "--format=" + spec["format"], "-czf", path, "-C", work, spec["name"]]
    if spec.get("sparse_version"):
        argv[2:2] = ["--sparse-version=" + spec["sparse_version"]]
    subprocess.run(argv, check=True)
    # The case is only worth something if tar made a sparse member: a GNU
    # 'S' header or pax GNU.sparse records.
    with gzip.open(path) as f:
        raw = f.read()
    assert raw[156:157] == b"S" or b"GNU.sparse." in raw, "tar wrote no sparse member"


def _ours(kern_bin):
    return [n for n in kern_ps(kern_bin) if n.startswith(("pysbx-", "kern-sbx-"))]


class Case:
    """One case's state: its sandbox, kernel and decoy directory."""

    def __init__(self, case, kern_bin, tmp):
        self.case = case
        self.kern_bin = kern_bin
        self.tmp = tmp
        self.sbx = None
        self.kernel = None

    def step(self, i, step):
        op = step["do"]
        where = "%s step %d (%s)" % (self.case["id"], i, op)
        assert set(step) <= STEP_KEYS, "%s: unknown step keys %s" % (where, set(step) - STEP_KEYS)
        want = step.get("expect", {})
        ops = {
            "run_code": self.op_run_code, "run": self.op_run, "kernel_open": self.op_kernel_open,
            "kernel_run_code": self.op_kernel_run_code, "kernel_close": self.op_kernel_close,
            "write_file": self.op_write_file, "read_file": self.op_read_file,
            "list_files": self.op_list_files, "restore": self.op_restore, "plant": self.op_plant,
            "decoy_intact": self.op_decoy_intact, "wait_prewarmed": self.op_wait_prewarmed,
            "residents": self.op_residents,
        }
        assert op in ops, "%s: unknown op" % where
        t0 = time.monotonic()
        ops[op](step, want, where)
        if "under_s" in step:
            assert time.monotonic() - t0 < step["under_s"], "%s: took too long" % where

    def _call(self, step, want, where, fn):
        seen = []
        kw = {}
        if "timeout_s" in step:
            kw["timeout_s"] = step["timeout_s"]
        t0 = time.monotonic()
        if step.get("stream"):
            # Python's callbacks get text (Node's: Buffers); times from the call's start.
            def out(c):
                assert isinstance(c, str), c
                seen.append(("o", c, time.monotonic() - t0))

            def err(c):
                assert isinstance(c, str), c
                seen.append(("e", c, time.monotonic() - t0))
            kw["on_stdout"], kw["on_stderr"] = out, err
        pool = getattr(self.sbx, "_pool", None)
        before = pool.served if pool is not None else 0
        r = _attempt(lambda: fn(**kw), want, where)
        if r is not None:
            extra = {"kernel": self.kernel,
                     "served": (pool.served if pool is not None else 0) == before + 1}
            _check_result(r, want, where, seen, time.monotonic() - t0, extra)

    def op_run_code(self, step, want, where):
        lang = step.get("language", "python")
        self._call(step, want, where, lambda **kw: self.sbx.run_code(step["code"], lang, **kw))

    def op_run(self, step, want, where):
        self._call(step, want, where, lambda **kw: self.sbx.run(step["argv"], **kw))

    def op_kernel_open(self, step, want, where):
        self.kernel = _attempt(self.sbx.kernel, want, where)

    def op_kernel_run_code(self, step, want, where):
        self._call(step, want, where, lambda **kw: self.kernel.run_code(step["code"], **kw))

    def op_kernel_close(self, step, want, where):
        self.kernel.close()
        self.kernel = None

    def op_write_file(self, step, want, where):
        data = binascii.unhexlify(step["hex"]) if "hex" in step else step["text"]
        _attempt(lambda: self.sbx.write_file(step["path"], data), want, where)

    def op_read_file(self, step, want, where):
        kw = {"max_bytes": step["max_bytes"]} if "max_bytes" in step else {}
        got = _attempt(lambda: self.sbx.read_file(step["path"], **kw), want, where)
        if got is None:
            return
        assert set(want) <= {"text", "hex", "size"}, "%s: unknown keys %s" % (where, want)
        if "text" in want:
            assert got == want["text"].encode(), where
        if "hex" in want:
            assert got == binascii.unhexlify(want["hex"]), where
        if "size" in want:
            assert len(got) == want["size"], where

    def op_list_files(self, step, want, where):
        got = _attempt(lambda: self.sbx.list_files(step.get("path", "")), want, where)
        if got is None:
            return
        assert set(want) <= {"files", "includes", "excludes"}, "%s: unknown keys" % where
        paths = [f.path for f in got]
        if "files" in want:
            assert [[f.path, f.size, f.change] for f in got] == want["files"], (where, got)
        for p in want.get("includes", []):
            assert p in paths, (where, p, paths)
        for p in want.get("excludes", []):
            assert not [q for q in paths if q == p or q.startswith(p + "/")], (where, p, paths)

    def op_restore(self, step, want, where):
        path = os.path.join(self.tmp, "case-%d.tgz" % len(os.listdir(self.tmp)))
        if "raw_text" in step:
            pathlib.Path(path).write_text(step["raw_text"])
        elif "sparse_tar" in step:
            _sparse_tar(path, step["sparse_tar"], path + ".d")
        else:
            _archive(path, step["members"], step.get("format", "USTAR_FORMAT"))
        if "cut_tar_to" in step:
            with open(path, "rb") as f:
                tar = gzip.decompress(f.read())[:step["cut_tar_to"]]
            with open(path, "wb") as f:
                f.write(gzip.compress(tar, compresslevel=1))
        if "cut_gzip_end" in step:
            os.truncate(path, os.path.getsize(path) - step["cut_gzip_end"])
        _attempt(lambda: self.sbx.restore(path), want, where)

    def op_plant(self, step, want, where):
        target = os.path.join(self.sbx.workspace, step["path"])
        if step["kind"] == "symlink":
            os.symlink(step["target"], target)
        elif step["kind"] == "fifo":
            os.mkfifo(target)
        else:
            raise AssertionError("%s: unknown plant kind %r" % (where, step["kind"]))

    def op_decoy_intact(self, step, want, where):
        decoy = os.path.join(self.tmp, "decoy")
        assert sorted(os.listdir(decoy)) == ["secret"], where
        assert pathlib.Path(decoy, "secret").read_text() == "host secret\n", where

    def op_wait_prewarmed(self, step, want, where):
        deadline = time.monotonic() + 60
        while self.sbx._pool.ready_count() < step["count"]:
            assert time.monotonic() < deadline, "%s: the pool did not fill" % where
            time.sleep(0.05)

    def op_residents(self, step, want, where):
        names = [n for n in kern_ps(self.kern_bin) if n.startswith("kern-sbx-")]
        assert set(want) <= {"count", "names_match"}, "%s: unknown keys" % where
        assert len(names) == want["count"], (where, names)
        assert all(re.search(want.get("names_match", ""), n) for n in names), (where, names)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case(case, kern_bin, tmp_path):
    RAN.add(case["id"])
    tmp = str(tmp_path)
    decoy = os.path.join(tmp, "decoy")
    os.mkdir(decoy)
    pathlib.Path(decoy, "secret").write_text("host secret\n")
    case = _sub(case, decoy)
    c = Case(case, kern_bin, tmp)
    opts = _sandbox_kwargs(case.get("sandbox", {}))
    try:
        if "open_expect" in case:
            _attempt(lambda: kern.Sandbox(**opts).open(), case["open_expect"], case["id"])
        else:
            c.sbx = kern.Sandbox(**opts).open()
            for i, step in enumerate(case["steps"]):
                c.step(i, step)
    finally:
        if c.kernel is not None:
            c.kernel.close()
        if c.sbx is not None:
            c.sbx.close()
    deadline = time.monotonic() + 10
    while _ours(kern_bin) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _ours(kern_bin) == [], "left behind"
    if os.path.isdir(decoy):
        # A mode a case set on the decoy must not stop its removal.
        os.chmod(decoy, stat.S_IRWXU)
        shutil.rmtree(decoy)


def test_every_case_of_the_table_ran(request):
    """A case cannot be skipped here unnoticed: the ids this run executed
    are the table's. (A -k run that left cases out says so and skips.)"""
    collected = {item.callspec.params["case"]["id"] for item in request.session.items
                 if getattr(item, "originalname", "") == "test_case"}
    ids = [c["id"] for c in CASES]
    if collected != set(ids):
        pytest.skip("this run selected %d of the %d shared cases (-k or -m): "
                    "nothing to compare" % (len(collected), len(ids)))
    assert sorted(RAN) == sorted(ids)


@pytest.mark.any_user
def test_the_table_is_well_formed():
    ids = [c["id"] for c in CASES]
    assert TABLE["format"] == 1
    assert len(ids) == len(set(ids)), "duplicate ids"
    categories = {c["category"] for c in CASES}
    assert categories == set(TABLE["categories"]), categories ^ set(TABLE["categories"])
    for c in CASES:
        assert c["id"].startswith(c["category"] + "/"), c["id"]
        assert set(c) <= CASE_KEYS, (c["id"], set(c) - CASE_KEYS)
        assert ("open_expect" in c) != ("steps" in c), c["id"]
        if "matrix" in c:
            matrix = c["matrix"]
            assert isinstance(matrix, list) and matrix, c["id"]
            assert all(re.fullmatch(r"[A-Z]+-[0-9]+", m) for m in matrix), (c["id"], matrix)
