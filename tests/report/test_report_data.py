"""The report's data and page without a browser: escaping, the memoised explanations, the
command's errors, and the structured fields `matrix --format json` now carries."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest
from conftest import EXAMPLES
from hypothesis import given
from hypothesis import strategies as st
from report_helpers import EXAMPLE_POLICIES, cli, matrix_json

from policyctl import load_policy
from policyctl.analysis.matrix import context_matrix
from policyctl.analysis.reportdata import FIELDS, Interner, RemovalMemo, _removal, report_data
from policyctl.htmlreport import embed_json, render_html
from policyctl.pipeline.resolve import resolve


@given(st.text())
def test_embedded_json_never_holds_markup_and_reads_back(text: str) -> None:
    embedded = embed_json({"name": text, "list": [text]})
    assert not {"<", ">", "&", "\u2028", "\u2029"} & set(embedded)
    assert json.loads(embedded) == {"name": text, "list": [text]}


def test_the_page_holds_exactly_one_data_element_whatever_the_title() -> None:
    hostile = "</script><script>alert(1)</script>@@DATA@@"
    page = render_html({"agents": [hostile]}, hostile)
    assert page.count("</script>") == 2  # the data's and the script's own
    # a marker inside the inserted text stays text: the title is the escaped name, as written
    assert f"<title>{html.escape(hostile)}</title>" in page
    data = page.split('id="report-data">', 1)[1].split("</script>", 1)[0]
    assert json.loads(data) == {"agents": [hostile]}


@pytest.mark.parametrize("policy", EXAMPLE_POLICIES, ids=lambda p: p.name)
def test_memoised_explanations_equal_fresh_ones(policy: Path) -> None:
    compiled = load_policy(policy)
    shared = Interner()
    memo = RemovalMemo(compiled, shared)
    asked = 0
    for cell in context_matrix(compiled, 400).contexts:
        res = resolve(compiled, cell.context, require_tools=False)
        run = memo.run_id(res)
        for tool in compiled.default_inventory.names:
            if not res.is_allowed(tool) and res.removal(tool) is not None:
                asked += 1
                index = memo.index(res, run, tool)
                assert shared.tables["removal"][index] == _removal(compiled, res, tool)
    assert len(shared.tables["removal"]) < asked  # the memo did answer some questions


def test_rows_and_cells_agree_with_matrix_json() -> None:
    team = EXAMPLES / "team.yaml"
    data = report_data(load_policy(team), str(team))
    matrix = matrix_json(team)
    assert [t["name"] for t in data["tools"]] == matrix["tools"]
    cell_sets = data["tables"]["cellSet"]
    for row, expected in zip(data["contexts"], matrix["rows"], strict=True):
        fields = dict(zip(FIELDS, row, strict=False))
        assert fields == expected["fields"]
        assert fields["label"] == expected["context"]
        run = data["runs"][row[len(FIELDS)]]
        assert cell_sets[run[0]] == list(expected["cells"].values())


def test_matrix_json_fields_are_structured() -> None:
    rows = matrix_json(EXAMPLES / "chatbot.yaml")["rows"]
    assert all(list(r["fields"]) == list(FIELDS) for r in rows)
    grouped = [r for r in rows if r["fields"]["group"] is not None]
    assert grouped and all(f"/{r['fields']['group']}" in r["context"] for r in grouped)
    assert {r["fields"]["sandboxed"] for r in rows} == {True, False}
    assert {r["fields"]["trigger"] for r in rows} == {"user", "cron", "memory"}


def test_matrix_summary_fits_120_columns() -> None:
    for policy in EXAMPLE_POLICIES:
        code, out = cli("matrix", str(policy), "--summary")
        assert code == 0
        assert max(len(line) for line in out.splitlines()) <= 120
        assert "every:" in out and "some:" in out and "none:" in out


def test_summary_with_another_format_is_a_usage_error() -> None:
    code, _ = cli("matrix", str(EXAMPLES / "team.yaml"), "--summary", "--format", "json")
    assert code == 2


@pytest.mark.parametrize(
    "argv",
    [
        ["report", str(EXAMPLES / "team.yaml"), str(EXAMPLES / "chatbot.yaml")],
        ["report", "--diff", str(EXAMPLES / "team.yaml")],
        ["report", str(EXAMPLES / "team.yaml"), "--max-contexts", "0"],
        ["report", "missing.yaml"],
    ],
)
def test_bad_invocations_write_nothing(tmp_path: Path, argv: list[str]) -> None:
    target = tmp_path / "r.html"
    code, _ = cli(*argv, "-o", str(target))
    assert code == 2
    assert not target.exists()


def test_an_unwritable_output_is_a_clear_error(tmp_path: Path) -> None:
    code, _ = cli("report", str(EXAMPLES / "team.yaml"), "-o", str(tmp_path / "no" / "r.html"))
    assert code == 2
    assert list(tmp_path.iterdir()) == []


def test_a_sampled_report_says_so(tmp_path: Path) -> None:
    target = tmp_path / "r.html"
    code, out = cli(
        "report", str(EXAMPLES / "chatbot.yaml"), "--max-contexts", "50", "-o", str(target)
    )
    assert code == 0 and "a sample of" in out
    page = target.read_text(encoding="utf-8")
    data = json.loads(page.split('id="report-data">', 1)[1].split("</script>", 1)[0])
    assert data["sampled"] is True and len(data["contexts"]) == 50


def test_baselines_are_the_agents_plainest_runs_even_when_sampled() -> None:
    chatbot = EXAMPLES / "chatbot.yaml"
    data = report_data(load_policy(chatbot), str(chatbot), max_contexts=50)
    code, out = cli(
        "matrix", str(chatbot), "--changed-only", "--format", "json", "--max-contexts", "50"
    )
    assert code == 0
    rows = json.loads(out)["rows"]
    expected = {
        r["fields"]["agent"]: list(r["cells"].values()) for r in rows[: len(data["baselines"])]
    }
    cell_sets = data["tables"]["cellSet"]
    found = {agent: cell_sets[data["runs"][run][0]] for agent, run in data["baselines"]}
    assert found == expected
