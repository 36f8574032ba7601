"""faults.py against the shared case table (bindings/shared/fault-cases.json),
which the Node package runs against its own classifier too. Pure: no box."""

import json
import pathlib

import pytest

from kern_sandbox.faults import Observation, classify, kern_is_speaking, split_stderr

# The same for every user: the unprivileged run of tests/run leaves it out.
pytestmark = pytest.mark.any_user

TABLE = json.loads((pathlib.Path(__file__).resolve().parents[2] / "shared" /
                    "fault-cases.json").read_text())


def observation(inp):
    alive = inp.get("alive")
    return Observation(
        exit_code=inp["exit_code"],
        started=bytes(inp.get("started", [])),
        stdout=inp.get("stdout", ""),
        stderr=inp.get("stderr", ""),
        deadline_fired=inp.get("deadline_fired", False),
        alive=None if alive is None else alive.encode("ascii"),
        alive_open=inp.get("alive_open", False),
        resident_exec=inp.get("resident_exec", False),
        exec_reports_start=inp.get("exec_reports_start", True),
        memory_mb=inp.get("memory_mb"),
        timeout_s=inp.get("timeout_s", 0),
        image=inp.get("image", ""),
    )


@pytest.mark.parametrize("case", TABLE["classify"], ids=[c["name"] for c in TABLE["classify"]])
def test_classify_case(case):
    verdict = classify(observation(case["input"]))
    want = case["expect"]
    assert (verdict.fault.type if verdict.fault else None) == want["fault"]
    assert verdict.raises == want["raises"]
    assert verdict.exit_code == want["exit_code"]
    for part in want.get("message_contains", []):
        assert part in verdict.fault.message
    if "message_equals" in want:
        assert verdict.fault.message == want["message_equals"]


@pytest.mark.parametrize("case", TABLE["split_stderr"], ids=[c["name"] for c in TABLE["split_stderr"]])
def test_split_case(case):
    code, notes = split_stderr(case["stderr"])
    assert code == case["code_stderr"]
    assert notes == case["runtime_notes"]


def test_table_covers_every_fault_type_and_raise():
    seen = {c["expect"]["fault"] for c in TABLE["classify"]}
    assert seen >= {None, "timeout", "oom", "escape_blocked", "killed", "startup_failed", "exec_failed"}
    assert any(c["expect"]["raises"] for c in TABLE["classify"])


def test_split_keeps_every_line():
    """Each stderr line lands in exactly one of code_stderr and runtime_notes."""
    for case in TABLE["split_stderr"]:
        code, notes = split_stderr(case["stderr"])
        lines = case["stderr"].split("\n")
        kept = [line for line in lines if line not in notes]
        assert "\n".join(kept) == code
        assert all(line in lines for line in notes)


def test_kern_is_speaking_needs_column_zero():
    assert kern_is_speaking("error: pull: x\n")
    assert not kern_is_speaking(" error: pull: x\n")
    assert not kern_is_speaking("kern: note: pulling\n")
