"""An export killed while writing leaves its temporary file beside the output; the next
export to that output removes it, and touches nothing else."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tracemine.export import export_contracts
from tracemine.model.contract import Contract, ContractFile, ContractStatus, save_contracts


def _contracts() -> ContractFile:
    return ContractFile(contracts=[
        Contract(tool="get_order", side="result", kind="range", paths=["result.total"],
                 params={"min": 0}, status=ContractStatus.ACCEPTED),
    ])  # fmt: skip


def _temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_the_next_export_removes_a_killed_exports_temporary_file(tmp_path: Path) -> None:
    out = tmp_path / "native.json"
    hour_ago = time.time() - 3600
    stale = [tmp_path / ".native.json.k3_x9q0a.tmp", tmp_path / ".native.json.zz01abcd.tmp"]
    # a writer started after this export did, another output's, and files merely alike
    kept = [tmp_path / ".other.json.k3_x9q0a.tmp", tmp_path / ".native.json.backup.tmp",
            tmp_path / "native.json.k3_x9q0a.tmp", tmp_path / ".native.json.toolong99.tmp"]  # fmt: skip
    fresh = tmp_path / ".native.json.newer000.tmp"
    for path in [*stale, *kept, fresh]:
        path.write_text("{", "utf-8")
        os.utime(path, (hour_ago, hour_ago))
    os.utime(fresh, (time.time() + 3600, time.time() + 3600))
    report = export_contracts(_contracts(), "native", out)
    assert report.files == [str(out)]
    assert json.loads(out.read_text("utf-8"))["contracts"][0]["tool"] == "get_order"
    assert not any(p.exists() for p in stale)
    assert all(p.exists() for p in [*kept, fresh])


def test_each_file_of_a_folder_export_loses_its_leftovers(tmp_path: Path) -> None:
    out = tmp_path / "schemas"
    first = export_contracts(_contracts(), "jsonschema", out)
    (written,) = (Path(f) for f in first.files)
    left = written.parent / f".{written.name}.abcd1234.tmp"
    left.write_text("{", "utf-8")
    os.utime(left, (time.time() - 60, time.time() - 60))
    export_contracts(_contracts(), "jsonschema", out)
    assert _temporaries(out) == []


_KILLED = """
import os, signal, sys
from tracemine.export import export_contracts

def killed(*args, **kwargs):  # the process dies between writing and renaming
    os.kill(os.getpid(), signal.SIGKILL)

os.replace = killed
export_contracts(sys.argv[1], "native", sys.argv[2])
"""


def test_an_export_killed_before_its_rename_leaves_nothing_after_the_next(
    tmp_path: Path,
) -> None:
    contracts = save_contracts(_contracts(), tmp_path / "contracts.json")
    out = tmp_path / "out" / "native.json"
    killed = subprocess.run([sys.executable, "-c", _KILLED, str(contracts), str(out)],
                            capture_output=True, text=True, timeout=120)  # fmt: skip
    assert killed.returncode == -9, killed.stderr
    assert len(_temporaries(out.parent)) == 1 and not out.exists()
    time.sleep(0.05)  # the next export starts after the killed one wrote its file
    export_contracts(contracts, "native", out)
    assert out.exists() and _temporaries(out.parent) == []
