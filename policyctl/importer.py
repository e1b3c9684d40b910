"""Import the policy-relevant parts of an OpenClaw config (JSON5) as a policyctl document.

Everything else (tokens, workspaces, models, channel credentials, exec and elevated settings)
is left out and listed by key path only, never by value, so secrets never reach the output.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

_POLICY_KEYS = ("allow", "alsoAllow", "deny")
_TOOLS_KEYS = ("profile", *_POLICY_KEYS, "byProvider", "toolsBySender", "sandbox", "subagents")


@dataclass
class ImportResult:
    document: dict[str, Any]
    left_out: list[str] = field(default_factory=list)


class _Importer:
    def __init__(self) -> None:
        self.left_out: list[str] = []

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
            elif key in ("sandbox", "subagents"):
                block = self.mapping(value, sub) or {}
                for inner in block:
                    if inner != "tools":
                        self.skip(f"{sub}.{inner}")
                if "tools" in block:
                    out[key] = {"tools": self.policy(block["tools"], f"{sub}.tools")}
            else:
                self.skip(sub)
        return out

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
            if key == "id":
                continue
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


def import_openclaw(config: Mapping[str, Any]) -> ImportResult:
    imp = _Importer()
    doc: dict[str, Any] = {}
    for key, value in config.items():
        if key == "tools":
            doc["tools"] = imp.tools(value, "tools")
        elif key == "agents":
            doc["agents"] = _agents(imp, value)
        elif key == "channels":
            channels: dict[str, Any] = {}
            for name, channel in (imp.mapping(value, "channels") or {}).items():
                cpath = f"channels.{name}"
                entry: dict[str, Any] = {}
                for ckey, cvalue in (imp.mapping(channel, cpath) or {}).items():
                    if ckey == "groups":
                        entry["groups"] = imp.groups(cvalue, f"{cpath}.groups")
                    elif ckey == "accounts":
                        accounts: dict[str, Any] = {}
                        for acct, adata in (imp.mapping(cvalue, f"{cpath}.accounts") or {}).items():
                            apath = f"{cpath}.accounts.{acct}"
                            amap = imp.mapping(adata, apath) or {}
                            for akey in amap:
                                if akey != "groups":
                                    imp.skip(f"{apath}.{akey}")
                            if "groups" in amap:
                                accounts[str(acct)] = {
                                    "groups": imp.groups(amap["groups"], f"{apath}.groups")
                                }
                        if accounts:
                            entry["accounts"] = accounts
                    else:
                        imp.skip(f"{cpath}.{ckey}")
                if entry:
                    channels[str(name)] = entry
            if channels:
                doc["channels"] = channels
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
    return ImportResult(doc, imp.left_out)


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
            for i, item in enumerate(value):
                if not isinstance(item, Mapping) or not isinstance(item.get("id"), str):
                    imp.skip(f"agents.list[{i}] (no id)")
                    continue
                entries[item["id"]] = imp.agent(item, f"agents.list[{i}]")
            out["entries"] = entries
        else:
            imp.skip(f"agents.{key}")
    return out
