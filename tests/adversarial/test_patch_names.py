"""Red-team finding 2: git-quoted diff names (`+++ "b/.env"`, `\\056`) evaded apply_patch denies.

git decodes a quoted name (C-style escapes, octal bytes) before stripping `a/`/`b/`; the
paths decided must be the paths git writes, and a quoted name git would not decode is refused.
`diff --git` headers are split as git splits them; one that cannot be split is refused.
"""

from __future__ import annotations

from typing import Any

import pytest

from policyctl import RunContext, load_policy, resolve
from policyctl.callrules.patch import patch_paths

# a patch's files are write calls and its updates read calls (catalog relations): both in the run
POLICY = (
    'tools:\n  deny: ["apply_patch(.env)", "apply_patch(/etc/**)"]\n'
    "  allow: [apply_patch, write, read]\n"
)


@pytest.fixture(scope="module")
def resolved(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = tmp_path_factory.mktemp("patch") / "ap.yaml"
    path.write_text(POLICY)
    return resolve(load_policy(str(path)), RunContext(provider="openai", workspace="/tmp"))


def _label(resolved: Any, patch: str) -> str:
    return str(resolved.decide_call("apply_patch", {"input": patch}).verdict.effect.label)


@pytest.mark.parametrize(
    "patch",
    [
        '--- /dev/null\n+++ "b/.env"\n@@ -0,0 +1 @@\n+X\n',
        '--- /dev/null\n+++ "/etc/x"\n@@\n+a',
        '--- /dev/null\n+++ "b/\\056env"\n@@\n+a',
        '--- "a/\\056env"\n+++ /dev/null\n@@\n-a',
        '--- "a/.env"\t2024-01-01\n+++ "b/.env"\t2024-01-01\n@@\n+a',
        'diff --git a/x b/y\nrename from x\nrename to "\\056env"\n',
        'diff --git a/x b/y\ncopy from x\ncopy to "/etc/\\160asswd"\n',
        'diff --git "a/\\056env" "b/\\056env"\nnew mode 100755\n',  # quoted header
        'diff --git a/x "b/.env"\n',
        'diff --git "a/.env" b/x\n',
        'diff --git "a/d\\tx/\\056env" "b/d\\tx/\\056env"\nnew mode 100755\n',
        "diff --git a/x b/y\nrename old x\nrename new .env\n",  # git's older spelling
        "diff --git a/.env b/.env\ndeleted file mode 100644\n",
    ],
)
def test_quoted_names_reach_the_deny(resolved: Any, patch: str) -> None:
    assert not isinstance(patch_paths(patch), str)  # decoded, not refused
    assert _label(resolved, patch) == "deny"


@pytest.mark.parametrize(
    "patch",
    [
        '--- /dev/null\n+++ "b/\\q.env"\n',  # unknown escape: git would not decode it
        '--- /dev/null\n+++ "b/.env\n',  # no closing quote
        '--- /dev/null\n+++ "b/\\377env"\n',  # not UTF-8
        '--- /dev/null\n+++ "b/\\05env"\n',  # short octal
        "diff --git a/x b/\\056env\n",  # unquoted with a backslash: not written by git
        "diff --git a/x  b/y\n",
        "diff --git a/x y b/x z\n",  # blanks and different names: no way to split
        'diff --git "a/x" "b/y" z\n',  # text after the second name
        'diff --git a/p"q "b/z"\n',  # an unquoted name with a quote
        "diff --git x y\n",  # no a/ and b/
        'diff --git "a/x\n',
        '*** Begin Patch\n*** Add File: "x"\n+a\n*** End Patch\n',  # quoted envelope name
    ],
)
def test_undecodable_quoted_names_are_refused(resolved: Any, patch: str) -> None:
    assert isinstance(patch_paths(patch), str)
    assert _label(resolved, patch) != "allow"


def test_decoding() -> None:
    assert patch_paths('+++ "b/\\303\\251 \\"q\\"\\\\\\t"') == ('é "q"\\\t',)
    assert patch_paths("diff --git a/x b/y\n") == ("x", "y")
    assert patch_paths('diff --git "a/\\303\\251 x" "b/\\303\\251 x"\n') == ("é x",)
    assert patch_paths('diff --git a/p q "b/\\"r\\""\n') == ("p q", '"r"')
    assert patch_paths('diff --git "a/\\tp" b/q r\n') == ("\tp", "q r")
    assert patch_paths("diff --git a/p q b/p q\n") == ("p q",)  # git's equal halves
    assert patch_paths('rename from "a\\nb"\n') == ("a\nb",)
    assert patch_paths("--- a/src/m.py\n+++ b/src/m.py\n") == ("src/m.py",)


def test_plain_allowed(resolved: Any) -> None:
    assert _label(resolved, '--- /dev/null\n+++ "b/src/ok.py"\n@@\n+a') == "allow"
