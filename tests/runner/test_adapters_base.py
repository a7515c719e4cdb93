"""The runner's view of an outcome: what the protocol's ``outcome`` schema accepts, and nothing else."""

from __future__ import annotations

from typing import Any

import pytest

from flux_conformance.runner.adapters.base import reply_from_outcome
from flux_conformance.runner.adapters.inprocess import InProcessAdapter


def _answering(outcome: Any) -> InProcessAdapter:
    return InProcessAdapter(lambda operation, input, **options: outcome)


@pytest.mark.parametrize("message", [5, None, ["boom"], {"text": "boom"}, True])
def test_a_refusal_whose_message_is_not_a_string_breaks_the_protocol(message: Any) -> None:
    # The schema gives a refusal's message the type string: a refusal with a number there is
    # a broken reply (errored), not a refusal in that category with the number as its text.
    reply = _answering({"error": {"category": "syntax", "message": message}}).run(
        "idset.decode", "1", edition=None
    )
    assert reply.kind == "errored"
    assert "breaks the protocol" in reply.message


@pytest.mark.parametrize(
    "outcome",
    [
        {"error": "syntax"},
        {"error": ["syntax"]},
        {"error": {"category": 5}},
        {"error": {"category": ["syntax"]}},
        {"unsupported": "not this one"},
        {"unsupported": ["not this one"]},
        {"unsupported": {"reason": 5}},
    ],
    ids=repr,
)
def test_an_outcome_of_the_wrong_shape_is_errored_never_read_as_an_answer(outcome: Any) -> None:
    # A category that is not a string is no category the runner may judge, and a refusal or
    # an unsupported operation written as a bare string is no outcome: the case is errored.
    reply = _answering(outcome).run("idset.decode", "1", edition=None)
    assert reply.kind == "errored"
    assert "breaks the protocol" in reply.message


def test_a_refusal_with_a_string_message_or_none_is_a_refusal_in_its_category() -> None:
    assert reply_from_outcome({"error": {"category": "syntax", "message": "no"}}).to_json() == {
        "error": {"category": "syntax", "message": "no"}
    }
    assert reply_from_outcome({"error": {"category": "range"}}).to_json() == {
        "error": {"category": "range", "message": ""}
    }
