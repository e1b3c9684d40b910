"""Every file policyctl reads is read with a cap, and never a FIFO or a device.

Found by reading every `open(`, `read_text` and `read_bytes` of the package: the tool
inventory of `resolve --tool-inventory` was read capped but parsed with `json.loads` (a deep
list ended in a RecursionError traceback), `schema --output-dir --check` read the old schema
files whole with `Path.read_text` (a FIFO hung it, `/dev/zero` never ended), and the reference
`read_file` and `edit_file` tools read a workspace file whole into memory, whatever its size
(a sparse file of many gigabytes, made by one `truncate -s`).
"""

from __future__ import annotations

import asyncio
import os
import threading
import tracemalloc
from pathlib import Path

import pytest
from conftest import EXAMPLES
from hypothesis import given
from hypothesis import strategies as st

from policyctl.cli.main import main
from policyctl.runtime import file_tools, make_builtin_tools
from policyctl.runtime.text import truncate


def _run(ws: Path, name: str, output_limit: int = 10_000, **arguments: object) -> object:
    made = {t.name: t for t in make_builtin_tools(ws, output_limit=output_limit)}
    return asyncio.run(made[name].execute(**arguments))


def test_read_file_of_a_huge_sparse_file_reads_only_what_it_shows(tmp_path: Path) -> None:
    big = tmp_path / "big.log"
    with big.open("wb") as fh:
        fh.write(b"HEAD")
        fh.truncate(300 * 1024 * 1024)  # 300 MiB, nothing stored on disk
        fh.seek(-4, os.SEEK_END)
        fh.write(b"TAIL")
    tracemalloc.start()
    try:
        out = _run(tmp_path, "read_file", path="big.log")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert isinstance(out, str) and out.startswith("HEAD") and out.endswith("TAIL")
    assert "bytes cut" in out and len(out) < 10_100
    assert peak < 5 * 1024 * 1024, f"read_file held {peak} bytes for a 10,000-character answer"


def test_edit_file_refuses_a_file_too_large_to_edit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert file_tools.MAX_EDIT_BYTES == 32 * 1024 * 1024  # as the README says
    monkeypatch.setattr(file_tools, "MAX_EDIT_BYTES", 1000)
    (tmp_path / "big.txt").write_text("x" * 1001)
    with pytest.raises(ValueError, match="too large to edit"):
        _run(tmp_path, "edit_file", path="big.txt", old_text="xx", new_text="y")
    assert (tmp_path / "big.txt").read_text() == "x" * 1001  # untouched
    (tmp_path / "ok.txt").write_text("a" * 999 + "b")
    _run(tmp_path, "edit_file", path="ok.txt", old_text="b", new_text="c")
    assert (tmp_path / "ok.txt").read_text() == "a" * 999 + "c"


@given(
    st.text(min_size=0, max_size=600),
    st.integers(min_value=1, max_value=40),
)
def test_read_file_shows_what_the_whole_text_cut_shows(content: str, limit: int) -> None:
    """The class: whatever the file, the answer is the head and the tail of its text, as if
    it had been read whole (exactly so when it is small, head and tail when it is not)."""
    import tempfile

    with tempfile.TemporaryDirectory() as where:
        ws = Path(where)
        raw = content.encode("utf-8", errors="surrogatepass")
        (ws / "f.txt").write_bytes(raw)
        out = _run(ws, "read_file", path="f.txt", max_chars=limit)
    assert isinstance(out, str)
    whole = raw.decode("utf-8", errors="replace")
    if len(raw) <= 2 * (4 * limit + 4):
        assert out == truncate(whole, limit)
        return
    head, _, tail = out.partition("\n... [about ")
    assert whole.startswith(head) and len(head) == limit // 2
    shown_tail = tail.split(" bytes cut] ...\n", 1)[1]
    assert whole.endswith(shown_tail) and len(shown_tail) == limit - limit // 2


def test_a_deep_tool_inventory_is_a_located_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    listing = tmp_path / "tools.json"
    listing.write_text("[" * 100_000)
    code = main(["resolve", str(EXAMPLES / "team.yaml"), "--tool-inventory", str(listing)])
    err = capsys.readouterr().err
    assert code == 2 and f"{listing}:1:" in err and "PC107" in err, err


@pytest.mark.parametrize("kind", ["fifo", "device", "directory"])
def test_schema_check_never_reads_a_special_file(tmp_path: Path, kind: str) -> None:
    target = tmp_path / "policy.schema.json"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "device":
        os.symlink("/dev/zero", target)
    else:
        target.mkdir()
    outcome: list[int] = []
    worker = threading.Thread(
        target=lambda: outcome.append(main(["schema", "--output-dir", str(tmp_path), "--check"])),
        daemon=True,
    )
    worker.start()
    worker.join(timeout=20)
    assert outcome == [2], "schema --check hung or read a special file"


def test_schema_check_still_finds_stale_and_fresh_files(tmp_path: Path) -> None:
    assert main(["schema", "--output-dir", str(tmp_path)]) == 0
    assert main(["schema", "--output-dir", str(tmp_path), "--check"]) == 0
    (tmp_path / "policy.schema.json").write_text("{}")
    assert main(["schema", "--output-dir", str(tmp_path), "--check"]) == 1
    with (tmp_path / "policy.schema.json").open("a") as fh:
        fh.write(" " * 10_000_000)  # longer than the cap: stale, not read whole
    assert main(["schema", "--output-dir", str(tmp_path), "--check"]) == 1
