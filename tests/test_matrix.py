"""The context matrix: its dimensions, its size without building it, its filters, and the
empty-tool-set check (PC308) over it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import EXAMPLES, MakePolicy

from policyctl import RunContext, load_policy
from policyctl.analysis.checks import check_policy
from policyctl.analysis.matrix import Dimensions, context_matrix, representative
from policyctl.cli.main import main
from policyctl.pipeline.resolve import resolve
from policyctl.pipeline.result import NoCallableToolsError

SUPPORT = """
catalog: openclaw
agents:
  entries:
    support: {tools: {allow: [message, read]}}
channels:
  slack:
    groups:
      C1: {tools: {allow: [web_search]}}
  telegram:
    groups:
      "-100200": {tools: {allow: [web_search]}}
"""


def test_every_empty_context_is_reported_grouped_with_a_count(make_policy: MakePolicy) -> None:
    policy = make_policy(SUPPORT)
    empty = []
    for cell in context_matrix(policy, 100_000).contexts:
        try:
            resolve(policy, cell.context)
        except NoCallableToolsError as exc:
            # a scheduled run in an unconfigured account fails closed by design (PC409), as
            # does a memory flush in a run without read and write
            warned = {w.code for w in exc.resolution.warnings}
            if "PC409" not in warned and cell.context.trigger != "memory":
                empty.append(cell.label)
    found = [d for d in check_policy(policy) if d.code == "PC308"]
    # one diagnostic per set of emptying layers, every context counted exactly once
    chains = [d.message.split(" emptied by ")[1].split(":")[0] for d in found]
    # the support bot's allow list then the group's (the memory flush is by design)
    assert len(chains) == len(set(chains)) == 1
    counted = sum(int(d.message.split(" remain in ")[1].split()[0]) for d in found)
    assert counted == len(empty)
    [group] = [d for d in found if "agents.support.tools.allow; group tools.allow" in d.message]
    # the support bot's Telegram group is named, not hidden behind the Slack one
    assert "agent=support group=slack/C1 (" in group.message
    assert "agent=support group=telegram/-100200 (" in group.message
    places = group.message.split(": ", 1)[1].split("), ")
    total = int(group.message.split(" remain in ")[1].split()[0])
    assert sum(int(p.split("(")[1].split()[0]) for p in places) == total


def test_a_scheduled_run_in_a_deleted_account_is_not_a_finding(make_policy: MakePolicy) -> None:
    policy = make_policy(
        "catalog: openclaw\nchannels:\n  slack:\n    accounts:\n      acme: {groups: {C1: {}}}\n"
    )
    assert not [d for d in check_policy(policy) if d.code == "PC308"]


def test_the_size_is_computed_and_a_sample_drawn_without_building_the_product(
    make_policy: MakePolicy,
) -> None:
    # 40 agents x 40 provider keys x 40 groups x 40 sender ids x 40 usernames: far too many
    # contexts to build (the old matrix built the whole product before sampling)
    n = 40
    agents = "".join(f"    a{i}: {{}}\n" for i in range(n))
    providers = "".join(f"    p{i}: {{deny: [exec]}}\n" for i in range(n))
    senders = "".join(
        f'    "id:{i}": {{deny: [x{i}]}}\n    "username:u{i}": {{deny: [y{i}]}}\n' for i in range(n)
    )
    groups = "".join(f"        G{i}: {{tools: {{deny: [z{i}]}}}}\n" for i in range(n))
    policy = make_policy(
        "catalog: openclaw\ntools:\n  byProvider:\n"
        + providers
        + "  toolsBySender:\n"
        + senders
        + "agents:\n  entries:\n"
        + agents
        + "channels:\n  slack:\n    groups:\n"
        + groups
    )
    dims = Dimensions(policy)
    assert dims.total > 10**9
    matrix = context_matrix(policy, 50)
    assert matrix.sampled and matrix.total == dims.total and len(matrix.contexts) == 50
    # deterministic, and every sampled cell is a distinct cell of the product
    again = context_matrix(policy, 50)
    assert [c.label for c in again.contexts] == [c.label for c in matrix.contexts]
    assert len({c.label for c in matrix.contexts}) == 50
    assert [d.code for d in check_policy(policy, max_contexts=50)].count("PC415") == 1


def test_every_dimension_is_enumerated() -> None:
    policy = load_policy(EXAMPLES / "chatbot.yaml")
    labels = [c.label for c in context_matrix(policy, 100_000).contexts]
    words = {w for label in labels for w in label.split()}
    assert {"owner", "trigger=cron", "trigger=memory", "session=non-main"} <= words
    assert "group=slack/acme-enterprise/C0SECURE" in words
    assert "account=(other)" in words  # a scheduled run there fails closed
    assert any(w.startswith("depth=") for w in words)


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    assert main(["matrix", *args, "--format", "json"]) == 0
    out: dict[str, object] = json.loads(capsys.readouterr().out)
    return out


def test_filters(capsys: pytest.CaptureFixture[str]) -> None:
    team = str(EXAMPLES / "team.yaml")
    full = _json(capsys, team)
    coder = _json(capsys, team, "--agent", "coder", "--tool", "exec", "--tool", "bash")
    rows = coder["rows"]
    assert isinstance(rows, list) and rows
    assert all(r["context"].startswith("agent=coder ") for r in rows)
    assert coder["tools"] == ["exec"]  # bash is exec
    assert coder["contexts"] * 4 == full["contexts"]  # type: ignore[operator]
    none = _json(capsys, team, "--agent", "(none)", "--tool", "exec")
    assert all(r["context"].startswith("agent=(none) ") for r in none["rows"])  # type: ignore[attr-defined]
    changed = _json(capsys, team, "--agent", "coder", "--tool", "exec", "--changed-only")
    crows = changed["rows"]
    assert isinstance(crows, list)
    base = crows[0]
    assert base["context"] == "agent=coder sender=(anonymous)"
    others = [r for r in rows if r["context"] != base["context"]]
    want = [r["context"] for r in others if r["cells"] != base["cells"]]
    assert want and [r["context"] for r in crows[1:]] == want


@pytest.mark.parametrize(
    ("flag", "value", "hint"),
    [("--agent", "codr", 'did you mean "coder"?'), ("--tool", "exex", 'did you mean "exec"?')],
)
def test_filters_refuse_unknown_names(
    flag: str, value: str, hint: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["matrix", str(EXAMPLES / "team.yaml"), flag, value]) == 2
    assert hint in capsys.readouterr().err


@pytest.mark.parametrize("name", ["chatbot.yaml", "team.yaml", "platform.toml"])
def test_labels_name_one_cell_each(name: str) -> None:
    dims = Dimensions(load_policy(EXAMPLES / name))
    labels = [cell.label for cell in dims]
    assert len(labels) == len(set(labels)) == dims.total
    # and a cell's index is where it was decoded from
    assert all(dims.index_of(dims.cell_at(i)) == i for i in range(0, dims.total, 7))


def test_a_sampled_diff_does_not_claim_nothing_widened(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    team = str(EXAMPLES / "team.yaml")
    assert main(["diff", team, team, "--max-contexts", "5"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2].startswith("INCONCLUSIVE (sampled), not widened in the contexts compared")
    assert "raise --max-contexts" in out[-1]
    # and it does not pass the gate (F22)
    assert main(["diff", team, team, "--max-contexts", "5", "--fail-on-widen"]) == 1
    capsys.readouterr()
    assert main(["diff", team, team]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("not widened: ")


def test_senders_that_every_rule_treats_alike_are_one_value(make_policy: MakePolicy) -> None:
    tiers = "".join(
        f'    "id:{i}": {{deny: [{"exec" if i % 2 else "write"}]}}\n' for i in range(50)
    )
    policy = make_policy(
        "catalog: openclaw\ntools:\n  toolsBySender:\n" + tiers + '    "id:7x": {}\n'
        "channels:\n  slack:\n    groups:\n      C1:\n        toolsBySender:\n"
        '          "id:3": {deny: [read]}\n'
    )
    ids = Dimensions(policy).sender_values[0]
    # no id; the even tier; the odd tier; id:3 (its group rule sets it apart); the empty rule
    assert ids == [None, "0", "1", "3", "7x"]
    sender = "agent=(none) group=slack/C1 sender=id:"
    assert any(c.label.startswith(sender + "3") for c in context_matrix(policy, 10**6).contexts)


def test_groups_whose_rules_say_the_same_are_one_place(make_policy: MakePolicy) -> None:
    same = "".join(f"      G{i}: {{tools: {{deny: [exec]}}}}\n" for i in range(30))
    policy = make_policy(
        "catalog: openclaw\nchannels:\n  slack:\n    groups:\n"
        + same
        + "      OPS: {tools: {deny: [write]}}\n"
    )
    groups = {p.group for p in Dimensions(policy).places if p.channel == "slack"}
    assert groups == {None, "G0", "OPS", "(other)"}
    rep = representative(policy, RunContext(session_key="agent:a:slack:group:G17:topic:2"))
    assert "group=slack/G0 " in rep.label
