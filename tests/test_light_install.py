"""``pip install tracemine`` with no extra is enough for the monitor: the wheel, built from
these sources offline, installed into a fresh virtual environment that holds no other
package, checks a call against the demo's contract file exactly as this checkout does; the
console script and the integrations say in one line which extra they need."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tracemine.monitor import Monitor

ROOT = Path(__file__).parents[1]
CONTRACTS = ROOT / "mined_contracts" / "contracts.json"
CALL = ("get_order", {"order_id": "#W0000001"}, {"order_id": "#W0000002", "items": []})
CHECK = f"""
import json, sys
from tracemine.monitor import Monitor
monitor = Monitor.load(sys.argv[1], include_proposed=True)
tool, args, result = {CALL!r}
print(json.dumps(monitor.check(tool, args, json.dumps(result), call_id="c1").to_dict()))
"""


# without the PYTHONPATH a checkout's tests may run under, which would put its sources
# (and pip's idea of what is installed) into the fresh environment
ENV = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}


def run(*command: str | Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(c) for c in command], capture_output=True, text=True,
                          check=check, timeout=120, env=ENV)  # fmt: skip


@pytest.fixture(scope="module")
def light(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the wheel, the python of a fresh environment with only that wheel installed)."""
    work = tmp_path_factory.mktemp("light")
    # build from a copy, so that the build's own files (build/, *.egg-info) stay out of the tree
    project = work / "project"
    shutil.copytree(ROOT / "src", project / "src",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))  # fmt: skip
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, project / name)
    run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
        "--no-index", "-w", work / "dist", project)  # fmt: skip
    (wheel,) = (work / "dist").glob("tracemine-*.whl")
    env = work / "env"
    run(sys.executable, "-m", "venv", "--without-pip", env)
    python = env / "bin" / "python"
    run(sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-index",
        "--no-deps", wheel)  # fmt: skip
    return wheel, python


def test_the_wheel_requires_nothing_without_an_extra(light: tuple[Path, Path]) -> None:
    wheel, _ = light
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = archive.read(name).decode()
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    assert requires and all("extra ==" in line for line in requires), requires
    extras = {line.split(":", 1)[1].strip() for line in metadata.splitlines()
              if line.startswith("Provides-Extra:")}  # fmt: skip
    assert {"mine", "otel", "openai-agents", "langchain"} <= extras


def test_a_light_environment_checks_a_call_as_this_checkout_does(light: tuple[Path, Path]) -> None:
    _, python = light
    probe = (
        "import importlib.util as u, tracemine; print(u.find_spec('pydantic'), tracemine.__file__)"
    )
    found, where = run(python, "-c", probe).stdout.split()
    assert found == "None"  # nothing but the standard library and tracemine …
    assert Path(where).is_relative_to(python.parents[1])  # … and tracemine from the wheel
    imports = "import tracemine, tracemine.monitor, tracemine.monitor.hooks, tracemine.replay"
    run(python, "-c", f"{imports}, tracemine.integrations; tracemine.Monitor")
    out = run(python, "-c", CHECK, CONTRACTS).stdout
    tool, args, result = CALL
    monitor = Monitor.load(CONTRACTS, include_proposed=True)
    expected = monitor.check(tool, args, json.dumps(result), call_id="c1")
    assert expected.violations  # a call the demo's contracts catch
    assert json.loads(out) == json.loads(json.dumps(expected.to_dict()))


def test_the_command_line_names_the_extra_it_needs(light: tuple[Path, Path]) -> None:
    _, python = light
    done = run(python.parent / "tracemine", "stats", "--db", "x.duckdb", check=False)
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert "the mining commands need: pip install 'tracemine[mine]'" in line
    assert done.stdout == ""


@pytest.mark.parametrize(("module", "extra"), [("otel", "otel"), ("openai_agents", "openai-agents"),
                                              ("langchain", "langchain")])  # fmt: skip
def test_an_integration_without_its_framework_names_its_extra(
    light: tuple[Path, Path], module: str, extra: str
) -> None:
    _, python = light
    done = run(python, "-c", f"import tracemine.integrations.{module}", check=False)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: tracemine.integrations.")
    assert last.endswith(f"pip install 'tracemine[{extra}]'")
