"""`git -c NAME=VALUE`, `git clone -c NAME=VALUE`, `git --config-env=NAME=VAR`: configuration
set on git's command line.

Git runs commands its configuration names: `core.sshCommand`, `core.pager`, `core.editor`,
`core.fsmonitor` on `git status`, `credential.helper`, `diff.*.textconv`, `filter.*.clean`,
and `alias.NAME='!CMD'` runs CMD as `git NAME`. The command catalog's `[git_config]` table
sorts a setting's name: known to run nothing (safe), known to run its value as a shell command
(the value is then decided as that command, as code the line runs), or neither (the line is
unanalysable: it may run code). The environment form (`GIT_CONFIG_COUNT=1 ...`) is a
rebinding (`GIT_*`, `wrappers.rebinds`) and `--config-env` takes its value from the
environment, which policyctl cannot see: unanalysable unless the name is safe.
"""

from __future__ import annotations

from ..catalog.commands import GitConfig

CONFIG = "git configuration on the command line that can make git run a command (like GIT_*)"


def setting_scripts(config: GitConfig, setting: str | None, from_env: bool) -> str | list[str]:
    """The shell scripts a setting makes git run ([] for a safe one), or why it cannot be
    analysed."""
    if setting is None or "=" not in setting:
        if setting is not None and not from_env and config.kind(setting) == "safe":
            return []  # `-c user.name`: a boolean true
        return f"{CONFIG}: {setting or '<?>'}"
    name, _, value = setting.partition("=")
    kind = config.kind(name)
    if kind == "safe":
        return []
    if kind == "runs" and not from_env:
        if name.lower().startswith("alias."):
            # `!CMD` is a shell command; otherwise the alias is a git command line
            return [value[1:]] if value.startswith("!") else [f"git {value}"]
        return [value]
    return f"{CONFIG}: {setting}"
