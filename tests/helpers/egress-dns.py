#!/usr/bin/env python3
"""A tiny authoritative DNS server for the egress suite, on 127.0.0.1:53 of
the test's own network namespace (tests/helpers/egress-ns points the
resolver there). It answers a fixed zone, NXDOMAIN for everything else,
and logs every question as "<name> <type>" so tests can see exactly what
the proxy asked. Questions about dns-slow.test.example get no answer at
all, so the resolver waits for its timeout.

usage: egress-dns.py LOG READY
"""
import socket
import struct
import sys

logpath, readypath = sys.argv[1:3]
A, AAAA = 1, 28
ZONE = {
    "dns-private.test.example": [(A, "10.0.0.1")],
    "dns-mixed.test.example": [(A, "1.1.1.1"), (A, "10.0.0.1")],
    "dns-mixed6.test.example": [(AAAA, "2606:4700:4700::1111"), (AAAA, "fd00::1")],
    "dns-meta.test.example": [(AAAA, "::ffff:169.254.169.254")],
    "dns-self.test.example": [(A, "1.2.3.4")],
    "dns-public.test.example": [(A, "1.1.1.1")],
    # cloud metadata and its neighbours, in every form an answer can take
    "meta4.test.example": [(A, "169.254.169.254")],
    "linklocal.test.example": [(A, "169.254.1.1")],
    "loop.test.example": [(A, "127.0.0.2")],
    "private.test.example": [(A, "192.168.1.1")],
    "meta-nat64.test.example": [(AAAA, "64:ff9b::a9fe:a9fe")],
    "meta-6to4.test.example": [(AAAA, "2002:a9fe:a9fe::1")],
    "meta-compat.test.example": [(AAAA, "::a9fe:a9fe")],
    "ll6.test.example": [(AAAA, "fe80::1")],
    "loop6.test.example": [(AAAA, "::1")],
    "meta-both.test.example": [(A, "1.1.1.1"), (AAAA, "::ffff:a9fe:a9fe")],
}
TYPES = {A: "A", AAAA: "AAAA"}


def parse_name(msg, off):
    labels = []
    while True:
        n = msg[off]
        off += 1
        if n == 0:
            return ".".join(labels), off
        labels.append(msg[off:off + n].decode("ascii", "replace"))
        off += n


def answer(msg):
    ident, _flags, qd = struct.unpack(">HHH", msg[:6])
    if qd != 1:
        return None
    name, off = parse_name(msg, 12)
    qtype, qclass = struct.unpack(">HH", msg[off:off + 4])
    question = msg[12:off + 4]
    with open(logpath, "a") as f:
        f.write("%s %s\n" % (name, TYPES.get(qtype, qtype)))
    key = name.lower().rstrip(".")
    if key == "dns-slow.test.example":
        return None
    records = [r for r in ZONE.get(key, []) if r[0] == qtype]
    rcode = 0 if key in ZONE else 3
    out = struct.pack(">HHHHHH", ident, 0x8400 | rcode, 1, len(records), 0, 0) + question
    for rtype, addr in records:
        data = socket.inet_pton(socket.AF_INET if rtype == A else socket.AF_INET6, addr)
        out += struct.pack(">HHHIH", 0xC00C, rtype, 1, 60, len(data)) + data
    return out


s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 53))
with open(readypath, "w") as f:
    f.write("ready\n")
while True:
    msg, peer = s.recvfrom(4096)
    try:
        reply = answer(msg)
    except (IndexError, struct.error, UnicodeError):
        reply = None
    if reply:
        s.sendto(reply, peer)
