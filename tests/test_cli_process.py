"""What the `policyctl` process does that an in-process call of `main` does not.

It validates policies without third-party pydantic plugins: a pydantic plugin is code from
any installed distribution (entry point group `pydantic`) that pydantic hands every model it
builds, so it could observe or alter how a policy is validated. The fixture installs one that
leaves a mark when pydantic loads it; the control run shows pydantic does load it in a plain
process, the command runs show policyctl's do not. And it ends without a final collection.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def plugin_env(tmp_path: Path) -> tuple[dict[str, str], Path]:
    mark = tmp_path / "plugin-loaded"
    (tmp_path / "spy_plugin.py").write_text(
        "import os, pathlib\n"
        "pathlib.Path(os.environ['SPY_MARK']).write_text('loaded')\n"
        "class _Plugin:\n"
        "    def new_schema_validator(self, *args, **kwargs):\n"
        "        return None, None, None\n"
        "plugin = _Plugin()\n"
    )
    dist = tmp_path / "spy_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: spy-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[pydantic]\nspy = spy_plugin:plugin\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path), SPY_MARK=str(mark), NO_COLOR="1")
    env.pop("PYDANTIC_DISABLE_PLUGINS", None)
    return env, mark


def test_control_pydantic_loads_the_plugin_in_a_plain_process(
    plugin_env: tuple[dict[str, str], Path],
) -> None:
    env, mark = plugin_env
    code = "import pydantic\nclass M(pydantic.BaseModel):\n    x: int = 0\n"
    subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, check=True)
    assert mark.read_text() == "loaded"


@pytest.mark.parametrize(
    "argv",
    [
        ["validate", "examples/team.yaml"],
        ["resolve", "examples/team.yaml", "--agent", "coder"],
        ["explain", "examples/team.yaml", "--agent", "coder", "--tool", "exec"],
    ],
)
def test_the_command_never_loads_a_pydantic_plugin(
    plugin_env: tuple[dict[str, str], Path], argv: list[str]
) -> None:
    env, mark = plugin_env
    proc = subprocess.run(
        [sys.executable, "-m", "policyctl", *argv], env=env, cwd=ROOT, capture_output=True
    )
    assert proc.returncode in (0, 1), proc.stderr
    assert not mark.exists()


def test_in_process_callers_keep_their_pydantic() -> None:
    """policyctl used as a library, its CLI then called in-process: nothing is replaced."""
    import pydantic.plugin._loader as loader

    from policyctl.cli.main import refuse_pydantic_plugins

    refuse_pydantic_plugins()
    assert sys.modules["pydantic.plugin._loader"] is loader


_EXIT_PROBE = """
import atexit, gc, sys
atexit.register(lambda: print("collector", gc.isenabled(), gc.get_freeze_count() > 0))
sys.argv = ["policyctl", *sys.argv[1:]]
from policyctl.cli import run
run()
"""


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["resolve", "examples/team.yaml", "--agent", "coder"], 0),
        (["resolve", "examples/no-such-file.yaml"], 2),
        (["--version"], 0),
    ],
)
def test_the_process_ends_with_the_commands_code_and_no_collection(
    argv: list[str], code: int
) -> None:
    """The collector stays paused from the first import to the exit, and the process's
    objects are frozen first, so the interpreter's final collections skip them."""
    env = dict(os.environ, NO_COLOR="1")
    proc = subprocess.run(
        [sys.executable, "-c", _EXIT_PROBE, *argv],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == code, proc.stderr
    assert proc.stdout.splitlines()[-1] == "collector False True"


@pytest.fixture
def warm_cache() -> Iterator[Path]:
    """A cache directory whose warm helper is running (started, as a host would, by a first
    call); the helper is stopped at the end. A short path: a socket's holds 108 bytes."""
    import shutil
    import tempfile
    import time

    cache = Path(tempfile.mkdtemp(prefix="pc-warm-")) / "c"
    first = subprocess.run(
        [*_HOOK, "--cache-dir", str(cache)], input=b"{}", cwd=ROOT, capture_output=True
    )
    assert first.returncode == 2, first.stderr
    deadline = time.monotonic() + 20
    while not list(cache.glob("warm-*.sock.pid")) and time.monotonic() < deadline:
        time.sleep(0.05)
    pids = list(cache.glob("warm-*.sock.pid"))
    assert pids, "the warm helper did not start"
    time.sleep(0.2)  # the pid file is written just after the socket listens
    try:
        yield cache
    finally:
        import signal

        os.kill(int(pids[0].read_text()), signal.SIGTERM)
        shutil.rmtree(cache.parent, ignore_errors=True)


_HOOK = [
    sys.executable,
    "-m",
    "policyctl",
    "hook",
    "claude-code",
    "--policy",
    "examples/hosts-team.yaml",
    "--warm",
]


@pytest.mark.parametrize("closed", [0, 1, 2])
@pytest.mark.parametrize("warm", [False, True])
def test_a_hook_started_with_a_stream_closed_still_refuses(
    warm_cache: Path, closed: int, warm: bool
) -> None:
    """A hook whose stdin, stdout or stderr is closed at start refuses with the host's
    blocking code (2): a crash would exit 1, which Claude Code reads as "proceed". The warm
    client runs before `main`, so it must find the streams open as well."""
    argv = [*_HOOK, "--cache-dir", str(warm_cache)] if warm else [*_HOOK, "--no-cache"]
    proc = subprocess.run(
        argv,
        input=None if closed == 0 else b"not json",
        stdin=subprocess.DEVNULL if closed == 0 else None,
        cwd=ROOT,
        capture_output=True,
        preexec_fn=lambda: os.close(closed),  # in the child, before exec
    )
    assert proc.returncode == 2, proc.stderr
    assert b"Traceback" not in proc.stderr
    if closed != 1:
        assert b'"permissionDecision":"deny"' in proc.stdout
