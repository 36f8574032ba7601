# In-box source: the kernel driver (spec 12, 13, 15.2).
#
# Never imported by the host package. The host runs `_cell.py`'s text
# followed by this file's text in one python3 of the box, after replacing
# the four tokens assigned below, each a name between double underscores
# (kern_sandbox/_inbox.py, driver_source):
#   KERN_OUT_CAP  bytes kept of stdout and of stderr, each, per cell
#   KERN_RES_CAP  bytes of rich results (as JSON) kept per cell
#   KERN_HELLO    1: send {"hello": 1} once ready, else 0
#   KERN_ONE_CALL 1: a pool box: after the first reply, kill every other
#                 process of the box and stop this one, else 0
# The Node package ships the same two files and the same tokens.
#
# Wire (stdin and stdout of the box): a frame is the ASCII decimal length of
# its body, "\n", then the body. Host -> box: the UTF-8 source of a cell.
# Box -> host: UTF-8 JSON objects, in this order per cell: zero or more
# {"o": text} / {"e": text} frames as output arrives, then the reply
# {"stdout": str, "stderr": str, "rc": int, "results": [bundle...],
#  "trunc": bool}. EOF on stdin ends the driver with status 0.
#
# The cell must not be able to read or corrupt the control channel by
# accident: stdin and stdout move to private close-on-exec descriptors,
# fd 0 becomes /dev/null and fds 1 and 2 become pipes this process drains,
# so print(), os.write(1, ...) and a subprocess's output are all captured.
# At the end of a cell the driver takes everything the pipes hold, so
# nothing written before the end is attributed to the next cell.

# A kernel is warm: what _cell.py leaves to the first cell that needs it
# is loaded here, before the host is told it is ready (and linecache keeps
# every cell's lines, for later cells' tracebacks and inspect).
import codecs as _kern_codecs
import fcntl as _kern_fcntl
import json as _kern_json
import linecache as _kern_linecache
import os as _kern_os
import select as _kern_select
import signal as _kern_signal
import termios as _kern_termios
import threading as _kern_threading
import traceback as _kern_traceback
import types as _kern_types

_KERN_OUT_CAP = __KERN_OUT_CAP__
_KERN_RES_CAP = __KERN_RES_CAP__
_KERN_HELLO = __KERN_HELLO__
_KERN_ONE_CALL = __KERN_ONE_CALL__


def _kern_send(fd, lock, obj):
    body = _kern_json.dumps(obj, ensure_ascii=False).encode("utf-8", "replace")
    data = b"%d\n" % len(body) + body
    with lock:
        view = memoryview(data)
        while view:
            view = view[_kern_os.write(fd, view):]


def _kern_fionread(fd):
    # Bytes waiting in a pipe.
    return int.from_bytes(_kern_fcntl.ioctl(fd, _kern_termios.FIONREAD, b"\0\0\0\0"), _kern_sys.byteorder)


def _kern_in_box():
    # kill(-1) is only ever sent from the workload of a kern box: started by
    # the box's init (pid 1, kern's own). Anywhere else (a test on the host,
    # a misuse) it would reach every process of the user.
    if _kern_os.getppid() != 1:
        return False
    try:
        with open("/proc/1/cmdline", "rb") as f:
            argv = f.read(4096).split(b"\0")
    except OSError:
        return False
    # kern's init shows itself as "kern-init"; older kerns showed the
    # caller's `kern box ...` argv, under whatever name the binary has
    # (kern, kern-static).
    name = argv[0].rsplit(b"/", 1)[-1]
    return name == b"kern-init" or (name.startswith(b"kern") and len(argv) > 1
                                    and argv[1] == b"box")


def _kern_fit(text, cap):
    # Cut text so its JSON form stays within cap bytes: the host bounds a
    # reply by its caps, and escapes can make JSON up to six times longer.
    # The two quotes are the frame's, not the output's.
    if 6 * len(text) <= cap:
        return text
    size = len(_kern_json.dumps(text, ensure_ascii=False).encode("utf-8", "replace")) - 2
    while size > cap and text:
        text = text[:max(0, len(text) * cap // size - 1)]
        size = len(_kern_json.dumps(text, ensure_ascii=False).encode("utf-8", "replace")) - 2
    return text


class _KernStream:
    """What one of fds 1 and 2 produced during the current cell."""

    def __init__(self, key, fd):
        self.key = key              # "o" or "e" in streamed frames
        self.fd = fd                # 1 or 2
        self.data = bytearray()     # kept for the reply, at most the cap
        self.cut = False            # bytes were discarded over the cap
        self.streamed = 0           # bytes sent in streamed frames
        self.decoder = _kern_codecs.getincrementaldecoder("utf-8")("replace")
        r, w = _kern_os.pipe()      # both close-on-exec
        _kern_os.set_blocking(r, False)
        _kern_os.dup2(w, fd)        # fd 1 or 2 itself is inherited by children
        self.read_end = r
        self.write_end = w          # private copy, to restore fd 1 or 2

    def keep(self, data):
        room = _KERN_OUT_CAP - len(self.data)
        if len(data) > room:
            self.cut = True
            data = data[:max(room, 0)]
        self.data += data


class _KernCapture:
    """Drains the pipes behind fds 1 and 2, cell by cell.

    A thread drains them while a cell runs (a cell may write more than a
    pipe holds, and the host may stream it). At the end of the cell the
    main thread takes the lock and reads what the pipes still hold
    (FIONREAD): everything written before that moment is then in the
    reply, without waking the thread. Bytes written later (a background
    process, a thread of the cell) go to the next cell.
    """

    def __init__(self, ctl_out, ctl_lock):
        self.ctl_out = ctl_out
        self.ctl_lock = ctl_lock
        self.lock = _kern_threading.Lock()
        self.running = False
        self.streams = [_KernStream("o", 1), _KernStream("e", 2)]
        thread = _kern_threading.Thread(target=self._drain, name="kern-capture", daemon=True)
        thread.start()

    def _drain(self):
        poller = _kern_select.poll()
        by_fd = {}
        for s in self.streams:
            poller.register(s.read_end, _kern_select.POLLIN)
            by_fd[s.read_end] = s
        while True:
            for r, _ in poller.poll():
                with self.lock:
                    self._read(by_fd[r], 1 << 16)

    def _read(self, s, n):
        # Called with the lock held. The main thread may have emptied the
        # pipe since poll() said it was readable: EAGAIN is no error.
        try:
            data = _kern_os.read(s.read_end, n)
        except BlockingIOError:
            return 0
        self._take(s, data, False)
        return len(data)

    def _take(self, s, data, final):
        s.keep(data)
        if not self.running:
            return
        # Stream what arrives, up to the cap: the reply holds it all anyway.
        # Frames of at most 8 KiB of output: even as JSON escapes (up to six
        # bytes each) they stay under the 64 KiB every reply cap allows.
        data = data[:max(_KERN_OUT_CAP - s.streamed, 0)]
        s.streamed += len(data)
        for at in range(0, len(data), 8192):
            text = s.decoder.decode(data[at:at + 8192])
            if text:
                _kern_send(self.ctl_out, self.ctl_lock, {s.key: text})
        if final:
            text = s.decoder.decode(b"", True)
            if text:
                _kern_send(self.ctl_out, self.ctl_lock, {s.key: text})

    def begin(self):
        with self.lock:
            self.running = True
            for s in self.streams:
                pending = bytes(s.data)     # written between cells: this cell shows it
                s.data = bytearray()
                s.decoder.reset()
                s.streamed = 0
                if pending:
                    self._take(s, pending, False)

    def end(self):
        """Take what fds 1 and 2 received up to now: [(bytes, cut), ...]."""
        out = []
        with self.lock:
            for s in self.streams:
                # A cell may have closed or redirected fd 1 or 2: the next
                # cell's output goes to the pipe again.
                _kern_os.dup2(s.write_end, s.fd)
                left = _kern_fionread(s.read_end)
                while left > 0:
                    got = self._read(s, left)
                    if not got:
                        break
                    left -= got
                self._take(s, b"", True)
                out.append((bytes(s.data), s.cut))
                s.data = bytearray()
                s.cut = False
            self.running = False
        return out


class _KernDriver:
    def __init__(self):
        # The control channel first, to private close-on-exec descriptors.
        self.ctl_in = _kern_os.dup(0)
        self.ctl_out = _kern_os.dup(1)
        self.ctl_lock = _kern_threading.Lock()
        self.inbuf = bytearray()
        null = _kern_os.open("/dev/null", _kern_os.O_RDWR)
        _kern_os.dup2(null, 0)
        _kern_os.close(null)
        self.capture = _KernCapture(self.ctl_out, self.ctl_lock)
        self.stdout = self.stderr = None
        self._streams()
        _kern_sys.stdin = _kern_sys.__stdin__ = _kern_io.TextIOWrapper(_kern_io.BytesIO(b""), encoding="utf-8")
        self.pid = _kern_os.getpid()
        self.in_box = _kern_in_box()
        # A forked child must not hold the channel (the host would not see
        # the kernel die) or answer on it.
        _kern_os.register_at_fork(after_in_child=self._child)
        # Cells run in a fresh __main__: the driver's own names stay out.
        main = _kern_types.ModuleType("__main__")
        main.__dict__["__builtins__"] = _kern_builtins
        _kern_sys.modules["__main__"] = main
        self.namespace = main.__dict__
        _kern_sys.argv = [""]
        if _kern_sys.path and _kern_sys.path[0] in ("", "-c"):
            _kern_sys.path[0] = _kern_os.getcwd()
        self.cells = 0

    def _streams(self):
        # Line-buffered text streams on fds 1 and 2; recreated when a cell
        # closed them.
        for name, fd in (("stdout", 1), ("stderr", 2)):
            mine = getattr(self, name)
            if mine is None or mine.closed:
                new = open(fd, "w", buffering=1, encoding="utf-8", errors="backslashreplace", closefd=False)
                if getattr(_kern_sys, name) is mine or mine is None:
                    setattr(_kern_sys, name, new)
                setattr(_kern_sys, "__%s__" % name, new)
                setattr(self, name, new)

    def _child(self):
        for fd in (self.ctl_in, self.ctl_out):
            try:
                _kern_os.close(fd)
            except OSError:
                pass

    def _read(self, n):
        while len(self.inbuf) < n:
            data = _kern_os.read(self.ctl_in, max(1 << 16, n - len(self.inbuf)))
            if not data:
                return None
            self.inbuf += data
        out = bytes(self.inbuf[:n])
        del self.inbuf[:n]
        return out

    def _frame(self):
        while b"\n" not in self.inbuf:
            if len(self.inbuf) > 24:
                raise ValueError("bad frame header from the host")
            data = _kern_os.read(self.ctl_in, 1 << 16)
            if not data:
                return None
            self.inbuf += data
        nl = self.inbuf.index(b"\n")
        head = bytes(self.inbuf[:nl])
        del self.inbuf[:nl + 1]
        if not head.isdigit() or len(head) > 24:
            raise ValueError("bad frame header from the host")
        return self._read(int(head))

    def _flush(self):
        for stream in (_kern_sys.stdout, _kern_sys.stderr, self.stdout, self.stderr):
            try:
                stream.flush()
            except Exception:
                pass

    def _warm_up(self):
        # The first compile, capture pass and reply encoding of a fresh
        # interpreter cost about a millisecond more than later ones: pay it
        # here, before the host is told the kernel is ready. No cell has run.
        self.capture.begin()
        kern_run_cell("None\n", "<kern-warm-up>", {"__builtins__": _kern_builtins}, _KERN_RES_CAP)
        self._flush()
        self.capture.end()
        _kern_json.dumps({"stdout": "", "stderr": "", "rc": 0, "results": [], "trunc": False},
                         ensure_ascii=False)
        _kern_linecache.cache.pop("<kern-warm-up>", None)

    def run(self):
        self._warm_up()
        if _KERN_HELLO:
            _kern_send(self.ctl_out, self.ctl_lock, {"hello": 1})
        while True:
            body = self._frame()
            if body is None:
                return
            self.cells += 1
            self.capture.begin()
            rc, bundles, rcut = kern_run_cell(body.decode("utf-8", "replace"), "<cell-%d>" % self.cells,
                                              self.namespace, _KERN_RES_CAP)
            self._flush()
            if _kern_os.getpid() != self.pid:
                # A child forked by the cell came back here: it has nothing to
                # report and must not run later cells.
                _kern_os._exit(0)
            self._streams()
            (out, ocut), (err, ecut) = self.capture.end()
            stdout = out.decode("utf-8", "replace")
            stderr = err.decode("utf-8", "replace")
            fit_out = _kern_fit(stdout, _KERN_OUT_CAP)
            fit_err = _kern_fit(stderr, _KERN_OUT_CAP)
            trunc = ocut or ecut or rcut or fit_out is not stdout or fit_err is not stderr
            _kern_send(self.ctl_out, self.ctl_lock, {"stdout": fit_out, "stderr": fit_err, "rc": rc,
                                                     "results": bundles, "trunc": bool(trunc)})
            if _KERN_ONE_CALL:
                self._freeze()

    def _freeze(self):
        # A pool box served its one call. The host destroys it a little
        # later (killing it during a burst slows the burst's next calls);
        # until then nothing of the cell may run on: every other process of
        # the box is killed (kill(-1) spares init and this process) and this
        # one, with all its threads, is stopped.
        if self.in_box:
            try:
                _kern_os.kill(-1, _kern_signal.SIGKILL)
            except OSError:
                pass
        _kern_os.kill(_kern_os.getpid(), _kern_signal.SIGSTOP)
        _kern_os._exit(0)


def _kern_main():
    # The driver's own failures go to the box's real stderr (kern's pipe to
    # the host), not into a cell's output.
    err = _kern_os.dup(2)
    try:
        _KernDriver().run()
    except BaseException:
        _kern_os.write(err, ("kern-sandbox: kernel driver failed:\n" + _kern_traceback.format_exc())
                       .encode("utf-8", "replace"))
        _kern_os._exit(70)
    _kern_os._exit(0)


if __name__ == "__main__":
    _kern_main()
