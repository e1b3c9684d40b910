"""The HTML report in a real browser: each shipped example's report against `matrix`, the
trail of a clicked cell against `explain`, filters, keyboard navigation, hostile names.

`POLICYCTL_UPDATE_SCREENSHOTS=1` also writes each example's screenshot to docs/img/ (the
docs show them); an ordinary run only checks.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLES, ROOT
from report_browser import browser, page  # noqa: F401  (fixtures)
from report_helpers import (
    ALLOWED,
    EXAMPLE_POLICIES,
    cli,
    detail,
    matrix_json,
    open_report,
    shown,
    stats,
    write_report,
)

SCREENSHOTS = ROOT / "docs" / "img"
TEAM = EXAMPLES / "team.yaml"


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("reports")
    # paths as an operator types them (relative), so the screenshots show no machine's folders
    return {p.name: write_report(folder / f"{p.stem}.html", shown(p)) for p in EXAMPLE_POLICIES}


def test_every_shipped_example_policy_is_covered() -> None:
    names = {p.name for p in EXAMPLE_POLICIES}
    assert {"team.yaml", "chatbot.yaml", "platform.toml", "hosts-team.yaml"} <= names


@pytest.mark.parametrize("policy", EXAMPLE_POLICIES, ids=lambda p: p.name)
def test_cells_match_matrix_json(page: Any, reports: dict[str, Path], policy: Path) -> None:
    matrix = matrix_json(policy)
    cells = [code for row in matrix["rows"] for code in row["cells"].values()]
    open_report(page, reports[policy.name])
    counted = stats(page)
    assert counted["rows"] == matrix["shown"] == len(matrix["rows"])
    assert counted["allowed"] == sum(c in ALLOWED for c in cells)
    assert counted["removed"] == sum(c not in ALLOWED and c != "-" for c in cells)
    # only the rows in view are in the page, however many contexts there are
    assert 0 < page.locator("#grid-rows .row").count() <= 60
    # a removed cell when the rows in view have one (its trail is the more telling picture)
    removed = page.locator("#grid-rows .row .cell:not(.c-ok):not(.c-okp)")
    (removed if removed.count() else page.locator("#grid-rows .row .cell")).first.click()
    assert "trail" in detail(page)
    if os.environ.get("POLICYCTL_UPDATE_SCREENSHOTS"):
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"report-{policy.stem}.png"))


def _only(page: Any, tool: str, **filters: str) -> None:
    for field, value in filters.items():
        page.select_option(f"#f-{field}", value)
    page.fill("#f-tool", tool)


def test_a_clicked_cell_shows_the_trail_explain_prints(page: Any, reports: dict[str, Path]) -> None:
    open_report(page, reports["team.yaml"])
    _only(page, "screen", agent="coder")
    page.locator("#grid-rows .row").first.locator(".cell").click()
    text = detail(page)
    _, explained = cli("explain", shown(TEAM), "--agent", "coder", "--tool", "screen", "--trail")
    trail = explained.split("trail:\n", 1)[1].rstrip("\n")
    assert page.inner_text("#detail pre.trail").rstrip("\n") == trail
    assert "screen: REMOVED at layer 3 (tools.deny)" in text
    assert 'rule:  deny entry "group:ui" (expands to screen)' in text
    assert f"where: {shown(TEAM)}:23:7" in text
    fix = next(line for line in explained.splitlines() if line.lstrip().startswith("fix:"))
    assert fix.strip() in text


def test_an_allowed_cell_lists_its_call_rules(page: Any, reports: dict[str, Path]) -> None:
    open_report(page, reports["team.yaml"])
    _only(page, "exec", agent="coder")
    page.locator("#grid-rows .row").first.locator(".cell").first.click()
    assert page.locator("#grid-rows .row .cell").first.inner_text() == "ok+"
    rules = page.inner_text("#detail pre.calls")
    assert "deny  rm *" in rules or "deny  exec(rm *)" in rules
    assert "ask   git push *" in rules or "ask   exec(git push *)" in rules


def test_filters_keep_the_rows_matrix_json_has(page: Any, reports: dict[str, Path]) -> None:
    matrix = matrix_json(TEAM)
    rows = matrix["rows"]
    open_report(page, reports["team.yaml"])
    page.select_option("#f-agent", "coder")
    assert stats(page)["rows"] == sum(r["fields"]["agent"] == "coder" for r in rows)
    page.select_option("#f-provider", "ollama")
    assert stats(page)["rows"] == sum(
        r["fields"]["agent"] == "coder" and r["fields"]["provider"] == "ollama" for r in rows
    )
    page.select_option("#f-provider", "")
    page.select_option("#f-agent", "")
    page.select_option("#f-trigger", "cron")
    page.select_option("#f-owner", "true")
    expected = sum(r["fields"]["trigger"] == "cron" and r["fields"]["owner"] for r in rows)
    assert stats(page)["rows"] == expected
    page.select_option("#f-trigger", "")
    page.select_option("#f-owner", "")
    page.fill("#f-tool", "exec")
    heads = page.locator("#grid-head .tool").all_inner_texts()
    assert heads and all("exec" in h for h in heads)
    # "only contexts where something differs": from the agent's baseline (its first row)
    page.fill("#f-tool", "")
    page.check("#f-differs")
    baseline: dict[object, dict[str, str]] = {}
    differing = 0
    for r in rows:
        base = baseline.setdefault(r["fields"]["agent"], r["cells"])
        differing += r["cells"] != base
    assert stats(page)["rows"] == differing
    # the rows drawn are the rows kept: every drawn label is a coder's when the filter says so
    page.uncheck("#f-differs")
    page.select_option("#f-agent", "coder")
    page.select_option("#f-groupby", "(none)")
    labels = page.locator("#grid-rows .row .lab").all_inner_texts()
    assert labels and all(label.startswith("agent=coder ") for label in labels)


def test_sandboxed_filter(page: Any, reports: dict[str, Path]) -> None:
    chatbot = EXAMPLES / "chatbot.yaml"
    rows = matrix_json(chatbot)["rows"]
    open_report(page, reports["chatbot.yaml"])
    page.select_option("#f-sandboxed", "true")
    assert stats(page)["rows"] == sum(bool(r["fields"]["sandboxed"]) for r in rows) > 0


def test_keyboard_moves_through_the_grid(page: Any, reports: dict[str, Path]) -> None:
    rows = matrix_json(EXAMPLES / "chatbot.yaml")
    open_report(page, reports["chatbot.yaml"])
    page.select_option("#f-groupby", "(none)")
    page.focus("#grid")
    for key in ["ArrowDown", "ArrowDown", "ArrowRight", "ArrowRight", "ArrowRight"]:
        page.keyboard.press("Enter" if key == "" else key)
    ctx = page.inner_text("#detail p.ctx")
    assert ctx == rows["rows"][2]["context"]
    assert page.inner_text("#detail h3").startswith(rows["tools"][3])
    # far down the list: the active cell is drawn (the grid scrolled to it)
    for _ in range(30):
        page.keyboard.press("PageDown")
    active = page.locator("#grid-rows .cell.active")
    assert active.count() == 1
    line = int(active.get_attribute("data-line") or "0")
    assert line > 200
    assert page.inner_text("#detail p.ctx") == rows["rows"][line]["context"]
    page.keyboard.press("Control+Home")
    assert page.inner_text("#detail p.ctx") == rows["rows"][0]["context"]


def test_groups_collapse(page: Any, reports: dict[str, Path]) -> None:
    open_report(page, reports["team.yaml"])
    before = page.locator("#grid-rows .row").count()
    page.locator("#grid-rows .grp").first.click()
    assert page.locator("#grid-rows .grp").first.get_attribute("aria-expanded") == "false"
    assert page.locator("#grid-rows .grp").count() >= 2
    assert page.locator("#grid-rows .row").count() <= before


def test_summary_lists_every_agent(page: Any, reports: dict[str, Path]) -> None:
    open_report(page, reports["team.yaml"], tab="summary")
    agents = page.locator("#summary-table tbody th").all_inner_texts()
    assert agents == ["(none)", "coder", "docs", "reviewer"]
    _, text = cli("matrix", str(TEAM), "--summary", "--max-contexts", "100000")
    coder = text.split("agent coder (", 1)[1].split("agent ", 1)[0]
    every = coder.split("every:", 1)[1].split("some:", 1)[0].split()
    cells = page.locator("#summary-table tbody tr").nth(1).locator("td")
    assert cells.nth(1).inner_text().split() == every
    some = coder.split("some:", 1)[1].split("none:", 1)[0].split()
    assert cells.nth(2).inner_text().split() == some  # with the counts, as `--summary` has them


def test_call_rules_table(page: Any, reports: dict[str, Path]) -> None:
    open_report(page, reports["team.yaml"], tab="calls")
    table = page.inner_text("#calls-table")
    assert "rm *" in table and "git push *" in table and f"{shown(TEAM)}:" in table


def test_hostile_names_stay_text(page: Any, tmp_path: Path) -> None:
    """Policy text an operator or an imported config controls cannot close the data's
    script element or inject markup: names, entries and the file's own name."""
    policy = tmp_path / "<img src=x onerror=window.pwned=1>.yaml"
    policy.write_text(
        """
tools:
  profile: coding
  deny: ["read(</script><script>window.pwned=2</script>)"]
channels:
  slack:
    groups:
      "</script><script>window.pwned=3</script>":
        tools: {deny: [exec]}
agents:
  entries:
    "</script><b>x<!--":
      tools: {allow: [read]}
""",
        encoding="utf-8",
    )
    report = write_report(tmp_path / "r.html", str(policy))
    page.goto(report.as_uri())
    page.wait_for_selector("body[data-ready]")
    assert page.evaluate("window.pwned") is None
    assert page.locator("img, b, main script").count() == 0
    assert "</script><b>x<!--" in page.inner_text("#summary-table")
    page.click("#tab-calls")
    assert "</script><script>window.pwned=2</script>" in page.inner_text("#calls-table")
    page.click("#tab-matrix")
    page.select_option("#f-channel", "slack")
    assert "</script><script>window.pwned=3</script>" in page.inner_text("#grid-rows")
    assert page.evaluate("window.pwned") is None
    assert policy.name in page.title()


def test_diff_view_highlights_gains_and_call_rule_widenings(
    page: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a pull request's change, named as a reviewer sees it: main/team.yaml -> pr/team.yaml
    monkeypatch.chdir(tmp_path)
    (tmp_path / "main").mkdir()
    (tmp_path / "pr").mkdir()
    text = TEAM.read_text(encoding="utf-8")
    (tmp_path / "main" / "team.yaml").write_text(text, encoding="utf-8")
    old, new = Path("main/team.yaml"), Path("pr/team.yaml")
    # a widening: x_search no longer denied, exec(sudo *) no longer refused; a narrowing:
    # nobody gets web_fetch any more
    changed = text.replace("    - x_search\n", "    - web_fetch\n").replace(
        '    - "exec(sudo *)"\n', ""
    )
    assert changed != text
    new.write_text(changed, encoding="utf-8")
    report = write_report(tmp_path / "d.html", "--diff", str(old), str(new))
    _, out = cli("diff", str(old), str(new), "--format", "json")
    changes = json.loads(out)["changes"]
    gained = sum(len(c["tools"]) * len(c["contexts"]) for c in changes if c["direction"] == "gain")
    lost = sum(len(c["tools"]) * len(c["contexts"]) for c in changes if c["direction"] == "lose")
    open_report(page, report)
    counted = stats(page)
    assert (counted["gained"], counted["lost"]) == (gained, lost)
    assert gained > 0 and lost > 0
    page.check("#f-differs")
    page.fill("#f-tool", "x_search")
    assert page.locator("#grid-rows .cell.gain").count() > 0
    assert page.locator("#grid-rows .cell.gain").first.inner_text().startswith("+ok")
    page.locator("#grid-rows .cell.gain").first.click()
    assert "new: " in detail(page) and "old: " in detail(page)
    if os.environ.get("POLICYCTL_UPDATE_SCREENSHOTS"):
        page.screenshot(path=str(SCREENSHOTS / "report-diff.png"))
    page.click("#tab-changes")
    changes = page.inner_text("#rule-changes")
    assert "widen" in changes and "sudo" in changes


def test_the_page_asks_the_network_for_nothing(browser: Any, reports: dict[str, Path]) -> None:
    context = browser.new_context()
    page = context.new_page()
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    open_report(page, reports["team.yaml"])
    page.locator("#grid-rows .row .cell").first.click()
    context.close()
    assert asked == [reports["team.yaml"].as_uri()]


def test_light_and_dark_mode(browser: Any, reports: dict[str, Path]) -> None:
    colours = {}
    for scheme in ("light", "dark"):
        context = browser.new_context(color_scheme=scheme)
        page = context.new_page()
        open_report(page, reports["team.yaml"])
        colours[scheme] = page.evaluate(
            "[getComputedStyle(document.body).backgroundColor,"
            " getComputedStyle(document.body).color]"
        )
        context.close()
    assert colours["light"] != colours["dark"]
    assert colours["light"][0] == "rgb(255, 255, 255)"


def test_enter_on_a_group_row_closes_and_opens_it(page: Any, reports: dict[str, Path]) -> None:
    open_report(page, reports["team.yaml"])
    page.focus("#grid")
    page.keyboard.press("Control+Home")  # the first line: the first agent's group
    page.keyboard.press("Enter")
    first = page.locator("#grid-rows .grp").first
    assert first.get_attribute("aria-expanded") == "false"
    page.keyboard.press("Enter")
    assert page.locator("#grid-rows .grp").first.get_attribute("aria-expanded") == "true"
