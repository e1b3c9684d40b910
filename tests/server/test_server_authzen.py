"""AuthZEN Authorization API 1.0 on the decision server: every request the tests send and
every answer is validated against the working group's published JSON Schemas (and, for the
evaluations API and the metadata, schemas written from the 1.0 text: authzen/PROVENANCE.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012
from starlette.testclient import TestClient
from test_server_api import TOKEN, client

HERE = Path(__file__).resolve().parent / "authzen"
SCHEMAS = {
    p.name.removesuffix(".schema.json"): json.loads(p.read_text()) for p in HERE.glob("*.json")
}
REGISTRY = Registry().with_resources(
    (s["$id"], Resource(contents=s, specification=DRAFT202012)) for s in SCHEMAS.values()
)


def valid(name: str, value: Any) -> Any:
    validator = Draft202012Validator(SCHEMAS[name], registry=REGISTRY)
    errors = [f"{list(e.path)}: {e.message}" for e in validator.iter_errors(value)]
    assert not errors, f"{name}: {errors}"
    return value


def run(agent: str | None = None, **props: Any) -> dict[str, Any]:
    properties = {"agent": agent, **props} if agent else props
    return {"type": "agent_run", "id": "", "properties": properties}


def tool(name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "tool", "id": name, "properties": {"arguments": arguments}}


CALL = {"name": "call_tool"}


@pytest.fixture(scope="module")
def api() -> TestClient:
    return client()


def evaluation(api: TestClient, body: dict[str, Any]) -> dict[str, Any]:
    valid("evaluation-request", body)
    r = api.post("/access/v1/evaluation", json=body)
    assert r.status_code == 200, r.text
    return valid("evaluation-response", r.json())


def test_allow_deny_and_ask(api: TestClient) -> None:
    ls = evaluation(api, {"subject": run(), "action": CALL, "resource": tool("Bash", command="ls")})
    assert ls["decision"] is True and ls["context"]["verdict"] == "allow"
    sudo = {"subject": run(), "action": CALL, "resource": tool("Bash", command="sudo ls")}
    denied = evaluation(api, sudo)
    assert denied["decision"] is False and denied["context"]["entry"] == "Bash(sudo *)"
    push = {"subject": run(), "action": CALL, "resource": tool("Bash", command="git push")}
    asked = evaluation(api, push)
    # AuthZEN has no "ask": false, so a PEP that ignores the context refuses
    assert asked["decision"] is False and asked["context"]["verdict"] == "ask"
    assert asked["context"]["approval"]["required"] is True
    assert asked["context"]["revision"].startswith("sha256:")


def test_the_subject_carries_the_run_context(api: TestClient) -> None:
    body = {"subject": run(provider="google"), "action": CALL, "resource": tool("web_fetch")}
    assert evaluation(api, body)["decision"] is False
    body = {"subject": run("explore"), "action": {"name": "list_tools"}, "resource": tool("Bash")}
    listed = evaluation(api, body)
    assert listed["decision"] is False and listed["context"]["layer"]
    body["resource"] = tool("Read")
    assert evaluation(api, body)["decision"] is True


def test_what_policyctl_does_not_decide_is_refused(api: TestClient) -> None:
    for body in [
        {"subject": {"type": "user", "id": "alice"}, "action": CALL, "resource": tool("Read")},
        {"subject": run(), "action": {"name": "can_read"}, "resource": tool("Read")},
        {"subject": run(), "action": CALL, "resource": {"type": "document", "id": "Read"}},
        {"subject": run(), "action": CALL, "resource": tool("no_such_tool")},
    ]:
        answer = evaluation(api, body)
        assert answer["decision"] is False, body


@pytest.mark.parametrize(
    "body",
    [
        {"action": CALL, "resource": {"type": "tool", "id": "Read"}},  # no subject
        {"subject": run(), "resource": {"type": "tool", "id": "Read"}},  # no action
        {"subject": run(), "action": CALL, "resource": {"type": "tool"}},  # no resource id
        {"subject": run(owner="yes"), "action": CALL, "resource": tool("Read")},
        [],
    ],
)
def test_a_request_missing_what_the_specification_requires_is_400(
    api: TestClient, body: Any
) -> None:
    r = api.post("/access/v1/evaluation", json=body)
    assert r.status_code == 400 and r.text.startswith("PC522 ")  # a message string


def test_unknown_fields_are_ignored_as_the_specification_asks(api: TestClient) -> None:
    body = {
        "subject": {**run(), "department": "x"},
        "action": {**CALL, "properties": {"method": "POST"}},
        "resource": tool("Bash", command="ls"),
        "context": {"time": "1985-10-26T01:22-07:00"},
        "extension": True,
    }
    assert evaluation(api, body)["decision"] is True


def evaluations(api: TestClient, body: dict[str, Any]) -> list[dict[str, Any]]:
    valid("evaluations-request", body)
    r = api.post("/access/v1/evaluations", json=body)
    assert r.status_code == 200, r.text
    return list(valid("evaluations-response", r.json())["evaluations"])


THREE = [
    {"resource": tool("Bash", command="ls")},
    {"resource": tool("Bash", command="sudo ls")},
    {"resource": tool("Read", file_path="/w/a.txt")},
]


def test_evaluations_with_defaults_and_the_three_semantics(api: TestClient) -> None:
    # no home given: a `~/.ssh` rule could not tell a path apart, so a Read would be refused
    base = {"subject": run(workspace="/w", home="/h"), "action": CALL, "evaluations": THREE}
    every = evaluations(api, base)
    assert [e["decision"] for e in every] == [True, False, True]
    assert evaluations(api, {**base, "options": {"evaluations_semantic": "execute_all"}}) != []
    first_deny = {**base, "options": {"evaluations_semantic": "deny_on_first_deny"}}
    assert [e["decision"] for e in evaluations(api, first_deny)] == [True, False]
    first_permit = {**base, "options": {"evaluations_semantic": "permit_on_first_permit"}}
    assert [e["decision"] for e in evaluations(api, first_permit)] == [True]
    # an item's own keys override the defaults
    own = {**base, "evaluations": [{"subject": run("explore"), "resource": tool("Bash")}]}
    assert [e["decision"] for e in evaluations(api, own)] == [False]


def test_evaluations_without_items_is_a_single_evaluation(api: TestClient) -> None:
    body = {"subject": run(), "action": CALL, "resource": tool("Bash", command="ls")}
    r = api.post("/access/v1/evaluations", json=body)
    assert valid("evaluation-response", r.json())["decision"] is True


def test_a_bad_semantic_or_too_many_items_is_400(api: TestClient) -> None:
    body = {"subject": run(), "action": CALL, "evaluations": THREE}
    bad = api.post(
        "/access/v1/evaluations", json={**body, "options": {"evaluations_semantic": "x"}}
    )
    assert bad.status_code == 400
    many = api.post("/access/v1/evaluations", json={**body, "evaluations": THREE * 40})
    assert many.status_code == 400


def test_metadata_and_request_ids(api: TestClient) -> None:
    meta = api.get("/.well-known/authzen-configuration")
    assert meta.headers["content-type"] == "application/json"
    config = valid("configuration", meta.json())
    assert config["access_evaluation_endpoint"].endswith("/access/v1/evaluation")
    assert config["access_evaluations_endpoint"] == config["policy_decision_point"] + (
        "/access/v1/evaluations"
    )
    body = {"subject": run(), "action": CALL, "resource": tool("Read")}
    r = api.post("/access/v1/evaluation", json=body, headers={"X-Request-ID": "req-1"})
    assert r.headers["x-request-id"] == "req-1"


def test_tokens_and_the_authzen_error_format() -> None:
    api = client(tokens=(TOKEN,))
    body = {"subject": run(), "action": CALL, "resource": tool("Read")}
    r = api.post("/access/v1/evaluation", json=body)
    assert r.status_code == 401 and r.text.startswith("PC523 ")
    assert api.get("/.well-known/authzen-configuration").status_code == 200
    ok = api.post("/access/v1/evaluation", json=body, headers={"authorization": f"Bearer {TOKEN}"})
    assert ok.status_code == 200
