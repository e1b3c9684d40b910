"""Red-team finding 5: `http://0/` and `http://0.0.0.0/` passed a deny on `ip:127.0.0.0/8`.

On Linux a connect() to 0.0.0.0/8 or `::` reaches the loopback interface, so a deny or ask
rule for loopback (127.0.0.1 or ::1, either family) meets them; an allow never gains by it.
"""

from __future__ import annotations

from typing import Any

import pytest

from policyctl import RunContext, load_policy, resolve

UNSPECIFIED = [
    "http://0/",
    "http://0.0.0.0/",
    "http://0.0.0.0:8080/admin",
    "http://0x0/",
    "http://0.1.2.3/",
    "http://[::]/",
    "http://[::ffff:0.0.0.0]/",
]


def _resolved(tmp_path_factory: pytest.TempPathFactory, tools: str) -> Any:
    path = tmp_path_factory.mktemp("ip") / "p.yaml"
    path.write_text(f"tools:\n{tools}")
    return resolve(load_policy(str(path)), RunContext(provider="openai", workspace="/tmp"))


def _label(resolved: Any, url: str) -> str:
    return str(resolved.decide_call("web_fetch", {"url": url}).verdict.effect.label)


@pytest.mark.parametrize("rule", ["ip:127.0.0.0/8", "ip:127.0.0.1", "ip:::1"])
@pytest.mark.parametrize("url", UNSPECIFIED)
def test_deny_on_loopback_meets_unspecified(
    tmp_path_factory: pytest.TempPathFactory, rule: str, url: str
) -> None:
    resolved = _resolved(tmp_path_factory, f'  deny: ["web_fetch({rule})"]\n  allow: [web_fetch]\n')
    assert _label(resolved, url) == "deny"


@pytest.mark.parametrize("url", UNSPECIFIED)
def test_ask_on_loopback_meets_unspecified(
    tmp_path_factory: pytest.TempPathFactory, url: str
) -> None:
    resolved = _resolved(
        tmp_path_factory, '  ask: ["web_fetch(ip:127.0.0.0/8)"]\n  allow: [web_fetch]\n'
    )
    assert _label(resolved, url) == "ask"


@pytest.mark.parametrize("url", UNSPECIFIED)
def test_allow_on_loopback_does_not_gain(
    tmp_path_factory: pytest.TempPathFactory, url: str
) -> None:
    resolved = _resolved(
        tmp_path_factory, '  allow: ["web_fetch(ip:127.0.0.0/8)", "web_fetch(ip:::1)"]\n'
    )
    assert _label(resolved, url) != "allow"


def test_other_networks_unchanged(tmp_path_factory: pytest.TempPathFactory) -> None:
    resolved = _resolved(
        tmp_path_factory, '  deny: ["web_fetch(ip:10.0.0.0/8)"]\n  allow: [web_fetch]\n'
    )
    assert _label(resolved, "http://0.0.0.0/") == "allow"
    assert _label(resolved, "http://10.1.2.3/") == "deny"
