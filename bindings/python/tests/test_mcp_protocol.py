"""kern-mcp's protocol layer over real pipes, with a scripted backend (no
boxes): framing, negotiation at each revision, the probe, refusals,
batches, argument errors per revision, progress and cancellation.

The same server with the real Sandbox behind it is tested in
test_mcp_stdio.py. Run with Debian's /usr/bin/python3 or any 3.9+.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any, Dict, List

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from mcp_peer import Peer  # noqa: E402

from kern_sandbox.mcp import server as server_module  # noqa: E402
from kern_sandbox.mcp import tools  # noqa: E402
from kern_sandbox.mcp.framing import MAX_FRAME, FrameReader, Oversize  # noqa: E402
from kern_sandbox.mcp.settings import Settings  # noqa: E402
from kern_sandbox.mcp.versions import SUPPORTED  # noqa: E402

# The same for every user: the unprivileged run of tests/run leaves it out.
pytestmark = pytest.mark.any_user

VERSIONS = list(SUPPORTED)


class Scripted:
    """A backend whose run_code follows the code's instructions:
    ``sleep N`` sleeps (and notices cancellation), ``block`` waits until
    cancelled; anything else answers at once."""

    def __init__(self) -> None:
        self.calls: List[Any] = []
        self.cancel_hooks_run = threading.Event()
        self.closed = False

    def tool_context(self) -> tools.ToolContext:
        return tools.ToolContext(Settings(), ("python", "bash", "sh"), True, False)

    def call(self, tool: str, args: Any, call: Any, features: Any) -> Dict[str, Any]:
        self.calls.append((tool, args))
        if tool == "run_code" and args.code.startswith("sleep "):
            call.wait(float(args.code.split()[1]))
        elif tool == "run_code" and args.code == "block":
            call.on_cancel(self.cancel_hooks_run.set)
            call.wait(60)
        return {"content": [{"type": "text", "text": f"{tool} done"}], "isError": False}

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def peer():
    p = Peer(Scripted())
    yield p
    p.close()


def _ok(reply: Dict[str, Any]) -> Dict[str, Any]:
    assert "result" in reply, reply
    return reply["result"]


def _err(reply: Dict[str, Any], code: int) -> Dict[str, Any]:
    assert "error" in reply, reply
    assert reply["error"]["code"] == code, reply
    return reply["error"]


# -- framing ---------------------------------------------------------------

def test_frame_reader_splits_across_chunks_and_strips_cr():
    r, w = os.pipe()
    os.write(w, b'{"a":1}\r\n\n  \n{"b":')
    os.write(w, b'2}\n{"c":3}')  # the last frame has no newline before EOF
    os.close(w)
    frames = list(FrameReader(r).frames())
    os.close(r)
    assert frames == [b'{"a":1}', b'{"b":2}', b'{"c":3}']


def test_frame_reader_skips_an_oversize_line_without_holding_it():
    r, w = os.pipe()
    big = b"x" * (MAX_FRAME + 10)

    def feed() -> None:
        os.write(w, b'{"a":1}\n')
        for i in range(0, len(big), 1 << 16):
            os.write(w, big[i:i + (1 << 16)])
        os.write(w, b'\n{"b":2}\n')
        os.close(w)

    t = threading.Thread(target=feed)
    t.start()
    frames = list(FrameReader(r).frames())
    t.join()
    os.close(r)
    assert frames == [b'{"a":1}', Oversize(len(big)), b'{"b":2}']


# -- handshake -------------------------------------------------------------

@pytest.mark.parametrize("version", VERSIONS)
def test_initialize_answers_each_supported_version_with_itself(peer, version):
    res = _ok(peer.initialize(version))
    assert res["protocolVersion"] == version
    assert res["capabilities"] == {"tools": {"listChanged": False}}
    assert res["serverInfo"]["name"] == "kern-sandbox"
    _ok(peer.request(1, "ping"))


@pytest.mark.parametrize("requested", ["1999-01-01", "2026-07-28", "2025-11-26"])
def test_initialize_answers_an_unknown_version_with_the_newest(peer, requested):
    assert _ok(peer.initialize(requested))["protocolVersion"] == "2025-11-25"


def test_server_discover_probe_gets_a_prompt_non_modern_error_then_initialize_works(peer):
    t0 = time.monotonic()
    reply = peer.request("discover-1", "server/discover", {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28"}})
    assert time.monotonic() - t0 < 2
    err = _err(reply, -32601)
    # -32022 (UnsupportedProtocolVersionError) would keep a dual-era client
    # from falling back to initialize.
    assert err["code"] != -32022
    assert _ok(peer.initialize("2025-11-25"))["protocolVersion"] == "2025-11-25"


def test_requests_before_initialize_are_refused_but_ping_answers(peer):
    _ok(peer.request(1, "ping"))
    for i, method in enumerate(["tools/list", "tools/call", "resources/list", "prompts/list"], 2):
        err = _err(peer.request(i, method, {"name": "run_code", "arguments": {"code": "1"}}),
                   -32600)
        assert "initialize" in err["message"]
    assert peer.server._backend.calls == []
    _ok(peer.initialize())


def test_a_second_initialize_is_refused(peer):
    peer.initialize("2025-03-26")
    _err(peer.request(5, "initialize", {"protocolVersion": "2025-11-25"}), -32600)
    # The first negotiation stands: batches (2025-03-26 only) still work.
    peer.send([{"jsonrpc": "2.0", "id": 6, "method": "ping"}])
    assert peer.recv() == [{"jsonrpc": "2.0", "id": 6, "result": {}}]


def test_initialize_without_a_version_string_is_invalid_params(peer):
    _err(peer.request(1, "initialize", {"protocolVersion": 20251125}), -32602)
    _ok(peer.initialize())


def test_empty_lists_and_unknown_methods(peer):
    peer.initialize()
    assert _ok(peer.request(1, "resources/list")) == {"resources": []}
    assert _ok(peer.request(2, "prompts/list")) == {"prompts": []}
    _err(peer.request(3, "resources/templates/list"), -32601)
    _err(peer.request(4, "no/such/method"), -32601)
    _ok(peer.request(5, "ping"))


# -- hostile frames --------------------------------------------------------

BAD_FRAMES = [
    (b"{not json", -32700),
    (b"\xff\xfe{}", -32700),
    (b'{"jsonrpc":"2.0","id":1,"method":"ping"', -32700),
    (b"[" * 100000 + b"]" * 100000, -32700),
    (b'{"jsonrpc":"2.0","id":' + b"9" * 5000 + b',"method":"ping"}', -32700),
    (b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":NaN}}', -32700),
    (b"42", -32600),
    (b'"ping"', -32600),
    (b"null", -32600),
    (b'{"jsonrpc":"1.0","id":1,"method":"ping"}', -32600),
    (b'{"id":1,"method":"ping"}', -32600),
    (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', -32600),
    (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', -32600),
    (b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', -32600),
    (b'{"jsonrpc":"2.0","id":1,"method":7}', -32600),
    (b'{"jsonrpc":"2.0","id":1}', -32600),
    (b'{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}', -32602),
    (b'{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}', -32602),
]


@pytest.mark.parametrize("frame,code", BAD_FRAMES, ids=[str(i) for i in range(len(BAD_FRAMES))])
def test_malformed_input_gets_an_error_and_the_server_answers_the_next_request(peer, frame, code):
    peer.initialize()
    peer.write(frame + b"\n")
    _err(peer.recv(), code)
    _ok(peer.request(99, "ping"))


def test_a_9_mib_frame_is_refused_and_the_server_carries_on(peer):
    peer.initialize()
    big = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
           "params": {"name": "run_code", "arguments": {"code": "x" * (9 << 20)}}}
    writer = threading.Thread(target=peer.send, args=(big,))
    writer.start()
    err = _err(peer.recv(30), -32600)
    writer.join()
    assert "limit" in err["message"]
    assert peer.server._backend.calls == []
    _ok(peer.request(8, "ping"))


def test_notifications_get_no_reply_even_when_malformed_or_unknown(peer):
    peer.initialize()
    for n in [
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "method": "notifications/whatever", "params": {"a": 1}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 12345}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": "bad"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled"},
        {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "run_code"}},
        {"method": "notifications/progress"},
        {"jsonrpc": "2.0", "id": 5, "result": {}},  # a response: no reply either
    ]:
        peer.send(n)
    peer.silent(0.5)
    assert peer.server._backend.calls == []
    _ok(peer.request(1, "ping"))


# -- batches ---------------------------------------------------------------

def test_batches_work_in_2025_03_26_only_and_notifications_in_them_get_nothing(peer):
    peer.initialize("2025-03-26")
    peer.send([{"jsonrpc": "2.0", "id": 1, "method": "ping"},
               {"jsonrpc": "2.0", "method": "notifications/initialized"},
               {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "list_files", "arguments": {}}},
               {"jsonrpc": "2.0", "id": 3, "method": "nope"},
               7])
    replies = peer.recv()
    assert isinstance(replies, list) and len(replies) == 4
    by_id = {r.get("id"): r for r in replies}
    assert by_id[1]["result"] == {}
    assert by_id[2]["result"]["content"][0]["text"] == "list_files done"
    assert by_id[3]["error"]["code"] == -32601
    assert by_id[None]["error"]["code"] == -32600
    peer.send([{"jsonrpc": "2.0", "method": "notifications/initialized"}])
    peer.send([])
    _err(peer.recv(), -32600)  # only the empty batch is answered


@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18", "2025-11-25"])
def test_batches_are_refused_outside_2025_03_26(peer, version):
    peer.initialize(version)
    peer.send([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])
    _err(peer.recv(), -32600)
    _ok(peer.request(2, "ping"))


# -- tools/list per revision -----------------------------------------------

def test_tools_list_fields_follow_the_revision():
    expect = {"2024-11-05": (False, False), "2025-03-26": (True, False),
              "2025-06-18": (True, True), "2025-11-25": (True, True)}
    for version, (annotations, structured) in expect.items():
        p = Peer(Scripted())
        try:
            p.initialize(version)
            listed = {t["name"]: t for t in _ok(p.request(1, "tools/list"))["tools"]}
        finally:
            p.close()
        assert sorted(listed) == ["list_files", "read_file", "run_code", "write_file"]
        for t in listed.values():
            assert t["inputSchema"]["type"] == "object"
            assert ("annotations" in t) == annotations, (version, t)
            assert ("title" in t) == structured
        assert ("outputSchema" in listed["run_code"]) == structured
        if annotations:
            assert listed["read_file"]["annotations"]["readOnlyHint"] is True
            assert listed["list_files"]["annotations"]["readOnlyHint"] is True
            assert listed["run_code"]["annotations"]["readOnlyHint"] is False
            assert listed["run_code"]["annotations"]["openWorldHint"] is False


def test_tools_list_refuses_an_unknown_cursor(peer):
    peer.initialize()
    _err(peer.request(1, "tools/list", {"cursor": "abc"}), -32602)


# -- arguments -------------------------------------------------------------

BAD_ARGUMENTS = [
    ("run_code", {}),
    ("run_code", {"code": 5}),
    ("run_code", {"code": "1", "language": "cobol"}),
    ("run_code", {"code": "1", "language": "node"}),  # not in this image
    ("run_code", {"code": "1", "timeout_s": 0}),
    ("run_code", {"code": "1", "timeout_s": -1}),
    ("run_code", {"code": "1", "timeout_s": "5"}),
    ("run_code", {"code": "1", "timeout_s": True}),
    ("run_code", {"code": "1", "timeout_s": 1e300}),
    ("run_code", {"code": "1", "timeout_s": 61}),
    ("run_code", {"code": "a\u0000b"}),
    ("run_code", {"code": "1", "shell": True}),
    ("write_file", {"path": "a"}),
    ("write_file", {"path": "", "content": "x"}),
    ("write_file", {"path": "a\u0000b", "content": "x"}),
    ("read_file", {}),
    ("read_file", {"path": ["a"]}),
    ("list_files", {"subdir": "x"}),
]


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18"])
@pytest.mark.parametrize("tool,args", BAD_ARGUMENTS,
                         ids=[str(i) for i in range(len(BAD_ARGUMENTS))])
def test_bad_arguments_are_error_32602_up_to_2025_06_18(version, tool, args):
    p = Peer(Scripted())
    try:
        p.initialize(version)
        err = _err(p.call(1, tool, args), -32602)
        assert tool in err["message"]
        assert p.server._backend.calls == []
        _ok(p.request(2, "ping"))
    finally:
        p.close()


@pytest.mark.parametrize("tool,args", BAD_ARGUMENTS, ids=[str(i) for i in range(len(BAD_ARGUMENTS))])
def test_bad_arguments_are_a_tool_result_with_is_error_from_2025_11_25(peer, tool, args):
    peer.initialize("2025-11-25")
    res = _ok(peer.call(1, tool, args))
    assert res["isError"] is True
    assert res["content"][0]["type"] == "text"
    assert "Invalid arguments" in res["content"][0]["text"]
    assert peer.server._backend.calls == []


def test_arguments_that_are_not_an_object(peer):
    peer.initialize("2025-11-25")
    peer.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "run_code", "arguments": ["print(1)"]}})
    assert _ok(peer.reply(1))["isError"] is True


@pytest.mark.parametrize("version", VERSIONS)
def test_an_unknown_tool_is_a_protocol_error_in_every_revision(version):
    p = Peer(Scripted())
    try:
        p.initialize(version)
        _err(p.call(1, "rm_rf", {}), -32602)
        _err(p.request(2, "tools/call", {"arguments": {}}), -32602)
        _err(p.request(3, "tools/call", {"name": 5}), -32602)
    finally:
        p.close()


def test_a_request_id_still_in_flight_is_refused(peer):
    peer.initialize()
    peer.send({"jsonrpc": "2.0", "id": "x", "method": "tools/call",
               "params": {"name": "run_code", "arguments": {"code": "sleep 1"}}})
    time.sleep(0.2)
    peer.send({"jsonrpc": "2.0", "id": "x", "method": "tools/call",
               "params": {"name": "run_code", "arguments": {"code": "1"}}})
    first = peer.recv()
    _err(first, -32600)
    assert _ok(peer.reply("x"))["content"][0]["text"] == "run_code done"
    assert len(peer.server._backend.calls) == 1


# -- progress and cancellation ---------------------------------------------

@pytest.mark.parametrize("version,message", [("2024-11-05", False), ("2025-11-25", True)])
def test_progress_notifications_while_a_call_runs_and_none_after_the_reply(version, message,
                                                                          monkeypatch):
    # Every 0.5 s here (2 s in the server; test_mcp_stdio checks that one).
    monkeypatch.setattr(server_module, "PROGRESS_INTERVAL_S", 0.5)
    p = Peer(Scripted())
    try:
        p.initialize(version)
        reply = p.call(1, "run_code", {"code": "sleep 1.6"}, meta={"progressToken": "tok"})
        assert _ok(reply)["isError"] is False
        progress = [n for n in p.notes if n["method"] == "notifications/progress"]
        assert len(progress) >= 2, p.notes
        values = [n["params"]["progress"] for n in progress]
        assert values == sorted(set(values))  # strictly increasing
        assert all(n["params"]["progressToken"] == "tok" for n in progress)
        assert all(("message" in n["params"]) == message for n in progress)
        p.silent(1.5)  # nothing for that token after the reply
    finally:
        p.close()


def test_no_progress_without_a_token(peer, monkeypatch):
    monkeypatch.setattr(server_module, "PROGRESS_INTERVAL_S", 0.5)
    peer.initialize()
    peer.call(1, "run_code", {"code": "sleep 1.6"})
    assert peer.notes == []


def test_cancellation_stops_the_call_and_suppresses_its_reply(peer):
    peer.initialize()
    peer.send({"jsonrpc": "2.0", "id": 41, "method": "tools/call",
               "params": {"name": "run_code", "arguments": {"code": "block"},
                          "_meta": {"progressToken": 41}}})
    time.sleep(0.3)
    t0 = time.monotonic()
    peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": 41, "reason": "test"}})
    assert peer.server._backend.cancel_hooks_run.wait(5)
    assert time.monotonic() - t0 < 2
    # The next request is answered; the cancelled one never is.
    _ok(peer.request(42, "ping"))
    peer.silent(1.0)


def test_cancelling_a_call_waiting_for_a_box_slot(peer):
    peer.initialize()
    for i in range(4):
        peer.send({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                   "params": {"name": "run_code", "arguments": {"code": "sleep 1.5"}}})
    peer.send({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
               "params": {"name": "run_code", "arguments": {"code": "1"}}})
    time.sleep(0.3)
    peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}})
    ids = sorted(peer.recv(5)["id"] for _ in range(4))
    assert ids == [1, 2, 3, 4]
    peer.silent(1.0)
    assert len(peer.server._backend.calls) == 4


def test_input_closed_mid_call_still_answers_then_closes_the_session():
    backend = Scripted()
    p = Peer(backend)
    p.initialize()
    p.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "run_code", "arguments": {"code": "sleep 1"}}})
    p.close()
    assert p.recv(1)["id"] == 3
    assert backend.closed


def test_replies_are_single_lines_of_ascii_json(peer):
    peer.initialize()
    reply = peer.call(1, "write_file", {"path": "caf\u00e9\u2028.txt", "content": "x\ny"})
    assert reply["result"]["content"][0]["text"] == "write_file done"
    raw = peer.out.last_raw
    assert raw.isascii() and b"\n" not in raw
    assert peer.server._backend.calls[-1][1] == ("caf\u00e9\u2028.txt", "x\ny")


def test_a_quick_call_never_waits_behind_a_long_one(peer):
    peer.initialize()
    peer.call(1, "list_files")  # a worker thread now exists and is idle
    # Both in one write: the server submits both before that worker wakes.
    long = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "run_code", "arguments": {"code": "sleep 3"}}}
    quick = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
             "params": {"name": "list_files", "arguments": {}}}
    t0 = time.monotonic()
    peer.write((json.dumps(long) + "\n" + json.dumps(quick) + "\n").encode())
    assert peer.recv(5)["id"] == 3
    assert time.monotonic() - t0 < 1
    assert peer.recv(5)["id"] == 2
