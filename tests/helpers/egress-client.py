#!/usr/bin/env python3
"""A box-side client for the egress suite: talks to the proxy on
127.0.0.1:3128 in ways curl will not (raw heads, slow drips, many tunnels).

  raw 'BYTES'...       for each argument, on a new connection: send BYTES
                       (Python escapes: \\r \\n \\x00), print the status
                       line, or EOF / TIMEOUT
  big N                send a head of N bytes that never ends; print status
  exact N              send a valid GET head of exactly N bytes; print status
  drip SECONDS         send a valid head one byte every SECONDS; print
                       "closed after S" (whole seconds) when the proxy hangs up
  tunnels N HOST       open N tunnels at once to HOST:443; print how many got
                       each status, then how many echo a line back
  storm N HOST         N connections in waves; print the status counts
  halfclose HOST N     tunnel, send N bytes, shut down writing, read to EOF;
                       print "echoed M"
  idle HOST SECONDS    tunnel, stay silent SECONDS, print open or closed
  pipelined HOST       CONNECT with the first payload in the same write
  exchange 'BYTES'     send BYTES on one connection and read until the
                       proxy closes: print each status line, then EOF (or
                       TIMEOUT after 5 s)
  urllib URL CAFILE    fetch URL with urllib (proxy from the environment);
                       print the body or the exception
"""
import collections
import os
import resource
import select
import socket
import ssl
import sys
import time
import urllib.request

PROXY = ("127.0.0.1", 3128)


def status_line(s, timeout=5.0):
    s.settimeout(timeout)
    data = b""
    try:
        while b"\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                return "EOF" if not data else data.decode("latin-1")
            data += chunk
    except socket.timeout:
        return "TIMEOUT"
    except ConnectionResetError:
        return "RESET"
    return data.split(b"\r\n", 1)[0].decode("latin-1")


def connect_tunnel(host, port=443):
    s = socket.create_connection(PROXY)
    s.sendall(b"CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n" % (host.encode(), port, host.encode(), port))
    # Read exactly the status head, nothing of the tunnel.
    data = b""
    while not data.endswith(b"\r\n\r\n"):
        c = s.recv(1)
        if not c:
            break
        data += c
    return s, data.split(b"\r\n", 1)[0].decode("latin-1")


def raise_nofile():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "raw":
        for arg in args:
            payload = arg.encode("latin-1").decode("unicode_escape").encode("latin-1")
            s = socket.create_connection(PROXY)
            s.sendall(payload)
            print(status_line(s), flush=True)
            s.close()
    elif cmd == "exchange":
        payload = args[0].encode("latin-1").decode("unicode_escape").encode("latin-1")
        s = socket.create_connection(PROXY)
        s.sendall(payload)
        s.settimeout(5.0)
        data, end = b"", "EOF"
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        except socket.timeout:
            end = "TIMEOUT"
        except ConnectionResetError:
            end = "RESET"
        for line in data.split(b"\r\n"):
            if line.startswith(b"HTTP/1."):
                print(line.decode("latin-1"))
        print(end, flush=True)
    elif cmd == "big":
        n = int(args[0])
        head = b"GET http://test.example/ HTTP/1.1\r\nX-Pad: " + b"a" * n
        s = socket.create_connection(PROXY)
        try:
            s.sendall(head[:n])
        except (BrokenPipeError, ConnectionResetError):
            pass
        print(status_line(s))
    elif cmd == "exact":
        n = int(args[0])
        head = b"GET http://test.example/exact HTTP/1.1\r\nX-Pad: "
        tail = b"\r\n\r\n"
        head += b"a" * (n - len(head) - len(tail)) + tail
        assert len(head) == n
        s = socket.create_connection(PROXY)
        s.sendall(head)
        print(status_line(s))
    elif cmd == "drip":
        gap = float(args[0])
        head = b"CONNECT test.example:443 HTTP/1.1\r\nHost: test.example:443\r\n\r\n"
        s = socket.create_connection(PROXY)
        start = time.monotonic()
        for b in head[:-1]:
            try:
                s.sendall(bytes([b]))
            except OSError:
                break
            r, _, _ = select.select([s], [], [], gap)
            if r:
                break
        r, _, _ = select.select([s], [], [], 60)
        try:
            data = s.recv(100) if r else b"?"
        except ConnectionResetError:
            data = b""
        print("closed after %d%s" % (int(time.monotonic() - start), "" if not data else " with " + repr(data)))
    elif cmd == "tunnels":
        raise_nofile()
        n, host = int(args[0]), args[1]
        socks = []
        for _ in range(n):
            s = socket.create_connection(PROXY)
            s.sendall(b"CONNECT %s:443 HTTP/1.1\r\n\r\n" % host.encode())
            socks.append(s)
        counts = collections.Counter()
        ok = []
        for s in socks:
            line = status_line(s, 10)
            counts[line] += 1
            if line.startswith("HTTP/1.1 200"):
                ok.append(s)
        for line, c in sorted(counts.items()):
            print("%d %s" % (c, line))
        # Every open tunnel carries its own bytes, all at once.
        for i, s in enumerate(ok):
            s.sendall(b"ping-%d\n" % i)
        echoed = 0
        for i, s in enumerate(ok):
            s.settimeout(10)
            want = b"ping-%d\n" % i
            got = b""
            while len(got) < len(want):
                c = s.recv(len(want) - len(got))
                if not c:
                    break
                got += c
            echoed += got == want
        print("echoed %d" % echoed)
    elif cmd == "storm":
        raise_nofile()
        n, host = int(args[0]), args[1]
        counts = collections.Counter()
        held = []
        wave = 500
        for start in range(0, n, wave):
            socks = []
            for _ in range(min(wave, n - start)):
                s = socket.create_connection(PROXY)
                s.sendall(b"CONNECT %s:443 HTTP/1.1\r\n\r\n" % host.encode())
                socks.append(s)
            for s in socks:
                line = status_line(s, 10)
                counts[line] += 1
                if line.startswith("HTTP/1.1 200"):
                    held.append(s)
                else:
                    s.close()
        for line, c in sorted(counts.items()):
            print("%d %s" % (c, line))
    elif cmd == "halfclose":
        host, n = args[0], int(args[1])
        s, line = connect_tunnel(host)
        assert line.startswith("HTTP/1.1 200"), line
        s.sendall(os.urandom(n))
        s.shutdown(socket.SHUT_WR)
        got = 0
        s.settimeout(10)
        while True:
            c = s.recv(65536)
            if not c:
                break
            got += len(c)
        print("echoed %d" % got)
    elif cmd == "idle":
        host, secs = args[0], float(args[1])
        s, line = connect_tunnel(host)
        assert line.startswith("HTTP/1.1 200"), line
        r, _, _ = select.select([s], [], [], secs)
        if r and s.recv(1) == b"":
            print("closed")
        else:
            print("open")
    elif cmd == "pipelined":
        host = args[0]
        s = socket.create_connection(PROXY)
        s.sendall(b"CONNECT %s:443 HTTP/1.1\r\n\r\nfirst-bytes\n" % host.encode())
        s.settimeout(5)
        data = b""
        while data.count(b"\n") < 3:
            c = s.recv(4096)
            if not c:
                break
            data += c
        print(repr(data))
    elif cmd == "urllib":
        url, cafile = args
        ctx = ssl.create_default_context(cafile=cafile)
        try:
            with urllib.request.urlopen(url, context=ctx, timeout=10) as r:
                print(r.read().decode())
        except Exception as e:  # print what the client sees, whatever it is
            print("%s: %s" % (type(e).__name__, e))
    else:
        sys.exit("unknown command " + cmd)


main()
