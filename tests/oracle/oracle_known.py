"""What the bash oracle found, as data: the known causes and the table of counterexamples.

Each cause is a shape of line (a regular expression over the line) with the reason policyctl
gets it wrong today. The table (`CASES`) holds every counterexample the oracle found, each
with the policy it was found under and the least strict decision reality demands; a row whose
cause is listed is expected to fail (`xfail(strict=True)`), so the fix that makes policyctl
right turns the row into an unexpected pass and its cause must be removed from `CAUSES`.

The corpus and generated tests fail on a counterexample no cause explains, and count the ones
a cause explains (printed with the seed), so CI stays green while the known ones stay visible.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from policyctl.callrules import Effect

CAUSES: dict[str, tuple[str, str]] = {
    # name: (the lines it covers, why policyctl gets them wrong today)
}

_COMPILED = {name: re.compile(pattern) for name, (pattern, _) in CAUSES.items()}


def cause_of(line: str) -> str | None:
    """The known cause that explains a counterexample on `line`, if one does. Quotes and
    backslashes are dropped first, so `g"it" -C . push` and `'setpriv' ...` are seen too."""
    plain = re.sub(r"[\"'\\$]", "", line)
    for name, pattern in _COMPILED.items():
        if pattern.search(plain):
            return name
    return None


class Case(NamedTuple):
    line: str
    policy: str
    #: the least strict decision reality demands (what bash did meets a rule this strict)
    at_least: Effect
    #: the known cause policyctl gets it wrong by, or None when it is right today
    cause: str | None


D, A = Effect.DENY, Effect.ASK

CASES: tuple[Case, ...] = (
    # found as git-global-options; the command catalog decides it now
    *(
        Case(f"git {opts} push origin main", "git-push-asks", A, None)
        for opts in (
            "-C .",
            "--no-pager",
            "-P",
            "-c user.name=x",
            "-c color.ui=never",
            "--git-dir=.git",
            "--work-tree=.",
            "--namespace=n",
            "--literal-pathspecs",
        )
    ),
    # found as git-option-runs-command; the command catalog decides it now
    Case("git ls-remote --upload-pack='rm x' .", "rm-denied", D, None),
    Case("git ls-remote --upload-pack 'rm x' .", "rm-denied", D, None),
    Case("git fetch --upload-pack='rm x' .", "rm-denied", D, None),
    Case("git clone -u 'rm x' . ../c", "git-push-asks", D, None),
    Case("git clone --upload-pack='rm x' . ../c", "rm-denied", D, None),
    Case("git rebase --exec 'rm x' HEAD~1", "git-push-asks", D, None),
    Case("git rebase -x 'rm x' HEAD~1", "rm-denied", D, None),
    # found as git-config-written; writing a setting is decided like `git -c NAME=VALUE`
    Case("git config alias.zz '!rm x' && git zz", "git-push-asks", D, None),
    Case("git config --local alias.zz '!rm x'; git zz", "rm-denied", D, None),
    Case(
        "git config user.zz '!rm x' && git config --rename-section user alias && git zz",
        "git-push-asks",
        D,
        None,
    ),
    # found as unknown-runner; the command catalog decides it now
    Case("setpriv --inh-caps=-all rm x", "rm-denied", D, None),
    Case("setpriv --reuid=0 rm x", "rm-denied", D, None),
    Case("prlimit --nofile=100 rm x", "rm-denied", D, None),
    Case("setarch x86_64 rm x", "rm-denied", D, None),
    Case("setarch -R x86_64 rm x", "git-rest-asks", D, None),
    Case("setarch linux64 rm x", "rm-denied", D, None),
    # found as xargs-long-option-value; the command catalog decides it now
    Case("printf 'x\\n' | xargs --max-args 1 rm", "rm-denied", D, None),
    Case("printf 'x\\n' | xargs --delimiter '\\n' rm", "rm-denied", D, None),
    Case("printf 'x\\n' | xargs --max-procs 1 rm", "git-rest-asks", D, None),
    # found as shell-option-in-flags; the command catalog decides it now
    Case("bash -co errexit 'rm x'", "rm-denied", D, None),
    # found as read-write-redirection; a lenient re-read decides `<>` as a read and a write
    Case("cat <> .env", "git-rest-asks", D, None),  # cat reads its operand
    Case("true 3<> .env", "git-rest-asks", D, None),
    # found as redirection-on-a-line-that-changes-directory; the target is screened as if
    # the directory had not changed (a rule without a slash meets it at any depth)
    *(
        Case(line, "git-rest-asks", D, None)
        for line in (
            "env -C . git status > .env",
            "env --chdir=. git log -1 >> .env",
            "cd src && git status > ../.env",
            "echo hi >| .env && env -C . git status",
        )
    ),
    # right today: each guards a shape the oracle checks
    Case("git push origin main", "git-push-asks", A, None),
    Case("git -c alias.p=push p origin main", "git-push-asks", A, None),
    Case("timeout --signal=KILL 5 rm x", "rm-denied", D, None),
    Case("env -u HOME rm x", "rm-denied", D, None),
    Case("printf 'x\\n' | xargs --max-args=1 rm", "rm-denied", D, None),
    Case("find . -maxdepth 0 -exec rm x \\;", "rm-denied", D, None),
    Case("bash -ec 'rm x'", "rm-denied", D, None),
    Case("/bin/rm x", "rm-denied", D, None),
    Case("cat < .env", "git-rest-asks", D, None),
    Case("echo hi | tee -a .env", "rm-denied", D, None),
    Case("true >| .env", "git-rest-asks", D, None),
    Case("r'm' x", "rm-refused-rest-asks", D, None),
    # the contract's own limit: unanalysable under `callDefault: ask` asks (see by_contract)
    Case("$(echo rm) x", "git-rest-asks", A, None),
)
