"""Context values the policy does not know: a typo in a context silently gives a wider answer.

`--agent suport` resolves to the defaults instead of the support bot's tools, `--provider
olama` skips the ollama provider profile, a group id copied from the wrong log never matches.
The resolution still follows the semantics; these warnings say that it did so for a value the
policy never mentions, with the closest value it does mention:

- PC450 an agent with no entry, when the policy has agent entries;
- PC451 a provider that matches no `byProvider` key while one is close to it, or a model
  that is not a `provider/model` key but is close to one (`gpt-5.4-mini:latest`, a dated
  snapshot) while the key itself decides (keys are exact);
- PC452 a channel the policy does not configure, while one is close to it or a group is named;
- PC453 a group id that matches no key of the channel's groups map;
- PC454 an account the channel does not configure, when the channel has accounts (a
  scheduled run there already fails closed with PC409).

`resolve` and `explain` print them (text and JSON) and the runtime logs them
(`log_context_warnings`), so a typo shows wherever the run is looked at.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from .context import RunContext, group_candidates
from .diagnostics import Diagnostic, did_you_mean

if TYPE_CHECKING:
    from .compile import CompiledPolicy
    from .pipeline.context import EffectiveContext

CONTEXT_CODES = frozenset({"PC450", "PC451", "PC452", "PC453", "PC454"})
#: the logger `log_context_warnings` writes to (logging is imported there: a `resolve`
#: command never logs, and importing logging costs every start)
LOGGER = "policyctl.runtime"
_LOGGED_MAX = 256  # identical warnings are logged once (the newest 256 are remembered)
_logged: dict[tuple[int, str], None] = {}


def _hint(word: str, known: list[str]) -> str:
    best = did_you_mean(word, known)
    return f'; did you mean "{best}"?' if best else ""


def unknown_context_values(policy: CompiledPolicy, eff: EffectiveContext) -> tuple[Diagnostic, ...]:
    """The warnings for one run, from its effective context (after session keys are read)."""
    return tuple(_check(policy, eff))


def _check(policy: CompiledPolicy, eff: EffectiveContext) -> Iterator[Diagnostic]:
    # from compiled, not matrix: a resolve must not import the matrix to check its context
    from .compiled import group_map, provider_keys, sender_tables

    if eff.agent is not None and policy.agents and eff.agent not in policy.agents:
        known = sorted(policy.agents)
        yield Diagnostic.make(
            "PC450",
            f'agent "{eff.agent}" has no entry in agents.entries, so the run gets only the '
            f"defaults (agents: {', '.join(known)}){_hint(eff.agent, known)}",
        )
    if eff.provider is not None:
        keys = sorted(provider_keys(policy))
        providers = sorted({k.partition("/")[0] for k in keys})
        # (a known provider needs no hint: difflib is not even imported)
        hint = _hint(eff.provider, providers) if eff.provider not in providers else ""
        if hint:
            yield Diagnostic.make(
                "PC451",
                f'provider "{eff.provider}" matches no tools.byProvider key '
                f"(keys: {', '.join(keys)}){hint}",
            )
        elif eff.model is not None:
            yield from _near_model(eff.provider, eff.model, keys)
    channel = eff.channel
    if channel is None:
        return
    configured = policy.channels.get(channel)
    if configured is None:
        scoped = {
            k.split(":", 2)[1]
            for table in sender_tables(policy)
            for k in table.policies
            if k.startswith("channel:")
        }
        known = sorted(set(policy.channels) | scoped)
        hint = _hint(channel, known)
        if known and channel not in scoped and (hint or eff.group is not None):
            yield Diagnostic.make(
                "PC452",
                f'channel "{channel}" has no configuration in channels, so no group policy '
                f"applies (channels: {', '.join(sorted(policy.channels)) or 'none'}){hint}",
            )
        return
    account = eff.account
    if account is not None and configured.accounts and account not in configured.accounts:
        if eff.trigger != "cron":  # a scheduled run reports PC409 and fails closed
            known = sorted(configured.accounts)
            yield Diagnostic.make(
                "PC454",
                f'account "{account}" of channel {channel} has no configuration, so the '
                f"channel's groups apply (accounts: {', '.join(known)}){_hint(account, known)}",
            )
        account = None
    groups = group_map(policy, channel, account)
    if eff.group is None or not groups:
        return
    if any(c in groups for c in group_candidates(eff.group)):
        return
    known = sorted(g for g in groups if g != "*")
    applies = 'the "*" group applies' if "*" in groups else "no group policy applies"
    yield Diagnostic.make(
        "PC453",
        f'group "{eff.group}" matches no group id of channel {channel}'
        + (f" account {account}" if account else "")
        + f", so {applies}{_hint(eff.group, known)}",
    )


_MODEL_SUFFIX_STARTS = frozenset(":-@._+ ")


def _near_model(provider: str, model: str, keys: list[str]) -> Iterator[Diagnostic]:
    """PC451 for a model that is not a `provider/model` key but is close to one: a tag
    (`gpt-5.4-mini:latest`) or a dated snapshot (`gpt-5.4-mini-2026-03-01`) of a model the
    policy has rules for. Keys are exact (semantics), so those rules do not apply."""
    run_key = f"{provider}/{model}"
    models = [k.partition("/")[2] for k in keys if k.partition("/")[0] == provider and "/" in k]
    if run_key in keys or not models:
        return
    prefixes = [m for m in models if model.startswith(m) and model[len(m)] in _MODEL_SUFFIX_STARTS]
    near = max(prefixes, key=len) if prefixes else did_you_mean(model, models)
    if near is None:
        return
    applies = f'the "{provider}" key applies' if provider in keys else "no byProvider key applies"
    yield Diagnostic.make(
        "PC451",
        f'model "{model}" matches no tools.byProvider key (keys are exact), so the rules of '
        f'"{provider}/{near}" do not apply and {applies}; did you mean "{provider}/{near}"?',
    )


def context_warnings(policy: CompiledPolicy, context: RunContext) -> tuple[Diagnostic, ...]:
    """The warnings for a caller-supplied context."""
    from .resolve import resolve

    return unknown_context_values(policy, resolve(policy, context, require_tools=False).context)


def log_context_warnings(policy: CompiledPolicy, context: RunContext) -> None:
    """Log each warning for this run on the runtime's logger, once per policy and message."""
    import logging

    log = logging.getLogger(LOGGER)
    for warning in context_warnings(policy, context):
        key = (id(policy), warning.message)
        if key in _logged:
            continue
        if len(_logged) >= _LOGGED_MAX:
            del _logged[next(iter(_logged))]
        _logged[key] = None
        log.warning("%s %s", warning.code, warning.message)
