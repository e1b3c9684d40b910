"""Which Slack channel policies OpenClaw applies to a run, as far as an import must know it.

OpenClaw reads a Slack channel's tool policy from the channels map of the run's account: the
account's own `channels` when it has the key (it replaces the top-level map, no merging), else
the top-level `channels.slack.channels`. A run that names no account gets the default
account's map: `channels.slack.defaultAccount` when it names a configured account, else an
account called `default`, else (depending on tokens OpenClaw may find in its environment) the
top-level settings or the first account id in sorted order. In the map, the channel id is
looked up first, then the channel's name (`#name`, `name`, its slug), then `*`.

policyctl matches group ids exactly and reads `channels.<channel>.groups` for a run without an
account, so two things would make an imported session looser than OpenClaw's:

- a channel keyed by its name: it never meets the id a session key carries (PC461);
- a default account with channels of its own, while the top-level map differs: runs that name
  no account would get the top-level map. When the top-level map is empty, the default's map
  is copied there (a run of an unconfigured account then gets it too, where OpenClaw applies
  none: narrower); otherwise the import refuses (PC462).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

Path = tuple[str | int, ...]

#: Slack conversation ids: public (C), private (G) and direct (D) channels, upper-case (Slack
#: channel names are always lower-case, so an upper-case key is never a name)
_SLACK_ID = re.compile(r"[CGD][A-Z0-9]+")
_TOP = ("channels", "slack")


@dataclass(frozen=True, slots=True)
class SlackFinding:
    code: str
    message: str
    at: tuple[Path, ...]
    fix: str


def named_channels(slack: Mapping[str, Any]) -> Iterator[SlackFinding]:
    """PC461 for every channel-map key that is not a Slack id or `*`."""
    for owner, path in _maps(slack):
        for key in owner:
            if key == "*" or _SLACK_ID.fullmatch(str(key)):
                continue
            where = ".".join(str(p) for p in path)
            yield SlackFinding(
                "PC461",
                f'{where}."{key}" names a Slack channel by name: OpenClaw also matches names, '
                "policyctl matches the channel id of the session key exactly, so this policy "
                "would never apply and the channel would get a looser one",
                ((*path, str(key)),),
                f'replace "{key}" with the channel id (C..., G...): Slack shows it in the '
                "channel's details",
            )


def _maps(slack: Mapping[str, Any]) -> Iterator[tuple[Mapping[str, Any], Path]]:
    if isinstance(slack.get("channels"), Mapping):
        yield slack["channels"], (*_TOP, "channels")
    accounts = slack.get("accounts")
    if isinstance(accounts, Mapping):
        for name, account in accounts.items():
            if isinstance(account, Mapping) and isinstance(account.get("channels"), Mapping):
                yield account["channels"], (*_TOP, "accounts", str(name), "channels")


def default_candidates(slack: Mapping[str, Any]) -> list[str | None]:
    """The accounts whose settings a run that names no account may get (None: the top-level
    settings), in OpenClaw's order of choice; more than one when the config cannot say."""
    accounts = slack.get("accounts")
    ids = [str(k) for k in accounts] if isinstance(accounts, Mapping) else []
    if not ids:
        return [None]
    by_norm = {i.strip().lower(): i for i in ids}
    chosen = slack.get("defaultAccount")
    if isinstance(chosen, str) and chosen.strip().lower() in by_norm:
        return [by_norm[chosen.strip().lower()]]
    if "default" in by_norm:
        return [by_norm["default"]]
    return [None, sorted(ids, key=lambda i: (i.lower(), i))[0]]


def accountless_map(slack: Mapping[str, Any]) -> tuple[str | None, list[SlackFinding]]:
    """The account whose channels the top-level map must take so that runs naming no account
    get what OpenClaw gives them (None: keep the top-level map), and PC462 when no map can."""
    top = slack.get("channels")
    found = slack.get("accounts")
    accounts: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    own: dict[str, Any] = {}
    for cand in default_candidates(slack):
        if cand is None:
            continue  # the top-level settings: the top-level map, as policyctl reads it
        account = accounts.get(cand)
        mine = account.get("channels") if isinstance(account, Mapping) else None
        if mine is not None and not _same(mine, top):
            own[cand] = mine
    if not own:
        return None, []
    if not top and len({_text(m) for m in own.values()}) == 1 and "groups" not in slack:
        return next(iter(own)), []
    findings = [
        SlackFinding(
            "PC462",
            f"a Slack run that names no account gets the channels of account {name!r} in "
            "OpenClaw (it may be the default account), while policyctl applies "
            "channels.slack.channels to it: that run could get a looser channel policy",
            ((*_TOP, "accounts", name, "channels"),),
            "set channels.slack.defaultAccount to an account without channels of its own, or "
            "move these channels to channels.slack.channels; and name the account in every "
            "Slack session key (slack:<account>:channel:<id>)",
        )
        for name in own
    ]
    return None, findings


def _text(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _same(one: Any, other: Any) -> bool:
    return _text(one or {}) == _text(other or {})
