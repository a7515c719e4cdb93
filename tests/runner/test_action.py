"""The GitHub Action (``action.yml``), run here step by step as a composite action runs.

GitHub itself cannot be reached from a test, so the test does what the runner does: it checks
the file against the schema SchemaStore publishes for action metadata (vendored by
check-jsonschema), then executes each step in order with the inputs a user would give, the
expressions (``inputs.*``, ``github.action_path``, ``runner.temp``, ``steps.*.outputs``)
filled in, the ``if:`` conditions honoured, ``$GITHUB_OUTPUT`` and ``$GITHUB_STEP_SUMMARY``
as files, and bash run as GitHub runs it.  The install step installs, for real, from a copy of
this checkout: the action's own path.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
import yaml
from support import MINI, ROOT, fake_command, github_outputs

from flux_conformance.runner.tools import action as steps

ACTION = ROOT / "action.yml"
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="the steps run in bash")


def _action() -> dict:
    return yaml.safe_load(ACTION.read_text(encoding="utf-8"))


def test_action_follows_the_actions_schema():
    vendored = resources.files("check_jsonschema").joinpath(
        "builtin_schemas", "vendor", "github-actions.json"
    )
    schema = json.loads(vendored.read_text(encoding="utf-8"))
    jsonschema.validators.validator_for(schema)(schema).validate(_action())


def test_no_input_reaches_a_shell_command_as_text():
    # An expression in `run:` is pasted into the script before bash sees it; inputs reach the
    # steps only through `env:`.
    for step in _action()["runs"]["steps"]:
        assert "${{" not in step.get("run", ""), step["name"]


# -- a composite action's runner, as small as the action needs --------------------------------


@dataclass
class Ran:
    """What running the action left: outputs, summary, the status of the step that failed."""

    outputs: dict[str, str]
    summary: str
    status: int
    log: str
    skipped: list[str] = field(default_factory=list)


def _evaluate(expression: str, context: dict[str, object]) -> object:
    """The few expressions action.yml uses: names, `!= ''`, `== 'true'`, `&&`, always()."""
    if "&&" in expression:
        return all(_evaluate(part, context) for part in expression.split("&&"))
    expression = expression.strip()
    if expression == "always()":
        return True
    for operator in ("!=", "=="):
        if operator in expression:
            left, right = (part.strip() for part in expression.split(operator))
            value = str(_evaluate(left, context))
            literal = right.strip("'")
            return value != literal if operator == "!=" else value == literal
    value: object = context
    for part in expression.split("."):
        # As on GitHub, a missing property (the outputs of a step that did not run) is ''.
        value = value.get(part, "") if isinstance(value, dict) else ""
    return value


def _fill(text: str, context: dict[str, object]) -> str:
    return EXPRESSION.sub(lambda m: str(_evaluate(m.group(1), context)), text)


def run_action(action_path: Path, work: Path, temp: Path, **given: str) -> Ran:
    action = _action()
    inputs = {k: v.get("default", "") for k, v in action["inputs"].items()}
    missing = [k for k, v in action["inputs"].items() if v.get("required") and k not in given]
    assert not missing, missing
    inputs.update(given)
    context: dict[str, object] = {
        "inputs": inputs,
        "github": {"action_path": str(action_path)},
        "runner": {"temp": str(temp)},
        "steps": {},
    }
    summary = work / "summary.md"
    summary.write_text("")
    log, skipped, status = [], [], 0
    for step in action["runs"]["steps"]:
        condition = step.get("if", "success()")
        allowed = True if condition == "success()" else _evaluate(condition, context)
        if status != 0 and "always()" not in condition:
            allowed = False
        if not allowed:
            skipped.append(step["name"])
            continue
        if "uses" in step:
            # Steps from other actions (setup-python, upload-artifact) run on GitHub only.
            log.append(f"would use {step['uses']}")
            continue
        output_file = work / f"output-{len(log)}"
        output_file.write_text("")
        env = {
            **os.environ,
            **{k: _fill(str(v), context) for k, v in step.get("env", {}).items()},
            "GITHUB_OUTPUT": str(output_file),
            "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_ACTION_PATH": str(action_path),
            "RUNNER_TEMP": str(temp),
        }
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        log.append(done.stdout + done.stderr)
        status = status or done.returncode
        if "id" in step:
            context["steps"][step["id"]] = {  # type: ignore[index]
                "outputs": github_outputs(output_file.read_text())
            }
    outputs = {k: _fill(v["value"], context) for k, v in action["outputs"].items()}
    return Ran(outputs, summary.read_text(), status, "\n".join(log), skipped)


# -- the checkout, installed once --------------------------------------------------------------


def tracked_files(root: Path) -> list[str] | None:
    """The files of the git checkout at ``root`` (tracked, or new and not ignored).

    None when ``root`` is no git checkout (an unpacked sdist, say) or git is missing: the
    action is installed from a checkout, so its tests then skip, saying why.
    """
    if shutil.which("git") is None:
        return None
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        capture_output=True,
        check=False,
    )
    if listed.returncode != 0:
        return None
    return list(filter(None, listed.stdout.decode().split("\0")))


def test_outside_a_git_checkout_there_are_no_files_to_install(tmp_path: Path) -> None:
    (tmp_path / "action.yml").write_text("name: not a checkout\n")
    assert tracked_files(tmp_path) is None
    names = tracked_files(ROOT)
    if names is None:
        pytest.skip("this copy of the project is not a git checkout")
    assert "action.yml" in names


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(action path, runner temp) after the install step: a copy of this checkout, installed
    with an extra package given as a list, into the action's own virtual environment."""
    names = tracked_files(ROOT)
    if names is None:
        pytest.skip("not a git checkout (or no git): the action is installed from a checkout")
    base = tmp_path_factory.mktemp("action")
    checkout = base / "checkout"
    for name in names:
        source = ROOT / name
        if source.is_file():
            (checkout / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, checkout / name)
    extra = base / "my-impl"
    (extra / "my_impl").mkdir(parents=True)
    (extra / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=69"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "my-impl"\nversion = "1.0"\n'
    )
    (extra / "my_impl" / "__init__.py").write_text(
        "class Implementation:\n"
        "    def run(self, operation, input, **options):\n"
        "        if operation != 'idset.decode':\n"
        "            return {'unsupported': {'reason': 'idset.decode only'}}\n"
        "        from flux_conformance.reference.operations import run\n"
        "        return {'output': run(operation, input)}\n"
    )
    temp = base / "runner-temp"
    temp.mkdir()
    work = base / "work"
    work.mkdir()
    ran = run_action(
        checkout,
        work,
        temp,
        implementation="python:my_impl:Implementation",
        packages=f"# the implementation under test\n{extra}\n\n",
        reports=str(work / "reports"),
        args=f"--cases '{MINI}' -o idset.decode --id 'mini.range' --id mini.list",
    )
    assert ran.status == 0, ran.log
    assert ran.outputs["verdict"] == "conforms", ran.log
    assert ran.outputs["passed"] == "2"
    assert ran.skipped == ["Set up Python"]
    return checkout, temp


def test_the_suite_is_installed_from_the_action_path_with_the_packages(installed):
    _, temp = installed
    venv = temp / "flux-conformance-venv"
    python = venv / "bin" / "python"
    where = subprocess.run(
        [
            python,
            "-c",
            "import flux_conformance.runner, my_impl; print(flux_conformance.runner.__file__)",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "site-packages" in where  # a real install, not the checkout it came from
    # The job's own Python is untouched: nothing was installed into it.
    assert (
        subprocess.run(
            [sys.executable, "-c", "import my_impl"], capture_output=True, check=False
        ).returncode
        != 0
    )


def test_a_run_writes_outputs_reports_and_the_summary(installed, tmp_path):
    checkout, temp = installed
    reports = tmp_path / "reports"
    ran = run_action(
        checkout,
        tmp_path,
        temp,
        implementation="reference",
        reports=str(reports),
        args=f"--cases '{MINI}' --exclude-level should",
    )
    assert ran.status == 0, ran.log
    assert ran.outputs["verdict"] == "conforms"
    assert (ran.outputs["total"], ran.outputs["passed"], ran.outputs["failed"]) == ("4", "4", "0")
    assert ran.outputs["exit-status"] == "0"
    for name in ("junit", "html", "markdown", "json", "badge"):
        assert Path(ran.outputs[name]).is_file(), name
    assert Path(ran.outputs["reports"]) == reports
    assert (
        json.loads((reports / "badge.json").read_text())["message"] == "conforms: 3/3 must, 1/1 ops"
    )
    # The summary is the Markdown report.
    assert ran.summary.strip() == (reports / "report.md").read_text().strip()
    assert "conforms" in ran.summary
    off = run_action(
        checkout,
        tmp_path,
        temp,
        implementation="reference",
        reports=str(tmp_path / "r2"),
        args=f"--cases '{MINI}'",
        summary="false",
    )
    assert off.status == 0
    assert off.summary == ""


def test_the_run_status_is_the_step_status_and_expectations_hold(installed, tmp_path):
    checkout, temp = installed
    wrong = f"exec:{fake_command('wrong')}"
    ran = run_action(
        checkout,
        tmp_path,
        temp,
        implementation=wrong,
        reports=str(tmp_path / "a"),
        args=f"--cases {MINI}",
    )
    assert ran.status == 1
    assert (ran.outputs["verdict"], ran.outputs["exit-status"]) == ("does not conform", "1")
    assert ran.outputs["failed"] == "5"
    assert "does not conform" in ran.summary
    expectations = tmp_path / "known.yaml"
    expectations.write_text(
        "expectations:\n  - id: 'mini.*'\n    status: xfail\n    reason: the fake is wrong\n"
    )
    ran = run_action(
        checkout,
        tmp_path,
        temp,
        implementation=wrong,
        expectations=str(expectations),
        reports=str(tmp_path / "b"),
        args=f"--cases {MINI}",
    )
    assert ran.status == 0, ran.log
    # Exit 0 (nothing new against the baseline), but never "conforms" over known departures.
    assert (ran.outputs["verdict"], ran.outputs["xfailed"]) == ("matches its baseline", "5")


def test_args_are_words_never_commands(installed, tmp_path):
    checkout, temp = installed
    attempts = [
        "$(touch PWNED1)",
        "`touch PWNED2`",
        "; touch PWNED3",
        "&& touch PWNED4",
        "| touch PWNED5",
        "'$(touch PWNED6)'",
        '"$(touch PWNED7)"',
        "$'\\x24(touch PWNED8)'",
    ]
    ran = run_action(
        checkout,
        tmp_path,
        temp,
        implementation="reference",
        reports=str(tmp_path / "r"),
        args=f"--cases {MINI} --level must " + " ".join(attempts),
    )
    assert not list(tmp_path.rglob("PWNED*"))
    assert not list(checkout.rglob("PWNED*"))
    # The words reach `flux-conformance run` as words, which it refuses: a usage error.
    assert "unrecognized arguments: $(touch PWNED1) `touch PWNED2` ; touch PWNED3" in ran.log
    assert ran.status == 2, ran.log
    assert (ran.outputs["verdict"], ran.outputs["exit-status"]) == ("not run", "2")


def test_an_unbalanced_quote_in_args_stops_the_step(tmp_path):
    env = {
        "FC_VENV": str(tmp_path),
        "FC_IMPL": "reference",
        "FC_REPORTS": str(tmp_path),
        "FC_ARGS": "--id 'open",
    }
    with pytest.raises(SystemExit, match="cannot split `args`"):
        steps.run_command(env)


def test_packages_are_a_list():
    assert steps.packages_of("a==1\n\n  # a comment\nb[extra] >= 2  # why\n") == [
        "a==1",
        "b[extra] >= 2",
    ]
    command = steps.install_command(
        {"FC_VENV": "/v", "FC_ACTION_PATH": "/act", "FC_PACKAGES": "x\ny\n", "FC_SUITE": ""}
    )
    assert command[-3:] == ["/act", "x", "y"]
    pinned = steps.install_command(
        {"FC_VENV": "/v", "FC_ACTION_PATH": "/act", "FC_SUITE": "flux-conformance==9"}
    )
    assert pinned[-1] == "flux-conformance==9"
