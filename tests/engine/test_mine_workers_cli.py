"""``tracemine mine --workers`` from the shell, its mistakes, and tracemine without Dask."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from shard_corpus import simulated_shards


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tracemine", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=600)  # fmt: skip


def _contracts(path: Path) -> list:
    return json.loads(path.read_text())["contracts"]


def test_mine_with_workers_writes_what_ingest_and_mine_write(tmp_path: Path) -> None:
    files = [f.name for f in simulated_shards(tmp_path, "all", 45)]
    done = _cli("mine", "--workers", "2", *files, "--work", "work", "--out", "sharded.json",
                cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"{len(files)} shards in work: records read" in done.stdout
    assert _cli("ingest", *files, "--db", "one.duckdb", cwd=tmp_path).returncode == 0
    assert _cli("mine", "--db", "one.duckdb", "--out", "one.json", cwd=tmp_path).returncode == 0
    assert _contracts(tmp_path / "sharded.json") == _contracts(tmp_path / "one.json")
    provenance = json.loads((tmp_path / "sharded.json").read_text())["provenance"]
    # as few stores as keep the two workers busy, each of consecutive shards
    assert len(files) > 2
    assert provenance["shards"] == {"count": len(files), "stores": 2, "merged": []}


def test_half_given_options_are_one_line_each(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text("{}\n")
    cases = {
        ("mine", "a.jsonl"): "give --workers N or --scheduler ADDRESS",
        ("mine", "--workers", "2"): "name them (paths, folders, globs or URLs)",
        ("mine", "--workers", "2", "--scheduler", "tcp://h:1", "a.jsonl"): "not both",
        ("mine", "--workers", "2", "nothing-here.jsonl"): "nothing-here.jsonl: no such file",
        ("mine", "--workers", "2", "s3x://bucket/a.jsonl"): "s3x://bucket/a.jsonl: cannot read",
    }
    for args, expected in cases.items():
        done = _cli(*args, cwd=tmp_path)
        assert done.returncode == 2, (args, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and expected in lines[0], (args, done.stderr)


def test_an_unreachable_scheduler_is_one_line(tmp_path: Path) -> None:
    first = simulated_shards(tmp_path, "commerce", 6)[0]
    done = _cli("mine", "--scheduler", "tcp://127.0.0.1:9", first.name, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().startswith("error: cannot reach the Dask scheduler at tcp://")


BLOCK_DASK = (  # as if the extra were not installed: importing its packages fails
    "import sys, importlib.abc, importlib.machinery\n"
    "class Missing(importlib.abc.Loader):\n"
    "    def create_module(self, spec):\n"
    "        raise ImportError(f'No module named {spec.name!r}')\n"
    "    def exec_module(self, module):\n"
    "        pass\n"
    "class Block(importlib.abc.MetaPathFinder):\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name.split('.')[0] in ('dask', 'distributed', 'fsspec'):\n"
    "            return importlib.machinery.ModuleSpec(name, Missing())\n"
    "sys.meta_path.insert(0, Block())\n"
)


def test_without_dask_one_store_mines_as_before_and_workers_say_what_to_install(
    tmp_path: Path,
) -> None:
    files = simulated_shards(tmp_path, "commerce", 20)
    code = BLOCK_DASK + (
        "import tracemine\n"
        f"tracemine.ingest({[str(f) for f in files]!r}, {str(tmp_path / 'one.duckdb')!r})\n"
        f"found = tracemine.mine({str(tmp_path / 'one.duckdb')!r}, folds=3)\n"
        "print(len(found.contracts) > 0, any(m.split('.')[0] in ('dask', 'distributed', 'fsspec') "
        "for m in sys.modules))\n"
        "from tracemine.cli import main\n"
        f"sys.argv = ['tracemine', 'mine', '--workers', '1', {str(files[0])!r}]\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, timeout=600)  # fmt: skip
    assert done.stdout.splitlines()[0] == "True False"
    assert done.returncode == 2
    assert "pip install 'tracemine[dask]'" in done.stderr


def test_a_worker_out_of_memory_is_one_line_naming_its_shard(tmp_path: Path) -> None:
    """The cap reaches the workers (they inherit the environment); running out there is
    the same one line as on one store, with the shard it happened in."""
    import os

    files = [f.name for f in simulated_shards(tmp_path, "offers", 60)]
    done = subprocess.run(
        [sys.executable, "-m", "tracemine", "mine", "--workers", "1", *files, "--work", "w"],
        capture_output=True, text=True, cwd=tmp_path, timeout=600,
        env={**os.environ, "TRACEMINE_DUCKDB_MEMORY": "8MB"},
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    *before, line = done.stderr.strip().splitlines()
    assert all(said.startswith("Dask dashboard: ") for said in before)
    assert (
        line.startswith("error: ")
        and "ran out of memory" in line
        and "TRACEMINE_DUCKDB_MEMORY=16MB" in line
    )
    assert any(name in line for name in files)
