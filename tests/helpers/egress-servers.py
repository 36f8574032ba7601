#!/usr/bin/env python3
"""Test servers for the egress suite, run inside a network namespace the
test created (tests/helpers/egress-ns): nothing here can reach a real
network.

  web     127.0.0.1:8080   HTTP, or HTTPS when the first byte is a TLS
                           handshake (throwaway certificate); the body says
                           which, and echoes the request line and Host:;
                           GET /302/URL answers a redirect to URL
  evil    127.0.0.1:8081   HTTP; any connection here is a failure of EG-9
  pyweb   127.0.0.1:8082   Python's own http.server (HTTP/1.1, keep-alive)
                           serving hello.txt and echoing POST bodies; it
                           logs every request it serves as "pyweb-request
                           LINE host=HOST fields=NAMES body=BODY code=CODE"
  echo    127.0.0.1:7000   echoes bytes until EOF, then closes
  canary  0.0.0.0:80/443 and [::]:80/443 (every address on lo): a name
          the guard refuses must never produce a connection here

Every accepted connection is logged as "<server> <port>" to LOG. Writes
READY when all are listening.

With "public", only one server, "public", the web server above on every
address's ports 80 and 443: it stands for a site on the internet, in the
namespace egress-ns makes for that.

usage: egress-servers.py CERT KEY LOG READY [public]
"""
import http.server
import os
import socket
import ssl
import sys
import threading

cert, key, logpath, readypath = sys.argv[1:5]
log_lock = threading.Lock()


def log(name, port):
    with log_lock, open(logpath, "a") as f:
        f.write(f"{name} {port}\n")


def read_head(conn):
    data = b""
    while b"\r\n\r\n" not in data and len(data) < 65536:
        chunk = conn.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


def web(conn, name, tls_ctx):
    if tls_ctx is not None:
        first = conn.recv(1, socket.MSG_PEEK)
        if first == b"\x16":
            conn = tls_ctx.wrap_socket(conn, server_side=True)
            name += "-tls"
    head = read_head(conn)
    lines = head.split(b"\r\n")
    host = b""
    length = 0
    for line in lines[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"host":
            host = v.strip()
        if k.strip().lower() == b"content-length":
            length = int(v.strip())
    body_in = head.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in head else b""
    while len(body_in) < length:
        chunk = conn.recv(4096)
        if not chunk:
            break
        body_in += chunk
    # GET /302/URL answers a redirect to URL (the cloud metadata tests).
    target = lines[0].split(b" ")[1] if lines[0].count(b" ") >= 2 else b""
    if target.startswith(b"/302/"):
        conn.sendall(b"HTTP/1.1 302 Found\r\nLocation: %s\r\nContent-Length: 0\r\n"
                     b"Connection: close\r\n\r\n" % target[5:])
        conn.close()
        return
    body = b"server=%s line=%s host=%s body=%s\n" % (name.encode(), lines[0], host, body_in)
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
    conn.close()


# Beside LOG, in the test's own directory, which goes with the test (a
# temporary directory of its own was left behind by every run).
docroot = os.path.join(os.path.dirname(os.path.abspath(logpath)), "pyweb-root")
os.makedirs(docroot, exist_ok=True)
with open(os.path.join(docroot, "hello.txt"), "w") as f:
    f.write("hello from http.server\n")


class PyWeb(http.server.SimpleHTTPRequestHandler):
    """The standard library's server as it is, keep-alive included: it
    answers an absolute-form request line 404 and serves every request a
    connection carries."""

    protocol_version = "HTTP/1.1"
    body = b""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, directory=docroot, **kwargs)

    def do_POST(self):
        self.body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_request(self, code="-", size="-"):
        fields = ",".join(k.lower() for k in self.headers.keys())
        with log_lock, open(logpath, "a") as f:
            f.write("pyweb-request %s host=%s fields=%s body=%s code=%s\n" % (
                self.requestline, self.headers.get("Host"), fields, self.body.decode("latin-1"), code))

    def log_message(self, *args):
        pass


def pyweb(conn, name, _):
    PyWeb(conn, ("127.0.0.1", 0), None)
    conn.close()


def echo(conn, name, _):
    while True:
        data = conn.recv(65536)
        if not data:
            break
        conn.sendall(data)
    conn.shutdown(socket.SHUT_WR)
    conn.close()


def canary(conn, name, _):
    conn.close()


def serve(sock, name, handler, ctx):
    port = sock.getsockname()[1]
    while True:
        conn, _ = sock.accept()
        log(name, port)
        threading.Thread(target=lambda c=conn: guarded(handler, c, name, ctx), daemon=True).start()


def guarded(handler, conn, name, ctx):
    try:
        handler(conn, name, ctx)
    except (OSError, ssl.SSLError, ValueError):
        conn.close()


def listen(family, addr, port):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if family == socket.AF_INET6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    s.bind((addr, port))
    s.listen(512)
    return s


tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
tls.load_cert_chain(cert, key)
if sys.argv[5:] == ["public"]:
    servers = [
        (listen(socket.AF_INET, "0.0.0.0", 80), "public", web, tls),
        (listen(socket.AF_INET, "0.0.0.0", 443), "public", web, tls),
    ]
else:
    servers = [
        (listen(socket.AF_INET, "127.0.0.1", 8080), "web", web, tls),
        (listen(socket.AF_INET, "127.0.0.1", 8081), "evil", web, None),
        (listen(socket.AF_INET, "127.0.0.1", 8082), "pyweb", pyweb, None),
        (listen(socket.AF_INET, "127.0.0.1", 7000), "echo", echo, None),
        (listen(socket.AF_INET, "0.0.0.0", 80), "canary", canary, None),
        (listen(socket.AF_INET, "0.0.0.0", 443), "canary", canary, None),
    ]
    try:
        servers.append((listen(socket.AF_INET6, "::", 80), "canary6", canary, None))
        servers.append((listen(socket.AF_INET6, "::", 443), "canary6", canary, None))
    except OSError:
        pass  # no IPv6 in this namespace: the IPv6 names fail to connect anyway
for s, name, handler, ctx in servers:
    threading.Thread(target=serve, args=(s, name, handler, ctx), daemon=True).start()
with open(readypath, "w") as f:
    f.write("ready\n")
threading.Event().wait()
