"""The gateway's operator mistakes: one line naming the problem, exit 2, no traceback."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from .conftest import Setup


def _gateway(setup: Setup, *extra: str, prelude: str = "") -> subprocess.CompletedProcess[str]:
    code = (
        f"{prelude}\nimport sys\nfrom policyctl.cli.main import main\n"
        f"sys.exit(main({setup.gateway_args(*extra)[2:]!r}))"
    )
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=setup.root, timeout=60
    )


def test_without_the_extra_the_error_names_it(setup: Setup) -> None:
    out = _gateway(setup, prelude="import sys; sys.modules['mcp'] = None")
    assert out.returncode == 2
    assert "pip install 'policyctl[gateway]'" in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize(
    ("servers", "expected"),
    [
        ("{", "servers.json:1:2: not JSON"),
        ('{"mcpServers": {}}', 'expected {"mcpServers"'),
        ('{"mcpServers": {"a__b": {"command": "x"}}}', "contains `__`"),
        ('{"mcpServers": {"a": {"command": "x", "url": "http://h"}}}', 'either "command"'),
        ('{"mcpServers": {"a": {"command": "x", "policyctl": {"resources": "yes"}}}}', '"pass"'),
        ('{"mcpServers": {"a": {"commnd": "x"}}}', "unknown key 'commnd'"),
        # two servers whose tools share one `<server>__` prefix: which one's tool a name
        # such as `gh__x` means (and so which rules apply) would depend on which is up
        ('{"mcpServers": {"gh": {"command": "x"}, "GH": {"command": "y"}}}', "same tool names"),
        ('{"mcpServers": {"a.b": {"command": "x"}, "a-b": {"command": "y"}}}', "same tool names"),
    ],
)
def test_a_bad_servers_file_is_named(setup: Setup, servers: str, expected: str) -> None:
    setup.servers.write_text(servers)
    out = _gateway(setup)
    assert out.returncode == 2, out
    assert "PC500" in out.stderr and expected in out.stderr
    assert "Traceback" not in out.stderr


def test_a_short_or_shared_token_is_refused(setup: Setup) -> None:
    clients = {"clients": {"a": {"token": "short"}}}
    (setup.root / "clients.json").write_text(json.dumps(clients))
    out = _gateway(setup, "--listen", "127.0.0.1:1", "--clients", "clients.json")
    assert out.returncode == 2 and "PC501" in out.stderr and "16" in out.stderr


@pytest.mark.parametrize("log", ["missing-dir/decisions.jsonl", "."])
def test_a_decision_log_that_cannot_be_written_stops_the_start(setup: Setup, log: str) -> None:
    # docs/gateway.md: `--log FILE` appends one line per call; a log that cannot be written
    # would record nothing while the gateway serves, so it is refused before serving
    out = _gateway(setup, "--log", log)
    assert out.returncode == 2, out
    assert f"the decision log {log} cannot be written" in out.stderr
    assert "Traceback" not in out.stderr
