"""The harness records reality: what ran, what the shell opened, and nothing escapes."""

from __future__ import annotations

import os

from oracle_harness import run_line


def test_records_every_executed_argv_with_its_words() -> None:
    rec = run_line("printf 'x\\n' | xargs -n 1 rm -f; timeout 5 /bin/echo 'a b'")
    assert ("xargs", "-n", "1", "rm", "-f") in rec.executed
    assert ("rm", "-f", "x") in rec.executed
    assert ("/bin/echo", "a b") in rec.executed


def test_a_redirection_is_opened_by_the_shell_and_an_argument_by_the_program() -> None:
    rec = run_line("cat < .env > out; cat README.md; echo hi | tee copy")
    by_shell = {(a.path, a.read, a.write) for a in rec.accesses if a.program == "bash"}
    assert (".env", True, False) in by_shell
    assert ("out", False, True) in by_shell
    assert ("README.md", True, False) not in by_shell
    assert any(a.path == "README.md" and a.program == "cat" for a in rec.accesses)
    assert any(a.path == "copy" and a.program == "tee" and a.write for a in rec.accesses)


def test_git_reports_the_builtin_it_ran_after_its_global_options() -> None:
    rec = run_line("git -C . --no-pager -c user.name=x push origin main")
    assert ("git", "push", "origin", "main") in rec.git_builtins
    assert rec.status == 0  # the push to the local bare remote really happened


def test_nothing_outside_the_run_is_written_and_there_is_no_network() -> None:
    outside = "/tmp/policyctl-oracle-escape-probe"
    rec = run_line(
        f"echo x > {outside}; touch /oracle-x; exec 3<>/dev/tcp/127.0.0.1/9 && echo connected"
    )
    assert not os.path.exists(outside)
    assert not os.path.exists("/oracle-x")
    assert rec.status != 0


def test_a_line_that_runs_too_long_is_stopped() -> None:
    rec = run_line("sleep 30", seconds=1)
    assert rec.timed_out
