"""install_packages: pip through kern's egress proxy, then sealed.

There is no Python package index reachable from these machines, so the
test serves its own: a PEP 503 simple index holding one wheel built here,
on 127.0.0.1 inside a network namespace made for the test (nothing leaves
it). kern's egress proxy refuses loopback addresses, as it must; the test
build of kern (build/test/kern) maps test names to local servers through
KERN_EGRESS_TEST_HOSTS, as the egress bats suite does, so the allowed
domain ``pypi.test.example`` reaches the index and nothing else does. The
release build ignores that variable (egress.bats proves it).
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import shlex
import shutil
import subprocess
import sys
import zipfile
from typing import Dict

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mcp_peer import BINDINGS, StdioPeer, kern_mcp_command  # noqa: E402

TOP = os.path.dirname(os.path.dirname(BINDINGS))
ALLOWED = "pypi.test.example"
OTHER = "mirror.test.example"


def wheel(name: str, version: str, module: str) -> bytes:
    dist = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": module.encode(),
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: kern-test\nRoot-Is-Purelib: true\n"
                         b"Tag: py3-none-any\n",
    }
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{dist}/RECORD,,")
    files[f"{dist}/RECORD"] = ("\n".join(record) + "\n").encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for path, data in files.items():
            z.writestr(path, data)
    return buf.getvalue()


# kern's proxy forwards plain HTTP requests in absolute form
# ("GET http://host/path"), which RFC 9112 (3.2.2) requires origin servers
# to accept; Python's http.server does not, so this one takes the path out.
# Every request it serves is logged to requests.log beside the index.
SERVE = """
import http.server, os, sys, threading, time, urllib.parse
LOG = open(sys.argv[1], "a", buffering=1)
# The shell that starts this execs kern-mcp: once that ends, so does this
# server (else it outlives the test, alone in its network namespace).
PARENT = os.getppid()
def leave_with_parent():
    while os.getppid() == PARENT:
        time.sleep(0.2)
    os._exit(0)
threading.Thread(target=leave_with_parent, daemon=True).start()
class Handler(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):
        LOG.write(self.headers.get("Host", "") + " " + self.path + "\\n")
        if "://" in self.path:
            self.path = urllib.parse.urlsplit(self.path)._replace(scheme="", netloc="").geturl()
        super().do_GET()
http.server.ThreadingHTTPServer(("127.0.0.1", 8765), Handler).serve_forever()
"""


def make_index(root: str) -> None:
    data = wheel("kerndemo", "1.0", "VALUE = 'installed through the egress proxy'\n")
    fname = "kerndemo-1.0-py3-none-any.whl"
    os.makedirs(os.path.join(root, "files"))
    os.makedirs(os.path.join(root, "simple", "kerndemo"))
    with open(os.path.join(root, "files", fname), "wb") as f:
        f.write(data)
    sha = hashlib.sha256(data).hexdigest()
    with open(os.path.join(root, "simple", "index.html"), "w") as f:
        f.write('<html><body><a href="kerndemo/">kerndemo</a></body></html>\n')
    with open(os.path.join(root, "simple", "kerndemo", "index.html"), "w") as f:
        f.write(f'<html><body><a href="../../files/{fname}#sha256={sha}">{fname}</a>'
                "</body></html>\n")


@pytest.fixture
def test_kern():
    path = os.path.join(os.environ.get("KERN_TEST_TREE", TOP), "build", "test", "kern")
    if not os.access(path, os.X_OK):
        pytest.skip(f"needs the test build of kern ({path}; `make` builds it): only it maps "
                    "test names to loopback servers for the egress proxy")
    if shutil.which("unshare") is None:
        pytest.skip("unshare (util-linux) is not installed")
    probe = ["unshare", "-n", "true"] if os.getuid() == 0 else ["unshare", "-rn", "true"]
    if subprocess.run(probe, capture_output=True).returncode != 0:
        pytest.skip("cannot create a network namespace here")
    return path


def server_in_netns(tmp_path, kern: str, extra: Dict[str, str]) -> StdioPeer:
    """kern-mcp in a fresh network namespace (only lo) beside the index."""
    index = tmp_path / "index"
    make_index(str(index))
    ws = tmp_path / "ws"
    py = sys.executable
    serve = tmp_path / "serve.py"
    serve.write_text(SERVE)
    script = (
        "set -e; ip link set lo up 2>/dev/null || /sbin/ip link set lo up\n"
        f"cd {shlex.quote(str(index))}\n"
        f"{shlex.quote(py)} {shlex.quote(str(serve))} {shlex.quote(str(tmp_path / 'requests.log'))}"
        " >/dev/null 2>&1 &\n"
        f"up() {{ {shlex.quote(py)} -c 'import socket; socket.create_connection("
        "(\"127.0.0.1\", 8765))' 2>/dev/null; }\n"
        "for i in $(seq 100); do up && break; sleep 0.05; done\n"
        "up || { echo 'the test index server did not start' >&2; exit 99; }\n"
        "cd /\nexec " + " ".join(shlex.quote(a) for a in kern_mcp_command()) + "\n")
    unshare = ["unshare", "-n"] if os.getuid() == 0 else ["unshare", "-rn"]
    env = {
        "PATH": os.environ.get("PATH", "") + ":/usr/sbin:/sbin",
        "KERN_BIN": kern,
        "KERN_EGRESS_TEST_HOSTS": f"{ALLOWED}=127.0.0.1:8765,{OTHER}=127.0.0.1:8765",
        "KERN_MCP_IMAGE": "host",
        "KERN_MCP_WORKSPACE": str(ws),
        "KERN_MCP_TIMEOUT": "60",
        "PIP_TRUSTED_HOST": f"{ALLOWED} {OTHER}",
    }
    env.update(extra)
    return StdioPeer(env, argv=unshare + ["sh", "-c", script])


def text_of(result) -> str:
    return "\n".join(c["text"] for c in result["content"] if c["type"] == "text")


def test_install_then_import_with_run_code_network_off_and_deps_sealed(test_kern, tmp_path):
    p = server_in_netns(tmp_path, test_kern, {
        "KERN_MCP_INSTALL_ALLOW": ALLOWED,
        "PIP_INDEX_URL": f"http://{ALLOWED}/simple/"})
    try:
        p.initialize()
        tools = {t["name"]: t for t in p.request(1, "tools/list")["result"]["tools"]}
        assert tools["install_packages"]["annotations"]["openWorldHint"] is True
        assert ALLOWED in tools["install_packages"]["description"]
        res = p.call(2, "install_packages", {"packages": ["kerndemo==1.0"]}, timeout=300)["result"]
        assert res["isError"] is False, (text_of(res), p.stderr)
        assert "Successfully installed kerndemo-1.0" in text_of(res)
        log = (tmp_path / "requests.log").read_text().split("\n")
        # kern's egress proxy sends the request on in origin form (Host, path).
        assert f"{ALLOWED} /simple/kerndemo/" in log
        res = p.call(3, "run_code", {"code": "import kerndemo; print(kerndemo.VALUE)"})["result"]
        assert text_of(res) == "installed through the egress proxy\n[exit 0]", text_of(res)
        # run_code has no network: not the index, not the proxy.
        probe = ("import urllib.request, os\n"
                 "print(sorted(k for k in os.environ if k.lower().endswith('_proxy')))\n"
                 f"try:\n    urllib.request.urlopen('http://{ALLOWED}/simple/', timeout=5)\n"
                 "except Exception as e:\n    print('blocked', type(e).__name__)\n")
        res = p.call(4, "run_code", {"code": probe})["result"]
        assert text_of(res).split("\n")[:2] == ["[]", "blocked URLError"], text_of(res)
        # ... and cannot change what later calls import.
        res = p.call(5, "run_code", {"code": "open('/workspace/.deps/kerndemo/__init__.py', "
                                             "'w').write('VALUE = 1')"})["result"]
        assert res["isError"] is True and "Read-only file system" in text_of(res)
        # Requirement strings only: no options, URLs or paths.
        for bad in (["--index-url=http://evil.example/"], ["https://evil.example/x.whl"],
                    ["../x"], ["kerndemo; os_name == 'posix'"]):
            res = p.call(6, "install_packages", {"packages": bad})["result"]
            assert res["isError"] is True and "Invalid arguments" in text_of(res)
    finally:
        assert p.close() == 0, p.stderr


def test_an_index_outside_the_allow_list_is_refused_by_the_proxy(test_kern, tmp_path):
    p = server_in_netns(tmp_path, test_kern, {
        "KERN_MCP_INSTALL_ALLOW": ALLOWED,
        "PIP_INDEX_URL": f"http://{OTHER}/simple/"})
    try:
        p.initialize()
        res = p.call(1, "install_packages", {"packages": ["kerndemo"]}, timeout=300)["result"]
        assert res["isError"] is True
        assert "No matching distribution found for kerndemo" in text_of(res)
        # The proxy answered 403 itself: not one request reached the server.
        assert (tmp_path / "requests.log").read_text() == ""
        assert not os.path.exists(tmp_path / "ws" / ".deps" / "kerndemo")
    finally:
        assert p.close() == 0, p.stderr


def test_without_the_setting_there_is_no_install_tool(kern_bin, tmp_path):
    p = StdioPeer({"KERN_MCP_IMAGE": "host", "KERN_MCP_WORKSPACE": str(tmp_path / "ws")})
    try:
        p.initialize()
        names = [t["name"] for t in p.request(1, "tools/list")["result"]["tools"]]
        assert "install_packages" not in names
        assert p.call(2, "install_packages", {"packages": ["x"]})["error"]["code"] == -32602
    finally:
        assert p.close() == 0

