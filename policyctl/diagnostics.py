"""Diagnostics: one registry of codes, one value type, one exception.

Every stage reports problems as `Diagnostic` values that carry the file, line and column
where the offending text was written, the key path inside the document, and a fix when one
is known. Stages collect every diagnostic they can before stopping, so an operator sees all
of a file's problems in one run; only unparseable input stops early.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 2, "warning": 1, "info": 0}[self.value]


@dataclass(frozen=True, slots=True)
class Source:
    """Where a value was written: 1-based line and column."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True, slots=True)
class CodeInfo:
    code: str
    severity: Severity
    title: str
    explanation: str


def _codes(*rows: tuple[str, Severity, str, str]) -> dict[str, CodeInfo]:
    return {code: CodeInfo(code, sev, title, text) for code, sev, title, text in rows}


E, W = Severity.ERROR, Severity.WARNING

#: The registry: PC1xx load and syntax, PC2xx schema, PC3xx semantics, PC4xx warnings.
CODES: dict[str, CodeInfo] = _codes(
    (
        "PC101",
        E,
        "file cannot be read",
        "The policy file, a file it extends, or the catalog it names does not exist or cannot "
        "be read. Paths in `extends` and `catalog` are relative to the file that names them.",
    ),
    (
        "PC102",
        E,
        "file is not UTF-8",
        "Policy files must be UTF-8 text. A UTF-8 byte order mark is accepted and ignored; any "
        "other encoding is refused because a mis-decoded tool name would match nothing.",
    ),
    (
        "PC103",
        E,
        "syntax error",
        "The file is not valid YAML, TOML or JSON. The location points at the first character "
        "the parser could not accept.",
    ),
    (
        "PC104",
        E,
        "duplicate key",
        "A mapping names the same key twice. YAML parsers usually keep the last one silently, "
        "which hides the first; policyctl refuses the file instead.",
    ),
    (
        "PC105",
        E,
        "YAML tag not allowed",
        "Only the plain YAML types are accepted (strings, numbers, booleans, null, lists and "
        "mappings, with or without the standard `!!str`-style tags). A tag such as "
        "`!!python/object` would construct objects and is refused.",
    ),
    (
        "PC106",
        E,
        "file too large",
        "The file is larger than the configured limit (POLICYCTL_MAX_FILE_BYTES, default 5 MiB).",
    ),
    (
        "PC107",
        E,
        "nesting too deep",
        "The document nests lists and mappings deeper than the limit "
        "(POLICYCTL_MAX_DEPTH, default 64). Real policies nest fewer than ten levels.",
    ),
    (
        "PC108",
        E,
        "too many nodes",
        "After expanding YAML aliases the document has more nodes than the limit "
        "(POLICYCTL_MAX_NODES). This is how an alias bomb ('billion laughs') is stopped before "
        "it is built in memory.",
    ),
    ("PC109", E, "extends cycle", "A file extends itself, directly or through other files."),
    (
        "PC110",
        E,
        "unsupported YAML construct",
        "The document uses a YAML feature policyctl does not accept: several documents in one "
        "file, a merge key (`<<`), or a mapping key that is not a plain scalar.",
    ),
    (
        "PC111",
        E,
        "empty file",
        "The file holds no document (it is empty, or only comments). An empty policy would "
        "allow every tool to every run, and an empty file is also what a file being rewritten "
        "in place looks like for a moment; policyctl refuses it. Write `{}` for a policy "
        "without rules.",
    ),
    (
        "PC112",
        E,
        "not a regular file",
        "The path names a FIFO, a device, a socket or a directory. Policy files, the files they "
        "extend and catalog files must be regular files (a device such as /dev/zero never ends, "
        "a FIFO blocks the reader).",
    ),
    (
        "PC113",
        E,
        "extends outside the policy tree",
        "`extends` may name policy files (.yaml, .yml, .json, .toml) inside the directory of the "
        "root policy file, or inside a directory listed in POLICYCTL_EXTENDS_ROOTS (separated "
        "like PATH). Anything else could read any file the process can read into the policy "
        "and its diagnostics.",
    ),
    (
        "PC117",
        E,
        "policy larger than the limits",
        "The policy holds more agents (POLICYCTL_MAX_AGENTS, 5,000), `toolsBySender` keys "
        "(POLICYCTL_MAX_SENDER_KEYS, 50,000) or tool-list entries (POLICYCTL_MAX_ENTRIES, "
        "100,000) than one policy may, or a YAML file has more than POLICYCTL_MAX_YAML_NODES "
        "(50,000) nodes. Within these limits every command stays inside 10 s of CPU and 1 GiB "
        "of memory; beyond them the policy is refused at the first item over the limit, "
        "rather than loaded slowly. Split the policy, write large generated policies as JSON, "
        "or raise the setting.",
    ),
    (
        "PC114",
        E,
        "number out of range",
        "An integer is written with more than 4,300 digits, more than any policy value needs "
        "(and more than Python converts by default).",
    ),
    (
        "PC115",
        E,
        "invalid character",
        "A string holds a lone UTF-16 surrogate (for example the escape \\ud800), which is not "
        "a character and cannot be printed or written in any output format.",
    ),
    (
        "PC116",
        E,
        "bundle signature",
        "A bundle key is configured (POLICYCTL_BUNDLE_KEY_FILE or --key) and the bundle has no "
        "signature, or its HMAC-SHA256 signature does not match its content under that key: "
        "the bundle was not written by a holder of the key, or was changed since.",
    ),
    (
        "PC120",
        E,
        "reload failed unexpectedly",
        "Reloading the policy raised an error that is not a diagnostic of the policy itself (an "
        "I/O or internal error). The last good version stays in service; the message names the "
        "error.",
    ),
    (
        "PC125",
        W,
        "import: not translated",
        "`policyctl import` found a rule, key or mode of a Claude Code or Gemini CLI file that "
        "has no exact policyctl equivalent (a tool the catalog does not have, a specifier "
        "policyctl refuses, a regular expression that is not a command prefix). The rule is "
        "left out of the imported document, never guessed wider; the message says what a call "
        "it covered gets instead.",
    ),
    (
        "PC126",
        W,
        "import: effect changes",
        "Gemini CLI lets the highest-priority matching rule decide; policyctl lets the most "
        "restrictive one decide (deny, then ask, then allow). Where a higher-priority allow (or "
        "ask) rule and a lower-priority deny (or ask) rule can match the same call, the "
        "imported document decides that call the other way. Both rules are named; narrow the "
        "deny, or move the exception into its own scope, if the old result is wanted.",
    ),
    (
        "PC127",
        W,
        "import: approximated",
        "A rule could only be imported approximately. Deny and ask rules are approximated "
        "wider (more calls refused or asked), allow rules narrower (fewer calls admitted), so "
        "the imported document never lets through a call the source would have stopped. The "
        "message says which way.",
    ),
    (
        "PC150",
        W,
        "import: regular expression too large",
        "A Gemini CLI rule's commandRegex or argsPattern is longer than 4,096 characters or "
        "nests its groups more than 32 deep, beyond what `policyctl import` reads (such a "
        "regex is never a command prefix, and reading it could take minutes or overflow the "
        "stack). A deny or ask rule is imported as every call of its tools (more refused or "
        "asked), an allow rule is not imported (fewer admitted). Write the command as a "
        "commandPrefix, or a shorter regex.",
    ),
    (
        "PC128",
        E,
        "import: malformed input",
        "The file to import is not a well-formed Claude Code settings file or Gemini CLI "
        "policy file: a list that is not a list, a rule that is not a string or a table, a "
        "missing or unknown decision, a priority out of range. No document is written: a rule "
        "that could not be read may have been a deny.",
    ),
    (
        "PC129",
        Severity.INFO,
        "import: translated with a difference",
        "A rule or setting was imported, but means something slightly different in policyctl "
        "(a path re-anchored at the run's workspace, a mode imported as another), or a part of "
        "the file that holds no call permissions was left out. Read the message and check the "
        "imported document.",
    ),
    # -- `policyctl hook`: a host's tool call that could not be decided is refused ----------
    (
        "PC180",
        E,
        "hook payload unreadable",
        "The JSON an agent host wrote on the hook's standard input is not JSON, is larger than "
        "16 MiB, or lacks what the host's protocol sends (`hook_event_name`, `tool_name`, a "
        "`tool_input` object). The call is refused in the host's format with its blocking exit "
        "code: check that the hook is installed for the host named on the command line "
        "(`policyctl hook doctor HOST`).",
    ),
    (
        "PC181",
        E,
        "hook tool unknown",
        "The host called a tool the policy's catalog does not list, so no rule can be said to "
        "allow it and the call is refused. Add the tool to an operator catalog that extends the "
        "host's built-in one (or update policyctl when the host has renamed a tool).",
    ),
    (
        "PC182",
        E,
        "hook event not decided",
        "The hook was started for an event policyctl does not decide (Claude Code and Codex: "
        "`PreToolUse`; Gemini CLI: `BeforeTool` and `BeforeToolSelection`). The event is "
        "refused; install the hook under those events only (`policyctl hook install`).",
    ),
    (
        "PC183",
        E,
        "hook policy unusable",
        "The policy or bundle named by `--policy` cannot be read or does not compile; every "
        "call is refused until it is fixed. The reason lists the policy's own diagnostics; run "
        "`policyctl validate` on it.",
    ),
    (
        "PC184",
        E,
        "hook decision timed out",
        "No decision was reached within `--timeout` seconds, and the call is refused before the "
        "host's own timeout would let it proceed. Compile the policy to a bundle, keep the "
        "compiled cache, or raise `--timeout` (below the host's hook timeout).",
    ),
    (
        "PC185",
        E,
        "hook failed",
        "policyctl failed while deciding the call (an internal error, named in the reason). The "
        "call is refused rather than let through; please report the message.",
    ),
    (
        "PC186",
        E,
        "decision log unwritable",
        "`--log` names a file the hook cannot append to. A call that would have been allowed is "
        "refused, because an operator who asked for an audit of every decision must not get "
        "unaudited calls; a refusal stays a refusal. Fix the path or its permissions.",
    ),
    (
        "PC201",
        E,
        "unknown key",
        "The key is not part of the policy format. Unknown keys are errors everywhere: a typo "
        "such as `denny:` must never be ignored, because the rule it meant to write would "
        "silently not exist.",
    ),
    (
        "PC202",
        E,
        "wrong type",
        "The value has the wrong type for its key, for example a string where a list of tool "
        "entries is expected.",
    ),
    ("PC203", E, "invalid value", "The value is not one of those the key accepts."),
    (
        "PC204",
        E,
        "missing key",
        "A required key is missing, for example `id` in a legacy `agents.list` item.",
    ),
    # -- bundle keys and signatures (compile/bundlekeys.py) --------------------------------
    (
        "PC160",
        E,
        "bundle key variable set to nothing",
        'POLICYCTL_BUNDLE_KEY_FILE is set but empty. Read as "no key", it would turn '
        "signature checks off without a word; set it to the key file's path, or unset it.",
    ),
    (
        "PC161",
        W,
        "bundle key readable by others",
        "The HMAC key bundles are signed with can be read by the file's group or by others; "
        "whoever reads it can sign a forged bundle. `chmod 600` it (ssh refuses private keys "
        "in the same state).",
    ),
    (
        "PC162",
        W,
        "unsigned bundle, no key configured",
        "The bundle has hashes but no signature, and no key is configured where it is loaded. "
        "The hashes are unkeyed: whoever can write the bundle can remove a deny and recompute "
        "them. Sign it with `policyctl compile --key KEYFILE` and set POLICYCTL_BUNDLE_KEY_FILE "
        "to that key; then unsigned or forged bundles are refused.",
    ),
    (
        "PC163",
        W,
        "signed bundle, signature not checked",
        "The bundle is signed, but no key is configured where it is loaded, so its signature "
        "was not checked. Set POLICYCTL_BUNDLE_KEY_FILE to the key it was signed with.",
    ),
    (
        "PC301",
        E,
        "non-ASCII or confusable entry",
        "Tool names and entries must be ASCII after normalisation (letters, digits and "
        "`_ - . : * @ /`). A Cyrillic letter or a zero-width character makes an entry that "
        "looks right and matches nothing; in a deny list that is a hole. Scope ids (agents, "
        "channels, accounts, group ids, `byProvider` keys) must be printable ASCII: a look-alike "
        "id selects a scope no run has, and the real one gets the wider defaults.",
    ),
    (
        "PC302",
        E,
        "unknown profile",
        "The profile is neither a built-in profile of the catalog nor one the catalog defines. "
        "OpenClaw treats an unknown profile as no restriction; policyctl refuses it.",
    ),
    (
        "PC303",
        E,
        "allow and alsoAllow in one scope",
        "tools cannot set both allow and alsoAllow in the same scope (merge alsoAllow into "
        "allow, or remove allow and use profile + alsoAllow).",
    ),
    (
        "PC304",
        E,
        "unknown catalog",
        "`catalog` must name a built-in catalog (openclaw, openclaw-2026.4, nanobot) or a "
        "catalog file.",
    ),
    ("PC305", E, "invalid catalog", "The catalog file does not describe a valid catalog."),
    (
        "PC140",
        E,
        "catalog relation cannot be applied",
        "A `[[relations]]` row says that calls of one tool are also calls of another, whose call "
        "rules then decide them too. The row must name two different tools of the catalog; the "
        'related tool (`acts_as`) must take a path (`argument_kind = "path"`); `paths = '
        '"patch"` needs a tool whose argument is a patch, `paths = "argument"` one whose '
        "`argument_key` (or the row's `key`) names the argument that holds the path. A relation "
        "that cannot be applied is refused rather than left out: it may be all that keeps a "
        "file from being read or written.",
    ),
    (
        "PC306",
        E,
        "duplicate agent",
        "The same agent id appears in `agents.entries` and in the legacy `agents.list`, or "
        "twice in `agents.list`.",
    ),
    (
        "PC307",
        E,
        "invalid sender key",
        "A `toolsBySender` key must be `channel:<channel>:<id>`, `id:<v>`, `e164:<v>`, "
        "`username:<v>`, `name:<v>` or `*`, with a non-empty value.",
    ),
    (
        "PC308",
        E,
        "no callable tools",
        "Some runs the file declares are left with no tools at all, named with the layer and "
        "list that removed the last ones: explicit allow lists (such a run stops before the "
        'model is asked), or a deny entry such as `deny: ["*"]`. When that is the intent '
        "(a banned sender), add `expectEmpty: true` to the scope that bans them.",
    ),
    (
        "PC309",
        E,
        "declared empty but keeps tools",
        "A scope says `expectEmpty: true`, yet some runs it applies to still have tools: the "
        'ban it declares does not hold. Deny everything there (`deny: ["*"]`) or remove the '
        "declaration.",
    ),
    (
        "PC310",
        E,
        "expectEmpty on the sandbox policy",
        "`expectEmpty` declares that the runs of a scope have no tools on purpose; the sandbox "
        "policy applies by session kind, so declare it on the agent, group or sender scope "
        "instead.",
    ),
    # -- call rules (policyctl/callrules; the specifier parsers report these) --------------
    (
        "PC350",
        E,
        "call-rule specifier does not parse",
        "An entry `tool(specifier)` is malformed: a missing `)`, an unterminated quote, an empty "
        "specifier. The location points at the offending character inside the entry.",
    ),
    (
        "PC351",
        E,
        "shell specifier is not one simple command",
        "A shell-command specifier (`exec(git *)`) matches the words of one simple command. "
        "Unquoted operators (`;`, `|`, `&`, `<`, `>`, parentheses) and expansions (`$`, "
        "backticks) cannot be matched; write one entry per command, or quote the character.",
    ),
    (
        "PC352",
        E,
        "path pattern is not usable",
        "A path specifier is a gitignore pattern: `.env` at any depth, `./src/**` in the "
        "workspace, `~/x` in the home, `/x` absolute. Negation (`!`), `~user`, and `.` or `..` "
        "components (call paths are normalised, so these never match) are errors.",
    ),
    (
        "PC353",
        E,
        "URL or domain specifier is not usable",
        "URL tools take `domain:example.com`, `domain:*.example.com` (subdomains only), "
        "`ip:10.0.0.0/8`, or a URL glob `https://host/path/*`. A `*` elsewhere in a host "
        "(`example.*`) would match any owner's domain and is refused; IP addresses are written "
        "with `ip:`.",
    ),
    (
        "PC354",
        E,
        "argument specifier is not usable",
        "`name(key=glob, ...)` lists argument keys (dotted for nested objects) and `*` globs. "
        "Tools without an argument kind in the catalog (plugin and MCP tools) take only this "
        "form.",
    ),
    (
        "PC355",
        E,
        "argument specifier on the argument the tool's kind reads",
        "`exec(command=git *)` would compare the raw command text, so `git x; rm -rf /` would "
        "match. Use the kind's own form (`exec(git *)`), which decides every command of the line.",
    ),
    # -- call rules in a policy (compile, extends) ---------------------------------------------
    (
        "PC356",
        E,
        "call rule in alsoAllow",
        "alsoAllow widens a profile by names; call rules narrow calls. A `tool(specifier)` entry "
        "belongs in allow (admits the tool and restricts its calls), deny or ask.",
    ),
    (
        "PC357",
        E,
        "call rule does not name one tool",
        "The part before `(` must be one tool name (or an alias of one). A group "
        "(`group:fs(...)`), a glob (`git*(...)`), `*` or a plugin id would apply one specifier "
        "to tools with different arguments; write one entry per tool.",
    ),
    (
        "PC358",
        E,
        "callDefault widened by extends",
        "An extended file sets `callDefault: deny` for this scope and the extending file sets "
        "`ask`. Like deny lists, callDefault only narrows through extends (ask -> deny is "
        "fine); remove the key or write the specific calls that may ask in `ask`.",
    ),
    (
        "PC359",
        E,
        "sandbox loosened by extends",
        "An extending file sets a sandbox mode looser than the extended file's (off < non-main "
        "< all) for the defaults or an agent (an agent entry it adds has the base's default "
        "mode as its floor), or moves the main session (`session.mainKey`, `session.scope`) "
        "while an agent is `non-main`: the base's sandbox denies would stop applying there.",
    ),
    (
        "PC360",
        E,
        "maxSpawnDepth raised by extends",
        "An extending file raises `agents.defaults.subagents.maxSpawnDepth`: subagents at the "
        "extended file's depth would stop being leaves and keep the spawning and session "
        "tools. It may only be lowered.",
    ),
    (
        "PC361",
        E,
        "catalog changed by extends",
        "An extending file names another catalog than the extended file: the base's group "
        "entries, profiles, aliases and default denies would expand from it. Set the catalog "
        "in the extended file (an operator catalog can extend a built-in one).",
    ),
    (
        "PC362",
        E,
        "session.mainKey names a group, channel, DM or subagent session",
        "The main session is the agent's own session; a group, channel, direct-message or "
        "subagent session has its own key and is never the main session (semantics 7.6), so "
        "under sandbox mode non-main it stays sandboxed. Use a plain key such as `main`.",
    ),
    (
        "PC311",
        E,
        "keys collide after normalisation",
        "Two keys of a map that is matched normalised (channels, accounts, agents, byProvider, "
        "toolsBySender, MCP servers; plugin tool names) have the same normal form, such as "
        '`Slack` and `"slack "`. One would silently replace the other, and with it its deny '
        "lists. Merge them into one entry.",
    ),
    (
        "PC312",
        E,
        "look-alike scope ids",
        "Two agent, channel, account or group ids of one map differ only by case, separators "
        "(`-`, `_`, `.`, space) or glyphs that common fonts confuse (`0`/`o`, `1`/`l`/`I`/`|`, "
        "`rn`/`m`, `vv`/`w`): `c0der` next to `coder`. They are two scopes that select "
        "different runs, and a reviewer reads them as one. Rename one of them.",
    ),
    (
        "PC313",
        E,
        "forged MCP marker",
        "A tool carries the plugin id `bundle-mcp` (in any case or spacing) without having been "
        "made as an MCP tool, so every `bundle-mcp` entry would grant it. Only the runtime's MCP "
        "code (`policyctl.runtime.mcp.mcp_tools`) and `Tool.mcp` (a host bridging MCP servers) "
        "make such tools; any other is refused by the tool registry and dropped from a runtime "
        "inventory. Give a plugin's tools the plugin's own id.",
    ),
    (
        "PC317",
        E,
        "REV:path names a file too",
        "`policyctl diff` reads an argument of the form `REV:path` from the git revision REV, "
        "never from the working tree; a file of the working tree with that very name (a copy a "
        "pull request could plant) makes the argument ambiguous, so it is refused. Write "
        "`./REV:path` to compare the file, or rename it.",
    ),
    (
        "PC380",
        E,
        "duplicate byProvider key",
        "Two `byProvider` keys of one scope are the same after normalisation (trimmed, "
        "lowercased, provider aliases canonicalised): one would silently replace the other.",
    ),
    (
        "PC381",
        E,
        "tool name is entry syntax",
        "A tool name contains `*`, starts with `group:`, or is a plugin id (`bundle-mcp`, another "
        "plugin's id). Wherever names are read back as entries it would match more than itself, "
        "so such a tool is refused: at compile time in the declared inventory, and dropped "
        "from a runtime inventory.",
    ),
    (
        "PC382",
        E,
        "plugin id is a core tool name",
        "A declared plugin's id is the name (or an alias) of a core tool, so `allow: [<tool>]` "
        "would grant every tool of the plugin. Give the plugin another id.",
    ),
    (
        "PC385",
        E,
        "plugin id is reserved",
        "A declared plugin's id is `bundle-mcp` (reserved for MCP tools), starts with `group:` "
        "or contains `*`: every entry written for the MCP tools, the group or the pattern "
        "would grant the plugin's tools. Give the plugin another id.",
    ),
    (
        "PC386",
        W,
        "plugin tools dropped: id is reserved",
        "A runtime inventory has a plugin whose id starts with `group:` or contains `*`; its "
        "tools are dropped from the run, since entries written for the group or the pattern "
        "would grant them. (`bundle-mcp` is how the host marks MCP tools, so it stands at run "
        "time; a policy file's declared plugin may not claim it: PC385.)",
    ),
    (
        "PC383",
        W,
        "plugin tools dropped: id is a core tool name",
        "A runtime inventory has a plugin whose id is the name of a core tool; its tools are "
        "dropped from the run, since an entry naming the core tool would grant them all.",
    ),
    (
        "PC384",
        W,
        "caller field ignored",
        "The caller supplied an agent, a spawning session or a subagent depth that disagrees "
        "with the run's session key. The session key is the authority: the field is ignored, "
        "so a caller cannot pick a looser policy.",
    ),
    (
        "PC323",
        E,
        "import: one thing defined twice",
        "`policyctl import` found two definitions of one thing: two `agents.list` entries with "
        "the same id, a Slack channel under both `channels` and `groups`, or a key written twice "
        "in one JSON5 object (the parser keeps only the later value). Only one could be "
        "imported, and the other's denies would be lost; the import refuses (exit 1, nothing "
        "written) and names both places. Merge them into one, keeping every deny.",
    ),
    (
        "PC461",
        E,
        "import: Slack channel keyed by name",
        "An OpenClaw config keys a Slack channel policy by the channel's name (`#general`, "
        "`general`). OpenClaw matches names as well as ids; policyctl matches the channel id "
        "of the session key exactly, so the policy would never apply and the channel would get "
        "a looser one. The import refuses (exit 1, nothing written); key the entry by the "
        "channel id (C..., G...).",
    ),
    (
        "PC462",
        E,
        "import: account-less Slack runs would get another channel map",
        "OpenClaw gives a Slack run that names no account the channels of the default account "
        "(`channels.slack.defaultAccount`, else an account called `default`, else, depending "
        "on the tokens in its environment, the top-level settings or the first account). When "
        "that account has channels of its own that differ from `channels.slack.channels`, "
        "policyctl, which applies the top-level map to such runs, could be looser; the import "
        "refuses. (With no top-level map, the account's map is copied there instead.) Set "
        "`defaultAccount` to an account without channels of its own, or move the channels to "
        "the top level.",
    ),
    (
        "PC324",
        E,
        "import: exec restriction that cannot be translated",
        "An OpenClaw `tools.exec` setting restricts exec (`security: allowlist`, `safeBins`, "
        "`ask: always` or `on-miss`) in a way a policyctl tool policy cannot say. Dropping it "
        "would allow exec unrestricted, so the import refuses (exit 1, nothing written). Deny "
        "exec in the source, or write the restriction as `exec(...)` call rules.",
    ),
    (
        "PC325",
        W,
        "import: exec disabled, imported as a deny",
        "OpenClaw's `tools.exec.security: deny` disables exec; the import writes `exec` into "
        "that scope's `deny` list, so the policy stays as narrow as the source.",
    ),
    (
        "PC326",
        W,
        "import: setting left out",
        "A setting of the OpenClaw config that is not tool policy (credentials, models, "
        "workspaces, ...) or that policyctl does not translate is left out of the import; each "
        "one is reported with its file:line:col. Restrictions are never left out silently: "
        "they are translated or refused (PC323, PC324).",
    ),
    (
        "PC320",
        E,
        "unknown group",
        "A `group:<name>` entry names no group. Groups are a closed set: the catalog's section "
        "groups and its named groups (`group:openclaw`), plus `group:plugins`. OpenClaw keeps an "
        "unknown group as a literal that matches nothing, silently; in a deny list that is a "
        "hole, so policyctl refuses it in every list.",
    ),
    (
        "PC321",
        E,
        "mistyped sender key type",
        "A `toolsBySender` key starts with a near-miss of a sender key type (`idd:42` for "
        "`id:42`). Read as an untyped key it would match the sender id `idd:42`, which no sender "
        "has, so the rule would silently apply to nobody.",
    ),
    (
        "PC322",
        E,
        "ambiguous MCP server name",
        "MCP tools are named `<server>__<tool>` and a server's tools are matched by "
        "`<server>__*`. A server name holding `__` (`ops__admin`) or ending in `_` has tools "
        "that another server's glob (`ops__*`) also matches, and two servers can produce the "
        "same tool name. Rename the server; the runtime refuses such a server too.",
    ),
    (
        "PC401",
        W,
        "unknown allow entries",
        "An allow list names entries that match no tool of this run. They change nothing; they "
        "are usually a typo, a tool this provider does not get, or a plugin that is not enabled.",
    ),
    (
        "PC402",
        W,
        "unknown deny entries",
        "A deny list names entries that match no tool of this run. A deny that matches nothing "
        "protects nothing: check the spelling against the catalog.",
    ),
    (
        "PC403",
        W,
        "legacy sender key",
        "An untyped `toolsBySender` key is matched as a sender id only. Write `id:<value>` (or "
        "`e164:`, `username:`, `name:`) to say what it is.",
    ),
    (
        "PC404",
        W,
        "related tool denied, its relative reachable",
        "A tool is denied by name but a tool whose calls the catalog relates to it (`apply_patch` "
        "writes through `write`, `edit` reads through `read`; catalog `[[relations]]`) is not. "
        "Each call of the related tool is then refused, since the tool it acts as is not in the "
        "run: deny it too, so the policy says what the run can do.",
    ),
    (
        "PC405",
        W,
        "plugin tool shadows a core tool",
        "A plugin or MCP tool has the name of a core tool. The core tool is kept and the plugin "
        "tool is dropped, so a plugin can never stand in for a tool the policy reasons about.",
    ),
    (
        "PC440",
        W,
        "context fields disagree: narrower reading taken",
        "Two fields of a run's context tell different stories that both could be true: a "
        "group where the session key names none (a main, DM or subagent key), a spawning "
        "session whose key names a group the run's key does not, a spawning session, parent "
        "tools or the spawn trigger on a run whose key and depth say it is no subagent, a "
        "spawning session deeper than the run's key. The run gets the reading with more "
        "layers (the group's policy, the subagent layer, the sandbox under non-main): every "
        "layer only narrows, so it never holds a tool the other reading would refuse. Pass "
        "the run's own session key to get the reading you mean.",
    ),
    (
        "PC406",
        W,
        "caller group ignored",
        "The caller supplied a channel or group that disagrees with the session key. The "
        "session key wins: a caller must not be able to pick a looser group policy.",
    ),
    (
        "PC407",
        W,
        "cron job tools dropped",
        "A scheduled job asked for tools its creating run did not have. They were removed from "
        "the job's toolsAllow.",
    ),
    (
        "PC408",
        W,
        "legacy agents.list",
        "`agents.list` is the older shape of `agents.entries`; `policyctl fmt --migrate` "
        "rewrites it.",
    ),
    (
        "PC409",
        W,
        "account unavailable",
        "A scheduled run names an account that has no configuration; its group layer denies "
        "every tool rather than falling back to the looser channel-wide groups.",
    ),
    (
        "PC410",
        W,
        "unknown entry",
        "An allow entry names no tool, group or plugin that the catalog or the policy's declared "
        "inventory knows. It is probably a typo; it matches nothing. An error under --strict.",
    ),
    (
        "PC411",
        W,
        "deny matches nothing",
        "A deny entry matches nothing in the catalog or the declared inventory. A deny that "
        "matches nothing protects nothing. An error under --strict.",
    ),
    (
        "PC412",
        W,
        "allowed and denied in one scope",
        "An entry is allowed in a scope whose own deny list removes it. The deny wins, so the "
        "allow entry never matters: one of the two is a mistake.",
    ),
    (
        "PC413",
        W,
        "deny already covered",
        "An entry is denied in a later layer's scope, but the global `tools.deny` already removes "
        "it from every run. The later entry never matters; keeping it hides the real rule.",
    ),
    (
        "PC414",
        W,
        "sandbox default deny replaced",
        "Configuring `sandbox.tools.deny` replaces the catalog's default sandbox deny list "
        "(browser, canvas, nodes, gateway, chat-channel tools, ...) instead of adding to it. Use "
        "`alsoAllow` to lift single tools, or repeat the defaults you still want.",
    ),
    (
        "PC420",
        W,
        "key spelled differently from the extended file",
        "A key of a normalised map (a channel, agent, provider, sender key, ...) is spelled "
        "differently from the same key in a file this one extends, such as `Slack` over `slack`. "
        "The two are merged on their normal form, as they are matched, so the extended file's "
        "deny lists still apply; spell it as the extended file does.",
    ),
    (
        "PC430",
        W,
        "group sender rule shadows the group's tools",
        "In a channel group, a matching `toolsBySender` entry is used instead of the group's "
        "`tools`, not together with them (first hit wins, as in OpenClaw). Entries of the group's "
        "`tools` that the sender entry does not repeat do not apply to the senders it matches: "
        "a deny written for the whole group leaves those senders. An error under --strict.",
    ),
    (
        "PC436",
        W,
        "agent sender rule shadows a global sender rule",
        "Layer 8 takes one `toolsBySender` policy: an agent's matching entry is used instead of "
        "the global `tools.toolsBySender` entry the sender would hit (`*` included), not "
        "together with it (semantics 7.5). Entries of the global rule that the agent's entry "
        "does not repeat do not apply to its senders. An error under --strict.",
    ),
    (
        "PC437",
        E,
        "fmt would change what the file says",
        "The loader reads every plain scalar as a string, but the YAML writer `fmt` uses would "
        "read some as null, a number or a boolean (`~`, `Null`, `1_000`, `1e3`, `yes`) and write "
        "them back differently, or find two keys the same. `fmt` refuses the file instead of "
        'changing a policy: quote the key or value (`"~"`).',
    ),
    (
        "PC431",
        W,
        "allow glob also grants core tools",
        "An allow glob that looks meant for a plugin or MCP server (`github_*` next to the MCP "
        "server `github`) also matches core tools of the catalog (`github_publish`). MCP tools "
        "are named `<server>__<tool>`: write `github__*` to allow only the server's tools.",
    ),
    (
        "PC432",
        W,
        "allow entry never takes effect",
        "In every run where this list applies, an earlier layer has already removed the tools "
        "the entry names (tools are only ever removed: a later layer cannot give a tool back). "
        "This includes a profile that leaves out what a later allow list names, and `alsoAllow` "
        "outside the profile layer, which cannot widen past the profile.",
    ),
    (
        "PC433",
        Severity.INFO,
        "policy test file",
        "`validate` was given a policy test file (`*.test.yaml`, or a file with `policy:` and "
        "`cases:` or `invariants:`). It is validated as a test file, not as a policy; "
        "`policyctl test FILE` runs it.",
    ),
    (
        "PC434",
        Severity.INFO,
        "bundle",
        "`validate` was given a bundle written by `policyctl compile`. Its content hash was "
        "verified and the policy it holds was checked; edit and validate the policy files it "
        "was compiled from.",
    ),
    (
        "PC435",
        E,
        "test file named as a policy",
        "The file holds a policy test file (`policy:` and `cases:` or `invariants:`) but its "
        "name does not end in `.test.yaml`, `.test.toml` or `.test.json`. As a policy it would "
        "be refused; rename it so that `validate` and `test` treat it as a test file.",
    ),
    (
        "PC416",
        E,
        "invalid bundle",
        "The file is not a policyctl bundle, or its content hash does not match its content "
        "(it was edited after `policyctl compile`). Recompile it from the policy files.",
    ),
    (
        "PC415",
        Severity.INFO,
        "contexts sampled",
        "The policy declares more distinct contexts than --max-contexts; the empty-tool-set "
        "check ran on a deterministic sample.",
    ),
    # -- call rules, resolve time -----------------------------------------------------------
    (
        "PC460",
        W,
        "unknown entries in an ask list",
        "A plain entry of an applied `ask` list matches no tool of the run: either a core tool "
        "this run does not have, or a typo (then the approval it was written for never "
        "happens). The entry is kept; check its spelling.",
    ),
    # -- context values the policy does not know (pipeline/warnings.py) -------------------
    (
        "PC450",
        W,
        "unknown agent",
        "The run names an agent that has no entry in agents.entries, so it gets only the "
        "defaults; usually a typo of an agent id (the closest one is suggested).",
    ),
    (
        "PC451",
        W,
        "unknown provider",
        "The run's provider (or provider/model) matches no tools.byProvider key but is close "
        "to one, such as a model tag or dated snapshot: the provider profile and rules of that "
        "key do not apply (keys are exact).",
    ),
    (
        "PC452",
        W,
        "unknown channel",
        "The run's channel has no configuration in channels (and a group is named, or a "
        "configured channel is close to it), so no group policy applies.",
    ),
    (
        "PC453",
        W,
        "unknown group",
        "The run's group id matches no key of its channel's groups map (group ids are exact "
        'and case-sensitive), so only the "*" group, if any, applies.',
    ),
    (
        "PC454",
        W,
        "unknown account",
        "The run's account has no configuration under its channel's accounts, so the "
        "channel-wide groups apply (a scheduled run there fails closed instead, PC409).",
    ),
    # -- the runtime (runtime/) ----------------------------------------------------------------
    (
        "PC480",
        W,
        "ask without an approver",
        "The run's call rules ask before some calls (an ask entry, a tool's plain name in ask, or "
        "callDefault: ask), and the runtime was built without an approver: each such call is "
        "refused, and the refusal says it needs approval. Pass Runtime(approver=...) where a "
        "person can answer; in a headless run, write deny or allow rules instead.",
    ),
    # -- around call rules: recorded calls, validate's call-rule checks (callaround) -------
    (
        "PC365",
        E,
        "recorded call is malformed",
        "A file of recorded calls (`simulate --calls`, `diff --calls`) holds JSON lines or one "
        'JSON list of objects {"tool": NAME, "args": {...}, "context": {...}}; `params` or '
        "`arguments` may stand for `args` (a JSON object, or a string holding one), `id` is "
        "ignored. Any other key, a missing tool, or arguments that are not an object is an "
        "error at the call's file:line:col, so no call is replayed with arguments it did not "
        "have.",
    ),
    # -- `policyctl hook install` and `hook doctor`: a host's settings ----------------------
    (
        "PC370",
        E,
        "host settings unreadable",
        "The host's settings file exists but is not valid JSON (or TOML for Codex's "
        "config.toml), or its `hooks` entry is not the shape the host reads. `hook install` "
        "changes nothing; fix the file first, so that none of its other settings is lost.",
    ),
    (
        "PC371",
        W,
        "hook does not fire for every tool",
        "No policyctl hook is installed for the event that decides tool calls, or its matcher "
        "misses some of the host's tools (a regex such as `Bash|Edit`): calls of those tools "
        "are never decided by the policy. Install with `policyctl hook install`, which matches "
        "every tool.",
    ),
    (
        "PC372",
        W,
        "hook timeout too short",
        "The hook's timeout in the host's settings leaves too little time for a decision; on a "
        "timeout the host lets the call proceed. Give it at least a few seconds.",
    ),
    (
        "PC373",
        W,
        "hooks disabled",
        "The host's settings turn hooks off (`disableAllHooks`, `hooks.enabled: false`, Codex "
        "`[features] hooks = false`): no call is decided by the policy.",
    ),
    (
        "PC374",
        W,
        "host version with a known hole",
        "This version of the host is known to skip hooks for some calls (for example subagent "
        "tool calls in several Claude Code 2.1 releases): those calls are never decided by the "
        "policy. Upgrade the host, or deny the tools that start subagents.",
    ),
    (
        "PC470",
        W,
        "call rule can never match",
        "A shell specifier names a command the analysis never leaves in place: a shell "
        "(`sh -c 'SCRIPT'` is decided by its script's commands; `sh FILE` cannot be analysed), "
        "`eval`, `source` or `.` (cannot be analysed), a bash reserved word, or a wrapper "
        "(`timeout`, `nice`, `nohup`, `env`, `command`, `time`: the command catalog's "
        "transparent entries) with a command after it: "
        "wrappers are stripped, so `exec(nohup *)` never meets `nohup rm x`, matched as "
        "`rm x`. A deny written this way protects nothing.",
    ),
    (
        "PC438",
        E,
        "call rule on a misspelt tool",
        "A `tool(specifier)` entry names no tool of the catalog, and its specifier is one only a "
        "catalog tool's argument kind reads (a command, a path, a URL), while a catalog tool "
        "has a name close to it: `exce(rm *)` next to `exec`. The rule could never match, so "
        "the deny it was meant to be protects nothing. Correct the tool name.",
    ),
    (
        "PC439",
        W,
        "call rule on an unknown tool",
        "A `tool(key=glob)` entry names a tool that neither the catalog nor the declared "
        "inventory has, so its rules decide no call; usually a typo (the closest known name "
        "is suggested). Declare the plugin or MCP tool under `inventory:` if the deployment "
        "has it. A warning, an error under `--strict`.",
    ),
    (
        "PC441",
        W,
        "call rule on an argument the tool does not have",
        "A `tool(key=glob)` entry reads an argument that the tool's declared parameters "
        "(`inventory.plugins[].parameters`, a JSON Schema object) do not list: a call that "
        "follows them never carries it, so the rule never matches (a deny written so protects "
        "nothing). A schema that admits other keys explicitly (`additionalProperties`) is not "
        "checked. The closest parameter is suggested. A warning, an error under "
        "`--strict`.",
    ),
    (
        "PC490",
        W,
        "call rule names a subcommand of a command without a model",
        "A deny or ask shell specifier names a subcommand (`exec(cargo publish *)`) of a "
        "command the command catalog does not model. Its words are matched as written, so a "
        "global option before the subcommand (`cargo --locked publish`) can keep the rule "
        "from meeting the call. Add the command's model to the policy's `commands` key (its "
        "global options and `payload: subcommand`) so the call is matched in its canonical "
        "form, or write the rule with a `*` before the subcommand.",
    ),
    (
        "PC417",
        W,
        "shadowing check cut short",
        "The check for specifiers a deny or ask of the same layer shadows (PC471) compares "
        "pairs of specifiers on the same command; it stops after a fixed number of comparisons "
        "so that validate stays within its time budget. The specifiers after that point were "
        "not checked for shadowing (their rules are enforced as written).",
    ),
    (
        "PC471",
        W,
        "specifier shadowed at its layer",
        "Every call an allow specifier admits is also met by a deny (or ask) specifier of the "
        "same layer, which wins: the allow never decides a call there (and an ask a deny of "
        "the same layer covers never asks). Narrow the deny, or rewrite the shadowed rule.",
    ),
    (
        "PC472",
        W,
        "call rule on a tool no run has",
        "The specifier's tool is not allowed in any context of the policy's context matrix, "
        "so its call rules never decide a call; usually the tool is denied by name elsewhere, "
        "or missing from an allow list.",
    ),
    # -- `policyctl gateway`: the MCP gateway -------------------------------------------------
    (
        "PC500",
        E,
        "gateway servers file invalid",
        'The `--servers` file is not `{"mcpServers": {NAME: {"command", "args", "env"} | '
        '{"url", "headers"}}}`, names a server whose name makes `NAME__` ambiguous, or sets '
        "an unknown key. The message names the entry; fix it and start the gateway again.",
    ),
    (
        "PC501",
        E,
        "gateway clients or token file invalid",
        'The `--clients` file (`{"clients": {NAME: {"token", "context"}}}`) or the '
        "`--token-file` cannot be used: unreadable, a token shorter than 16 characters, a token "
        "two clients share, or a context field policyctl does not know.",
    ),
    (
        "PC502",
        E,
        "upstream MCP server unavailable",
        "The call was allowed but its MCP server is not running (it is being restarted), broke "
        "during the call, did not answer within `--call-timeout`, or answered more than the "
        "gateway passes on. The client gets a tool error; the other servers keep serving.",
    ),
    (
        "PC503",
        W,
        "upstream tool listing refused in part",
        "An upstream server listed a tool without a usable name, the same name twice, a tool "
        "without an object `inputSchema`, or more tools than the gateway serves from one "
        "server. Those tools are left out of what clients see; fix the server.",
    ),
    (
        "PC504",
        E,
        "gateway listener refused",
        "`--listen` names an address other than loopback without `--token-file` or `--clients` "
        "(anyone who reaches the port would be served), or the token flags were given without "
        "`--listen`.",
    ),
    # PC520-PC539: the decision server (`policyctl serve`)
    (
        "PC520",
        E,
        "request body too large",
        "A request to the decision server is larger than `--max-body-bytes` (HTTP 413; on a "
        "hook route, a refusal). Raise the cap if the clients send large tool arguments.",
    ),
    (
        "PC521",
        E,
        "request body not JSON",
        "The body of a request to the decision server is not UTF-8 JSON (HTTP 400).",
    ),
    (
        "PC522",
        E,
        "request does not match the API",
        "A field of the request is missing, unknown or of the wrong type (HTTP 422); `path` "
        "names it. The API is described in schemas/server.openapi.json.",
    ),
    (
        "PC523",
        E,
        "bearer token missing or wrong",
        "The server was started with `--token-file` and the request carries no `Authorization: "
        "Bearer` header with one of its tokens (HTTP 401; on a hook route, a refusal).",
    ),
    (
        "PC524",
        E,
        "no policy in service",
        "The server has never loaded a valid policy, so it decides nothing (HTTP 503, /health "
        "503). /v1/status and the server's log say why the policy failed to load.",
    ),
    (
        "PC525",
        E,
        "request took too long",
        "The request was not answered within `--request-timeout` seconds (HTTP 503; on a hook "
        "route, a refusal). A client treats it as a refusal, never as an allow.",
    ),
    (
        "PC526",
        E,
        "no such route",
        "The decision server has no route for this path or method (HTTP 404/405); the routes "
        "are listed in docs/server.md.",
    ),
    (
        "PC527",
        E,
        "bundle could not be fetched",
        "Polling the bundle URL failed (the server is down, answered an error status or took "
        "too long). The last good revision stays in service; /health says `degraded`.",
    ),
    (
        "PC528",
        E,
        "bundle rejected",
        "The bundle fetched from the URL is not a valid bundle, or its signature does not "
        "verify under POLICYCTL_BUNDLE_KEY_FILE. The last good revision stays in service.",
    ),
    (
        "PC529",
        E,
        "decision log cannot be written",
        "The decision could not be written to `--decision-log`, so an allow or ask was turned "
        "into a deny: an unlogged call is never let through. Fix the log file's directory or "
        "permissions.",
    ),
    (
        "PC530",
        E,
        "server settings refused",
        "`policyctl serve` was asked to listen on a non-loopback address without "
        "`--token-file`, or the token file is unreadable, empty, or open to other users.",
    ),
)


@dataclass(frozen=True, slots=True)
class Diagnostic:
    code: str
    message: str
    source: Source | None = None
    path: str = ""
    fix: str | None = None
    severity: Severity = field(default=Severity.ERROR)
    #: False when the source line must not be quoted: the file did not parse as a policy (it
    #: may be any file an `extends` named: a `.env`, a credentials file)
    quote: bool = True

    @staticmethod
    def make(
        code: str,
        message: str,
        source: Source | None = None,
        path: str = "",
        fix: str | None = None,
    ) -> Diagnostic:
        return Diagnostic(code, message, source, path, fix, CODES[code].severity)

    def sort_key(self) -> tuple[str, int, int, str]:
        if self.source is None:
            return ("", 0, 0, self.code)
        return (self.source.file, self.source.line, self.source.column, self.code)

    def __str__(self) -> str:
        where = f"{self.source}: " if self.source else ""
        text = f"{where}{self.code} {self.message}"
        return f"{text} ({self.fix})" if self.fix else text


class PolicyError(Exception):
    """A policy could not be loaded or compiled; carries every diagnostic found."""

    def __init__(self, diagnostics: Sequence[Diagnostic]):
        self.diagnostics: tuple[Diagnostic, ...] = tuple(
            sorted(diagnostics, key=Diagnostic.sort_key)
        )
        errors = [d for d in self.diagnostics if d.severity is Severity.ERROR]
        shown = errors or list(self.diagnostics)
        head = str(shown[0]) if shown else "invalid policy"
        more = f" (and {len(shown) - 1} more)" if len(shown) > 1 else ""
        super().__init__(head + more)

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity is Severity.ERROR)


def did_you_mean(word: str, candidates: Iterable[str]) -> str | None:
    """The single closest candidate, or None when nothing is close enough."""
    import difflib  # only a bad input needs it: every command's start-up would pay for it

    matches = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.75)
    return matches[0] if matches else None


def suggestion(word: str, candidates: Iterable[str]) -> str | None:
    best = did_you_mean(word, candidates)
    return f'did you mean "{best}"?' if best else None
