"""Why a kernel or pool box stopped answering (spec 12), from the shared
case table bindings/shared/kernel-death-cases.json (the Node package runs
the same table)."""

import json
import pathlib

import pytest

from kern_sandbox._driverbox import classify_death
from kern_sandbox.faults import Observation

# The same for every user: the unprivileged run of tests/run leaves it out.
pytestmark = pytest.mark.any_user

TABLE = pathlib.Path(__file__).resolve().parents[2] / "shared" / "kernel-death-cases.json"
CASES = json.loads(TABLE.read_text())["death"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_death_case(case):
    given, expect = case["input"], case["expect"]
    obs = Observation(exit_code=given["exit_code"], started=bytes(given.get("started", [])),
                      stderr=given.get("stderr", ""), memory_mb=given.get("memory_mb"))
    death = classify_death(obs, one_call=given.get("one_call", False))
    assert (death.fault.type if death.fault else None) == expect["fault"]
    assert death.raises == expect["raises"]
    assert death.exit_code == expect["exit_code"]
    for text in expect.get("message_contains", []):
        assert text in death.fault.message
    for text in expect.get("note_contains", []):
        assert text in death.note


def test_the_table_covers_every_verdict():
    verdicts = {c["expect"]["fault"] for c in CASES}
    assert verdicts == {"oom", "escape_blocked", None, "startup_failed", "killed"}
