"""How a nanobot request reads as a policyctl run (the parts that need no nanobot)."""

from __future__ import annotations

import pytest

from policyctl.context import parse_session_key
from policyctl.integrations.nanobot.context import group_of, session_key


@pytest.mark.parametrize(
    ("channel", "chat", "sender", "meta", "group"),
    [
        ("cli", "direct", "user", {}, None),  # the operator's own terminal
        ("telegram", "-100123", "42", {"is_group": True}, "-100123"),
        ("telegram", "42", "42", {"is_group": False}, None),
        ("feishu", "oc_1", "ou_2", {"chat_type": "group"}, "oc_1"),
        # unmarked and not the sender's own chat: read as a group (the narrower reading)
        ("slack", "D0123", "U999", {}, "D0123"),
        ("slack", "U999", "U999", {}, None),
        # a chat marked as direct stays direct even when its id differs from the sender's
        ("slack", "D0123", "U999", {"is_group": False}, None),
    ],
)
def test_group_of(
    channel: str, chat: str, sender: str, meta: dict[str, object], group: str | None
) -> None:
    assert group_of(channel, chat, sender, meta) == group


def test_session_keys_agree_with_the_other_fields() -> None:
    """policyctl reads the key as the authority on channel and group: the key written for a
    request must say what the other fields say."""
    key = session_key("main", "telegram", "-100123", "42", None)
    info = parse_session_key(key)
    assert (info.agent, info.channel, info.group) == ("main", "telegram", "-100123")
    dm = parse_session_key(session_key("main", "slack", None, "U9", None))
    assert (dm.channel, dm.group) == ("slack", None)
    assert session_key(None, "cli", None, "user", None) == "agent:main:main"
    assert session_key("ops", "telegram", "-1", "42", "nightly") == "agent:ops:cron:nightly"
    # a group id with the key's separator in it cannot make the run look like a subagent
    odd = parse_session_key(session_key("main", "slack", "x:subagent:y", "U1", None))
    assert not odd.is_subagent and odd.group == "x:subagent:y"
