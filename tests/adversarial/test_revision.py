"""`policyctl diff REV:path`: the old policy is what the revision holds, every file of it.

A pull request controls the working tree: a file named like the revision argument, an
operator catalog changed on disk, a policy turned into a symlink. None of them may change what
the revision's side of the comparison reads."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from policyctl.cli.main import main

STRICT = "catalog: openclaw\ntools:\n  profile: coding\n  deny: [exec]\n"
LOOSE = "catalog: openclaw\ntools:\n  profile: coding\n"


def _git(repo: Path, *args: str) -> None:
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@e",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@e",
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(repo),
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, env=env)


def _commit(repo: Path, message: str) -> None:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", message)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    top = tmp_path / "repo"
    (top / "policies").mkdir(parents=True)
    _git(top, "init", "-q")
    monkeypatch.chdir(top)
    return top


def _diff(capsys: pytest.CaptureFixture[str], old: str, new: str) -> tuple[int, str, str]:
    rc = main(["diff", old, new, "--fail-on-widen"])
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


# -- finding 1: a committed file named `REV:path` ---------------------------------------------


def test_a_planted_file_named_like_the_revision_is_never_read(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    team = repo / "policies" / "team.yaml"
    team.write_text(STRICT, encoding="utf-8")
    _commit(repo, "base")
    _git(repo, "branch", "base")
    # the pull request drops the deny and plants a copy of its new policy under the name
    # CI's command reads the old policy from
    team.write_text(LOOSE, encoding="utf-8")
    planted = repo / "base:policies" / "team.yaml"
    planted.parent.mkdir()
    planted.write_text(LOOSE, encoding="utf-8")
    _commit(repo, "pr")
    rc, out, err = _diff(capsys, "base:policies/team.yaml", "policies/team.yaml")
    assert rc == 2 and "PC317" in err and "./base:policies/team.yaml" in err, (out, err)
    # without the planted file the same command sees the widening
    planted.unlink()
    rc, out, _ = _diff(capsys, "base:policies/team.yaml", "policies/team.yaml")
    assert rc == 1 and "WIDENED" in out
    # the file form is explicit: ./REV:path is always the working-tree file
    planted.write_text(STRICT, encoding="utf-8")
    rc, out, _ = _diff(capsys, "./base:policies/team.yaml", "policies/team.yaml")
    assert rc == 1 and "WIDENED" in out


def test_a_revision_that_does_not_resolve_never_falls_back_to_a_file(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a CI clone without origin/main: the planted file must not stand in for the revision
    (repo / "policies" / "team.yaml").write_text(LOOSE, encoding="utf-8")
    planted = repo / "origin" / "main:policies" / "team.yaml"
    planted.parent.mkdir(parents=True)
    planted.write_text(LOOSE, encoding="utf-8")
    _commit(repo, "pr")
    rc, out, err = _diff(capsys, "origin/main:policies/team.yaml", "policies/team.yaml")
    assert rc == 2 and "PC101" in err and "is not a git revision" in err, (out, err)
    assert "Traceback" not in err


# -- finding 2: the operator catalog (and what it extends) at the revision ---------------------

OURS = 'name = "ours"\nextends = "{base}"\n\n[profiles.reviewer]\ntools = {tools}\n'


@pytest.mark.parametrize("changed", ["ours.toml", "base.toml"])
def test_a_change_only_in_the_operator_catalog_is_a_widening(
    repo: Path, capsys: pytest.CaptureFixture[str], changed: str
) -> None:
    policy = repo / "policies" / "p.yaml"
    policy.write_text("catalog: ./ours.toml\ntools:\n  profile: reviewer\n", encoding="utf-8")
    ours = repo / "policies" / "ours.toml"
    base = repo / "policies" / "base.toml"
    ours.write_text(OURS.format(base="./base.toml", tools='["read"]'), encoding="utf-8")
    # the base catalog defines the profile that ours.toml leaves alone
    base.write_text('name = "base"\nextends = "openclaw"\n', encoding="utf-8")
    _commit(repo, "base")
    if changed == "ours.toml":
        ours.write_text(
            OURS.format(base="./base.toml", tools='["read", "exec", "write"]'), encoding="utf-8"
        )
    else:  # ours.toml no longer pins the profile: the base catalog (changed too) decides it
        ours.write_text('name = "ours"\nextends = "./base.toml"\n', encoding="utf-8")
        base.write_text(
            'name = "base"\nextends = "openclaw"\n\n[profiles.reviewer]\n'
            'tools = ["read", "exec"]\n',
            encoding="utf-8",
        )
    rc, out, err = _diff(capsys, "HEAD:policies/p.yaml", "policies/p.yaml")
    assert rc == 1 and "WIDENED" in out and "exec" in out, (out, err)


def test_the_revision_catalog_is_read_from_the_revision_only(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = repo / "policies" / "p.yaml"
    policy.write_text("catalog: ./ours.toml\ntools:\n  profile: coding\n", encoding="utf-8")
    ours = repo / "policies" / "ours.toml"
    ours.write_text('name = "ours"\nextends = "openclaw"\n', encoding="utf-8")
    _git(repo, "add", "policies/p.yaml")
    _git(repo, "commit", "-qm", "policy without its catalog")
    # the catalog exists only in the working tree: the revision's policy cannot be compiled
    rc, _, err = _diff(capsys, "HEAD:policies/p.yaml", "policies/p.yaml")
    assert rc == 2 and "PC101" in err and "HEAD:policies/ours.toml does not exist" in err, err
    _commit(repo, "catalog")
    ours.unlink()  # now only the revision has it: the revision's policy compiles
    rc, _, err = _diff(capsys, "HEAD:policies/p.yaml", "HEAD:policies/p.yaml")
    assert rc == 0, err


# -- finding 7: symlinks and paths outside the repository --------------------------------------


def test_a_policy_turned_into_a_symlink_is_compared_with_the_revision_file(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    team = repo / "policies" / "team.yaml"
    team.write_text(STRICT, encoding="utf-8")
    (repo / "policies" / "lab.yaml").write_text(LOOSE, encoding="utf-8")
    _commit(repo, "base")
    team.unlink()
    team.symlink_to("lab.yaml")  # the pull request: team follows lab
    _commit(repo, "pr")
    rc, out, err = _diff(capsys, "HEAD~1:policies/team.yaml", "policies/team.yaml")
    assert rc == 1 and "WIDENED" in out, (out, err)


def test_symlinks_of_the_revision_are_followed_inside_the_revision(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "policies" / "lab.yaml").write_text(STRICT, encoding="utf-8")
    (repo / "policies" / "team.yaml").symlink_to("lab.yaml")
    (repo / "policies" / "up.yaml").symlink_to("../../outside.yaml")
    _commit(repo, "base")
    # the working tree loosens lab.yaml; the revision's team.yaml is its lab.yaml: strict
    (repo / "policies" / "lab.yaml").write_text(LOOSE, encoding="utf-8")
    rc, out, err = _diff(capsys, "HEAD:policies/team.yaml", "policies/team.yaml")
    assert rc == 1 and "WIDENED" in out, (out, err)
    # a link of the revision that leaves the repository is not followed
    (repo.parent / "outside.yaml").write_text(LOOSE, encoding="utf-8")
    rc, _, err = _diff(capsys, "HEAD:policies/up.yaml", "policies/lab.yaml")
    assert rc == 2 and "PC101" in err and "cannot be followed" in err, err
    assert "Traceback" not in err


def test_extends_of_the_revision_ignore_working_tree_symlinks(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = repo / "policies" / "p.yaml"
    policy.write_text("extends: ./shared/base.yaml\n", encoding="utf-8")
    (repo / "policies" / "shared").mkdir()
    (repo / "policies" / "shared" / "base.yaml").write_text(STRICT, encoding="utf-8")
    (repo / "policies" / "loose").mkdir()
    (repo / "policies" / "loose" / "base.yaml").write_text(LOOSE, encoding="utf-8")
    _commit(repo, "base")
    # the pull request points the shared directory at the loose one
    for f in (repo / "policies" / "shared").iterdir():
        f.unlink()
    (repo / "policies" / "shared").rmdir()
    (repo / "policies" / "shared").symlink_to("loose")
    _commit(repo, "pr")
    rc, out, err = _diff(capsys, "HEAD~1:policies/p.yaml", "policies/p.yaml")
    assert rc == 1 and "WIDENED" in out, (out, err)


@pytest.mark.parametrize("path", ["../outside.yaml", "/etc/passwd", "policies/../../x.yaml"])
def test_a_revision_path_outside_the_repository_is_a_diagnostic(
    repo: Path, capsys: pytest.CaptureFixture[str], path: str
) -> None:
    (repo / "policies" / "team.yaml").write_text(STRICT, encoding="utf-8")
    _commit(repo, "base")
    (repo.parent / "outside.yaml").write_text(STRICT, encoding="utf-8")
    rc, _, err = _diff(capsys, f"HEAD:{path}", "policies/team.yaml")
    assert rc == 2 and "PC101" in err and "outside the repository" in err, err
    assert "Traceback" not in err


def test_a_revision_file_beyond_the_byte_cap_is_refused_before_it_is_read(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from policyctl.settings import default_limits

    team = repo / "policies" / "team.yaml"
    team.write_text(STRICT + "# padding\n" * 50, encoding="utf-8")
    _commit(repo, "base")
    team.write_text(STRICT, encoding="utf-8")
    monkeypatch.setenv("POLICYCTL_MAX_FILE_BYTES", "200")
    default_limits.cache_clear()
    try:
        rc, _, err = _diff(capsys, "HEAD:policies/team.yaml", "policies/team.yaml")
    finally:
        monkeypatch.delenv("POLICYCTL_MAX_FILE_BYTES")
        default_limits.cache_clear()
    assert rc == 2 and "PC106" in err and "HEAD:policies/team.yaml is larger" in err, err
