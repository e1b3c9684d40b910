"""Differential check against git itself: the names of the patches git writes are decoded to
the paths git applies them to, quoted names (`"a/tab\\tname"`) on `diff --git` headers too.

A repository holds files whose names git must quote (blanks, tabs, quotes, backslashes,
newlines, non-ASCII); `git diff` of a mode change is a patch of headers only, and
`git apply --numstat -z` says which path git reads from each patch."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from policyctl.callrules.patch import patch_paths

GIT = shutil.which("git")
NAMES = [
    "plain",
    "sp ace",
    "tab\tname",
    'quo"te',
    "back\\slash",
    "\u00e9t\u00e9",
    "new\nline",
    "dir x/.env",
    "a b/a b",
]


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        [GIT or "git", "-c", "core.quotePath=true", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
        env={"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo), "PATH": "/usr/bin:/bin"},
    )
    return done.stdout


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("gitrepo")
    git(root, "init", "-q")
    git(root, "config", "core.fileMode", "true")
    for name in NAMES:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    return root


@pytest.mark.skipif(GIT is None, reason="needs git")
@pytest.mark.parametrize("name", NAMES)
def test_a_header_only_patch_names_the_path_git_applies(repo: Path, name: str) -> None:
    (repo / name).chmod(0o755)
    try:
        patch = git(repo, "diff", "--", name)
    finally:
        (repo / name).chmod(0o644)
    assert patch.startswith("diff --git ") and "\n--- " not in patch  # the header is all
    (patch_file := repo.parent / "change.diff").write_text(patch)
    applied = git(repo, "apply", "--numstat", "-z", str(patch_file))
    git_path = applied.split("\t", 2)[2].rstrip("\0")
    assert git_path == name
    assert patch_paths(patch) == (name,)


@pytest.mark.skipif(GIT is None, reason="needs git")
def test_a_rename_between_quoted_names_decides_both(repo: Path) -> None:
    git(repo, "mv", "tab\tname", 'quo"te2')
    try:
        patch = git(repo, "diff", "--cached", "-M", "--", "tab\tname", 'quo"te2')
    finally:
        git(repo, "mv", 'quo"te2', "tab\tname")
    assert "rename from" in patch
    assert set(patch_paths(patch)) == {"tab\tname", 'quo"te2'}
