"""The table of call cases: every shell construct, paths, URLs, precedence, callDefault.

Each row: a policy (named below), a call, the expected decision and, where it matters, what
decided it (the entry, or the reason, or `layer:<label>`). Paths are relative to a workspace
made per test session with real files and symlinks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from callrules_helpers import env_for, layer, make_workspace

from policyctl.callrules import CallEnvironment, LayerCallRules, Roots, decide_call

Policy = Callable[[CallEnvironment], list[LayerCallRules]]

EXEC_P1 = {
    "deny": ["exec(rm *)", "exec(sudo *)", "exec(curl *)"],
    "ask": ["exec(git push *)"],
    "allow": [
        "exec(git *)",
        "exec(npm run test *)",
        "exec(ls *)",
        "exec(echo *)",
        "exec(cat *)",
        "exec(grep *)",
    ],
}
READ_P1 = {
    "deny": ["read(.env)", "read(./secrets/)", "read(~/.ssh/)", "read(*.pem)"],
    "allow": ["read(./src/**)", "read(/etc/hostname)", "read(./README.md)", "read(./docs/)"],
    "default": "ask",
}
WRITE_P1 = {"deny": ["write(.env)", "write(./secrets/)", "write(~/.bashrc)"]}
WEB_P1 = {
    "deny": [
        "web_fetch(domain:*.internal)",
        "web_fetch(ip:10.0.0.0/8)",
        "web_fetch(ip:127.0.0.0/8)",
        "web_fetch(ip:169.254.0.0/16)",
    ],
    "allow": [
        "web_fetch(domain:docs.python.org)",
        "web_fetch(domain:*.example.com)",
        "web_fetch(https://api.github.com/repos/acme/*)",
    ],
}
MERGE_P1 = {
    "deny": ["github__merge_pr(repo=acme/secret*)", "github__merge_pr(force=true)"],
    "allow": ["github__merge_pr(repo=acme/*)", "github__merge_pr(data.repo=acme/*, pr=42)"],
}
PATCH_P1 = {
    "deny": ["apply_patch(.env)", "apply_patch(./secrets/)"],
    "allow": ["apply_patch(./src/**)"],
}


def p1(env: CallEnvironment) -> list[LayerCallRules]:
    return [
        layer(
            "global",
            env,
            exec=EXEC_P1,
            read=READ_P1,
            write=WRITE_P1,
            web_fetch=WEB_P1,
            github__merge_pr=MERGE_P1,
            apply_patch=PATCH_P1,
        )
    ]


def p2(env: CallEnvironment) -> list[LayerCallRules]:
    """exec admitted by name, only `rm` refused; read/write rules for redirections."""
    return [layer("global", env, exec={"deny": ["exec(rm *)"]}, read=READ_P1, write=WRITE_P1)]


def p3(env: CallEnvironment) -> list[LayerCallRules]:
    """No call rules for exec at all."""
    return [layer("global", env, read=READ_P1)]


def star_patterns(env: CallEnvironment) -> list[LayerCallRules]:
    return [
        layer(
            "global",
            env,
            exec={
                "allow": [
                    "exec(git * main)",
                    "exec(ls --color=*)",
                    "exec(echo '*')",
                    "exec(make:*)",
                    "exec(npm run test:*)",
                    "exec(*/python3 -m pytest *)",
                    'exec(git commit -m "fix bug")',
                    "exec(git log)",
                ],
                "deny": ["exec(git push * --force)"],
            },
        )
    ]


def in_layer(**rules: Any) -> Policy:
    return lambda env: [layer("agent", env, exec=rules)]


def across(*specs: tuple[str, dict[str, Any]]) -> Policy:
    return lambda env: [layer(label, env, exec=rules) for label, rules in specs]


POLICIES: dict[str, Policy] = {
    "p1": p1,
    "p2": p2,
    "p3": p3,
    "star": star_patterns,
    "sudo_allowed": in_layer(allow=["exec(sudo apt update)", "exec(git *)"], deny=["exec(rm *)"]),
    "deny_push_ask_push_allow_git": in_layer(
        deny=["exec(git push *)"], ask=["exec(git push *)"], allow=["exec(git *)"]
    ),
    "ask_push_allow_git": in_layer(ask=["exec(git push *)"], allow=["exec(git *)"]),
    "plain_ask_allow_git": in_layer(plain_ask=True, allow=["exec(git *)"], name=False),
    "rm_refused_rest_asks": in_layer(deny=["exec(rm *)"], plain_ask=True),
    "git_rest_asks": in_layer(allow=["exec(git *)"], default="ask"),
    "deny_all": in_layer(deny=["exec(*)"]),
    "deny_rm_rf": in_layer(deny=["exec(rm -rf *)", "exec(rm x)"]),
    "allow_all_specifier": in_layer(allow=["exec(*)"]),
    "name_and_specifier": in_layer(allow=["exec(git *)"], name=True),
    "plain_ask_only": in_layer(plain_ask=True),
    "keyed_on_exec": in_layer(deny=["exec(workdir=/tmp/*)"]),
    "git_then_deny_push": across(
        ("global", {"allow": ["exec(git *)"]}), ("agent", {"deny": ["exec(git push *)"]})
    ),
    "deny_rm_then_allow_rm": across(
        ("global", {"deny": ["exec(rm *)"]}), ("agent", {"allow": ["exec(rm *)"]})
    ),
    "ask_then_allow": across(
        ("global", {"ask": ["exec(git push *)"]}), ("agent", {"allow": ["exec(git *)"]})
    ),
    "ask_then_deny": across(
        ("global", {"ask": ["exec(git push *)"]}), ("sandbox", {"deny": ["exec(git push *)"]})
    ),
    "deny_twice": across(
        ("global", {"deny": ["exec(rm *)"]}), ("agent", {"deny": ["exec(rm -rf *)"]})
    ),
    "rules_then_silent": across(("global", {"allow": ["exec(git *)"]}), ("agent", {"name": True})),
    "parent_inherited": across(
        ("global", {"allow": ["exec(git *)", "exec(npm *)"]}),
        ("subagent", {"allow": ["exec(git *)"]}),
        ("inherited", {"deny": ["exec(git push *)"]}),
    ),
    "eleven": across(
        *[(f"layer{i}", {"allow": ["exec(git *)"]}) for i in range(1, 11)],
        ("layer11", {"deny": ["exec(git push *)"]}),
    ),
}


@dataclass(frozen=True)
class Case:
    policy: str
    tool: str
    args: dict[str, Any]
    expect: str
    by: str | None = None  # an entry, a reason ("callDefault", ...) or "layer:<label>"


def sh(policy: str, command: str, expect: str, by: str | None = None) -> Case:
    return Case(policy, "exec", {"command": command}, expect, by)


def rd(path: str, expect: str, by: str | None = None, policy: str = "p1") -> Case:
    return Case(policy, "read", {"path": path}, expect, by)


def web(url: str, expect: str, by: str | None = None) -> Case:
    return Case("p1", "web_fetch", {"url": url}, expect, by)


def merge(args: dict[str, Any], expect: str, by: str | None = None) -> Case:
    return Case("p1", "github__merge_pr", args, expect, by)


def patch(text: str, expect: str, by: str | None = None) -> Case:
    return Case("p1", "apply_patch", {"input": text}, expect, by)


RM = "exec(rm *)"
DEFAULT = "callDefault"
UNANALYSABLE = "cannot be analysed"

SHELL_CONSTRUCTS = [
    sh("p1", "git status", "allow", "exec(git *)"),
    sh("p1", "git", "allow", "exec(git *)"),
    sh("p1", 'git "status"', "allow"),
    sh("p1", "git push origin main", "ask", "exec(git push *)"),
    sh("p1", "git push", "ask"),
    sh("p1", "rm -rf /", "deny", RM),
    sh("p1", "/bin/rm -rf /", "deny", DEFAULT),  # the first word is literal: not `rm`
    sh("p1", "Git status", "deny", DEFAULT),  # command words are case-sensitive
    sh("p1", "ls && rm x", "deny", RM),
    sh("p1", "ls || rm x", "deny", RM),
    sh("p1", "ls; rm x", "deny", RM),
    sh("p1", "ls | rm x", "deny", RM),
    sh("p1", "ls |& rm x", "deny", RM),
    sh("p1", "ls & rm x", "deny", RM),
    sh("p1", "ls\nrm x", "deny", RM),
    sh("p1", "(rm x)", "deny", RM),
    sh("p1", "{ rm x; }", "deny", RM),
    sh("p1", "echo $(rm x)", "deny", RM),
    sh("p1", "echo `rm x`", "deny", RM),
    sh("p2", "echo `echo \\`rm x\\``", "deny", RM),  # nested, escaped backticks
    sh("p2", "echo `printf '%s\\n' a`", "allow"),
    sh("p2", "time { rm x; }", "deny", RM),
    sh("p2", "! { rm x; }", "deny", RM),
    sh("p1", "time { git status; }", "allow"),
    sh("p2", "time if true; then rm x; fi", "deny", UNANALYSABLE),  # misread by the grammar
    sh("p2", "coproc while true; do rm x; done", "deny", UNANALYSABLE),
    sh("p2", "{ time { if ls; then rm x; fi; }; }", "deny", UNANALYSABLE),
    sh("p2", "time { { rm x; }; }", "deny", UNANALYSABLE),
    sh("p2", "a\\ b c", "allow"),  # an escaped blank is part of the word
    sh("p1", "cat <(rm x)", "deny", RM),
    sh("p1", "echo hi > >(rm x)", "deny", RM),
    sh("p1", "if true; then rm x; fi", "deny", RM),
    sh("p1", "if git status; then ls; else rm x; fi", "deny", RM),
    sh("p1", "for f in a b; do rm $f; done", "deny", RM),
    sh("p1", "for f in $(rm x); do ls; done", "deny", RM),
    sh("p1", "while git status; do rm x; done", "deny", RM),
    sh("p1", "case a in a) rm x;; esac", "deny", RM),
    sh("p1", "f() { rm x; }", "deny", RM),
    sh("p1", "echo ${X:-$(rm x)}", "deny", RM),
    sh("p1", "echo $((1 + $(rm x)))", "deny", RM),
    sh("p1", 'echo "$(rm x)"', "deny", RM),
    sh("p1", "cat <<EOF\n$(rm x)\nEOF", "deny", RM),
    sh("p1", "cat <<EOF\n  $(rm x)\nEOF", "deny", RM),  # the grammar misses indented lines
    sh("p1", "cat <<-EOF\n\t`rm x`\n\tEOF", "deny", RM),
    sh("p1", "cat <<'EOF'\n  $(rm x)\nEOF", "allow"),  # a quoted delimiter: literal text
    sh("p1", "cat <<EOF | rm x\nhi\nEOF", "deny", RM),
    sh("p1", "cat <<EOF && rm x\nhi\nEOF", "deny", RM),
    sh("p2", "cat <<EOF > .env\nX=1\nEOF", "deny", "write(.env)"),
    sh("p1", 'cat <<EOF\n "q" \\" $(git status)\nEOF', "allow"),
    sh("p1", "cat <<< $(rm x)", "deny", RM),
    sh("p1", "export A=$(rm x)", "deny", RM),
    sh("p1", "A=$(rm x) ls", "deny", RM),
    sh("p1", "[[ -f $(rm x) ]]", "deny", RM),
    sh("p1", "! rm x", "deny", RM),
    sh("p1", "git log | grep fix", "allow"),
    sh("p1", "git log && ls -la", "allow"),
    sh("p1", "ls -la; echo done", "allow"),
    sh("p1", "git status && git push", "ask", "exec(git push *)"),
    sh("p1", "git push && rm x", "deny", RM),
    sh("p1", "git commit -m 'fix bug'", "allow"),
    sh("p1", "npm run test -- --watch", "allow", "exec(npm run test *)"),
    sh("p1", "npm run build", "deny", DEFAULT),
    sh("p1", "npm test", "deny", DEFAULT),
    sh("p1", "echo $(git status)", "allow"),
    sh("p1", "echo $(npm test)", "deny", DEFAULT),
    # literal scripts of sh -c and friends are transparent
    sh("p1", "sh -c 'rm x'", "deny", RM),
    sh("p1", "bash -lc 'git status'", "allow", "exec(git *)"),
    sh("p1", "bash -c 'git push'", "ask"),
    sh("p1", "sh -c \"sh -c 'rm -rf /'\"", "deny", RM),
    sh("p1", "/bin/bash -c 'rm x'", "deny", RM),
    sh("p1", "zsh -c 'ls'", "allow"),
    sh("p1", "dash -c 'echo hi'", "allow"),
    sh("p1", "bash -e -o pipefail -c 'rm x'", "deny", RM),
    sh("p1", 'bash -c "$SCRIPT"', "deny", UNANALYSABLE),
    sh("p1", "bash script.sh", "deny", UNANALYSABLE),
    sh("p1", "echo rm x | sh", "deny", UNANALYSABLE),
    # quote removal and escapes in the command word
    sh("p1", "'rm' -rf /", "deny", RM),
    sh("p1", '"r"m x', "deny", RM),
    sh("p1", "r\\m x", "deny", RM),
    sh("p1", "$'\\x72m' x", "deny", RM),
    sh("p1", "$'r\\155' -rf /", "deny", RM),
    sh("p1", "$'\\u0072m' x", "deny", RM),
    # assignments and wrappers
    sh("p1", "FOO=1 rm x", "deny", RM),
    sh("p1", "FOO=1 BAR=2 git status", "allow"),
    sh("p1", "timeout 5 rm x", "deny", RM),
    sh("p1", "timeout -s KILL 5 rm x", "deny", RM),
    sh("p1", "timeout --kill-after=3 5 rm x", "deny", RM),
    sh("p1", "nice -n 5 rm x", "deny", RM),
    sh("p1", "nice -10 rm x", "deny", RM),
    sh("p1", "nice rm x", "deny", RM),
    sh("p1", "nohup rm x", "deny", RM),
    sh("p1", "env rm x", "deny", RM),
    sh("p1", "env -i FOO=1 rm x", "deny", RM),
    sh("p1", "env -u HOME rm x", "deny", RM),
    sh("p1", "command rm x", "deny", RM),
    sh("p1", "command -p rm x", "deny", RM),
    sh("p1", "time rm x", "deny", RM),
    sh("p1", "time -p rm x", "deny", RM),
    sh("p1", "/usr/bin/env rm x", "deny", RM),
    sh("p1", "timeout 5 nice -n 2 env A=1 command git status", "allow"),
    sh("p1", "time git status", "allow"),
    sh("p1", "timeout --weird 5 rm x", "deny", UNANALYSABLE),
    sh("p1", "env -S 'rm x'", "deny", UNANALYSABLE),
    sh("p1", "env $X rm", "deny", UNANALYSABLE),
    # `_=1` is an assignment to bash though the grammar takes it for the command word
    sh("p2", "_=1 rm -rf /", "deny", RM),
    sh("p2", "x=1 _+=2 rm -rf /", "deny", RM),
    # sudo, xargs, find: commands in their own right, and their payloads too
    sh("p1", "sudo ls", "deny", "exec(sudo *)"),
    sh("p2", "sudo rm -rf /", "deny", RM),
    sh("p2", "sudo -u root -E rm x", "deny", RM),
    sh("p2", "doas rm x", "deny", RM),
    sh("p2", "exec rm x", "deny", RM),
    sh("p2", "builtin eval x", "deny", UNANALYSABLE),
    sh("sudo_allowed", "sudo apt update", "allow", "exec(sudo apt update)"),  # payload screened
    sh("sudo_allowed", "sudo rm -rf /", "deny", RM),
    # xargs appends its input: the missing words may come from it, or none at all
    sh("deny_rm_rf", "echo -rf / | xargs rm", "deny", "exec(rm -rf *)"),
    sh("deny_rm_rf", "true | xargs rm x", "deny", "exec(rm x)"),
    sh("deny_rm_rf", "rm", "allow"),
    sh("sudo_allowed", "sudo -u root apt update", "deny", DEFAULT),
    sh("p2", "sudo -s", "deny", UNANALYSABLE),
    sh("p2", "setsid rm -rf /", "deny", RM),
    sh("p2", "stdbuf -oL rm x", "deny", RM),
    sh("p2", "nsenter -t 1 -m rm x", "deny", RM),
    sh("p2", "ssh host rm -rf /", "deny", RM),
    sh("p2", "watch -n 1 ls", "allow"),
    sh("p2", "su -c 'rm -rf /' root", "deny", RM),
    sh("p2", "su root", "deny", UNANALYSABLE),
    sh("p2", "runuser -u bob -- rm x", "deny", RM),
    sh("p2", "coproc rm x", "deny", RM),
    sh("p2", "coproc NAME { rm x; }", "deny", UNANALYSABLE),
    sh("p2", "busybox rm -rf /", "deny", RM),
    sh("p2", "alias ls='rm -rf /'", "deny", UNANALYSABLE),
    sh("p1", "r\\\nm -rf /", "deny", RM),  # bash joins continued lines before splitting words
    sh("p1", "git log \\\n  --oneline", "allow", "exec(git *)"),
    sh("p1", "echo 'r\\\nm'; git status", "allow"),
    sh("p2", "ls | xargs echo", "allow"),
    sh("p2", "ls | xargs rm", "deny", RM),
    sh("p2", "ls | xargs -n1 -P4 rm -f", "deny", RM),
    sh("p2", "ls | xargs -I{} rm {}", "deny", RM),
    sh("p2", "find . -name '*.tmp' -exec rm {} \\;", "deny", RM),
    sh("p2", "find . -exec rm -f {} +", "deny", RM),
    sh("p2", "find . -execdir sh -c 'rm x' \\;", "deny", RM),
    # the files find hands to grep are reads of unknown paths: the read rules cannot place them
    sh("p2", "find . -exec grep x {} \\;", "ask", UNANALYSABLE),
    sh("p2", "find . -exec rm", "deny", UNANALYSABLE),
    sh("p1", "ls | xargs git status", "deny", DEFAULT),  # xargs itself is not allowed
    # what cannot be analysed
    sh("p1", "eval 'ls'", "deny", UNANALYSABLE),
    sh("p1", "source x.sh", "deny", UNANALYSABLE),
    sh("p1", ". x.sh", "deny", UNANALYSABLE),
    sh("p1", "$CMD x", "deny", UNANALYSABLE),
    sh("p1", "`echo rm` x", "deny", UNANALYSABLE),
    sh("p1", "${CMD} x", "deny", UNANALYSABLE),
    sh("p2", "trap 'rm x' EXIT", "deny", UNANALYSABLE),
    sh("p1", 'echo "unterminated', "deny", UNANALYSABLE),
    sh("p1", "cat <<EOF\nno end", "deny", UNANALYSABLE),
    sh("p1", "ls )", "deny", UNANALYSABLE),
    sh("p1", "echo " + "a" * 70_000, "deny", UNANALYSABLE),
    sh("p1", "ls\x00rm", "deny", UNANALYSABLE),
    sh("p2", "eval ls", "deny", UNANALYSABLE),  # plain-name allow does not verify it
    sh("p2", "ls; eval rm -rf /", "deny", UNANALYSABLE),
    sh("p2", "ls -la", "allow", "exec"),
    sh("p3", "eval ls", "allow"),  # no specifier for exec at this layer: allowed
    sh("p3", "rm -rf /", "allow"),
    # bare-star patterns, globs in words, quoted stars, `:*`, unknown words
    sh("star", "git push origin main", "allow", "exec(git * main)"),
    sh("star", "git main", "allow", "exec(git * main)"),
    sh("star", "git push origin dev", "deny", DEFAULT),
    sh("star", "ls --color=auto", "allow", "exec(ls --color=*)"),
    sh("star", "ls --colour=auto", "deny", DEFAULT),
    sh("star", "echo '*'", "allow", "exec(echo '*')"),
    sh("star", "echo hi", "deny", DEFAULT),
    sh("star", "echo *", "deny", DEFAULT),  # an unquoted glob is unknown words
    sh("star", "make all", "allow", "exec(make:*)"),
    sh("star", "make", "allow"),
    sh("star", "npm run test x", "allow", "exec(npm run test:*)"),
    sh("star", "/usr/bin/python3 -m pytest -q", "allow"),
    sh("star", "python3 -m pytest", "deny", DEFAULT),
    sh("star", 'git commit -m "fix bug"', "allow", 'exec(git commit -m "fix bug")'),
    sh("star", "git commit -m fix bug", "deny", DEFAULT),
    sh("star", "git log", "allow", "exec(git log)"),
    sh("star", "git log $X", "deny", DEFAULT),  # $X could be anything: no literal allow
    sh("star", "git push origin main --force", "deny", "exec(git push * --force)"),
    sh("star", "git push --force origin main", "allow", "exec(git * main)"),  # textual
    sh("star", "git push origin $F", "deny", "exec(git push * --force)"),  # $F may be --force
]

REDIRECTIONS = [
    sh("p2", "git diff > out.txt", "allow"),
    sh("p2", "echo x > .env", "deny", "write(.env)"),
    sh("p2", "echo x >> ./secrets/a", "deny", "write(./secrets/)"),
    sh("p2", "echo x >| .env", "deny", "write(.env)"),
    sh("p2", "git log &> .env", "deny", "write(.env)"),
    sh("p2", "git log > /dev/null 2>&1", "allow"),
    sh("p2", "echo x > ~/.bashrc", "deny", "write(~/.bashrc)"),
    sh("p2", "echo x | tee -a log .env", "deny", "write(.env)"),
    sh("p2", "echo x | /usr/bin/tee .env", "deny", "write(.env)"),
    sh("p2", "cat < ./secrets/key", "deny", "read(./secrets/)"),
    sh("p2", "cat < src/main.py", "allow"),
    sh("p2", "cat < /tmp/other", "ask", DEFAULT),  # read's callDefault is ask
    sh("p2", "cat <<EOF\nhello\nEOF", "allow"),
    sh("p2", "cat <<< hi", "allow"),
    sh("p2", "echo x > $F", "deny", UNANALYSABLE),
    sh("p2", "cd secrets && echo x > key", "deny", UNANALYSABLE),
    sh("p2", "echo x > a; cd b", "deny", UNANALYSABLE),
    sh("p2", "echo x > /abs/ok; cd b", "allow"),
    sh("p2", "echo x > link_to_secrets/key", "deny", "write(./secrets/)"),
    sh("p2", "echo hi > out more", "allow"),
]

PATHS = [
    rd("./src/main.py", "allow", "read(./src/**)"),
    rd("src/main.py", "allow"),
    rd("src/../.env", "deny", "read(.env)"),
    rd("./a/b/.env", "deny", "read(.env)"),
    rd("/etc/.env", "deny", "read(.env)"),  # no slash: any depth, anywhere
    rd("secrets", "deny", "read(./secrets/)"),
    rd("./secrets/key", "deny", "read(./secrets/)"),
    rd("./secrets/sub/deep", "deny"),
    rd("./link_to_secrets/key", "deny", "read(./secrets/)"),  # real path
    rd("./src/evil.py", "deny", "read(./secrets/)"),  # symlink into secrets
    rd("./src/escape", "ask", DEFAULT),  # allow needs the real path too
    rd("./src/innocent.txt", "deny", "read(.env)"),  # its target is a .env
    rd("./src/loop", "allow"),
    rd("src/deep/../key", "deny", "read(./secrets/)"),  # the kernel follows deep, then ..
    rd("src/deep/deep", "deny", "read(./secrets/)"),
    rd("src/./main.py", "allow"),  # a symlink loop is resolved as far as it goes
    rd("~/.ssh/id_rsa", "deny", "read(~/.ssh/)"),
    rd("../outside/data.txt", "ask", DEFAULT),
    rd("./src/../../outside/data.txt", "ask", DEFAULT),
    rd("", "ask", UNANALYSABLE),
    rd("/etc/hostname", "allow", "read(/etc/hostname)"),
    rd("/etc/hostname/../shadow", "ask", DEFAULT),
    rd("./README.md", "allow"),
    rd("./readme.md", "ask", DEFAULT),  # paths are case-sensitive
    rd("key.pem", "deny", "read(*.pem)"),
    rd("./certs/a.pem", "deny", "read(*.pem)"),
    rd("./src", "ask", DEFAULT),  # ./src/** is what is inside, not src itself
    rd("./docs", "allow", "read(./docs/)"),
    rd("./docs/guide.md", "ask", DEFAULT),  # allowing a directory does not admit its files
    rd("~other/x", "ask", UNANALYSABLE),
    rd("src//main.py", "allow"),
    Case("p1", "read", {}, "ask", UNANALYSABLE),
    Case("p1", "read", {"path": ["a"]}, "ask", UNANALYSABLE),
    Case(
        "p2", "exec", {"command": "echo x > key", "workdir": "secrets"}, "deny", "write(./secrets/)"
    ),
    Case("p2", "exec", {"command": "echo x > key", "workdir": 3}, "deny", UNANALYSABLE),
    patch("*** Begin Patch\n*** Update File: src/a.py\n@@\n-x\n+y\n*** End Patch", "allow"),
    patch(
        "*** Begin Patch\n*** Update File: src/a.py\n*** Add File: .env\n+X=1\n",
        "deny",
        "apply_patch(.env)",
    ),
    patch("*** Update File: src/a.py\n*** Move to: ../a.py\n", "deny", DEFAULT),
    patch("--- a/src/a.py\n+++ b/src/a.py\n@@ -1 +1 @@\n-x\n+y\n", "allow"),
    patch(
        "diff --git a/src/x b/secrets/y\nBinary files differ\n", "deny", "apply_patch(./secrets/)"
    ),
    patch("just some text", "deny", UNANALYSABLE),
    patch('diff --git "a/src/x y" "b/src/x y"\nnew mode 100755\n', "allow"),
    patch('diff --git "a/src/x" "b/secrets/\\171"\n', "deny", "apply_patch(./secrets/)"),
    patch('diff --git "a/src/x" "b/src/y" z\n', "deny", UNANALYSABLE),
]

URLS = [
    web("https://docs.python.org/3/", "allow", "web_fetch(domain:docs.python.org)"),
    web("HTTPS://DOCS.PYTHON.ORG/", "allow"),
    web("https://docs.python.org./", "allow"),
    web("https://user:pw@docs.python.org/", "allow"),
    web("http://docs.python.org@evil.test/", "deny", DEFAULT),
    web("https://evil.test/?docs.python.org", "deny", DEFAULT),
    web("https://docs.python.org.evil.test/", "deny", DEFAULT),
    web("https://a.example.com/", "allow", "web_fetch(domain:*.example.com)"),
    web("https://a.b.example.com/x", "allow"),
    web("https://example.com/", "deny", DEFAULT),  # *.example.com: subdomains, not itself
    web("https://badexample.com/", "deny", DEFAULT),
    web("https://db.internal/", "deny", "web_fetch(domain:*.internal)"),
    web("https://x.DB.Internal./", "deny", "web_fetch(domain:*.internal)"),
    web("http://10.1.2.3/", "deny", "web_fetch(ip:10.0.0.0/8)"),
    web("http://127.0.0.1/", "deny", "web_fetch(ip:127.0.0.0/8)"),
    web("http://127.1/", "deny", "web_fetch(ip:127.0.0.0/8)"),
    web("http://0x7f000001/", "deny", "web_fetch(ip:127.0.0.0/8)"),
    web("http://2130706433/", "deny", "web_fetch(ip:127.0.0.0/8)"),
    web("http://0177.0.0.1/", "deny", "web_fetch(ip:127.0.0.0/8)"),
    web("http://[::ffff:127.0.0.1]/", "deny", "web_fetch(ip:127.0.0.0/8)"),
    web("http://[::1]/", "deny", DEFAULT),
    web("http://169.254.169.254/latest/meta-data", "deny", "web_fetch(ip:169.254.0.0/16)"),
    web("http://1.2.3.256/", "deny", UNANALYSABLE),
    web("http://08/", "deny", UNANALYSABLE),  # octal to a client, and 8 is no octal digit
    web("http://10.0.0.09/", "deny", UNANALYSABLE),
    web(
        "https://api.github.com/repos/acme/x",
        "allow",
        "web_fetch(https://api.github.com/repos/acme/*)",
    ),
    web("https://api.github.com/repos/other/x", "deny", DEFAULT),
    web("https://api.github.com/repos/acme/../other/x", "deny", DEFAULT),  # the server's view
    web("https://api.github.com/repos/acme/%2E%2e/other/x", "deny", DEFAULT),
    web("https://api.github.com/repos/acme%2F..%2Fother/x", "deny", UNANALYSABLE),
    web("https://api.github.com/repos/acme/x?next=https%3A%2F%2Fz", "allow"),
    web("https://api.github.com:8443/repos/acme/x", "deny", DEFAULT),
    web("https://api.github.com:443/repos/acme/x", "allow"),
    web("http://api.github.com/repos/acme/x", "deny", DEFAULT),  # the scheme is part of it
    web("https://bücher.example.com/", "allow", "web_fetch(domain:*.example.com)"),
    web("https://docs\uff0epython\uff0eorg/", "allow"),  # fullwidth dots map to dots (UTS 46)
    web("http://evil.test\\@docs.python.org/", "deny", UNANALYSABLE),
    web("https://docs.python.org%2eevil.test/", "deny", UNANALYSABLE),
    web("not a url", "deny", UNANALYSABLE),
    web("https://docs.python.org:99999/", "deny", UNANALYSABLE),
    web("file:///etc/passwd", "deny", UNANALYSABLE),
]

KEYED = [
    merge({"repo": "acme/web"}, "allow", "github__merge_pr(repo=acme/*)"),
    merge({"repo": "acme/secret-keys"}, "deny", "github__merge_pr(repo=acme/secret*)"),
    merge({"repo": "ACME/Secret-keys"}, "deny", "github__merge_pr(repo=acme/secret*)"),
    merge({"repo": "ACME/web"}, "deny", DEFAULT),  # allow compares exactly
    merge({"repo": "other/x"}, "deny", DEFAULT),
    merge({}, "deny", DEFAULT),  # a missing key never matches
    merge({"repo": ["acme/x"]}, "deny", "github__merge_pr(repo=acme/secret*)"),
    merge({"repo": "acme/web", "force": True}, "deny", "github__merge_pr(force=true)"),
    merge(
        {"data": {"repo": "acme/x"}, "pr": 42}, "allow", "github__merge_pr(data.repo=acme/*, pr=42)"
    ),
    merge({"data": {"repo": "acme/x"}, "pr": 43}, "deny", DEFAULT),
    merge({"data.repo": "acme/x", "pr": 42}, "allow"),  # a key that holds a dot
    Case(
        "keyed_on_exec",
        "exec",
        {"command": "ls", "workdir": "/tmp/x"},
        "deny",
        "exec(workdir=/tmp/*)",
    ),
    Case(
        "keyed_on_exec",
        "exec",
        {"command": "eval x", "workdir": "/tmp/x"},
        "deny",
        "exec(workdir=/tmp/*)",
    ),
    Case("keyed_on_exec", "exec", {"command": "ls", "workdir": "/home/x"}, "allow"),
]

PRECEDENCE = [
    sh("deny_push_ask_push_allow_git", "git push x", "deny", "exec(git push *)"),
    sh("deny_push_ask_push_allow_git", "git status", "allow"),
    sh("ask_push_allow_git", "git push x", "ask", "exec(git push *)"),
    sh("plain_ask_allow_git", "git status", "ask", "plain name in ask"),
    sh("rm_refused_rest_asks", "ls", "ask", "plain name in ask"),
    sh("rm_refused_rest_asks", "rm -rf x", "deny", RM),
    sh("git_rest_asks", "ls", "ask", DEFAULT),
    sh("git_rest_asks", "git status", "allow"),
    sh("git_rest_asks", "eval x", "ask", UNANALYSABLE),
    sh("deny_all", "ls", "deny", "exec(*)"),
    sh("deny_all", "eval x", "deny", "exec(*)"),
    sh("allow_all_specifier", "anything at all", "allow", "exec(*)"),
    sh("allow_all_specifier", "eval x", "deny", UNANALYSABLE),
    sh("name_and_specifier", "ls", "allow", "exec"),
    sh("plain_ask_only", "ls", "ask", "plain name in ask"),
    sh("plain_ask_only", "eval x", "ask", "plain name in ask"),
]

ACROSS = [
    sh("git_then_deny_push", "git push x", "deny", "layer:agent"),
    sh("git_then_deny_push", "git status", "allow"),
    sh("deny_rm_then_allow_rm", "rm x", "deny", "layer:global"),
    sh("ask_then_allow", "git push x", "ask", "layer:global"),
    sh("ask_then_deny", "git push x", "deny", "layer:sandbox"),
    sh("deny_twice", "rm -rf x", "deny", "layer:global"),  # ties go to the earliest layer
    sh("rules_then_silent", "ls", "deny", "layer:global"),
    sh("parent_inherited", "git push x", "deny", "layer:inherited"),
    sh("parent_inherited", "npm test", "deny", "layer:subagent"),
    sh("parent_inherited", "git log", "allow"),
    sh("eleven", "git push x", "deny", "layer:layer11"),
    sh("eleven", "git status", "allow"),
]

CASES = SHELL_CONSTRUCTS + REDIRECTIONS + PATHS + URLS + KEYED + PRECEDENCE + ACROSS


def test_the_table_is_large_enough() -> None:
    assert len(CASES) >= 150


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> Roots:
    ws, home = make_workspace(tmp_path_factory.mktemp("callrules"))
    return Roots(str(ws), str(home))


def _id(case: Case) -> str:
    value = next(iter(case.args.values()), "") if case.args else ""
    return f"{case.policy}-{case.tool}-{str(value)[:40]!r}"


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_call_case(case: Case, roots: Roots) -> None:
    env = env_for("openclaw", roots)
    decision = decide_call(POLICIES[case.policy](env), case.tool, case.args, env)
    verdict = decision.verdict
    shown = f"{verdict.effect.label} by {verdict.layer}/{verdict.entry} ({verdict.reason.value}: {verdict.subject} {verdict.detail})"
    assert verdict.effect.label == case.expect, shown
    if case.by is None:
        return
    if case.by.startswith("layer:"):
        assert verdict.layer == case.by[6:], shown
    elif case.by in (DEFAULT, UNANALYSABLE, "plain name in ask"):
        assert verdict.reason.value == case.by, shown
    else:
        assert verdict.entry == case.by, shown


def test_decisions_carry_provenance(roots: Roots) -> None:
    env = env_for("openclaw", roots)
    decision = decide_call(p1(env), "exec", {"command": "git log && sudo rm -rf /"}, env)
    v = decision.verdict
    assert (v.effect.label, v.layer, v.entry, v.source) == (
        "deny",
        "global",
        "exec(sudo *)",
        "policy.yaml:2:1",
    )
    assert v.subject == "sudo rm -rf /"
    assert [x.layer for x in decision.layers] == ["global"]
    assert decision.to_json() == {
        "tool": "exec",
        "decision": "deny",
        "decidedBy": {
            "decision": "deny",
            "reason": "deny rule",
            "tool": "exec",
            "layer": "global",
            "entry": "exec(sudo *)",
            "source": "policy.yaml:2:1",
            "subject": "sudo rm -rf /",
        },
        "layers": [decision.verdict.to_json()],
    }


def test_a_redirection_is_decided_as_the_write_tool(roots: Roots) -> None:
    env = env_for("openclaw", roots)
    v = decide_call(p2(env), "exec", {"command": "git log > .env"}, env).verdict
    assert (v.tool, v.entry, v.subject) == ("write", "write(.env)", f"{roots.workspace}/.env")


def test_write_rules_see_the_redirection_as_a_write_call(roots: Roots) -> None:
    """Not the exec call's arguments: a write rule about `command` has nothing to meet."""
    env = env_for("openclaw", roots)
    layers = [layer("global", env, write={"deny": ["write(command=*)", "write(*.log)"]})]
    assert decide_call(layers, "exec", {"command": "ls > out.txt"}, env).effect.label == "allow"
    v = decide_call(layers, "exec", {"command": "ls > out.log"}, env).verdict
    assert (v.effect.label, v.entry) == ("deny", "write(*.log)")


def test_a_run_without_the_write_tool_cannot_write_through_exec(roots: Roots) -> None:
    env = env_for("openclaw", roots, run_tools=frozenset({"exec", "read"}))
    v = decide_call(p3(env), "exec", {"command": "echo x > notes.txt"}, env).verdict
    assert (v.effect.label, v.reason.value, v.tool) == ("deny", "tool not in run", "write")
    assert decide_call(p3(env), "exec", {"command": "echo x"}, env).effect.label == "allow"
    assert (
        decide_call(p3(env), "write", {"path": "a"}, env).verdict.reason.value == "tool not in run"
    )


def test_a_tool_without_call_rules_is_not_analysed(
    roots: Roots, monkeypatch: pytest.MonkeyPatch
) -> None:
    import policyctl.callrules.decide as decide_module

    env = env_for("openclaw", roots)

    def refuse(*_: object) -> None:
        raise AssertionError("analysed")

    monkeypatch.setattr(decide_module, "build_subject", refuse)
    decision = decide_call(p3(env), "web_fetch", {"url": "http://x"}, env)
    assert (decision.effect.label, decision.layers) == ("allow", ())
