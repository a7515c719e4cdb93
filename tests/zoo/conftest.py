"""Print the zoo's score at the end of a run that ran the zoo."""

from __future__ import annotations

import pytest

from zoo import RESULTS
from zoo.members import MEMBERS


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """``zoo: N of M wrong implementations caught``, and the members caught by one case only."""
    if not RESULTS:
        return
    caught = sum(1 for ids in RESULTS.values() if ids)
    terminalreporter.write_line(
        f"zoo: {caught} of {len(RESULTS)} wrong implementations caught"
        + ("" if len(RESULTS) == len(MEMBERS) else f" ({len(MEMBERS)} in the zoo, some not run)")
    )
    for name, ids in sorted(RESULTS.items()):
        if not ids:
            terminalreporter.write_line(f"  survived: {name}")
        elif len(ids) == 1:
            terminalreporter.write_line(f"  caught by one case only: {name} ({ids[0]})")
