"""The GitHub Action (action.yml): valid against the actions schema, and its command works.

GitHub itself cannot be reached from here, so the test checks what can be: the file against
the schema SchemaStore publishes for action metadata (vendored by check-jsonschema), and the
exact shell script of the step that runs the suite, executed with the inputs a user would give.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
import yaml
from support import MINI, ROOT, fake_command

ACTION = ROOT / "action.yml"


def _action() -> dict:
    return yaml.safe_load(ACTION.read_text(encoding="utf-8"))


def test_action_follows_the_actions_schema():
    vendored = resources.files("check_jsonschema").joinpath(
        "builtin_schemas", "vendor", "github-actions.json"
    )
    schema = json.loads(vendored.read_text(encoding="utf-8"))
    jsonschema.validators.validator_for(schema)(schema).validate(_action())


def _run_step(**inputs: str) -> subprocess.CompletedProcess[str]:
    step = next(s for s in _action()["runs"]["steps"] if s.get("name") == "Run the suite")
    env = {**os.environ}
    defaults = {k: v.get("default", "") for k, v in _action()["inputs"].items()}
    values = {**defaults, **inputs}
    for name, expression in step["env"].items():
        key = expression.removeprefix("${{ inputs.").removesuffix(" }}")
        env[name] = values[key]
    # The step runs `flux-conformance` from the environment the install step made: this one.
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(
        ["bash", "-e", "-c", step["run"]],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.skipif(shutil.which("bash") is None, reason="the action's steps run in bash")
def test_the_run_step_writes_every_report(tmp_path):
    reports = tmp_path / "reports"
    done = _run_step(
        implementation="reference",
        reports=str(reports),
        args=f"--cases '{MINI}' --exclude-level should",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (reports / "junit.xml").is_file()
    assert "<html" in (reports / "report.html").read_text()
    badge = json.loads((reports / "badge.json").read_text())
    assert badge["message"] == "3/3 must, 1/1 ops"


@pytest.mark.skipif(shutil.which("bash") is None, reason="the action's steps run in bash")
def test_the_run_step_fails_the_job_and_honours_expectations(tmp_path):
    wrong = f"exec:{fake_command('wrong')}"
    done = _run_step(implementation=wrong, reports=str(tmp_path / "a"), args=f"--cases {MINI}")
    assert done.returncode == 1
    expectations = tmp_path / "known.yaml"
    expectations.write_text(
        "expectations:\n  - id: 'mini.*'\n    status: xfail\n    reason: the fake is wrong\n"
    )
    done = _run_step(
        implementation=wrong,
        expectations=str(expectations),
        reports=str(tmp_path / "b"),
        args=f"--cases {MINI}",
    )
    assert done.returncode == 0, done.stdout + done.stderr
