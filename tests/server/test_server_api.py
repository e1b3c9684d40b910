"""The decision server's JSON API, through Starlette's test client over the real app: every
answer is validated against schemas/server.openapi.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from server_openapi import check, response_schema
from starlette.testclient import TestClient

from policyctl.integrations.server.app import ServerConfig, build_app
from policyctl.integrations.server.metrics import Metrics
from policyctl.integrations.server.state import FileSource
from policyctl.runtime.store import PolicyStore

ROOT = Path(__file__).resolve().parents[2]
TEAM = str(ROOT / "examples" / "hosts-team.yaml")
TOKEN = "t0ken-with-enough-characters"


def client(policy: str = TEAM, **config: Any) -> TestClient:
    metrics = Metrics()
    source = FileSource(policy, PolicyStore, listener=metrics.reloaded)
    return TestClient(build_app(source, ServerConfig(**config), metrics))


@pytest.fixture(scope="module")
def api() -> TestClient:
    return client()


def decide(api: TestClient, body: Any) -> dict[str, Any]:
    r = api.post("/v1/decide", json=body)
    assert r.status_code == 200, r.text
    assert r.headers["x-policyctl-revision"] == r.json()["revision"]
    return check(response_schema("/v1/decide", "post", 200), r.json())


def test_decide_gives_the_verdict_and_where_the_rule_is_written(api: TestClient) -> None:
    denied = decide(api, {"tool": "Bash", "arguments": {"command": "rm -rf /"}})
    assert denied["verdict"] == "deny"
    assert denied["entry"] == "Bash(rm -rf *)" and denied["layer"] == "tools.deny"
    assert denied["source"].endswith("hosts-team.yaml:21:7")
    asked = decide(api, {"tool": "Bash", "arguments": {"command": "git push origin main"}})
    assert asked["verdict"] == "ask" and asked["entry"] == "Bash(git push *)"
    assert decide(api, {"tool": "Bash", "arguments": {"command": "ls"}})["verdict"] == "allow"


def test_the_context_changes_the_answer(api: TestClient) -> None:
    # Gemini CLI runs (provider google) may not use web_fetch; the explore subagent no Bash
    google = {"provider": "google"}
    assert decide(api, {"tool": "web_fetch", "context": google})["verdict"] == "deny"
    explore = decide(api, {"tool": "Bash", "context": {"agent": "explore"}})
    assert explore["verdict"] == "deny" and explore["layer"]


def test_detail_levels(api: TestClient) -> None:
    call = {"tool": "Bash", "arguments": {"command": "git push origin"}}
    full = decide(api, {**call, "detail": "full"})
    assert 'on "git push origin"' in full["reason"]
    minimal = decide(api, {**call, "detail": "minimal"})
    assert "git push" not in minimal["reason"] and minimal["entry"] is None


def test_an_unknown_tool_is_refused_not_an_error(api: TestClient) -> None:
    answer = decide(api, {"tool": "launch_missiles"})
    assert answer["verdict"] == "deny" and answer["code"] == "PC181"


def test_batch_answers_every_item_under_one_revision(api: TestClient) -> None:
    items = [
        {"tool": "Bash", "arguments": {"command": "sudo ls"}},
        {"tool": "Bash", "arguments": {"command": "ls"}},
    ]
    r = api.post("/v1/decide/batch", json={"items": items})
    body = check(response_schema("/v1/decide/batch", "post", 200), r.json())
    assert [x["verdict"] for x in body["results"]] == ["deny", "allow"]
    assert {x["revision"] for x in body["results"]} == {body["revision"]}
    too_many = api.post("/v1/decide/batch", json={"items": items * 51})
    assert too_many.status_code == 422


def test_resolve_lists_the_tools_and_every_removal(api: TestClient) -> None:
    r = api.post("/v1/resolve", json={"context": {"agent": "explore"}})
    body = check(response_schema("/v1/resolve", "post", 200), r.json())
    assert "bash" not in body["allowed"] and "read" in body["allowed"]
    bash = next(x for x in body["removed"] if x["tool"] == "bash")
    assert bash["label"] and bash["source"]["line"] > 0
    # an inventory given by the client
    r = api.post("/v1/resolve", json={"tools": [{"name": "Read"}, {"name": "mytool"}]})
    assert check("Resolution", r.json())["allowed"] == ["read"]


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (b"{", 400, "PC521"),
        (b"\xff\xfe", 400, "PC521"),
        (b"[1]", 422, "PC522"),
        (b'{"tool": "Bash", "verdict": "allow"}', 422, "PC522"),
        (b'{"tool": 3}', 422, "PC522"),
        (b'{"tool": "Bash", "arguments": []}', 422, "PC522"),
        (b'{"tool": "Bash", "context": {"owner": "yes"}}', 422, "PC522"),
        (b'{"tool": "Bash", "detail": "everything"}', 422, "PC522"),
        (b"[" * 100_000 + b"]" * 100_000, 400, "PC521"),
    ],
)
def test_malformed_requests_get_a_structured_error(
    api: TestClient, body: bytes, status: int, code: str
) -> None:
    r = api.post("/v1/decide", content=body, headers={"content-type": "application/json"})
    assert r.status_code == status
    error = check("Error", r.json())["error"]
    assert error["code"] == code and "Traceback" not in r.text


def test_size_cap() -> None:
    api = client(max_body_bytes=2048)
    big = {"tool": "Bash", "arguments": {"command": "x" * 4096}}
    r = api.post("/v1/decide", json=big)
    assert r.status_code == 413 and check("Error", r.json())["error"]["code"] == "PC520"
    # a body sent in chunks, without a length, is counted as it arrives
    chunks = iter([json.dumps(big).encode()[:1500], json.dumps(big).encode()[1500:]])
    r = api.post("/v1/decide", content=chunks)
    assert r.status_code == 413


def test_tokens_are_required_when_configured() -> None:
    api = client(tokens=(TOKEN,))
    call = {"tool": "Bash", "arguments": {"command": "ls"}}
    assert api.post("/v1/decide", json=call).status_code == 401
    wrong = {"authorization": "Bearer " + TOKEN[:-1] + "X"}
    r = api.post("/v1/decide", json=call, headers=wrong)
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
    assert check("Error", r.json())["error"]["code"] == "PC523"
    good = {"authorization": "Bearer " + TOKEN}
    assert api.post("/v1/decide", json=call, headers=good).json()["verdict"] == "allow"
    assert api.get("/metrics").status_code == 401
    assert api.get("/health").status_code == 200  # probes carry no token


def test_health_status_and_no_policy(tmp_path: Path) -> None:
    api = client()
    health = api.get("/health")
    assert check("Status", health.json())["status"] == "ok"
    status = check("Status", api.get("/v1/status").json())
    assert status["revision"].startswith("sha256:") and status["source"] == TEAM
    broken = tmp_path / "broken.yaml"
    broken.write_text("tools: {deny: 3}\n")
    none = client(str(broken))
    r = none.get("/health")
    assert r.status_code == 503 and check("Status", r.json())["status"] == "no-policy"
    assert "broken.yaml" in r.json()["lastReload"]["error"]
    r = none.post("/v1/decide", json={"tool": "read"})
    assert r.status_code == 503 and r.json()["error"]["code"] == "PC524"


def test_unknown_routes_and_methods_are_json() -> None:
    api = client()
    assert check("Error", api.get("/v1/decide").json())["error"]["code"] == "PC526"
    assert api.get("/nope").status_code == 404


def test_metrics_count_decisions_and_reloads() -> None:
    from prometheus_client.parser import text_string_to_metric_families

    api = client()
    decide(api, {"tool": "Bash", "arguments": {"command": "sudo x"}})
    decide(api, {"tool": "Bash", "arguments": {"command": "ls"}})
    families = {f.name: f for f in text_string_to_metric_families(api.get("/metrics").text)}
    samples = {
        (s.labels.get("verdict"), s.labels.get("layer")): s.value
        for s in families["policyctl_decisions"].samples
        if s.name == "policyctl_decisions_total"
    }
    assert samples[("deny", "tools.deny")] == 1 and samples[("allow", "tools.allow")] == 1
    reloads = [s for s in families["policyctl_policy_reloads"].samples if s.name.endswith("_total")]
    assert reloads[0].value == 1
    revision = families["policyctl_policy_revision_info"].samples[0].labels["revision"]
    assert revision == api.get("/v1/status").json()["revision"]
    latency = families["policyctl_decision_seconds"].samples
    assert any(s.labels.get("route") == "/v1/decide" for s in latency)
