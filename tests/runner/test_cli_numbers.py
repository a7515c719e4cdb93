"""Every numeric option of every command: a number out of range is a usage error naming it.

``--timeout nan`` used to end in a traceback and ``--timeout 0`` in an exit 3 that blamed the
implementation; each option now parses through one shared type with a stated range.
"""

from __future__ import annotations

import argparse

import pytest

from flux_conformance.runner.cli import build_parser, main


def _numeric_options() -> list[tuple[str, str, str]]:
    """(command, option, type name) for every option of every command that takes a type."""
    found = []
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for command, subparser in sub.choices.items():
        for action in subparser._actions:
            if action.type is not None and action.option_strings:
                name = getattr(action.type, "__name__", repr(action.type))
                found.append((command, action.option_strings[-1], name))
    return found


NUMERIC = _numeric_options()


def _takes_zero(command: str, option: str) -> bool:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    action = next(a for a in sub.choices[command]._actions if option in a.option_strings)
    try:
        action.type("0")  # type: ignore[misc]
    except argparse.ArgumentTypeError:
        return False
    return True


def test_every_typed_option_parses_through_the_shared_types():
    # A new `type=float` or `type=int` option would take nan, inf or -1 without a word.
    assert NUMERIC, "no typed option found: the parser walk is broken"
    assert {name for _, _, name in NUMERIC} <= {"seconds", "whole"}, NUMERIC
    assert ("run", "--timeout", "seconds") in NUMERIC
    assert ("diff", "--seed", "whole") in NUMERIC


@pytest.mark.parametrize(
    ("command", "option", "kind"), NUMERIC, ids=[f"{c}{o}" for c, o, _ in NUMERIC]
)
@pytest.mark.parametrize(
    "value",
    ["nan", "inf", "-inf", "1e308", "0", "-1", "x", "1" * 5000],
    ids=["nan", "inf", "-inf", "1e308", "0", "-1", "x", "5000-digits"],
)
def test_a_number_out_of_range_is_a_usage_error(capsys, command, option, kind, value):
    if value == "0" and _takes_zero(command, option):
        pytest.skip("0 is in this option's range (--max-timeouts 0: never give up)")
    with pytest.raises(SystemExit) as exit_:
        main([command, f"{option}={value}"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"argument {option}" in err or option in err
    expected = "a number above 0 and at most 86400" if kind == "seconds" else " to "
    assert expected in err
    assert len(err) < 2000  # a 5,000-digit value is not echoed whole


@pytest.mark.parametrize("value", ["0.5", "86400", "1e1"])
def test_a_timeout_in_range_is_taken(value):
    args = build_parser().parse_args(["run", "--timeout", value])
    assert args.timeout == float(value)
