"""The judgement of the validators' comparators, ``validation`` and ``validation_warnings``.

A validator answers ``{"warnings": [strings]}``.  Under ``validation`` the warnings are advice:
any list of strings conforms.  Under ``validation_warnings`` (``jobspec.validate``) they must be
present exactly when the case expects some; their text and number are never compared.
"""

from __future__ import annotations

from typing import Any

import pytest

from flux_conformance.runner.comparators import COMPARATORS
from flux_conformance.runner.oracle import reference_oracle

oracle = reference_oracle()
validation = COMPARATORS["validation"]
warnings = COMPARATORS["validation_warnings"]

NOT_AN_ANSWER = [
    ([], "output is not an object with exactly the key 'warnings'"),
    ("ok", "output is not an object with exactly the key 'warnings'"),
    ({}, "output is not an object with exactly the key 'warnings'"),
    ({"warnings": [], "valid": True}, "output is not an object with exactly the key 'warnings'"),
    ({"warning": []}, "output is not an object with exactly the key 'warnings'"),
    ({"warnings": "none"}, "'warnings' is not a list of strings"),
    ({"warnings": None}, "'warnings' is not a list of strings"),
    ({"warnings": ["a", 1]}, "'warnings' is not a list of strings"),
    ({"warnings": [["a"]]}, "'warnings' is not a list of strings"),
]


@pytest.mark.parametrize(
    ("expected", "actual"),
    [
        ({"warnings": []}, {"warnings": []}),
        ({"warnings": []}, {"warnings": ["advice"]}),
        ({"warnings": ["advice"]}, {"warnings": []}),
        ({"warnings": ["one"]}, {"warnings": ["other", "two"]}),
    ],
)
def test_any_list_of_warnings_conforms_to_validation(expected: Any, actual: Any) -> None:
    assert validation(expected, actual, oracle) is None


@pytest.mark.parametrize(("actual", "reason"), NOT_AN_ANSWER)
@pytest.mark.parametrize("compare", [validation, warnings], ids=["validation", "warnings"])
def test_an_answer_not_shaped_as_warnings_does_not_conform(
    compare: Any, actual: Any, reason: str
) -> None:
    assert compare({"warnings": []}, actual, oracle) == reason


@pytest.mark.parametrize(
    ("expected", "actual", "reason"),
    [
        ({"warnings": []}, {"warnings": []}, None),
        ({"warnings": ["x"]}, {"warnings": ["other words", "two"]}, None),
        ({"warnings": ["x", "y"]}, {"warnings": ["one"]}, None),
        ({"warnings": ["x"]}, {"warnings": []}, "expected at least one warning, got none"),
        ({"warnings": []}, {"warnings": ["x"]}, "expected no warnings, got ['x']"),
    ],
)
def test_warnings_are_judged_by_presence_only(expected: Any, actual: Any, reason: Any) -> None:
    assert warnings(expected, actual, oracle) == reason
