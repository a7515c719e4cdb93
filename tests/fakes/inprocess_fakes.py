"""Faulty in-process implementations (for runner tests)."""

from flux_conformance.reference.errors import FormatError
from flux_conformance.reference.operations import run


class Raising:
    """Raises on every case."""

    def run(self, operation, input, **options):
        raise RuntimeError("boom")


class RaisingAfterFirst:
    """Answers its first request (the runner's check that it runs), then raises on every case."""

    def __init__(self):
        self.calls = 0

    def run(self, operation, input, **options):
        self.calls += 1
        if self.calls == 1:
            return {"unsupported": {"reason": "first request"}}
        raise RuntimeError("boom")


class BrokenAfterFirst:
    """Answers its first request, then returns something that is not an outcome."""

    def __init__(self):
        self.calls = 0

    def run(self, operation, input, **options):
        self.calls += 1
        if self.calls == 1:
            return {"unsupported": {"reason": "first request"}}
        return {"result": 1}


class Wrong:
    """Answers every case with an empty list."""

    def run(self, operation, input, **options):
        return {"output": []}


class Broken:
    """Returns something that is not an outcome."""

    def run(self, operation, input, **options):
        return {"result": 1}


def good(operation, input, **options):
    """A plain function implementation that is right."""
    try:
        return {"output": run(operation, input, **options)}
    except FormatError as exc:
        return {"error": {"category": exc.category, "message": str(exc)}}


class WrongCategory:
    """Reports a category the operation does not have."""

    def run(self, operation, input, **options):
        return {"error": {"category": "nonsense", "message": "?"}}


class RealWrongCategory:
    """Refuses every input with ``limit``: a category idset.decode has, never the right one
    for the mini suite's cases (which expect an output or ``syntax``)."""

    def run(self, operation, input, **options):
        return {"error": {"category": "limit", "message": "too big"}}


class HostileReasons:
    """The reference, but every refusal's message holds NUL, ESC, U+FFFF and a lone
    surrogate, and every output is wrong: each report must stay valid."""

    def run(self, operation, input, **options):
        evil = "nul\x00 esc\x1b[2J ffff\uffff surrogate\ud800 ]]> <&>"
        try:
            run(operation, input, **options)
        except FormatError:
            return {"error": {"category": "syntax", "message": evil}}
        return {"error": {"category": "limit", "message": evil}}


class Unsupporting:
    """Has no operation at all."""

    operations = ()

    def run(self, operation, input, **options):
        return {"unsupported": {"reason": "no API"}}


class TwoOperations:
    """The reference, announcing only idset.decode and idset.encode."""

    operations = ("idset.decode", "idset.encode")

    def run(self, operation, input, **options):
        return good(operation, input, **options)


def unknown_refusals(operation, input, **options):
    """Right, except that every refusal is given without a category (``unknown``)."""
    try:
        return {"output": run(operation, input, **options)}
    except FormatError as exc:
        return {"error": {"category": "unknown", "message": str(exc)}}


class Hostile:
    """Answers with text that must be escaped wherever it is shown (site and report tests)."""

    name = '<img src=x onerror="alert(1)">&amp;'
    version = "1.0 </title><script>alert(2)</script>"

    def run(self, operation, input, **options):
        if input == "01":
            return {"error": {"category": "syntax", "message": "</pre><script>alert(3)</script>"}}
        return {"output": ["</td><b onmouseover='x'>&\"\x00\x1b[31m\ud800"]}
