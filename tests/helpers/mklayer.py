#!/usr/bin/env python3
"""Hostile-layer generator for the kern-unpack tests (security-tests.md
section 9, TAR-1..TAR-10).

  mklayer.py [-z gzip|none] [-o FILE] [--format pax|gnu|ustar] ENTRY...
  mklayer.py [-z gzip|none] [-o FILE] case NAME [ARG]
  mklayer.py batch DIR < LINES
  mklayer.py list

Ordinary members are built with Python's tarfile; ENTRY is KIND:PATH[:ARG[:MODE]]
with KIND f (file, ARG = content), d (directory), l (symlink, ARG = target),
h (hardlink, ARG = target), c / b (char / block device), p (FIFO); MODE is
octal. The malformed cases are hand-built 512-byte headers. Huge and endless
cases are generated as a stream: pipe them into kern-unpack, never to disk.
Output goes to stdout unless -o is given; a reader that stops early (the
point of the bomb cases) ends the generator quietly. `batch` writes many
layers in one run (Python starts slowly on a loaded machine): each input
line is `NAME ARGS...` (shell words), ARGS as for a single layer.
"""
import io
import os
import shlex
import sys
import tarfile
import zlib

BLOCK = 512
ZERO = bytes(BLOCK)
GiB = 1 << 30


def octal(value, width):
    """A NUL-terminated octal field, or base-256 when it does not fit."""
    if value < 8 ** (width - 1):
        return b"%0*o\0" % (width - 1, value)
    out = bytearray(width)
    for i in range(width - 1, 0, -1):
        out[i] = value & 0xFF
        value >>= 8
    out[0] = 0x80
    return bytes(out)


def header(name=b"", typeflag=b"0", size=0, mode=0o644, linkname=b"", prefix=b"",
           magic=b"ustar\x0000", mtime=1700000000, size_field=None, bad_checksum=False,
           devmajor=0, devminor=0):
    """One raw ustar header block; every field can be made wrong on purpose."""
    h = bytearray(BLOCK)

    def put(off, width, data):
        data = data[:width]
        h[off:off + len(data)] = data

    put(0, 100, name)
    put(100, 8, octal(mode, 8))
    put(108, 8, octal(0, 8))
    put(116, 8, octal(0, 8))
    put(124, 12, size_field if size_field is not None else octal(size, 12))
    put(136, 12, octal(mtime, 12))
    put(156, 1, typeflag)
    put(157, 100, linkname)
    put(257, 8, magic)
    put(265, 32, b"root")
    put(297, 32, b"root")
    put(329, 8, octal(devmajor, 8))
    put(337, 8, octal(devminor, 8))
    put(345, 155, prefix)
    h[148:156] = b"        "
    csum = sum(h) + (1 if bad_checksum else 0)
    h[148:156] = b"%06o\0 " % csum
    return bytes(h)


def pad(data):
    return data + bytes(-len(data) % BLOCK)


def member(name, data=b"", typeflag=b"0", **kw):
    return header(name, typeflag, len(data), **kw) + pad(data)


def pax_record(key, value):
    """`LEN key=value\\n` where LEN counts itself."""
    body = b" " + key + b"=" + value + b"\n"
    n = len(body) + 1
    while len(b"%d" % n) + len(body) != n:
        n += 1
    return b"%d" % n + body


def pax(records, typeflag=b"x", name=b"PaxHeaders/x"):
    body = b"".join(pax_record(k, v) for k, v in records)
    return header(name, typeflag, len(body)) + pad(body)


def gnu_long(kind, value):
    """A GNU L (long name) or K (long link) record."""
    return header(b"././@LongLink", kind, len(value), magic=b"ustar  \0") + pad(value)


END = ZERO * 2


def tarfile_bytes(entries, fmt="pax"):
    formats = {"pax": tarfile.PAX_FORMAT, "gnu": tarfile.GNU_FORMAT, "ustar": tarfile.USTAR_FORMAT}
    buf = io.BytesIO()
    kinds = {"f": tarfile.REGTYPE, "d": tarfile.DIRTYPE, "l": tarfile.SYMTYPE,
             "h": tarfile.LNKTYPE, "c": tarfile.CHRTYPE, "b": tarfile.BLKTYPE,
             "p": tarfile.FIFOTYPE}
    with tarfile.open(fileobj=buf, mode="w", format=formats[fmt]) as t:
        for spec in entries:
            parts = spec.split(":")
            kind, path = parts[0], parts[1]
            arg = parts[2] if len(parts) > 2 else ""
            ti = tarfile.TarInfo(path)
            ti.type = kinds[kind]
            ti.mtime = 1700000000
            ti.mode = int(parts[3], 8) if len(parts) > 3 and parts[3] else (0o755 if kind == "d" else 0o644)
            data = b""
            if kind == "f":
                data = arg.encode()
            elif kind in "lh":
                ti.linkname = arg
            elif kind in "cb":
                ti.devmajor, ti.devminor = 1, 3
            ti.size = len(data)
            t.addfile(ti, io.BytesIO(data) if data else None)
    return buf.getvalue()


def zeros(n):
    """n zero bytes, produced in chunks."""
    chunk = bytes(1 << 20)
    while n > 0:
        yield chunk[:min(n, len(chunk))]
        n -= len(chunk)


def ok_member():
    return member(b"ok", b"fine\n")


# Each case yields the uncompressed tar stream in chunks.
def case_pax_path(arg):
    yield pax([(b"path", (arg or "../x").encode())]) + member(b"innocent", b"x") + END


def case_gnu_longname(arg):
    yield gnu_long(b"L", (arg or "../x").encode() + b"\0") + member(b"innocent", b"x",
                                                                      magic=b"ustar  \0") + END


def case_gnu_longlink(arg):
    yield gnu_long(b"K", (arg or "../x").encode() + b"\0") + header(
        b"innocent", b"2", magic=b"ustar  \0") + END


def case_prefix(arg):
    yield member(b"x", b"x", prefix=(arg or "..").encode()) + END


def case_nul_pax_path(arg):
    yield pax([(b"path", b"a\0/../../x")]) + member(b"innocent", b"x") + END


def case_nul_pax_linkpath(arg):
    yield pax([(b"linkpath", b"target\0/../../x")]) + header(b"innocent", b"2") + END


def case_nul_gnu_longname(arg):
    yield gnu_long(b"L", b"ok\0../../x\0") + member(b"innocent", b"x", magic=b"ustar  \0") + END


def case_name_with_newline(arg):
    yield member(b"a\nb", b"x") + END


def case_long_path(arg):
    n = int(arg or 4097)
    name = ("d/" * (n // 2))[:n - 1] + "f"
    yield pax([(b"path", name.encode())]) + member(b"innocent", b"x") + END


def case_linkpath_on_file(arg):
    """A regular member carrying a PAX linkpath: libarchive would make it a
    hardlink, other readers a file."""
    yield member(b"a", b"x") + pax([(b"linkpath", b"a")]) + member(b"b", b"data") + END


def case_gnu_plus_pax_path(arg):
    yield (gnu_long(b"L", b"from-gnu\0") + pax([(b"path", b"from-pax")]) +
           member(b"innocent", b"x") + END)


def case_gnu_plus_pax_linkpath(arg):
    yield (gnu_long(b"K", b"from-gnu\0") + pax([(b"linkpath", b"from-pax")]) +
           header(b"innocent", b"2") + END)


def case_two_pax(arg):
    yield pax([(b"mtime", b"1")]) + pax([(b"path", b"b")]) + member(b"innocent", b"x") + END


def case_dup_pax_key(arg):
    yield pax([(b"path", b"a"), (b"path", b"b")]) + member(b"innocent", b"x") + END


def case_pax_global_path(arg):
    yield pax([(b"path", b"global")], typeflag=b"g") + member(b"innocent", b"x") + END


def case_pax_global_linkpath(arg):
    yield pax([(b"linkpath", b"/etc")], typeflag=b"g") + member(b"innocent", b"x") + END


def case_pax_global_harmless(arg):
    yield pax([(b"comment", b"made by a test")], typeflag=b"g") + member(b"innocent", b"x") + END


def case_gnu_sparse_pax(arg):
    yield (pax([(b"GNU.sparse.major", b"1"), (b"GNU.sparse.minor", b"0"),
                (b"GNU.sparse.name", b"sparse"), (b"GNU.sparse.realsize", b"1048576")]) +
           member(b"GNUSparseFile.0/sparse", b"1\n0\n512\n".ljust(512, b"\0") + b"x" * 512) + END)


def case_gnu_sparse_old(arg):
    yield member(b"sparse", b"x" * 512, typeflag=b"S", magic=b"ustar  \0") + END


def case_multivolume(arg):
    yield member(b"continued", b"x" * 512, typeflag=b"M", magic=b"ustar  \0") + END


def case_typeflag(arg):
    """A member with an arbitrary typeflag byte (V, A, N, D, X, ...)."""
    yield member(b"odd", b"", typeflag=(arg or "V").encode()) + END


def case_xattr(arg):
    """A file carrying a file capability and a user xattr in PAX records."""
    cap = bytes([0, 0, 0, 2, 0, 0x20, 0, 0, 0, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    yield (pax([(b"SCHILY.xattr.security.capability", cap),
                (b"SCHILY.xattr.user.kern", b"planted"),
                (b"SCHILY.xattr.trusted.overlay.opaque", b"y")]) +
           member(b"ping", b"#!/bin/sh\n", mode=0o755) + END)


def case_fifo(arg):
    yield header(b"fifo", b"6") + END


def case_symlink_with_size(arg):
    yield header(b"link", b"2", size=BLOCK, linkname=b"target") + member(b"smuggled", b"x") + END


def case_dir_with_size(arg):
    yield header(b"dir/", b"5", size=BLOCK, mode=0o755) + member(b"smuggled", b"x") + END


def case_hardlink_with_size(arg):
    yield member(b"a", b"x") + header(b"b", b"1", size=BLOCK, linkname=b"a") + \
        member(b"smuggled", b"x") + END


def case_device_with_size(arg):
    yield header(b"dev", b"3", size=BLOCK) + member(b"smuggled", b"x") + END


def case_big_pax(arg):
    """A PAX record of arg bytes (default 2 MiB)."""
    n = int(arg or 2 << 20)
    yield pax([(b"comment", b"c" * n)]) + member(b"innocent", b"x") + END


def case_big_gnu_longname(arg):
    n = int(arg or 2 << 20)
    yield gnu_long(b"L", b"a" * n) + member(b"innocent", b"x", magic=b"ustar  \0") + END


def case_trailing_member(arg):
    yield ok_member() + END + member(b"hidden", b"surprise") + END


def case_trailing_byte(arg):
    yield ok_member() + END + b"\0" * 700 + b"!" + b"\0" * 323


def case_zero_blocks(arg):
    """A valid member followed by arg zero blocks (default 4097)."""
    yield ok_member()
    yield ZERO * int(arg or 4097)


def case_no_end(arg):
    yield ok_member()


def case_truncated_data(arg):
    yield member(b"big", b"y" * 2000)[:BLOCK + 1000]


def case_truncated_header(arg):
    yield ok_member() + member(b"next", b"x")[:300]


def case_empty(arg):
    yield b""


def case_bad_checksum(arg):
    yield ok_member() + header(b"bad", size=0, bad_checksum=True) + END


def case_base256_size(arg):
    data = b"z" * 700
    yield header(b"b256", size_field=b"\x80" + len(data).to_bytes(11, "big")) + pad(data) + END


def case_negative_size(arg):
    yield header(b"neg", size_field=b"\xff" * 12) + END


def case_member_bomb(arg):
    """One member of arg bytes of zeros (default 3 GiB), as a stream."""
    n = int(arg or 3 * GiB)
    yield header(b"zeros", size=n)
    yield from zeros(n + (-n % BLOCK))
    yield END


def case_total_bomb(arg):
    """A small member, then one of exactly 2 GiB: each allowed, the sum not."""
    yield ok_member()
    yield header(b"two-gib", size=2 * GiB)
    yield from zeros(2 * GiB)
    yield END


def case_inode_bomb(arg):
    """arg character-device entries (default 2,000,001), as a stream."""
    n = int(arg or 2000001)
    batch = 4096
    blocks = [header(b"dev/n%07d" % i, b"3", devmajor=1, devminor=3) for i in range(batch)]
    one = b"".join(blocks)
    done = 0
    while done + batch <= n:
        yield one
        done += batch
    yield b"".join(blocks[:n - done])
    yield END


def case_endless_zeros(arg):
    """A valid member, then zero blocks that never end."""
    yield ok_member()
    chunk = bytes(1 << 20)
    while True:
        yield chunk


def case_endless_empty_gzip(arg):
    """Already gzip: a valid layer's first member, then empty gzip members
    for ever (no output, endless input). Use without -z."""
    yield zlib.compress(b"", 6)[:0] + gzip_one(ok_member())
    empty = gzip_one(b"") * 4096
    while True:
        yield empty


def gzip_one(data):
    z = zlib.compressobj(6, zlib.DEFLATED, 31)
    return z.compress(data) + z.flush()


def case_not_tar(arg):
    yield b"BZh91AY&SY" + os.urandom(2000)


def case_random(arg):
    yield os.urandom(int(arg or 4096))


CASES = {k[5:].replace("_", "-"): v for k, v in globals().items() if k.startswith("case_")}


def gzip_stream(chunks):
    z = zlib.compressobj(6, zlib.DEFLATED, 31)
    for c in chunks:
        out = z.compress(c)
        if out:
            yield out
    yield z.flush()


def layer_chunks(argv):
    """The compressed chunks of one layer described by argv."""
    codec, fmt = "none", "pax"
    while argv and argv[0].startswith("-"):
        opt = argv.pop(0)
        if opt == "-z":
            codec = argv.pop(0)
        elif opt == "--format":
            fmt = argv.pop(0)
        else:
            sys.exit("mklayer.py: unknown option " + opt)
    if argv and argv[0] == "case":
        chunks = CASES[argv[1]](argv[2] if len(argv) > 2 else None)
    else:
        chunks = iter([tarfile_bytes(argv, fmt)])
    return gzip_stream(chunks) if codec == "gzip" else chunks


def main(argv):
    out = None
    if len(argv) >= 2 and argv[0] == "-o":
        out = argv[1]
        argv = argv[2:]
    if argv and argv[0] == "list":
        print("\n".join(sorted(CASES)))
        return 0
    if argv and argv[0] == "batch":
        for line in sys.stdin:
            words = shlex.split(line)
            if not words:
                continue
            with open(os.path.join(argv[1], words[0]), "wb") as f:
                for c in layer_chunks(words[1:]):
                    f.write(c)
        return 0
    if "-o" in argv[:4]:
        i = argv.index("-o")
        out = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    chunks = layer_chunks(argv)
    sink = open(out, "wb") if out else sys.stdout.buffer
    try:
        for c in chunks:
            sink.write(c)
        sink.flush()
    except BrokenPipeError:
        # The reader refused the layer and went away: the expected ending.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
