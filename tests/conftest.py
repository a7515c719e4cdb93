"""Hypothesis profiles: ``default`` keeps the test run short; ``fuzz`` (``tox -e fuzz``) is long.

Select one with ``pytest --hypothesis-profile=fuzz``.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile("default", deadline=None)
settings.register_profile(
    "fuzz",
    max_examples=5_000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
