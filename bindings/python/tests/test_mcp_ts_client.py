"""kern-mcp driven by the official MCP TypeScript SDK (@modelcontextprotocol/sdk
from npm), the client most MCP applications are built on: connect, list
tools, run code, read a file, get an image, progress, an invalid call.

The SDK is installed by this test with ``npm ci`` from tests/mcp-ts's
package-lock.json into tests/mcp-ts/node_modules (git-ignored), or into a
private copy when the checkout is not writable (the unprivileged run).
Node 18 or newer is needed (install.sh installs Debian's nodejs).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mcp_peer import BINDINGS, kern_mcp_command  # noqa: E402
from test_mcp_stdio import CHART, kern_ps  # noqa: E402

# The same for every user: the unprivileged run of tests/run leaves it out.
pytestmark = pytest.mark.any_user

HERE = os.path.dirname(os.path.abspath(__file__))
CLIENT_DIR = os.path.join(HERE, "mcp-ts")
SDK_VERSION = json.load(open(os.path.join(CLIENT_DIR, "package.json")))["dependencies"][
    "@modelcontextprotocol/sdk"]


def _installed(where: str) -> bool:
    meta = os.path.join(where, "node_modules", "@modelcontextprotocol", "sdk", "package.json")
    try:
        with open(meta) as f:
            return json.load(f)["version"] == SDK_VERSION
    except (OSError, ValueError, KeyError):
        return False


@pytest.fixture(scope="session")
def ts_client(tmp_path_factory):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (./install.sh installs Debian's nodejs)")
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout
    m = re.match(r"v(\d+)\.", version)
    if not m or int(m.group(1)) < 18:
        pytest.skip(f"node {version.strip()} is older than 18, the SDK's minimum")
    where = CLIENT_DIR
    if not _installed(where) and not os.access(where, os.W_OK):
        where = str(tmp_path_factory.mktemp("mcp-ts"))
        for name in ("package.json", "package-lock.json", "client.mjs"):
            shutil.copy(os.path.join(CLIENT_DIR, name), where)
    if not _installed(where):
        npm = shutil.which("npm")
        assert npm, "npm is needed to install the MCP TypeScript SDK for this test"
        out = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts"],
                             cwd=where, capture_output=True, text=True, timeout=900)
        assert out.returncode == 0, "npm ci failed:\n" + out.stdout[-2000:] + out.stderr[-2000:]
        assert _installed(where)
    return node, os.path.join(where, "client.mjs")


def test_the_typescript_sdk_client_connects_lists_runs_reads_and_gets_an_image(
        ts_client, kern_bin, tmp_path):
    node, client = ts_client
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, PYTHONPATH=BINDINGS, KERN_MCP_IMAGE="host", TMPDIR=str(tmp),
               KERN_MCP_TIMEOUT="30", KERN_MCP_MEMORY_MB="512")
    out = subprocess.run([node, client, json.dumps(kern_mcp_command()), CHART],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    seen = json.loads(out.stdout)
    assert "error" not in seen, seen["error"]

    assert seen["server"]["name"] == "kern-sandbox"
    assert seen["capabilities"]["tools"] == {"listChanged": False}
    tools = {t["name"]: t for t in seen["tools"]}
    assert set(tools) == {"run_code", "write_file", "read_file", "list_files"}
    assert tools["read_file"]["annotations"]["readOnlyHint"] is True
    assert tools["run_code"]["hasOutputSchema"] is True
    assert tools["run_code"]["languages"][:3] == ["python", "bash", "sh"]

    # The SDK validated structuredContent against the outputSchema (Ajv).
    assert seen["run"]["text"] == "42\n[exit 0]"
    assert seen["run"]["isError"] is False
    assert seen["run"]["structured"]["stdout"] == "42\n"
    assert seen["failing"]["isError"] is True
    assert seen["failing"]["structured"]["exit_code"] == 3
    assert seen["failing"]["structured"]["code_stderr"] == "to stderr\n"

    assert seen["read"] == {"text": "hello from ts\n", "isError": False}

    assert seen["chart"]["isError"] is False, seen["chart"]["text"]
    assert len(seen["chart"]["images"]) == 1
    image = seen["chart"]["images"][0]
    assert image["mimeType"] == "image/png"
    assert bytes.fromhex(image["head"]) == b"\x89PNG\r\n\x1a\n" and image["bytes"] > 1000

    assert seen["slow"]["text"].startswith("slept")
    assert seen["slow"]["progress"] >= 2

    # 2025-11-25: invalid arguments are a tool result the model can read.
    assert seen["invalid"].get("isError") is True, seen["invalid"]
    assert "Invalid arguments" in seen["invalid"]["text"]
    assert seen["pingOk"] is True

    assert kern_ps(kern_bin) == []
    assert os.listdir(tmp) == []

