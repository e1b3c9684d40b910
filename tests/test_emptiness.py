"""PC308 names the layer and entry that really empty a run, and `expectEmpty` declares a ban
that validate then holds the policy to (PC309, PC310) (issue 20, part 7, item 1)."""

from __future__ import annotations

import pytest
from conftest import MakePolicy

from policyctl import RunContext, Sender, load_policy_text, resolve
from policyctl.analysis.checks import check_policy
from policyctl.pipeline.result import NoCallableToolsError

BAN = """\
tools:
  profile: coding
  toolsBySender:
    "id:troll": {deny: ["*"]SLOT}
"""

# (policy, code expected, its file:line:col, words its message must hold, words it must not)
CASES = [
    pytest.param(
        BAN.replace("SLOT", ""),
        "PC308",
        (4, 25),
        [
            'deny entry "*"',
            'tools.toolsBySender["id:troll"].deny',
            "layer 8, sender",
            "sender=id:troll",
        ],
        ["tools.profile"],
        id="a banned sender is blamed on its deny, not on the profile",
    ),
    pytest.param(
        'channels:\n  slack:\n    groups:\n      G1: {tools: {deny: ["*"]}}\n',
        "PC308",
        (4, 27),
        ['deny entry "*"', "channels.slack.groups.G1.tools.deny", "layer 7, group"],
        ["tools.profile"],
        id="a group that denies everything is blamed on its deny",
    ),
    pytest.param(
        "tools:\n  profile: minimal\n  deny: [presence, session_status, gateway]\n",
        "PC308",
        (3, 10),
        ['deny entry "presence"', "tools.deny", "layer 3, global"],
        ["tools.profile (minimal)"],
        id="a deny that removes the profile's last tool is what empties the run",
    ),
    pytest.param(
        "tools:\n  profile: minimal\n  allow: [nothing]\n",
        "PC308",
        (3, 10),
        ["emptied by tools.profile (minimal); tools.allow: "],
        ["deny entry"],
        id="allow lists that leave nothing are still named, every one of them",
    ),
    pytest.param(
        "tools:\n  profile: minimal\n  deny: [presence, session_status]\n",
        "PC308",
        (2, 12),
        ["subagent leaf deny", "built in", "allow lists of tools.profile (minimal)"],
        [],
        id="a built-in deny that takes the last tools points at the allow lists to widen",
    ),
    pytest.param(
        BAN.replace("SLOT", ", expectEmpty: true"),
        None,
        None,
        [],
        [],
        id="a ban declared with expectEmpty passes",
    ),
    pytest.param(
        BAN.replace('deny: ["*"]SLOT', "deny: [exec], expectEmpty: true"),
        "PC309",
        (4, 45),
        ['tools.toolsBySender["id:troll"] declares expectEmpty', "keep tools", "read"],
        [],
        id="a declared ban that keeps tools is an error at the declaration",
    ),
    pytest.param(
        "agents:\n  entries:\n    frozen: {tools: {expectEmpty: true}}\n",
        "PC309",
        (3, 35),
        ["agents.entries.frozen.tools declares expectEmpty", "agent=frozen"],
        [],
        id="expectEmpty alone removes nothing: the agent keeps its tools",
    ),
    pytest.param(
        "tools:\n  sandbox:\n    tools: {expectEmpty: true}\n",
        "PC310",
        (3, 13),
        ["sandbox"],
        [],
        id="expectEmpty on the sandbox policy is refused",
    ),
]


@pytest.mark.parametrize(("text", "code", "where", "has", "lacks"), CASES)
def test_empty_runs_are_blamed_on_what_empties_them(
    text: str,
    code: str | None,
    where: tuple[int, int] | None,
    has: list[str],
    lacks: list[str],
    make_policy: MakePolicy,
) -> None:
    mine = ("PC308", "PC309", "PC310")
    try:
        found = [d for d in check_policy(make_policy(text)) if d.code in mine]
    except Exception as exc:  # PC310 is a compile error: the policy does not load
        found = [d for d in getattr(exc, "diagnostics", []) if d.code in mine]
    if code is None:
        assert found == []
        return
    at = [d for d in found if d.source is not None and (d.source.line, d.source.column) == where]
    assert [d.code for d in at] == [code], [(d.source, d.message) for d in found]
    diag = at[0]
    for word in has:
        assert word in diag.message
    for word in lacks:
        assert word not in diag.message
    assert diag.fix


def test_a_banned_senders_run_does_not_stop_as_an_allowlist_mistake() -> None:
    # The runtime stops a run that explicit allow lists emptied (semantics 8); a deny that
    # bans a sender is not such a mistake, and must not be blamed on `profile: coding`.
    policy = load_policy_text(BAN.replace("SLOT", ""))
    res = resolve(policy, RunContext(sender=Sender(id="troll")))
    assert res.allowed == ()
    cause = res.emptied()
    assert cause is not None and cause.kind == "deny"
    assert cause.labels == ('tools.toolsBySender["id:troll"].deny',)
    assert res.emptied_by() == []
    # allow lists that empty a run still stop it, naming them
    with pytest.raises(NoCallableToolsError, match=r"tools\.allow"):
        resolve(load_policy_text("tools:\n  allow: [nothing]\n"), RunContext())


def test_a_memory_flush_is_still_not_a_finding(make_policy: MakePolicy) -> None:
    found = [d.code for d in check_policy(make_policy("tools:\n  profile: minimal\n"))]
    assert "PC308" not in found
