#!/usr/bin/env python3
"""A hostile OCI registry for the pull tests, on 127.0.0.1 only.

  hostile-registry.py PORT DIR [MODE]

Every request is logged to DIR/requests.log as `METHOD PATH auth=<scheme>`.
MODE decides the /v2/ challenge:
  plain             anonymous (no challenge)
  bearer-otherhost  Bearer realm on another host (localhost vs 127.0.0.1)
  bearer-httprealm  Bearer realm on plain http
  basic             Basic: every request needs the credentials kern:s3cret-pw,
                    or kern:<the first line of DIR/password> when that file
                    exists (a file, not argv or environ: OCI-10 scans every
                    process's for the password)
  bigtoken          Bearer whose token response is 9 MB
  tls               https with DIR/cert.pem and DIR/key.pem, Bearer realm on
                    its own https host (credentials may follow); the repo
                    redirect-http redirects its layer to plain http

The repository name picks the lie (see REPOS below); `good` is a valid
one-layer image used as the positive control. Two repositories fail only
the FIRST fetch of their 2 MiB layer and serve it right afterwards, so a
retry succeeds (bench/soak): `reset-once` sends half of it and resets the
connection, `digest-once` sends other bytes of the same size, `stall-once`
sends half and then nothing for 60 s (the soak kills the pull meanwhile).
"""
import base64
import gzip
import hashlib
import io
import json
import os
import random
import socket
import struct
import sys
import tarfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT, DIR = int(sys.argv[1]), sys.argv[2]
MODE = sys.argv[3] if len(sys.argv) > 3 else "plain"


def basic_password():
    try:
        with open(os.path.join(DIR, "password"), encoding="utf-8") as f:
            return f.readline().rstrip("\n")
    except FileNotFoundError:
        return "s3cret-pw"


BASIC = "Basic " + base64.b64encode(("kern:" + basic_password()).encode()).decode()
LOG = open(os.path.join(DIR, "requests.log"), "a", buffering=1)
LOCK = threading.Lock()


def sha(b):
    return "sha256:" + hashlib.sha256(b).hexdigest()


def make_tar(files):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as t:
        for name, data in files:
            ti = tarfile.TarInfo(name)
            ti.size, ti.mode, ti.mtime = len(data), 0o644, 1700000000
            t.addfile(ti, io.BytesIO(data))
    return buf.getvalue()


TAR = make_tar([("hello", b"hello from the hostile registry\n")])
LAYER = gzip.compress(TAR, mtime=0)
BLOBS = {sha(LAYER): LAYER}


def config(diff_ids=None, cfg=None):
    c = {"architecture": "amd64", "os": "linux",
         "config": cfg if cfg is not None else {"Cmd": ["/hello"], "Env": ["A=1"]},
         "rootfs": {"type": "layers", "diff_ids": diff_ids if diff_ids is not None else [sha(TAR)]}}
    b = json.dumps(c).encode()
    BLOBS[sha(b)] = b
    return b


def manifest(cfg_blob, layers=None, mt="application/vnd.oci.image.manifest.v1+json", extra=None):
    m = {"schemaVersion": 2, "mediaType": mt,
         "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": sha(cfg_blob), "size": len(cfg_blob)},
         "layers": layers if layers is not None else [
             {"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": sha(LAYER), "size": len(LAYER)}]}
    if extra:
        m.update(extra)
    return json.dumps(m).encode()


def index(entries):
    return json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                       "manifests": entries}).encode()


GOOD_CFG = config()
GOOD = manifest(GOOD_CFG)
LAYER_DESC = {"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": sha(LAYER), "size": len(LAYER)}
MANIFESTS = {}   # repo -> manifest bytes for any tag
BY_DIGEST = {}   # digest -> bytes
LIE_BLOB = {}    # digest -> bytes served instead


def add(repo, body):
    MANIFESTS[repo] = body
    BY_DIGEST[sha(body)] = body


add("good", GOOD)
add("slow", manifest(config(), layers=[LAYER_DESC]))
# OCI-2: blob bytes that are not their digest.
LIE_CFG = config(cfg={"Cmd": ["/lie"]})
add("lying-config", manifest(LIE_CFG))
LIE_BLOB[sha(LIE_CFG)] = LIE_CFG.replace(b"/lie", b"/LIE")
# The lie has the declared size, so only the digest can tell.
LIE_LAYER = gzip.compress(make_tar([("lie", b"x" * 64)]), mtime=0)
LIE_OTHER = next(g for g in (gzip.compress(make_tar([("lie", bytes([c]) * 64)]), mtime=0) for c in b"yzabcdefgh")
                 if len(g) == len(LIE_LAYER))
add("lying-layer", manifest(GOOD_CFG, layers=[{"mediaType": LAYER_DESC["mediaType"], "digest": sha(LIE_LAYER), "size": len(LIE_LAYER)}]))
LIE_BLOB[sha(LIE_LAYER)] = LIE_OTHER
# OCI-4: right compressed digest, wrong diff_id; wrong diff_id count.
add("bad-diffid", manifest(config(diff_ids=[sha(b"not the tar")])))
add("diffid-count", manifest(config(diff_ids=[sha(TAR), sha(TAR)])))
# OCI-5: hostile manifests.
add("badjson", b'{"schemaVersion": 2, "layers": [')
add("deep", b"[" * 100000 + b"]" * 100000)
add("huge", manifest(GOOD_CFG, extra={"annotations": {"pad": "x" * 9000000}}))
add("schema1", json.dumps({"schemaVersion": 1, "name": "schema1", "tag": "latest", "fsLayers": [{"blobSum": sha(LAYER)}]}).encode())
add("nolayers", manifest(GOOD_CFG, layers=[]))
add("many", manifest(config(diff_ids=[sha(TAR)] * 513), layers=[LAYER_DESC] * 513))
add("upper", manifest(GOOD_CFG, layers=[dict(LAYER_DESC, digest=LAYER_DESC["digest"].upper().replace("SHA256", "sha256"))]))
add("nonsha", manifest(GOOD_CFG, layers=[dict(LAYER_DESC, digest="sha512:" + hashlib.sha512(LAYER).hexdigest())]))
add("dupkeys", GOOD.replace(b'"schemaVersion": 2', b'"schemaVersion": 2, "schemaVersion": 2'))
add("urls", manifest(GOOD_CFG, layers=[dict(LAYER_DESC, urls=["http://127.0.0.1:%d/external/layer" % PORT])]))
# OCI-6: hostile configs.
for name, cfgb in [("cfg-badjson", b'{"config": {'), ("cfg-huge", json.dumps({"pad": "x" * 5000000, "rootfs": {"diff_ids": [sha(TAR)]}}).encode()),
                   ("cfg-envnum", config(cfg={"Env": [1]})), ("cfg-entrystr", config(cfg={"Entrypoint": "/bin/sh"}))]:
    BLOBS[sha(cfgb)] = cfgb
    add(name, manifest(cfgb))
# OCI-3: a digest-pinned manifest with other bytes; an index entry that lies.
add("pinned", GOOD)
IDX_LIE = index([{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": sha(b"something else"), "size": len(GOOD),
                  "platform": {"os": "linux", "architecture": "amd64"}}])
add("index-lie", IDX_LIE)
BY_DIGEST[sha(b"something else")] = GOOD
# OCI-7: no linux/amd64; attestation entries skipped.
add("noarch", index([{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": sha(GOOD), "size": len(GOOD),
                      "platform": {"os": "linux", "architecture": a}} for a in ("arm64", "riscv64")] +
                    [{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": sha(GOOD), "size": len(GOOD),
                      "platform": {"os": "windows", "architecture": "amd64"}}]))
add("attest", index([{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": sha(GOOD), "size": len(GOOD),
                      "platform": {"os": "unknown", "architecture": "unknown"}},
                     {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": sha(GOOD), "size": len(GOOD),
                      "platform": {"os": "linux", "architecture": "amd64"}}]))
add("redirect-loop", GOOD)
add("redirect-ok", GOOD)
add("redirect-http", GOOD)
# Faults that happen once (bench/soak). Stored deflate blocks (level 0):
# the compressed size depends only on the length, so the wrong bytes
# have the declared size and only the digests can tell.
BIG_TAR = make_tar([("big", random.Random(15).randbytes(2 << 20))])
BIG = gzip.compress(BIG_TAR, compresslevel=0, mtime=0)
BIG_OTHER = gzip.compress(make_tar([("big", random.Random(16).randbytes(2 << 20))]), compresslevel=0, mtime=0)
assert len(BIG) == len(BIG_OTHER)
BLOBS[sha(BIG)] = BIG
BIG_DESC = {"mediaType": LAYER_DESC["mediaType"], "digest": sha(BIG), "size": len(BIG)}
BIG_CFG = config(diff_ids=[sha(BIG_TAR)], cfg={"Cmd": ["/big"]})
add("reset-once", manifest(BIG_CFG, layers=[BIG_DESC]))
add("digest-once", manifest(BIG_CFG, layers=[BIG_DESC]))
add("stall-once", manifest(BIG_CFG, layers=[BIG_DESC]))
FAULTED = set()  # repos whose one fault was served


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def reset_midway(self, body, stall=0.3):
        """Announce all of body, send half, wait, then reset the connection
        (SO_LINGER 0 turns the close into an RST)."""
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body[:len(body) // 2])
        time.sleep(stall)  # the client is extracting by now: the reset lands mid-layer
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True

    def log_message(self, *a):
        pass

    def send(self, code, body=b"", ctype="application/json", headers=None):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def error(self, code, err):
        self.send(code, json.dumps({"errors": [{"code": err, "message": err.lower()}]}).encode())

    def authorized(self):
        auth = self.headers.get("Authorization", "")
        if MODE == "basic":
            return auth == BASIC
        if MODE in ("bearer-otherhost", "bearer-httprealm", "bigtoken", "tls"):
            return auth == "Bearer anon-token"
        return True

    def challenge(self):
        host = "localhost" if MODE == "bearer-otherhost" else "127.0.0.1"
        if MODE == "basic":
            h = 'Basic realm="hostile"'
        elif MODE == "tls":
            h = 'Bearer realm="https://registry.test:%d/token",service="hostile"' % PORT
        else:
            h = 'Bearer realm="http://%s:%d/token",service="hostile"' % (host, PORT)
        self.send(401, b'{"errors":[{"code":"UNAUTHORIZED"}]}', headers={"WWW-Authenticate": h})

    def do_GET(self):
        auth = self.headers.get("Authorization", "")
        with LOCK:
            LOG.write("GET %s auth=%s\n" % (self.path, auth.split(" ")[0] if auth else "none"))
            if auth.startswith("Basic") and auth != BASIC and MODE != "tls":
                LOG.write("BAD-BASIC\n")
        p = self.path.split("?")[0]
        if p.startswith("/token"):
            if MODE == "bigtoken":
                return self.send(200, json.dumps({"token": "t" * 9000000}).encode())
            return self.send(200, b'{"token": "anon-token"}')
        if p.startswith("/external"):
            return self.send(200, LAYER, "application/octet-stream")
        if p == "/v2/" or p == "/v2":
            if MODE != "plain" and not self.authorized():
                return self.challenge()
            return self.send(200, b"{}")
        if not self.authorized():
            return self.challenge()
        parts = p.split("/")
        if len(parts) < 5 or parts[1] != "v2":
            return self.error(404, "NAME_UNKNOWN")
        repo, kind, ref = "/".join(parts[2:-2]), parts[-2], parts[-1]
        if repo == "ratelimit":
            return self.error(429, "TOOMANYREQUESTS")
        if kind == "manifests":
            if repo not in MANIFESTS:
                return self.error(404, "MANIFEST_UNKNOWN")
            body = MANIFESTS[repo]
            if ref.startswith("sha256:"):
                if repo == "pinned":
                    body = GOOD.replace(b"/hello", b"/other")
                elif ref in BY_DIGEST:
                    body = BY_DIGEST[ref]
                else:
                    return self.error(404, "MANIFEST_UNKNOWN")
            try:
                mt = json.loads(body).get("mediaType", "application/json")
            except Exception:
                mt = "application/vnd.oci.image.manifest.v1+json"
            return self.send(200, body, mt)
        if kind == "blobs":
            if repo == "redirect-loop" and ref == sha(LAYER):
                return self.send(307, b"", headers={"Location": self.path})
            if repo == "redirect-http" and ref == sha(LAYER):
                return self.send(307, b"", headers={"Location": "http://127.0.0.1:%d/v2/good/blobs/%s" % (PORT, ref)})
            if repo == "redirect-ok" and ref == sha(LAYER) and "hop" not in self.path:
                return self.send(307, b"", headers={"Location": "/v2/redirect-ok/blobs/%s?hop=1" % ref})
            if repo in ("reset-once", "digest-once", "stall-once") and ref == sha(BIG):
                with LOCK:
                    first = repo not in FAULTED
                    FAULTED.add(repo)
                    LOG.write("FAULT %s %s\n" % (repo, "served" if first else "spent"))
                if first and repo == "digest-once":
                    return self.send(200, BIG_OTHER, "application/octet-stream")
                if first and repo == "stall-once":
                    return self.reset_midway(BIG, stall=60)
                if first:
                    return self.reset_midway(BIG)
            body = LIE_BLOB.get(ref, BLOBS.get(ref))
            if body is None:
                return self.error(404, "BLOB_UNKNOWN")
            if repo == "slow" and ref == sha(LAYER):
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                for b in body:
                    self.wfile.write(bytes([b]))
                    self.wfile.flush()
                    time.sleep(0.5)
                return
            return self.send(200, body, "application/octet-stream")
        return self.error(404, "NAME_UNKNOWN")


class Server(ThreadingHTTPServer):
    daemon_threads = True


srv = Server(("127.0.0.1", PORT), H)
if MODE == "tls":
    import ssl
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(DIR, "cert.pem"), os.path.join(DIR, "key.pem"))
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
srv.serve_forever()
