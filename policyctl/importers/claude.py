"""Claude Code `settings.json` -> translated call permissions (see `calls` for the document).

Claude Code decides a call by its `permissions` rules in the order deny, ask, allow (the
first list with a match decides), which is policyctl's order inside one layer, so each rule
becomes an entry of the same list. What differs, and how the import handles it:

- Tools are catalog data: `Bash` is the catalog's shell tool, `Read` its read tool (and, with
  a specifier, every read-only path tool: Claude Code applies Read rules to its listing and
  search tools), `Edit` every path tool that changes files, `Write` the write tool,
  `WebFetch` its URL tool; `mcp__server__tool` is policyctl's `server__tool`.
- Shell patterns: `git diff:*` is `git diff *`. Claude Code's `*` may cross spaces; a `*` glued
  to the end of the last word (`ls*`) is exactly `ls* *`, any other glued `*` is approximated
  (wider for deny and ask, narrower for allow) and said so.
- Paths are gitignore patterns in both, anchored differently: `//x` is policyctl's `/x`,
  `/x` (relative to the project) becomes `./x` (the run's workspace must be the project),
  a pattern without a slash is `./**/x` in an allow (Claude Code: under the working
  directory), kept as `x` (anywhere: wider) in a deny or ask; an allow of `dir/` also admits
  `dir/**` (Claude Code's allow of a directory covers what lies in it).
- `defaultMode` and `additionalDirectories` say what a call no rule settles gets: asked, or
  allowed for reads (and, in acceptEdits, edits) inside the working directories, refused in
  dontAsk, allowed in bypassPermissions.
"""

from __future__ import annotations

import re
from typing import Any

from ..callrules import ArgumentKind, ArgumentSpec, Effect, SpecifierError, compile_rule
from ..diagnostics import Source, did_you_mean
from ..located import LocMap, LocSeq
from ..names import fold, mcp_tool_name
from .calls import CallImport, Origin, finding

SOURCE = "Claude Code"
_RULE = re.compile(r"([A-Za-z_][A-Za-z0-9_*-]*)(?:\((.*)\))?\Z", re.S)
_LISTS = ("deny", "ask", "allow")
_EFFECT = {"deny": Effect.DENY, "ask": Effect.ASK, "allow": Effect.ALLOW}
#: Claude Code tools with no policyctl catalog equivalent (reported, never guessed)
_NO_EQUIVALENT = frozenset(
    {
        *("Task", "Agent", "TodoWrite", "ExitPlanMode", "BashOutput", "KillShell"),
        *("KillBash", "SlashCommand", "Skill", "NotebookEdit", "NotebookRead"),
        "AskUserQuestion",
    }
)
_BY_NAME = {"WebSearch": ("web_search",), "Glob": ("find_files",), "Grep": ("grep",)}
_LISTING = ("ls", "list_dir")
_MODES = ("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions")
_GLOB_CHARS = set("*?[]!\\")
#: the blanks that separate words in a shell command (str.split would also split on U+2028)
_BLANK = " \t"
_WORD_GAP = re.compile("[ \t]+")


class _Claude:
    def __init__(self, name: str, catalog: Any) -> None:
        self.name = name
        self.catalog = catalog
        self.imp = CallImport(SOURCE)
        self.noted_search = False
        tools = catalog.tools
        self.shell = [t.id for t in tools if t.argument_kind == "shell"]
        readers = {t.id for t in tools if t.argument_kind == "path" and t.read_only}
        # a reader whose calls the catalog relates to another reader (skills_read reads
        # through read) takes that reader's rules already: Claude Code has no such tool
        self.read_paths = [
            t.id
            for t in tools
            if t.id in readers
            and not any(r.acts_as in readers for r in catalog.relations.get(t.id, ()))
        ]
        self.edit_paths = [
            t.id for t in tools if t.argument_kind in ("path", "patch") and not t.read_only
        ]
        self.urls = [t.id for t in tools if t.argument_kind == "url"]
        ids = catalog.tool_ids
        self.plain: dict[str, list[str]] = {
            "Bash": self.shell,
            "Read": [catalog.call_read_tool] if catalog.call_read_tool else [],
            "Edit": self.edit_paths,
            "MultiEdit": self.edit_paths,
            "Write": [catalog.call_write_tool] if catalog.call_write_tool else [],
            "WebFetch": self.urls,
            "LS": [t for t in _LISTING if t in ids][:1],
            **{k: [t for t in v if t in ids] for k, v in _BY_NAME.items()},
        }

    # -- findings --------------------------------------------------------------------------

    def find(self, code: str, message: str, src: Source | None, fix: str | None = None) -> None:
        self.imp.findings.append(finding(code, message, src, fix))

    def spec_for(self, tool: str) -> ArgumentSpec:
        row = self.catalog.by_id[tool]
        return ArgumentSpec(ArgumentKind(row.argument_kind), row.argument_key, row.cwd_key)

    def add_checked(self, effect: str, entry: str, origin: Origin) -> bool:
        """Add `entry` if it compiles for its tool's argument kind; else report it."""
        if "(" in entry:
            tool = entry.split("(", 1)[0]
            try:
                compile_rule(entry, _EFFECT[effect], self.spec_for(tool))
            except SpecifierError as exc:
                self.find(
                    "PC125",
                    f'"{origin.text}" cannot be imported: as {entry} it is refused '
                    f"({exc.problem.message})",
                    origin.source,
                )
                return False
        self.imp.add(effect, entry, origin)  # type: ignore[arg-type]
        return True

    def add_all(self, effect: str, entries: list[str], origin: Origin) -> bool:
        """Every entry, or none past the first that fails (one report per rule)."""
        return all(self.add_checked(effect, entry, origin) for entry in entries)

    # -- one rule ----------------------------------------------------------------------------

    def rule(self, effect: str, text: str, src: Source | None) -> None:
        origin = Origin(src, text)
        found = _RULE.match(text.strip(_BLANK))
        if found is None:
            self.find(
                "PC125",
                f'"{text}" is not a Claude Code permission rule (Tool or Tool(specifier))',
                src,
            )
            return
        tool, spec = found.group(1), found.group(2)
        if tool.startswith("mcp__"):
            self.mcp(effect, tool, spec, origin)
        elif tool in _NO_EQUIVALENT:
            self.find("PC125", f'"{text}": {tool} has no equivalent in policyctl', src)
        elif tool not in self.plain:
            hint = did_you_mean(tool, [*self.plain, *_NO_EQUIVALENT])
            self.find(
                "PC125", f'"{text}": {tool} is not a Claude Code tool', src, hint and f"{hint}?"
            )
        elif not self.plain[tool]:
            self.find(
                "PC125",
                f'"{text}": catalog {self.catalog.name} has no tool {tool} maps to',
                src,
            )
        elif spec is None or spec.strip(_BLANK) == "*":
            self.add_all(effect, self.plain[tool], origin)
        elif tool == "Bash":
            self.shell_rule(effect, spec, origin)
        elif tool in ("Read", "Edit", "MultiEdit", "Write"):
            targets = self.read_paths if tool == "Read" else self.plain[tool]
            if tool == "Read" and effect != "allow":
                self.search_tools_note(origin)
            for pattern in self.path_patterns(effect, spec, origin):
                if not self.add_all(effect, [f"{t}({pattern})" for t in targets], origin):
                    break
        elif tool == "WebFetch" and spec.strip(_BLANK).startswith("domain:"):
            self.add_all(effect, self.domains(effect, spec.strip(_BLANK), origin), origin)
        else:
            self.find(
                "PC125",
                f'"{text}": policyctl has no equivalent of this {tool} specifier',
                src,
                "WebFetch takes domain:HOST" if tool == "WebFetch" else None,
            )

    def domains(self, effect: str, spec: str, origin: Origin) -> list[str]:
        """`domain:x` is that host in both. `domain:*` is every fetch; `domain:*.x` may cover
        x itself in Claude Code, so a deny or ask of it also names x (an allow does not)."""
        host = spec[len("domain:") :].strip(_BLANK)
        if host == "*":
            return [f"{t}(*)" for t in self.urls]
        specs = [spec]
        if host.startswith("*.") and effect != "allow":
            specs.append(f"domain:{host[2:]}")
            self.find(
                "PC129",
                f'"{origin.text}": imported for {host[2:]} itself too (Claude Code\'s '
                f"{host} may include it; policyctl's means the subdomains only)",
                origin.source,
            )
        return [f"{t}({s})" for s in specs for t in self.urls]

    def search_tools_note(self, origin: Origin) -> None:
        """Once per file: search tools without path rules read files a Read rule cannot stop."""
        blind = [
            t
            for t in (*self.plain["Glob"], *self.plain["Grep"])
            if self.catalog.by_id[t].argument_kind is None
        ]
        if blind and not self.noted_search:
            self.noted_search = True
            self.find(
                "PC125",
                f'"{origin.text}": Claude Code applies Read rules to its search tools too; '
                f"{', '.join(blind)} take no path rules in catalog {self.catalog.name}, so "
                "this rule does not reach them",
                origin.source,
                f"deny {' and '.join(blind)} by name if they must not read these files",
            )

    def shell_rule(self, effect: str, spec: str, origin: Origin) -> None:
        pattern = spec.strip(_BLANK)
        if pattern.endswith(":*"):
            pattern = (pattern[:-2].rstrip() + " *").lstrip()
        words = [w for w in re.split(_WORD_GAP, pattern) if w]
        # a `*` at the start of the first word or the end of the last one is exact at word
        # level (`*install` is `* *install`, `ls*` is `ls* *`); anywhere else it may span spaces
        exact: set[int] = set()
        if words and _one_star(words[0], "*" + words[0].lstrip("*")):
            words.insert(0, "*")
            exact.add(1)
        if words and _one_star(words[-1], words[-1].rstrip("*") + "*"):
            exact.add(len(words) - 1)
            words.append("*")
        glued = [i for i, w in enumerate(words) if "*" in w and w != "*" and i not in exact]
        if glued:
            if effect == "allow":
                self.find(
                    "PC127",
                    f'"{origin.text}": Claude Code\'s * may span spaces; imported as a '
                    "glob within one word, which admits fewer commands",
                    origin.source,
                )
            else:
                first = glued[0]
                words = [*words[:first], words[first].split("*", 1)[0] + "*", "*"]
                self.find(
                    "PC127",
                    f'"{origin.text}": Claude Code\'s * may span spaces; imported as '
                    f"{' '.join(words)}, which {'refuses' if effect == 'deny' else 'asks for'} "
                    "more commands",
                    origin.source,
                )
        self.add_all(effect, [f"{t}({' '.join(words)})" for t in self.shell], origin)

    def path_patterns(self, effect: str, spec: str, origin: Origin) -> list[str]:
        text = spec.strip(_BLANK)
        if text.startswith("//"):
            return [text[1:]]
        if text.startswith("~") or text.startswith("./") or text in (".", "./"):
            return [text] + (
                [f"{text.rstrip('/')}/**"]
                if effect == "allow" and text.endswith("/") and text != "./"
                else []
            )
        if text.startswith("/"):
            self.find(
                "PC129",
                f'"{origin.text}": Claude Code anchors /{text[1:]} at the project directory; '
                f"imported as ./{text[1:]}, anchored at the run's workspace",
                origin.source,
                "run with --workspace set to the project directory (where .claude/ is)",
            )
            text = "./" + text[1:]
        elif "/" not in text.rstrip("/") and effect == "allow":
            text = "./**/" + text  # Claude Code: at any depth under the working directory
        patterns = [text]
        if effect == "allow" and text.endswith("/"):
            patterns.append(text + "**")
        return patterns

    def mcp(self, effect: str, name: str, spec: str | None, origin: Origin) -> None:
        server, _, tool = name[len("mcp__") :].partition("__")
        if spec is not None or not server or "*" in server:
            self.find(
                "PC125",
                f'"{origin.text}": MCP rules name a server, or a server and a tool '
                "(mcp__server, mcp__server__tool, mcp__server__get_*); no specifier",
                origin.source,
            )
            return
        prefix = mcp_tool_name(server, "x").rsplit("__", 1)[0]
        if tool in ("", "*"):
            entry = f"{prefix}__*"
        elif re.fullmatch(r"[A-Za-z0-9_*-]+", tool) is None:
            self.find(
                "PC125",
                f'"{origin.text}": the tool name has characters MCP tool names cannot have',
                origin.source,
            )
            return
        else:
            entry = mcp_tool_name(server, tool) if "*" not in tool else f"{prefix}__{tool}"
        listed = self.imp.mcp_servers.setdefault(server, [])
        if "*" not in tool and tool and tool not in listed:
            listed.append(tool)
        self.add_checked(effect, fold(entry), origin)

    # -- defaults ----------------------------------------------------------------------------

    def defaults(self, mode: str, directories: list[tuple[str, Source | None]]) -> None:
        """What a call no rule settles gets, per tool, in `mode`."""
        imp = self.imp
        # MCP tools (or whole servers) the rules name, except those only ever denied
        mcp = [
            e.tool
            for e in imp.entries
            if "__" in e.tool and (e.effect != "deny" or "*" not in e.tool)
        ]
        asked = [*self.shell, *self.edit_paths, *self.urls, *self.plain["WebSearch"], *mcp]
        free = [*self.read_paths, *self.plain["Glob"], *self.plain["Grep"]]
        if mode == "dontAsk":
            imp.call_default = "deny"
            return
        if mode == "bypassPermissions":
            for tool in dict.fromkeys([*free, *asked]):
                imp.defaults[tool] = "allow"
            return
        for tool in dict.fromkeys(asked):
            imp.defaults[tool] = "ask"
        for tool in free:
            # path tools: free inside the working directories only (below), else asked
            imp.defaults[tool] = "ask" if tool in self.read_paths else "allow"
        roots = [("./", None), *directories]
        inside = self.read_paths + (self.edit_paths if mode == "acceptEdits" else [])
        what = "reads" if mode != "acceptEdits" else "reads and edits"
        for root, src in roots:
            origin = (
                Origin(src, f"{SOURCE} {what} inside its working directories without asking")
                if src is None
                else Origin(src, f"additionalDirectories: {root}")
            )
            for pattern in (root, f"{root.rstrip('/')}/**"):
                for tool in inside:
                    self.add_checked("allow", f"{tool}({pattern})", origin)


def _one_star(word: str, shape: str) -> bool:
    """`word` has exactly one `*`, where `shape` (the word with its star moved there) has it."""
    return word != "*" and word.count("*") == 1 and word == shape


def _directory(text: str) -> str | None:
    """An additionalDirectories entry as a path pattern root, or None if it has none."""
    path = text.strip(_BLANK).rstrip("/") or "/"
    if not path or _GLOB_CHARS & set(path) or "\n" in path:
        return None
    parts = path.split("/")
    if ".." in parts:
        return None
    if path.startswith("~/") or path.startswith("/") or path.startswith("./"):
        return path
    return "./" + path if path != "." else "./"


def import_claude(settings: LocMap, name: str, catalog: Any) -> CallImport:
    """A parsed, located settings file -> translated permissions and findings.

    Structural problems (a list that is not a list, a rule that is not a string) are PC128
    errors: the caller writes no document then, since a rule it skipped could be a deny."""
    c = _Claude(name, catalog)
    for key in settings:
        if key not in ("permissions", "$schema"):
            what = "hooks can allow or refuse calls; " if key == "hooks" else ""
            c.find("PC129", f"{key}: {what}not imported", settings.key_src.get(key))
    perms = settings.get("permissions")
    where = settings.val_src.get("permissions")
    if perms is None:
        c.find("PC128", "no permissions object: nothing to import", Source(name, 1, 1))
        return c.imp
    if not isinstance(perms, LocMap):
        c.find("PC128", "permissions must be an object", where)
        return c.imp
    for key, value in perms.items():
        src = perms.val_src.get(key)
        if key in _LISTS:
            if not isinstance(value, LocSeq):
                c.find("PC128", f"permissions.{key} must be a list of rules", src)
                continue
            for i, item in enumerate(value):
                at = value.item_src[i] if i < len(value.item_src) else src
                if not isinstance(item, str):
                    c.find("PC128", f"permissions.{key}[{i}] must be a string", at)
                else:
                    c.rule(key, item, at)
        elif key not in ("defaultMode", "additionalDirectories", "disableBypassPermissionsMode"):
            c.find("PC125", f"permissions.{key} is not imported", perms.key_src.get(key))
    mode = perms.get("defaultMode", "default")
    if not isinstance(mode, str) or mode not in _MODES:
        c.find(
            "PC125",
            f"permissions.defaultMode {mode!r} is not a Claude Code mode; imported as default",
            perms.val_src.get("defaultMode"),
            f"one of {', '.join(_MODES)}",
        )
        mode = "default"
    elif mode == "plan":
        c.find(
            "PC129",
            "permissions.defaultMode plan: a session that starts read-only and leaves plan "
            "mode when the person says so; imported as default",
            perms.val_src.get("defaultMode"),
        )
    directories: list[tuple[str, Source | None]] = []
    raw_dirs = perms.get("additionalDirectories", LocSeq())
    if not isinstance(raw_dirs, LocSeq):
        c.find(
            "PC128",
            "permissions.additionalDirectories must be a list",
            perms.val_src.get("additionalDirectories"),
        )
        raw_dirs = LocSeq()
    for i, item in enumerate(raw_dirs):
        at = raw_dirs.item_src[i] if i < len(raw_dirs.item_src) else None
        root = _directory(item) if isinstance(item, str) else None
        if root is None:
            c.find(
                "PC125",
                f"additionalDirectories[{i}] cannot be a path pattern root (a path outside "
                "the working directory given relatively, or one with glob characters): "
                "calls there ask instead",
                at,
                "write it as an absolute path or ~/path",
            )
        else:
            directories.append((root, at))
    c.defaults(mode, directories)
    c.imp.note_unlisted_servers()
    return c.imp
