"""Shards of a corpus: files whole, large files of whole runs cut at line ends."""

from __future__ import annotations

import gzip
import itertools
from pathlib import Path

import pytest

from tracemine.engine.plan import plan
from tracemine.errors import InputError, UnknownFormatError
from tracemine.simulate import simulate, write_traces


def _corpus(folder: Path, format: str, name: str = "big.jsonl") -> Path:
    path = folder / name
    write_traces(simulate("all", tasks=30, seed=2, trials=2), path, format)
    return path


def test_a_file_of_whole_conversations_is_cut_at_line_ends(tmp_path: Path) -> None:
    path = _corpus(tmp_path, "openai_chat")
    size = path.stat().st_size
    shards = plan([str(path)], shard_bytes=size // 5)
    assert len(shards) >= 4
    assert [s.index for s in shards] == list(range(len(shards)))
    assert shards[0].start == 0 and shards[-1].end == size
    data = path.read_bytes()
    for before, after in itertools.pairwise(shards):
        assert before.end == after.start and data[after.start - 1 : after.start] == b"\n"
    assert shards[0].first_line == 1 and all(s.first_line is None for s in shards[1:])


@pytest.mark.parametrize("format", ["flat", "otlp"])
def test_formats_whose_runs_span_lines_are_one_shard_a_file(tmp_path: Path, format: str) -> None:
    path = _corpus(tmp_path, format)
    (shard,) = plan([str(path)], shard_bytes=path.stat().st_size // 5)
    assert shard.whole and shard.format == format


def test_compressed_files_are_one_shard(tmp_path: Path) -> None:
    path = _corpus(tmp_path, "openai_chat")
    packed = tmp_path / "big.jsonl.gz"
    packed.write_bytes(gzip.compress(path.read_bytes()))
    (shard,) = plan([str(packed)], shard_bytes=1000)
    assert shard.whole and shard.format == "openai_chat"


def test_folders_and_globs_list_trace_files_in_order(tmp_path: Path) -> None:
    for name in ("b.jsonl", "a.jsonl"):
        _corpus(tmp_path, "openai_chat", name)
    (tmp_path / "notes.txt").write_text("not a trace")
    assert [Path(s.url).name for s in plan([str(tmp_path)])] == ["a.jsonl", "b.jsonl"]
    assert [Path(s.url).name for s in plan([str(tmp_path / "*.jsonl")])] == ["a.jsonl", "b.jsonl"]


def test_what_cannot_be_planned_is_said(tmp_path: Path) -> None:
    (tmp_path / "odd.jsonl").write_text('{"hello": "world"}\n')
    with pytest.raises(UnknownFormatError, match=r"odd\.jsonl: no reader recognises"):
        plan([str(tmp_path / "odd.jsonl")])
    with pytest.raises(InputError, match=r"nothing-\*\.jsonl: no such file"):
        plan([str(tmp_path / "nothing-*.jsonl")])
    with pytest.raises(InputError, match="cannot read this URL"):
        plan(["nosuchprotocol://x/y.jsonl"])
