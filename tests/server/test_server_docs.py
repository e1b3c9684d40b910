"""docs/server.md's examples, run against a real `policyctl serve` process."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import httpx
from serve_process import ROOT, serving
from server_openapi import check

DOC = (ROOT / "docs" / "server.md").read_text(encoding="utf-8")


def curl_examples() -> list[tuple[str, dict[str, object], dict[str, object]]]:
    """(path, request body, expected fields) of every `curl -d` block and the JSON after it."""
    found = []
    pattern = r"```sh\n(curl [^`]*?)```\s*```json\n(.*?)```"
    for command, expected in re.findall(pattern, DOC, flags=re.S):
        words = shlex.split(command.replace("\\\n", " "))
        url = next(w for w in words if w.startswith("http://"))
        body = json.loads(words[words.index("-d") + 1])
        found.append((url.split("8181", 1)[1], body, json.loads(expected)))
    return found


def test_the_setup_commands_are_the_ones_tested() -> None:
    assert "policyctl serve --policy examples/hosts-team.yaml\n" in DOC
    assert "pip install '.[server]'" in DOC


def test_the_documented_requests_get_the_documented_answers(tmp_path: Path) -> None:
    examples = curl_examples()
    assert len(examples) >= 2
    log = tmp_path / "decisions.jsonl"
    with serving(str(ROOT / "examples" / "hosts-team.yaml"), "--decision-log", str(log)) as url:
        for path, body, expected in examples:
            answer = httpx.post(url + path, json=body, timeout=10).json()
            check("Decision", answer)
            assert {k: answer[k] for k in expected} == expected
        bad = httpx.post(url + "/v1/decide", json={"tool": "Bash", "bogus": 1}, timeout=10)
        documented = json.loads(re.findall(r'```json\n(\{"error".*?)```', DOC, re.S)[0])
        assert bad.status_code == 422 and bad.json() == documented
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["verdict"] for r in records] == [e[2]["verdict"] for e in examples]
    first = records[0]
    assert first["kind"] == "decide" and first["revision"].startswith("sha256:")
    assert len(first["argumentsSha256"]) == 64 and "arguments" not in first
    assert first["layer"] == examples[0][2]["layer"] and first["tool"] == "Bash"


def test_the_documented_authzen_request_asks() -> None:
    from starlette.testclient import TestClient
    from test_server_api import client

    block = re.findall(r"```sh\n(curl [^`]*?/access/v1/evaluation [^`]*?)```", DOC, re.S)[0]
    words = shlex.split(block.replace("\\\n", " "))
    api: TestClient = client()
    answer = api.post("/access/v1/evaluation", json=json.loads(words[words.index("-d") + 1]))
    assert answer.json()["decision"] is False
    assert answer.json()["context"]["verdict"] == "ask"
