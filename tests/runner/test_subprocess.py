"""The subprocess transport against faulty fake implementations.

Each run must finish, report every case, and leave no process behind.
"""

from __future__ import annotations

import contextlib
import os
import time
from typing import Any

import pytest
from support import fake_command

from flux_conformance.runner.adapters.base import AdapterError, Reply
from flux_conformance.runner.adapters.subprocess import MAX_LINE_BYTES, SubprocessAdapter
from flux_conformance.runner.cases import Suite
from flux_conformance.runner.engine import Outcome, run_cases
from flux_conformance.runner.oracle import reference_oracle


def _run(
    suite: Suite, mode: str, arg: str | None = None, timeout: float = 60.0, start: float = 60.0
):
    # A start timeout of its own: under load a start takes seconds, and only a case may hang.
    adapter = SubprocessAdapter(fake_command(mode, arg), timeout=timeout, start_timeout=start)
    with contextlib.suppress(AdapterError):
        adapter.start()
    try:
        results = list(run_cases(suite.cases, adapter, suite.operations, oracle=reference_oracle))
    finally:
        proc = adapter._proc
        adapter.close()
    return adapter, results, proc


def _outcomes(results):
    return {r.case.id: r.outcome for r in results}


def _group_gone(pid: int) -> bool:
    """Whether the process group is gone (polled: the deadline only bounds a failure)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            os.killpg(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_good_implementation_passes_everything(mini_suite):
    adapter, results, proc = _run(mini_suite, "good")
    assert [r.outcome for r in results] == [Outcome.PASSED] * len(mini_suite.cases)
    assert adapter.name == "fake-good"
    assert adapter.restarts == 0
    assert _group_gone(proc.proc.pid)


def test_wrong_answers_fail_but_run_completes(mini_suite):
    _, results, _ = _run(mini_suite, "wrong")
    outcomes = _outcomes(results)
    assert len(results) == len(mini_suite.cases)
    assert outcomes["mini.range"] is Outcome.FAILED
    assert outcomes["mini.leading-zero"] is Outcome.FAILED
    failed = next(r for r in results if r.case.id == "mini.range")
    assert "[987654321]" in str(failed.reply.to_json())
    assert failed.diff


def test_garbage_line_errors_one_case_and_restarts(mini_suite):
    adapter, results, _ = _run(mini_suite, "garbage", "1,5")
    outcomes = _outcomes(results)
    assert outcomes["mini.list"] is Outcome.ERRORED
    assert "not a JSON object" in next(r.reason for r in results if r.case.id == "mini.list")
    others = [o for i, o in outcomes.items() if i != "mini.list"]
    assert others == [Outcome.PASSED] * (len(mini_suite.cases) - 1)
    assert adapter.restarts == 1


def test_crash_errors_one_case_with_stderr_tail(mini_suite):
    _adapter, results, _ = _run(mini_suite, "crash", "1,5")
    crashed = next(r for r in results if r.case.id == "mini.list")
    assert crashed.outcome is Outcome.ERRORED
    assert "exited with status 3" in crashed.reason
    assert "crashing on purpose" in crashed.reply.stderr
    assert sum(r.outcome is Outcome.PASSED for r in results) == len(mini_suite.cases) - 1


class _ShortOnOneCase(SubprocessAdapter):
    """A short timeout for the case the fake never answers, a long one for every other.

    The hung case times out whatever its timeout, and no other can time out on a slow
    machine: the test's outcome does not depend on the machine's speed.
    """

    def run(self, operation: str, input: Any, *, edition: str | None) -> Reply:
        self.timeout = 0.5 if input == "1,5" else 60.0
        return super().run(operation, input, edition=edition)


def test_hang_times_out_and_the_run_goes_on(mini_suite):
    adapter = _ShortOnOneCase(fake_command("hang", "1,5"), start_timeout=60.0)
    try:
        results = list(
            run_cases(mini_suite.cases, adapter, mini_suite.operations, oracle=reference_oracle)
        )
    finally:
        adapter.close()
    hung = next(r for r in results if r.case.id == "mini.list")
    assert hung.outcome is Outcome.ERRORED
    assert "no reply within the timeout" in hung.reason
    # The hung process was killed, one fresh process answered every later case.
    assert adapter.restarts == 1
    assert sum(r.outcome is Outcome.PASSED for r in results) == len(mini_suite.cases) - 1


def test_an_unflushed_reply_times_out_with_a_hint_to_flush(mini_suite):
    _adapter, results, _ = _run(mini_suite, "unflushed", timeout=1.0)
    errored = [r for r in results if r.outcome is Outcome.ERRORED]
    assert errored
    assert all("may not have flushed its stdout" in r.reason for r in errored)
    assert all("docs/protocol.md" in r.reason for r in errored)


def test_the_protocol_says_to_flush_each_reply_in_each_common_language():
    from support import ROOT

    text = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    assert "**Flush every reply**" in text
    for language in ("C", "C++", "Python", "Go", "Rust", "Java", "Node.js"):
        assert f"   | {language} | " in text, language


def test_wrong_seq_is_errored(mini_suite):
    _, results, _ = _run(mini_suite, "wrong-seq")
    assert {r.outcome for r in results} == {Outcome.ERRORED}
    assert all("seq" in r.reason for r in results)


def test_exit_mid_run_restarts(mini_suite):
    adapter, results, _ = _run(mini_suite, "exit-after", "2")
    outcomes = [r.outcome for r in results]
    assert len(outcomes) == len(mini_suite.cases)
    # Every third case finds the process gone (it exits after two answers), is errored,
    # and the next case runs on a fresh process.
    assert outcomes[:2] == [Outcome.PASSED, Outcome.PASSED]
    assert outcomes[2] is Outcome.ERRORED
    assert outcomes[3] is Outcome.PASSED
    assert adapter.restarts >= 1


def test_broken_hello_gives_up_and_reports_every_case(mini_suite):
    for mode in ("no-hello", "bad-hello"):
        _, results, _ = _run(mini_suite, mode)
        assert len(results) == len(mini_suite.cases)
        assert {r.outcome for r in results} == {Outcome.ERRORED}
        assert "gave up" in results[-1].reason


def test_silent_hello_times_out(mini_suite):
    # The fake never answers hello, so any start timeout is reached.
    adapter, results, _ = _run(mini_suite, "slow-hello", timeout=0.5, start=0.5)
    assert {r.outcome for r in results} == {Outcome.ERRORED}
    reasons = [r.reason for r in results]
    # The set-up's start and two more (one per case) time out; then no start is tried again.
    assert all("start failed: no reply within the timeout" in why for why in reasons[:2])
    assert all(why.startswith("gave up after 3 failed starts") for why in reasons[2:])
    assert adapter.gave_up is not None


def test_missing_command_is_errored_not_raised(mini_suite):
    adapter = SubprocessAdapter("/nonexistent/implementation --flag", timeout=1)
    with pytest.raises(AdapterError, match="cannot start"):
        adapter.start()
    results = list(
        run_cases(mini_suite.cases, adapter, mini_suite.operations, oracle=reference_oracle)
    )
    assert {r.outcome for r in results} == {Outcome.ERRORED}
    adapter.close()


def test_fork_leaves_no_child_behind(mini_suite):
    _, results, proc = _run(mini_suite, "fork")
    assert all(r.outcome is Outcome.PASSED for r in results)
    assert _group_gone(proc.proc.pid)


def test_unannounced_operations_are_skipped(mini_suite):
    _, results, _ = _run(mini_suite, "unsupported")
    assert {r.outcome for r in results} == {Outcome.SKIPPED}


def test_reply_breaking_schema_is_errored(mini_suite):
    _, results, _ = _run(mini_suite, "schema")
    assert {r.outcome for r in results} == {Outcome.ERRORED}
    assert all("breaks the protocol" in r.reason for r in results)


def test_stderr_flood_keeps_only_a_tail(mini_suite):
    _, results, _ = _run(mini_suite, "flood")
    assert all(r.outcome is Outcome.PASSED for r in results)


def test_overlong_reply_is_refused(mini_suite):
    assert MAX_LINE_BYTES < 100 * (1 << 20)
    _, results, _ = _run(mini_suite, "big", "1,5")
    big = next(r for r in results if r.case.id == "mini.list")
    assert big.outcome is Outcome.ERRORED
    assert "longer than" in big.reason
    assert sum(r.outcome is Outcome.PASSED for r in results) == len(mini_suite.cases) - 1


def test_closed_stdout_is_errored(mini_suite):
    _, results, proc = _run(mini_suite, "close-stdout", "1,5")
    closed = next(r for r in results if r.case.id == "mini.list")
    assert closed.outcome is Outcome.ERRORED
    assert "closed its stdout" in closed.reason or "exited" in closed.reason
    assert _group_gone(proc.proc.pid)


def test_fast_outcome_check_agrees_with_the_schema():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from flux_conformance.runner.adapters.base import _outcome_validator, _plainly_valid

    json_values = st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=3),
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
        ),
        max_leaves=6,
    )
    keys = st.sampled_from(
        ["output", "error", "unsupported", "category", "message", "reason", "seq"]
    )
    outcomes = st.dictionaries(
        keys, json_values | st.dictionaries(keys, json_values, max_size=3), max_size=3
    )

    @settings(max_examples=500, deadline=None)
    @given(outcomes)
    def check(outcome):
        if _plainly_valid(outcome):
            assert _outcome_validator().is_valid(outcome)

    check()


def test_reply_split_across_slow_writes_is_reassembled(mini_suite):
    _, results, _ = _run(mini_suite, "split")
    assert [r.outcome for r in results] == [Outcome.PASSED] * len(mini_suite.cases)


def test_deep_input_is_errored_when_it_cannot_be_written(mini_suite):
    from flux_conformance.runner.cases import Case, Expected

    deep: object = []
    for _ in range(100_000):
        deep = [deep]
    case = Case(
        "deep",
        "idset.decode",
        "d",
        deep,
        (Expected("error", "syntax"),),
        "must",
        ("mini.ascending",),
        (),
        None,
        mini_suite.cases[0].file,
        1,
    )
    adapter = SubprocessAdapter(fake_command("good"), timeout=60)
    adapter.start()
    try:
        results = list(
            run_cases(
                [case, *mini_suite.cases], adapter, mini_suite.operations, oracle=reference_oracle
            )
        )
    finally:
        adapter.close()
    assert results[0].outcome is Outcome.ERRORED
    assert "cannot be written as JSON" in results[0].reason
    assert all(r.outcome is Outcome.PASSED for r in results[1:])


def test_serve_answers_a_too_deep_request_with_its_seq():
    import io
    import json

    from flux_conformance.runner.adapters.inprocess import ReferenceImplementation
    from flux_conformance.runner.tools.serve import serve

    deep = '{"not":[' * 20_000 + "{}" + "]}" * 20_000
    line = (
        '{"cmd": "run", "seq": 42, "operation": "constraint.match", "input": {"constraint": '
        + deep
        + ', "R": {}}}\n'
    )
    impl = ReferenceImplementation()
    out = io.StringIO()
    serve(
        impl,
        name="r",
        version="1",
        operations=list(impl.operations),
        stdin=io.StringIO(line),
        stdout=out,
    )
    reply = json.loads(out.getvalue())
    assert reply["seq"] == 42
    assert reply["error"]["category"] == "limit"


def test_stderr_kept_is_only_a_tail(mini_suite):
    from flux_conformance.runner.adapters.subprocess import STDERR_TAIL

    _, _, proc = _run(mini_suite, "flood")
    tail = proc.stderr_tail()
    assert 0 < len(tail.encode()) <= STDERR_TAIL
    assert set(tail) == {"x"}


# Answers every run with a reply line of exactly SIZE bytes (its newline not counted).
_SIZED_REPLY = """
import json
import sys
size = int(sys.argv[1])
for line in sys.stdin:
    msg = json.loads(line)
    if msg["cmd"] == "hello":
        hello = {"protocol": 1, "implementation": {"name": "sized", "version": "0"}, "operations": ["idset.encode"]}
        sys.stdout.write(json.dumps(hello) + "\\n")
    elif msg["cmd"] == "run":
        head = '{"seq": %d, "output": "' % msg["seq"]
        sys.stdout.write(head + "1" * (size - len(head) - 2) + '"}\\n')
    else:
        break
    sys.stdout.flush()
"""


@pytest.mark.parametrize(
    ("size", "refused"),
    [(64 * 1024 * 1024, False), (64 * 1024 * 1024 + 1, True)],
    ids=["64MiB", "64MiB+1"],
)
def test_the_reply_bound_holds_for_a_finished_line(size, refused):
    # Fixed sizes, not MAX_LINE_BYTES: a loosened constant must fail this test.
    import shlex
    import sys

    command = shlex.join([sys.executable, "-c", _SIZED_REPLY, str(size)])
    adapter = SubprocessAdapter(command, timeout=60, start_timeout=30)
    try:
        adapter.start()
        reply = adapter.run("idset.encode", [1], edition=None)
    finally:
        adapter.close()
    if refused:
        assert reply.kind == "errored"
        assert "longer than 67108864 bytes" in reply.message
    else:
        assert reply.kind == "output"
        assert len(reply.value) == size - len('{"seq": 1, "output": ""}')
