"""The Node.js example implementation (examples/node/idset.js) passes the idset cases."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from support import ROOT

from flux_conformance.runner.cli import main

NODE = shutil.which("node")


def test_node_example_passes_idset_cases_and_skips_the_rest(capsys):
    if NODE is None:
        # CI installs it (.ci/run) and sets this variable, so there it is never skipped.
        if os.environ.get("FLUX_CONFORMANCE_REQUIRE_SYSTEM_LIBRARIES"):
            pytest.fail("node is not installed (apt-get install nodejs)")
        pytest.skip("node is not installed")
    impl = f"exec:{NODE} {ROOT / 'examples' / 'node' / 'idset.js'}"
    code = main(["run", "--impl", impl, "--json", "-", "-o", "idset.*", "-o", "hostlist.decode"])
    out, _ = capsys.readouterr()
    lines = [json.loads(line) for line in out.splitlines()]
    footer = lines[-1]["footer"]
    assert code == 0
    assert footer["operations"]["idset.decode"]["passed"] >= 60
    assert footer["operations"]["idset.encode"]["passed"] >= 20
    assert footer["operations"]["hostlist.decode"]["skipped"] >= 60
    assert lines[0]["header"]["implementation"]["name"] == "idset.js example"
