"""Recorded calls (`simulate --calls`, `diff --calls`): JSON lines or a JSON list, every problem
a located diagnostic (file:line:col), the policy files' byte cap, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from policyctl.analysis.call_corpus import read_corpus
from policyctl.diagnostics import PolicyError
from policyctl.settings import Limits


def write(tmp_path: Path, text: str, name: str = "calls.jsonl") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def problem(path: Path, limits: Limits | None = None) -> str:
    with pytest.raises(PolicyError) as info:
        read_corpus(path, limits)
    assert len(info.value.diagnostics) >= 1
    return str(info.value.diagnostics[0])


def test_json_lines_with_args_params_arguments_and_context(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '{"tool": "exec", "args": {"command": "git status"}}\n'
        "\n"
        '  {"tool": "read", "params": {"path": "a"}, "id": "call_1"}\n'
        '{"tool": "web_fetch", "arguments": "{\\"url\\": \\"https://x.test/\\"}"}\n'
        '{"tool": "ls", "context": {"agent": "coder", "provider": "openai"}}\n',
    )
    calls = read_corpus(path)
    assert [(c.tool, dict(c.args), c.line) for c in calls] == [
        ("exec", {"command": "git status"}, 1),
        ("read", {"path": "a"}, 3),
        ("web_fetch", {"url": "https://x.test/"}, 4),
        ("ls", {}, 5),
    ]
    assert calls[1].source.column == 3
    assert calls[3].context is not None and calls[3].context.agent == "coder"
    assert calls[0].context is None


def test_a_json_list_locates_each_call(tmp_path: Path) -> None:
    path = write(
        tmp_path, '[\n  {"tool": "exec", "args": {"command": "ls"}},\n  {"tool": "read"}\n]\n'
    )
    calls = read_corpus(path)
    assert [(c.tool, c.line, c.source.column) for c in calls] == [("exec", 2, 3), ("read", 3, 3)]


@pytest.mark.parametrize(
    ("text", "where", "words"),
    [
        ('{"tool": "exec"}\n{"tool": "exec", "arg": {}}\n', ":2:18: PC365", 'unknown key "arg"'),
        ('{"tool": "exec"}\n{"tool": "exec", "arg": {}}\n', ":2:", 'did you mean "args"'),
        ('{"tool": "exec", "args": {}, "params": {}}\n', ":1:", "both args and params"),
        ('{"args": {}}\n', ":1:1: PC365", 'needs "tool"'),
        ('{"tool": 3}\n', ":1:10: PC365", 'needs "tool"'),
        ('{"tool": "exec", "args": [1]}\n', ":1:26: PC365", "must be a JSON object"),
        ('{"tool": "exec", "arguments": "{oops"}\n', ":1:", "not a JSON object"),
        ('"exec"\n', ":1:1: PC365", "must be an object"),
        ('{"tool": "exec"}\n{"tool": \n', ":2:", "PC103"),
        ('{"tool": "exec", "context": {"agnt": "x"}}\n', ":1:", "agnt"),
        ('{"tool": "exec", "context": "coder"}\n', ":1:", "context must be an object"),
        ('{"tool": "\\ud800"}\n', ":1:", "surrogate"),
        ('{"tool": "read", "args": {"a": ' + "[" * 3000 + "]" * 3000 + "}}\n", ":1:", "PC107"),
        ('[{"tool": "exec"}, 5]\n', ":1:20: PC365", "must be an object"),
        ("[1, 2", ":1:", "PC103"),
    ],
)
def test_every_bad_call_is_a_located_diagnostic(
    tmp_path: Path, text: str, where: str, words: str
) -> None:
    message = problem(write(tmp_path, text))
    assert where in message and words in message, message
    assert "calls.jsonl" in message


def test_the_byte_cap_and_special_files_hold(tmp_path: Path) -> None:
    path = write(tmp_path, '{"tool": "exec"}\n' * 100)
    assert "PC106" in problem(path, Limits(max_file_bytes=200))
    assert "PC112" in problem(tmp_path)  # a directory is not a file of calls
    assert "PC101" in problem(tmp_path / "missing.jsonl")


def test_diagnostics_never_quote_the_file(tmp_path: Path) -> None:
    # a transcript line may be megabytes of model output, and the file may be any file
    path = write(tmp_path, '{"tool": "exec", "token": "s3cret"}\n')
    with pytest.raises(PolicyError) as info:
        read_corpus(path)
    assert info.value.diagnostics and not any(d.quote for d in info.value.diagnostics)
