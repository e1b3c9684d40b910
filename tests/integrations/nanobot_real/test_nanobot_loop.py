"""The real nanobot agent loop under a policyctl policy (examples/nanobot.yaml).

Each test drives nanobot with a scripted model on loopback and checks what really happened:
the tools offered to the model, the tool results the model read, the files on disk.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from conftest import nanobot_config
from fake_model import Conversation, Script, Turn, serve
from nanobot.nanobot import Nanobot

from policyctl.integrations.nanobot import ApprovalRequest, NanobotPolicy

MAIN = "MAIN-TASK"


def run(tmp: Path, ws: Path, script: Script, message: str, **kw: object) -> str:
    with serve(script) as api:
        bot = Nanobot.from_config(nanobot_config(tmp, ws, api))
        result = asyncio.run(bot.run(message, ephemeral=True, **kw))  # type: ignore[arg-type]
    return str(result.content)


def test_removed_tools_are_never_offered(
    tmp_path: Path, workspace: Path, example_policy: Path
) -> None:
    main = Conversation(MAIN, [Turn(text="nothing to do")])
    with NanobotPolicy(example_policy, agent="main"):
        run(tmp_path, workspace, Script(main), MAIN)
    offered = main.offered()
    assert {"exec", "read_file", "write_file", "edit_file", "spawn"} <= offered
    assert not offered & {"web_fetch", "web_search", "send_session_message", "cron"}


def test_without_the_policy_nanobot_offers_them(tmp_path: Path, workspace: Path) -> None:
    main = Conversation(MAIN, [Turn(text="nothing to do")])
    run(tmp_path, workspace, Script(main), MAIN)
    assert {"web_fetch", "web_search", "send_session_message"} <= main.offered()


def test_calls_are_decided_before_they_run(
    tmp_path: Path, workspace: Path, example_policy: Path
) -> None:
    main = Conversation(
        MAIN,
        [
            Turn("exec", {"command": "touch allowed.txt"}),
            Turn("exec", {"command": "touch denied.txt"}),
            Turn("exec", {"command": "echo x && rm -f allowed.txt"}),
            Turn("write_file", {"path": "conf/.env", "content": "SECRET=1"}),
            Turn("web_fetch", {"url": "https://example.org/"}),
            Turn("write_file", {"path": "src/app.py", "content": "print(1)"}),
            Turn(text="finished"),
        ],
    )
    with NanobotPolicy(example_policy, agent="main", refusal_detail="full"):
        assert run(tmp_path, workspace, Script(main), MAIN) == "finished"
    assert (workspace / "allowed.txt").exists()  # allowed: it ran, and rm did not
    assert not (workspace / "denied.txt").exists()
    assert not (workspace / "conf" / ".env").exists()
    results = main.tool_results()
    assert len(results) == 6
    assert "Exit code: 0" in results[0]
    assert 'call rule "exec(touch denied*)"' in results[1] and "denies it" in results[1]
    assert 'call rule "exec(rm *)"' in results[2]
    assert "write_file(**/.env)" in results[3]
    assert "tool web_fetch is not available in this run" in results[4]
    assert "nanobot.yaml:" in results[4]  # full detail names the file and line
    # a relative path is anchored at the request's workspace, so an allowed write runs
    assert (workspace / "src" / "app.py").read_text() == "print(1)"


def test_ask_without_an_approver_is_refused_and_with_one_runs(
    tmp_path: Path, workspace: Path
) -> None:
    catalog = Path(__file__).parents[3] / "examples" / "catalogs" / "nanobot-0.3.5.toml"
    (tmp_path / catalog.name).write_text(catalog.read_text())
    policy = tmp_path / "ask.yaml"
    policy.write_text(f'catalog: {catalog.name}\ntools:\n  ask: ["exec(touch asked*)"]\n')
    first = Conversation(MAIN, [Turn("exec", {"command": "touch asked1.txt"}), Turn(text="ok")])
    with NanobotPolicy(policy):
        run(tmp_path, workspace, Script(first), MAIN)
    assert not (workspace / "asked1.txt").exists()
    assert "needs approval" in first.tool_results()[0]

    seen: list[ApprovalRequest] = []

    def approve(request: ApprovalRequest) -> bool:
        seen.append(request)
        return True

    second = Conversation(MAIN, [Turn("exec", {"command": "touch asked2.txt"}), Turn(text="ok")])
    with NanobotPolicy(policy, approve=approve):
        run(tmp_path, workspace, Script(second), MAIN)
    assert (workspace / "asked2.txt").exists()
    assert [r.tool for r in seen] == ["exec"] and seen[0].arguments["command"] == "touch asked2.txt"


def test_a_policyctl_failure_refuses_the_call(
    tmp_path: Path, workspace: Path, example_policy: Path
) -> None:
    main = Conversation(MAIN, [Turn("exec", {"command": "touch boom.txt"}), Turn(text="ok")])
    guard = NanobotPolicy(example_policy)

    def broken(*_: object) -> None:
        raise RuntimeError("decider crashed")

    guard.refusal = broken  # type: ignore[method-assign]
    with guard:
        run(tmp_path, workspace, Script(main), MAIN)
    assert not (workspace / "boom.txt").exists()
    assert "could not decide it (RuntimeError)" in main.tool_results()[0]


def test_uninstall_restores_nanobot(example_policy: Path) -> None:
    from nanobot.agent.tools.registry import ToolRegistry

    before = (ToolRegistry.get_definitions, ToolRegistry.prepare_call)
    with NanobotPolicy(example_policy):
        assert ToolRegistry.prepare_call is not before[1]
    assert (ToolRegistry.get_definitions, ToolRegistry.prepare_call) == before


def test_subagents_get_the_child_run_of_their_parent(
    tmp_path: Path, workspace: Path, example_policy: Path
) -> None:
    main = Conversation(
        MAIN,
        [Turn("spawn", {"task": "SUB-TASK: make files", "wait": True}), Turn(text="main done")],
    )
    sub = Conversation(
        "SUB-TASK",
        [
            Turn("exec", {"command": "touch sub-ok.txt"}),
            Turn("exec", {"command": "touch denied-sub.txt"}),
            Turn("web_fetch", {"url": "https://example.org/"}),
            Turn(text="sub done"),
        ],
    )
    with NanobotPolicy(example_policy, agent="main"):
        run(tmp_path, workspace, Script(main, sub), MAIN)
    assert sub.requests, "the subagent never asked the model"
    offered = sub.offered()
    assert "exec" in offered
    # nanobot's subagent registry has web_fetch and web_search: the policy removes them there too
    assert not offered & {"spawn", "web_fetch", "web_search", "cron", "message", "my"}
    assert (workspace / "sub-ok.txt").exists(), sub.tool_results()
    assert not (workspace / "denied-sub.txt").exists()  # the parent's call rules hold
    results = sub.tool_results()
    assert 'call rule "exec(touch denied*)"' in results[1]
    assert "tool web_fetch is not available in this run" in results[2]


def test_a_subagent_never_gets_more_than_its_parent(tmp_path: Path, workspace: Path) -> None:
    """Inheritance: a parent restricted to a few tools caps its child (semantics 7.8)."""
    catalog = Path(__file__).parents[3] / "examples" / "catalogs" / "nanobot-0.3.5.toml"
    (tmp_path / catalog.name).write_text(catalog.read_text())
    policy = tmp_path / "narrow.yaml"
    policy.write_text(f"catalog: {catalog.name}\ntools:\n  allow: [spawn, read_file]\n")
    main = Conversation(
        MAIN, [Turn("spawn", {"task": "SUB-TASK: x", "wait": True}), Turn(text="ok")]
    )
    sub = Conversation("SUB-TASK", [Turn("exec", {"command": "touch sub.txt"}), Turn(text="ok")])
    with NanobotPolicy(policy, agent="main"):
        run(tmp_path, workspace, Script(main, sub), MAIN)
    assert sub.offered() == {"read_file"}
    assert not (workspace / "sub.txt").exists()
    assert "tool exec is not available in this run" in sub.tool_results()[0]


def test_scheduled_runs_are_decided_as_cron_runs(tmp_path: Path, workspace: Path) -> None:
    """A job run by nanobot's own cron runner (`run_bound_cron_job`) goes through the guard,
    as a run triggered by cron."""
    from nanobot.cron.bound_runner import run_bound_cron_job
    from nanobot.cron.types import CronJob, CronPayload

    catalog = Path(__file__).parents[3] / "examples" / "catalogs" / "nanobot-0.3.5.toml"
    (tmp_path / catalog.name).write_text(catalog.read_text())
    policy = tmp_path / "cron.yaml"
    policy.write_text(
        f'catalog: {catalog.name}\ntools:\n  deny: ["exec(touch denied*)"]\n'
        '  ask: ["exec(touch asked*)"]\n'
    )
    job_turns = Conversation(
        "CRON-JOB",
        [
            Turn("exec", {"command": "touch denied-cron.txt"}),
            Turn("exec", {"command": "touch asked-cron.txt"}),
            Turn(text="job done"),
        ],
    )
    seen: list[ApprovalRequest] = []

    def approve(request: ApprovalRequest) -> bool:
        seen.append(request)
        return True

    class Records:
        def write_run_record(self, run_id: str, record: dict[str, object]) -> None:
            pass

    job = CronJob(
        id="nightly",
        name="nightly",
        payload=CronPayload(
            message="CRON-JOB tidy up",
            session_key="cli:direct",
            origin_channel="cli",
            origin_chat_id="direct",
        ),
    )
    with serve(Script(job_turns)) as api, NanobotPolicy(policy, agent="main", approve=approve):
        bot = Nanobot.from_config(nanobot_config(tmp_path, workspace, api))
        asyncio.run(run_bound_cron_job(job, agent=bot._loop, cron=Records()))
    assert job_turns.requests, "the cron job never reached the model"
    assert not (workspace / "denied-cron.txt").exists()
    assert 'call rule "exec(touch denied*)"' in job_turns.tool_results()[0]
    assert (workspace / "asked-cron.txt").exists()
    assert [(r.context.trigger, r.context.session_key) for r in seen] == [
        ("cron", "agent:main:cron:nightly")
    ]
