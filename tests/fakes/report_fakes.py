"""In-process implementations that fill the reports (for the tests of runner/report).

Each answers by the first word of a case's input, so a test's own case file decides, case by
case, what a report must show: ``fail`` refuses in a category the case does not expect,
``unknown`` refuses without a category, ``raise`` raises (``other`` with another message,
``lines`` with a message of 30 lines), ``broken`` answers no outcome at all (an error with no
stderr), ``skip`` answers unsupported,
``wrong`` gives an output no idset has (NUL, a lone surrogate, NaN, huge integers); anything
else is answered rightly by the reference.
"""

from inprocess_fakes import good


def _by_input(operation, input, **options):
    word = input.split(" ", 1)[0] if isinstance(input, str) else ""
    if word == "fail":
        return {"error": {"category": "limit", "message": "nul\x00 esc\x1b[2J " + input}}
    if word == "unknown":
        return {"error": {"category": "unknown", "message": input}}
    if word == "raise":
        raise RuntimeError("r" * 3000)
    if word == "other":
        raise RuntimeError("another message")
    if word == "lines":
        raise RuntimeError("\n".join(f"line {i}" for i in range(1, 31)))
    if word == "broken":
        return {"result": 1}
    if word == "skip":
        return {"unsupported": {"reason": "not \x00 here " + "s" * 3000}}
    if word == "wrong":
        huge = [2**13_999, 2**14_000]  # 14,000 and 14,001 bits
        return {"output": ["\x00", "\ud800", float("nan"), 1.5, None, True, *huge, {"k": [-0.0]}]}
    return good(operation, input, **options)


class ByInput:
    """Answers each case as its input's first word says (see the module's docstring)."""

    def run(self, operation, input, **options):
        return _by_input(operation, input, **options)


class LongVersion(ByInput):
    """Gives a version of 1,500 characters."""

    version = "v" * 1500
