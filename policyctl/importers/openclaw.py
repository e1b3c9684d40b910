"""Import the policy-relevant parts of an OpenClaw config (JSON5) as a policyctl document.

Everything else (tokens, workspaces, models, channel credentials, elevated settings) is left
out and listed by key path only, never by value, so secrets never reach the output. Nothing
that restricts is dropped: `tools.exec.security: deny` becomes `deny: [exec]`, and an exec
restriction with no policyctl equivalent, or a repeated agent id, is a problem (`problems`)
that fails the import.
Where OpenClaw spells a policy differently, it is moved to policyctl's spelling and the move is
recorded (`moved`), so comments written on the original follow it (`cli/import_cmd.py`):

- Slack keeps its per-channel policies in `channels.slack.channels.<id>` (tools,
  toolsBySender); they are policyctl groups, since a Slack channel's session key is
  `agent:<id>:slack:channel:<channelId>`;
- `mcp.servers.<name>` become inventory stubs (`inventory.mcp.<name>.tools`) listing the tools
  the config's entries name, so `<name>__<tool>` entries resolve;
- the default agent (`agents.list[].default`, else the first) also governs runs that name no
  agent, so its tools are copied to `agents.defaults.tools` when that is free;
- a configured chat channel whose tool the entries name (`slack`) is declared as that
  channel plugin's tool, so validate and resolve know it.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..names import fold
from .openclaw_slack import accountless_map, named_channels

_POLICY_KEYS = ("allow", "alsoAllow", "deny")
_TOOLS_KEYS = ("profile", *_POLICY_KEYS, "byProvider", "toolsBySender", "sandbox", "subagents")


Path = tuple[str | int, ...]
_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def source_path(text: str) -> Path:
    """The key path a dotted report path names (`agents.list[1].tools` -> agents, list, 1,
    tools); a note after the path (`(no id)`) is not part of it."""
    steps: list[str | int] = []
    for key, index in _STEP.findall(text.split(" ", 1)[0]):
        steps.append(int(index) if index else key)
    return tuple(steps)


@dataclass(frozen=True)
class ImportProblem:
    """A setting the import refuses to translate looser than written: exit 1, no output.
    `at` are the source paths involved (a repeated id: both definitions)."""

    code: str
    message: str
    at: tuple[Path, ...]
    fix: str | None = None


@dataclass
class ImportResult:
    document: dict[str, Any]
    left_out: list[str] = field(default_factory=list)
    #: what the import decided that an operator must know (printed on stderr)
    notes: list[str] = field(default_factory=list)
    #: source path prefix -> output path prefix, for what moved (see the module docstring)
    moved: dict[Path, Path] = field(default_factory=dict)
    #: output path -> a comment the import writes there
    remarks: dict[Path, str] = field(default_factory=dict)
    #: the config as read (comments quoting a left-out value are not copied)
    config: Mapping[str, Any] = field(default_factory=dict)
    #: what cannot be imported without loosening the policy (the import fails)
    problems: list[ImportProblem] = field(default_factory=list)

    def output_path(self, source: Path) -> Path:
        """Where a value of the OpenClaw config went (if it was imported at all)."""
        for cut in range(len(source), 0, -1):
            target = self.moved.get(source[:cut])
            if target is not None:
                return (*target, *source[cut:])
        return source


class _Importer:
    def __init__(self) -> None:
        self.left_out: list[str] = []
        self.notes: list[str] = []
        self.moved: dict[Path, Path] = {}
        self.remarks: dict[Path, str] = {}
        self.problems: list[ImportProblem] = []

    def skip(self, path: str) -> None:
        self.left_out.append(path)

    def mapping(self, value: Any, path: str) -> Mapping[str, Any] | None:
        if isinstance(value, Mapping):
            return value
        self.skip(f"{path} (not an object)")
        return None

    def policy(self, raw: Any, path: str, keys: tuple[str, ...] = _POLICY_KEYS) -> dict[str, Any]:
        src = self.mapping(raw, path) or {}
        out: dict[str, Any] = {}
        for key, value in src.items():
            if key in keys and key in _POLICY_KEYS:
                out[key] = [str(v) for v in value] if isinstance(value, list) else value
            elif key in keys and key == "profile":
                out[key] = value
            else:
                self.skip(f"{path}.{key}")
        return out

    def senders(self, raw: Any, path: str) -> dict[str, Any]:
        src = self.mapping(raw, path) or {}
        return {str(k): self.policy(v, f"{path}.{k}") for k, v in src.items()}

    def tools(self, raw: Any, path: str) -> dict[str, Any]:
        src = self.mapping(raw, path) or {}
        out: dict[str, Any] = {}
        denied = False
        for key, value in src.items():
            sub = f"{path}.{key}"
            if key in ("profile", *_POLICY_KEYS):
                out.update(self.policy({key: value}, path, ("profile", *_POLICY_KEYS)))
            elif key == "byProvider":
                out[key] = {
                    str(k): self.policy(v, f"{sub}.{k}", ("profile", *_POLICY_KEYS))
                    for k, v in (self.mapping(value, sub) or {}).items()
                }
            elif key == "toolsBySender":
                out[key] = self.senders(value, sub)
            elif key == "exec":
                denied = self.exec_settings(value, sub)
            elif key in ("sandbox", "subagents"):
                block = self.mapping(value, sub) or {}
                for inner in block:
                    if inner != "tools":
                        self.skip(f"{sub}.{inner}")
                if "tools" in block:
                    out[key] = {"tools": self.policy(block["tools"], f"{sub}.tools")}
            else:
                self.skip(sub)
        if denied:
            # after the loop: a `deny` written after `exec` must not replace it
            deny = out.get("deny")
            if not isinstance(deny, list):
                deny = out["deny"] = [] if deny is None else deny
            if isinstance(deny, list) and "exec" not in deny:
                deny.append("exec")
        return out

    def exec_settings(self, raw: Any, path: str) -> bool:
        """OpenClaw's exec switches: `security: deny` disables exec, which is `deny: [exec]`
        here (True); a restriction policyctl cannot say (an allowlist of binaries, asking
        before each command) is refused (PC324) rather than dropped, since leaving it out
        would grant exec unrestricted. Settings that restrict nothing are left out."""
        block = self.mapping(raw, path) or {}
        security = block.get("security")
        for key, value in block.items():
            if key == "security" and value == "deny":
                self.notes.append(f"{path}.security is deny: imported as deny: [exec] (PC325)")
            elif key == "security" and value == "full":
                self.skip(f"{path}.security")
            elif key == "ask" and (value == "off" or security == "deny"):
                self.skip(f"{path}.ask")
            elif key in ("security", "ask", "safeBins"):
                self.problems.append(
                    ImportProblem(
                        "PC324",
                        f"{path}.{key}: {value!r} restricts exec in a way policyctl cannot "
                        "import; leaving it out would allow exec without it",
                        (source_path(f"{path}.{key}"),),
                        'deny exec here (security: "deny"), or write the restriction as '
                        "exec(...) call rules in the imported policy and drop it from the source",
                    )
                )
            else:
                self.skip(f"{path}.{key}")
        return security == "deny"

    def groups(self, raw: Any, path: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for gid, group in (self.mapping(raw, path) or {}).items():
            gpath = f"{path}.{gid}"
            entry: dict[str, Any] = {}
            for key, value in (self.mapping(group, gpath) or {}).items():
                if key == "tools":
                    entry["tools"] = self.policy(value, f"{gpath}.tools")
                elif key == "toolsBySender":
                    entry["toolsBySender"] = self.senders(value, f"{gpath}.toolsBySender")
                else:
                    self.skip(f"{gpath}.{key}")
            out[str(gid)] = entry
        return out

    def agent(self, raw: Mapping[str, Any], path: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in raw.items():
            if key == "id" or (key == "default" and isinstance(value, bool)):
                continue  # the default flag is imported by _default_agent
            if key == "name" and isinstance(value, str):
                out["name"] = value
            elif key == "tools":
                out["tools"] = self.tools(value, f"{path}.tools")
            elif key == "sandbox":
                block = self.mapping(value, f"{path}.sandbox") or {}
                for inner, v in block.items():
                    if inner == "mode":
                        out["sandbox"] = {"mode": v}
                    else:
                        self.skip(f"{path}.sandbox.{inner}")
            else:
                self.skip(f"{path}.{key}")
        return out


def import_openclaw(config: Mapping[str, Any], channel_tools: Iterable[str] = ()) -> ImportResult:
    """`channel_tools`: the catalog's chat-channel tool ids (`slack`, `telegram`, ...); one is
    declared as a plugin tool when its channel is set up (and not disabled) and an entry
    names it."""
    imp = _Importer()
    doc: dict[str, Any] = {}
    servers: list[str] = []
    for key, value in config.items():
        if key == "tools":
            doc["tools"] = imp.tools(value, "tools")
        elif key == "agents":
            doc["agents"] = _agents(imp, value)
        elif key == "channels":
            channels = _channels(imp, value)
            if channels:
                doc["channels"] = channels
        elif key == "mcp":
            servers = _mcp_servers(imp, value)
        elif key == "session":
            session = {
                k: v
                for k, v in (imp.mapping(value, "session") or {}).items()
                if k in ("mainKey", "scope")
            }
            for k in imp.mapping(value, "session") or {}:
                if k not in session:
                    imp.skip(f"session.{k}")
            if session:
                doc["session"] = session
        else:
            imp.skip(key)
    enabled = _enabled_channels(config.get("channels"))
    _declare_inventory(imp, doc, servers, set(channel_tools) & enabled)
    return ImportResult(doc, imp.left_out, imp.notes, imp.moved, imp.remarks, config, imp.problems)


def _enabled_channels(value: Any) -> set[str]:
    """The chat channels the config sets up and does not disable (`enabled: false`)."""
    if not isinstance(value, Mapping):
        return set()
    return {
        fold(str(name))
        for name, channel in value.items()
        if isinstance(channel, Mapping) and channel.get("enabled") is not False
    }


def _channels(imp: _Importer, value: Any) -> dict[str, Any]:
    channels: dict[str, Any] = {}
    for name, channel in (imp.mapping(value, "channels") or {}).items():
        cpath = f"channels.{name}"
        entry: dict[str, Any] = {}
        cmap = imp.mapping(channel, cpath) or {}
        groups = _group_maps(imp, cmap, cpath, ("channels", str(name)))
        if groups is not None:
            entry["groups"] = groups
        for ckey, cvalue in cmap.items():
            if ckey in ("groups", "channels"):
                continue
            if ckey == "accounts":
                accounts: dict[str, Any] = {}
                for acct, adata in (imp.mapping(cvalue, f"{cpath}.accounts") or {}).items():
                    apath = f"{cpath}.accounts.{acct}"
                    amap = imp.mapping(adata, apath) or {}
                    for akey in amap:
                        if akey not in ("groups", "channels"):
                            imp.skip(f"{apath}.{akey}")
                    agroups = _group_maps(
                        imp, amap, apath, ("channels", str(name), "accounts", str(acct))
                    )
                    if agroups is not None:
                        accounts[str(acct)] = {"groups": agroups}
                if accounts:
                    entry["accounts"] = accounts
            else:
                imp.skip(f"{cpath}.{ckey}")
        if fold(str(name)) == "slack":
            _slack_sessions(imp, cmap, entry)
        if entry:
            channels[str(name)] = entry
    return channels


def _slack_sessions(imp: _Importer, slack: Mapping[str, Any], entry: dict[str, Any]) -> None:
    """What OpenClaw's choice of a Slack run's channel map needs from the import
    (`openclaw_slack`): channels keyed by id, and runs naming no account kept as narrow."""
    findings = list(named_channels(slack))
    adopt, refused = accountless_map(slack)
    for found in (*findings, *refused):
        imp.problems.append(ImportProblem(found.code, found.message, found.at, found.fix))
    if adopt is not None and not findings:
        entry["groups"] = copy.deepcopy(entry["accounts"][adopt]["groups"])
        imp.notes.append(
            f"channels.slack.groups: copied from account {adopt!r}, whose channels OpenClaw "
            "applies to Slack runs that name no account (it may be the default account); a "
            "run of an account with no configuration gets them too (OpenClaw: none)"
        )
        imp.remarks[("channels", "slack", "groups")] = (
            f"copied from account {adopt}: runs that name no account get its channels"
        )


def _group_maps(
    imp: _Importer, owner: Mapping[str, Any], path: str, at: Path
) -> dict[str, Any] | None:
    """`groups` and, as Slack spells them, `channels` (per-channel policies): one groups map."""
    if "groups" not in owner and "channels" not in owner:
        return None
    groups = imp.groups(owner["groups"], f"{path}.groups") if "groups" in owner else {}
    if "channels" in owner:
        for gid, group in imp.groups(owner["channels"], f"{path}.channels").items():
            as_group: Path = (*at, "groups", gid)
            as_channel: Path = (*at, "channels", gid)
            imp.moved[as_channel] = as_group
            if gid in groups:
                imp.problems.append(
                    ImportProblem(
                        "PC323",
                        f"{path}.channels.{gid} and {path}.groups.{gid} both define group "
                        f"{gid}: which one governs it is ambiguous",
                        (as_channel, (*at, "groups", gid)),
                        "merge the two into one entry (keep every deny)",
                    )
                )
            groups[gid] = group
            # (a Slack channel keyed by name is an error: PC461, openclaw_slack)
            if gid.startswith("#") and fold(str(at[1])) != "slack":
                imp.notes.append(
                    f'{path}.channels."{gid}" names a channel by name: OpenClaw resolves it to '
                    "an id at start-up, policyctl matches the id of the session key exactly; "
                    f'replace "{gid}" with the channel id (C...)'
                )
                imp.remarks[as_group] = "replace with the channel id: names never match"
    return groups


def _mcp_servers(imp: _Importer, value: Any) -> list[str]:
    """OpenClaw's `mcp.servers.<name>`: the names only (commands, URLs and env stay out)."""
    out: list[str] = []
    for key, block in (imp.mapping(value, "mcp") or {}).items():
        if key != "servers":
            imp.skip(f"mcp.{key}")
            continue
        for server, conf in (imp.mapping(block, "mcp.servers") or {}).items():
            spath = f"mcp.servers.{server}"
            sconf = imp.mapping(conf, spath) or {}
            for skey in sconf:
                if skey != "enabled":
                    imp.skip(f"{spath}.{skey}")
            if sconf.get("enabled") is False:
                imp.notes.append(f"{spath} is disabled: no inventory stub declared")
                continue
            out.append(str(server))
            imp.moved[("mcp", "servers", str(server))] = ("inventory", "mcp", str(server))
    return out


def _entries(node: Any) -> Iterator[str]:
    """Every string of every allow/alsoAllow/deny list in an imported document."""
    if isinstance(node, Mapping):
        for key, value in node.items():
            if key in _POLICY_KEYS and isinstance(value, list):
                yield from (fold(v) for v in value if isinstance(v, str))
            else:
                yield from _entries(value)


def _declare_inventory(
    imp: _Importer, doc: dict[str, Any], servers: list[str], channel_tools: set[str]
) -> None:
    """Inventory stubs for the MCP servers, and plugin tools for the enabled channels' tools
    (`channel_tools`) that entries name."""
    from ..names import mcp_tool_name

    named = list(dict.fromkeys(_entries(doc)))
    mcp: dict[str, Any] = {}
    for server in servers:
        prefix = mcp_tool_name(server, "x").rsplit("__", 1)[0].lower() + "__"
        tools = [e[len(prefix) :] for e in named if e.startswith(prefix) and "*" not in e]
        mcp[server] = {"tools": tools}
        imp.remarks[("inventory", "mcp", server)] = (
            "the tools the entries name; add the others this server offers"
            if tools
            else "list the tools this server offers: its entries cannot resolve without them"
        )
        if not tools:
            imp.notes.append(
                f"inventory.mcp.{server}: no entry names one of its tools; list them so "
                f"{prefix}* entries resolve"
            )
    plugins = [{"name": tool, "pluginId": tool} for tool in named if tool in channel_tools]
    for plugin in plugins:
        imp.notes.append(
            f'declared inventory.plugins "{plugin["name"]}": the tool of the enabled '
            f"{plugin['name']} channel, which the entries name"
        )
    if mcp or plugins:
        inventory: dict[str, Any] = {}
        if plugins:
            inventory["plugins"] = plugins
        if mcp:
            inventory["mcp"] = mcp
        doc["inventory"] = inventory


def _agents(imp: _Importer, raw: Any) -> dict[str, Any]:
    src = imp.mapping(raw, "agents") or {}
    out: dict[str, Any] = {}
    for key, value in src.items():
        if key == "defaults":
            defaults: dict[str, Any] = {}
            for dkey, dvalue in (imp.mapping(value, "agents.defaults") or {}).items():
                if dkey == "sandbox" and isinstance(dvalue, Mapping):
                    for inner, v in dvalue.items():
                        if inner == "mode":
                            defaults["sandbox"] = {"mode": v}
                        else:
                            imp.skip(f"agents.defaults.sandbox.{inner}")
                elif dkey == "subagents" and isinstance(dvalue, Mapping):
                    for inner, v in dvalue.items():
                        if inner == "maxSpawnDepth":
                            defaults["subagents"] = {"maxSpawnDepth": v}
                        else:
                            imp.skip(f"agents.defaults.subagents.{inner}")
                elif dkey == "tools":
                    defaults["tools"] = imp.tools(dvalue, "agents.defaults.tools")
                else:
                    imp.skip(f"agents.defaults.{dkey}")
            if defaults:
                out["defaults"] = defaults
        elif key == "list" and isinstance(value, list):
            entries: dict[str, Any] = {}
            first: dict[str, int] = {}  # id -> index of its definition
            marked: list[str] = []
            for i, item in enumerate(value):
                if not isinstance(item, Mapping) or not isinstance(item.get("id"), str):
                    imp.skip(f"agents.list[{i}] (no id)")
                    continue
                if item["id"] in first:
                    imp.problems.append(
                        ImportProblem(
                            "PC323",
                            f'agents.list[{i}] repeats the id "{item["id"]}" of '
                            f"agents.list[{first[item['id']]}]: which definition governs the "
                            "agent is ambiguous",
                            (("agents", "list", i), ("agents", "list", first[item["id"]])),
                            "merge the two definitions into one entry (keep every deny)",
                        )
                    )
                    continue
                first[item["id"]] = i
                entries[item["id"]] = imp.agent(item, f"agents.list[{i}]")
                imp.moved[("agents", "list", i)] = ("agents", "entries", item["id"])
                # the flag itself becomes a remark on the entry (see _default_agent)
                imp.moved[("agents", "list", i, "default")] = ("agents", "entries", item["id"])
                if item.get("default") is True:
                    marked.append(item["id"])
            out["entries"] = entries
            if entries:
                _default_agent(imp, out, marked or [next(iter(entries))], bool(marked))
        else:
            imp.skip(f"agents.{key}")
    return out


def _default_agent(
    imp: _Importer, agents: dict[str, Any], marked: list[str], explicit: bool
) -> None:
    """OpenClaw's default agent (the one marked `default`, else the first) is the agent of
    runs that name none; policyctl gives such runs `agents.defaults.tools`."""
    aid = marked[0]
    how = "marked default" if explicit else "the first agent, none being marked default"
    if len(marked) > 1:
        imp.notes.append(
            f"agents {', '.join(marked)} are all marked default; OpenClaw uses the first, {aid}"
        )
    imp.remarks[("agents", "entries", aid)] = f"the default agent ({how})"
    own_mode = agents["entries"][aid].get("sandbox", {}).get("mode")
    default_mode = agents.get("defaults", {}).get("sandbox", {}).get("mode", "off")
    if own_mode is not None and own_mode != default_mode:
        imp.notes.append(
            f'the default agent "{aid}" has sandbox mode {own_mode}: runs that name no agent '
            f"get agents.defaults.sandbox.mode ({default_mode}) in policyctl; name the agent "
            "(--agent, or a session key agent:<id>:...) to resolve them as OpenClaw does"
        )
    tools = agents["entries"][aid].get("tools")
    if not tools:
        return
    defaults = agents.setdefault("defaults", {})
    if "tools" in defaults:
        imp.notes.append(
            f'the default agent "{aid}" has tools, and so has agents.defaults.tools: runs that '
            "name no agent get agents.defaults.tools in policyctl, not the default agent's; "
            "merge them by hand if they should be the same"
        )
        return
    defaults["tools"] = copy.deepcopy(tools)
    imp.remarks[("agents", "defaults", "tools")] = (
        f'copied from the default agent "{aid}": runs that name no agent are its runs'
    )
    imp.notes.append(
        f'agents.defaults.tools: copied from the default agent "{aid}" ({how}), so runs that '
        "name no agent get its tools as in OpenClaw (policyctl also applies it to agent ids "
        "with no entry)"
    )
