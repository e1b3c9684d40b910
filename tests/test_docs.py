"""The documentation: the README is the front door and docs/ the manual, built by mkdocs.

Every page is reachable from the site's nav, every link of the README leads somewhere, the
Quick start stays two commands, the site builds under --strict (a broken link or anchor
fails), and a pre-commit `rev:` the docs show names a tag that exists or a commit."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import ROOT
from ruamel.yaml import YAML

DOCS = ROOT / "docs"
README = (ROOT / "README.md").read_text(encoding="utf-8")
MKDOCS = YAML(typ="safe").load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))


def nav_pages(node: Any) -> list[str]:
    """Every page a mkdocs nav names (`- Title: page.md`, sections nest lists)."""
    if isinstance(node, str):
        return [node]
    if isinstance(node, list):
        return [page for item in node for page in nav_pages(item)]
    if isinstance(node, dict):
        return [page for value in node.values() for page in nav_pages(value)]
    raise AssertionError(f"unexpected nav entry {node!r}")


def section(text: str, title: str) -> str:
    return text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def without_fences(text: str) -> str:
    return re.sub(r"^ *```.*?^ *```", "", text, flags=re.S | re.M)


def github_anchors(page: Path) -> set[str]:
    """The anchors GitHub gives the headings of a page (the README is read there)."""
    anchors = set()
    for line in without_fences(page.read_text(encoding="utf-8")).splitlines():
        heading = re.match(r"#{1,6} (.*)", line)
        if heading:
            text = heading.group(1).strip().lower().replace("`", "")
            anchors.add(re.sub(r"[^\w\- ]", "", text).replace(" ", "-"))
        anchors.update(re.findall(r'<a id="([^"]+)"></a>', line))  # an anchor both renderers keep
    return anchors


def test_every_page_is_in_the_nav_and_every_nav_entry_exists() -> None:
    assert MKDOCS["docs_dir"] == "docs"
    named = nav_pages(MKDOCS["nav"])
    pages = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    assert sorted(set(named)) == sorted(named), "a page is in the nav twice"
    assert [p for p in named if not (DOCS / p).is_file()] == [], "nav names a missing page"
    assert [p for p in pages if p not in named] == [], "a page under docs/ is not in the nav"


def test_the_strict_build_fails_on_links_anchors_and_pages_left_out() -> None:
    assert MKDOCS["strict"] is True
    assert MKDOCS["validation"] == {
        "nav": {"omitted_files": "warn", "not_found": "warn", "absolute_links": "warn"},
        "links": {
            "not_found": "warn",
            "anchors": "warn",
            "absolute_links": "warn",
            "unrecognized_links": "warn",
        },
    }


def test_every_relative_link_of_the_readme_exists() -> None:
    links = re.findall(r"\]\(([^)\s]+)\)", without_fences(README))
    relative = [link for link in links if not re.match(r"[a-z]+:|#", link)]
    assert "docs/call-rules.md" in relative  # the README points at the manual
    for link in relative:
        path, _, anchor = link.partition("#")
        target = ROOT / path
        assert target.exists(), f"README links to {link}, which does not exist"
        if anchor:
            assert anchor in github_anchors(target), f"README links to {link}: no such heading"


def test_every_link_between_pages_works_on_github_too() -> None:
    """The strict build checks the site's anchors; the same pages are read on GitHub, whose
    anchors differ for some headings (`explain --format json`): each link works in both."""
    for page in sorted(DOCS.glob("*.md")):
        for link in re.findall(r"\]\(([^)\s]+)\)", without_fences(page.read_text("utf-8"))):
            if re.match(r"[a-z]+:", link) or "#" not in link:
                continue
            path, _, anchor = link.partition("#")
            target = (page.parent / path) if path else page
            assert anchor in github_anchors(target), f"{page.name} links to {link}: not on GitHub"


def test_the_quick_start_is_exactly_two_commands() -> None:
    quick = section(README, "Quick start")
    assert quick.count("```") == 4, "the Quick start holds exactly two code blocks"
    blocks = re.findall(r"```sh\n(.*?)```", quick, re.S)
    assert len(blocks) == 2 and all(block.count("\n") == 1 for block in blocks), blocks
    explain, suite = (block.strip() for block in blocks)
    assert "pip install . && policyctl explain examples/team.yaml" in explain
    assert "pip install '.[test]' && pytest" in suite


def test_the_site_front_page_says_what_the_readme_says() -> None:
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    assert index.split("\n## ", 1)[0] == README.split("\n## ", 1)[0]  # what policyctl is
    for title in ("Quick start", "Installing"):
        assert section(index, title) == section(README, title), title


def test_the_site_builds_with_strict(tmp_path: Path) -> None:
    # the `test` extra installs mkdocs-material, so a missing one is a failure, not a skip
    missing = [name for name in ("mkdocs", "material") if importlib.util.find_spec(name) is None]
    assert not missing, f"{missing} not installed: pip install -e '.[test]' (or '.[docs]')"
    site = tmp_path / "site"
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    assert (site / "call-rules" / "index.html").is_file()
    assert "== the documentation site" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def git(*args: str) -> str | None:
    """git's output in this checkout, or None where there is no repository (an sdist)."""
    try:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        return None
    return done.stdout if done.returncode == 0 else None


def test_a_pinned_pre_commit_rev_is_a_tag_that_exists_or_a_commit() -> None:
    files = [ROOT / "README.md", ROOT / ".pre-commit-hooks.yaml", *sorted(DOCS.rglob("*.md"))]
    revs = {
        (f.relative_to(ROOT).as_posix(), rev)
        for f in files
        for rev in re.findall(r"^[\s#-]*rev:\s*['\"]?([^\s'\"]+)", f.read_text("utf-8"), re.M)
    }
    assert revs, "the pre-commit example shows no rev"
    commits = {rev for _, rev in revs if re.fullmatch(r"[0-9a-f]{40}", rev)}
    named = {(f, rev) for f, rev in revs if rev not in commits}
    if named:
        tags = git("tag", "--list")
        assert tags is not None, f"{sorted(named)}: tags that no repository here can confirm"
        unknown = sorted((f, rev) for f, rev in named if rev not in tags.split())
        assert not unknown, f"rev: names a tag that `git tag` does not list: {unknown}"
    if git("rev-parse", "--is-shallow-repository") == "false\n":  # a full clone has them all
        for rev in commits:
            assert git("cat-file", "-e", f"{rev}^{{commit}}") is not None, f"no commit {rev}"


def test_every_command_has_a_row_in_the_cli_table() -> None:
    # docs/cli.md opens with the table of commands: each subcommand `policyctl --help` lists
    # (hook, gateway, serve and report included) is found there, so none is learnt by accident
    from policyctl.cli.main import build_parser

    parser = build_parser()
    commands = next(
        a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"
    ).choices
    cli = (DOCS / "cli.md").read_text(encoding="utf-8")
    table = cli.split("\n## ", 1)[0]
    rows = re.findall(r"^\| (?:`|<code>)policyctl ([a-z-]+)", table, flags=re.MULTILINE)
    assert set(commands) - set(rows) == set()
