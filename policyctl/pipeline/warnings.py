"""The warnings a resolve reads with its trail.

- Unknown entries (semantics 9): entries of an applied list that match no tool of the run,
  classified as shipped-but-unavailable core tools or plugin tools not enabled.
- Unknown context values (PC450-PC454): context values the policy does not know, since a
  typo in a context silently gives a wider answer.

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

import threading
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from ..catalog.inventory import MCP_PLUGIN_ID, Inventory
from ..catalog.model import Catalog
from ..compile.compiled import CompiledPolicy, group_map, provider_keys, sender_tables
from ..compile.entries import Entry, EntryList
from ..compile.layers import LayerPlan
from ..context import group_candidates
from ..diagnostics import Diagnostic, did_you_mean
from ..names import Glob, GlobIndex, is_glob

if TYPE_CHECKING:
    from .context import EffectiveContext

CONTEXT_CODES = frozenset({"PC450", "PC451", "PC452", "PC453", "PC454"})

_CORE_UNAVAILABLE = (
    "These entries are shipped core tools but unavailable in the current "
    "runtime/provider/model/config."
)
_PLUGIN_HINT = "These entries won't match any tool unless the plugin is enabled."
_BOTH = (
    "Some entries are shipped core tools but unavailable in the current "
    "runtime/provider/model/config; other entries won't match any tool unless the plugin "
    "is enabled."
)


def _classify(
    entry: Entry, inv: Inventory, cat: Catalog, glob_verdicts: Mapping[str, str] | None = None
) -> str:
    """ "plugin", "core", "unavailable" (a catalog tool this run lacks) or "unknown".

    `glob_verdicts` holds the verdicts of an indexed list's globs, found by matching every
    tool once against the list's index (`_glob_verdicts`)."""
    text = entry.text
    if text in ("*", "group:plugins", MCP_PLUGIN_ID) or text in inv.plugin_ids:
        return "plugin" if text != "*" else "core"
    if any(text.startswith(prefix) for prefix in inv.mcp_prefixes):
        return "plugin"
    if is_glob(text):
        if glob_verdicts is not None:
            return glob_verdicts.get(text, "unknown")
        glob = Glob.compile(text)
        for tool in inv.tools:
            if glob.matches(tool.name):
                return "plugin" if tool.plugin_id else "core"
        return "unavailable" if any(glob.matches(t) for t in cat.tool_ids) else "unknown"
    members = cat.groups.get(text) or cat.covers.get(text) or (text,)
    for member in members:
        if member in inv.names:
            for tool in inv.tools:
                if tool.name == member:
                    return "plugin" if tool.plugin_id else "core"
    if any(m in cat.tool_ids for m in members) or text in cat.groups:
        return "unavailable"
    return "unknown"


def _glob_verdicts(
    index: GlobIndex, lst: EntryList, inv: Inventory, cat: Catalog
) -> dict[str, str]:
    """What `_classify` says of each glob of an indexed list, found the other way round: each
    tool of the run, then each tool of the catalog, asks the index which globs match it, so
    200,000 deny globs cost one lookup per tool instead of 200,000 scans of the inventory."""
    found: dict[str, str] = {}
    for tool in inv.tools:  # in inventory order: the first matching tool decides, as above
        verdict = "plugin" if tool.plugin_id else "core"
        for order in index.matching(tool.name):
            found.setdefault(lst.entries[order].text, verdict)
    for tool_id in cat.tool_ids:
        for order in index.matching(tool_id):
            found.setdefault(lst.entries[order].text, "unavailable")
    return found


#: (id(list), inventory fingerprint, id(catalog)) -> (list, catalog, unavailable, unknown).
#: The list and catalog are held by the entry, so their ids cannot be reused while it lives,
#: and a hit is checked by identity. A matrix resolves the same compiled lists in thousands
#: of contexts: each list is analysed once per inventory, not once per context (finding F13).
_Analysis = tuple[EntryList, Catalog, tuple[str, ...], tuple[str, ...]]
_ANALYSES: dict[tuple[int, bytes, int], _Analysis] = {}
_ANALYSES_MAX = 4096
_ANALYSES_LOCK = threading.Lock()


def _analysis(
    lst: EntryList, inv: Inventory, cat: Catalog
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The list's config entries that are unavailable core tools, and those that are unknown."""
    key = (id(lst), inv.fingerprint, id(cat))
    found = _ANALYSES.get(key)
    if found is not None and found[0] is lst and found[1] is cat:
        return found[2], found[3]
    unavailable: list[str] = []
    unknown: list[str] = []
    verdicts: dict[str, str] = {}
    globs = None if lst.glob_index is None else _glob_verdicts(lst.glob_index, lst, inv, cat)
    for entry in lst.entries:
        if entry.origin != "config":
            continue
        verdict = verdicts.get(entry.text)
        if verdict is None:
            verdict = verdicts[entry.text] = _classify(entry, inv, cat, globs)
        if verdict == "unavailable":
            unavailable.append(entry.text)
        elif verdict == "unknown":
            unknown.append(entry.text)
    result = (tuple(unavailable), tuple(unknown))
    with _ANALYSES_LOCK:
        if len(_ANALYSES) >= _ANALYSES_MAX:
            _ANALYSES.clear()
        _ANALYSES[key] = (lst, cat, *result)
    return result


def unknown_entry_warnings(
    applied: list[LayerPlan], inv: Inventory, cat: Catalog
) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for plan in applied:
        lp = plan.policy
        assert lp is not None
        ask = lp.calls.plain_ask if lp.calls is not None else None
        for lst, kind, code in (
            (lp.allow, "allowlist", "PC401"),
            (lp.deny, "denylist", "PC402"),
            (ask, "asklist", "PC460"),  # a typo there is an approval that never happens
        ):
            # An allow list with "*" restricts nothing (alsoAllow alone becomes ["*", ...]);
            # its entries are analysed where they do widen, at the profile layer.
            if lst is None or lst.empty or (kind == "allowlist" and lst.wildcard is not None):
                continue
            unavailable, unknown = _analysis(lst, inv, cat)
            if not unavailable and not unknown:
                continue
            suffix = (
                _BOTH
                if unavailable and unknown
                else _CORE_UNAVAILABLE
                if unavailable
                else _PLUGIN_HINT
            )
            names = ", ".join([*unavailable, *unknown])
            flagged = {*unavailable, *unknown}
            first = next(e for e in lst.entries if e.text in flagged)
            out.append(
                Diagnostic.make(
                    code,
                    f"tools: {plan.label} {kind} contains unknown entries ({names}). {suffix}",
                    first.source,
                    first.key,
                )
            )
    return out


def _hint(word: str, known: list[str]) -> str:
    best = did_you_mean(word, known)
    return f'; did you mean "{best}"?' if best else ""


def unknown_context_values(policy: CompiledPolicy, eff: EffectiveContext) -> tuple[Diagnostic, ...]:
    """The warnings for one run, from its effective context (after session keys are read)."""
    return tuple(_check(policy, eff))


def _check(policy: CompiledPolicy, eff: EffectiveContext) -> Iterator[Diagnostic]:
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
