"""The `policyctl` command: one module per subcommand, each returning an exit code.

Exit codes: 0 clean, 1 findings, 2 usage error or unreadable input.
"""

from __future__ import annotations

import argparse
import gc
import sys
import types
from collections.abc import Sequence
from importlib import import_module

from .. import __version__
from .common import EXIT_USAGE, Reported, UsageError
from .output import SafeStream

#: commands whose standard output is a file's content, written unescaped (`fmt` and `import`
#: print policies, `compile` a bundle, `schema` a JSON Schema, `hook` the reply a host parses)
FILE_OUTPUT = frozenset({"fmt", "import", "compile", "schema", "hook"})

#: every subcommand by name, in the order --help lists them, with the module (in policyctl.cli)
#: that defines it: only the chosen one is imported, so a command does not pay for the imports
#: of the other ten (`compile` alone pulls in hmac and base64)
SUBCOMMANDS = {
    "validate": "validate",
    "test": "policytest",
    "resolve": "resolve",
    "explain": "explain",
    "simulate": "simulate",
    "matrix": "matrix",
    "diff": "diff",
    "compile": "compile",
    "schema": "schema",
    "fmt": "fmt",
    "import": "import_cmd",
    "hook": "hook",
    "gateway": "gateway",
    "serve": "serve",
    "report": "htmlreport",
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line parser; with `only`, just that subcommand's (building all eleven
    costs more than a short command's own work: start-up must stay fast)."""
    parser = argparse.ArgumentParser(
        prog="policyctl",
        description="Compile agent tool policies into an eleven-layer pipeline; resolve, "
        "explain and validate them.",
        epilog="example: policyctl explain examples/team.yaml --agent coder --tool exec",
    )
    parser.add_argument("--version", action="version", version=f"policyctl {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module in SUBCOMMANDS.items():
        if only is None or name == only:
            import_module(f"{__package__}.{module}").add_parser(sub)
    return parser


def refuse_pydantic_plugins() -> None:
    """Validate policies without third-party pydantic plugins, in this process.

    pydantic hands every model it builds to the plugins any installed distribution declares
    (entry point group `pydantic`): code outside policyctl that can observe or alter how a
    policy is validated. The command therefore runs with none, as `PYDANTIC_DISABLE_PLUGINS`
    would have it, and without the scan of every installed distribution's metadata
    (importlib.metadata) that finding them costs at each start. pydantic imports its plugin
    loader when it builds its first model, so this must run before: when pydantic is imported
    already (policyctl used as a library, then its CLI called in-process) nothing is changed.
    The environment is left as it is, so what the command starts sees no difference."""
    if "pydantic" in sys.modules:
        return
    loader = types.ModuleType("pydantic.plugin._loader", "policyctl: no pydantic plugins")
    loader.get_plugins = tuple  # type: ignore[attr-defined]  # `get_plugins()` -> ()
    sys.modules[loader.__name__] = loader


def main(argv: Sequence[str] | None = None) -> int:
    refuse_pydantic_plugins()
    # Every character written goes through SafeStream, argparse's messages (which quote the
    # arguments) included: no input reaches the terminal raw.
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = SafeStream(sys.stdout), SafeStream(sys.stderr)
    try:
        return _run(argv)
    finally:
        sys.stdout, sys.stderr = streams


def _run(argv: Sequence[str] | None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    # `policyctl resolve ...`: the other subcommands cannot take part in parsing it
    parser = build_parser(given[0] if given and given[0] in SUBCOMMANDS else None)
    args = parser.parse_args(given)
    if args.command in FILE_OUTPUT and isinstance(sys.stdout, SafeStream):
        # what these print is a file (a policy, a bundle, a schema): byte for byte, as data
        sys.stdout = sys.stdout.raw
    if not getattr(args, "run", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    # One command, then the process ends: the cyclic collector would only rescan the policy's
    # millions of long-lived, acyclic objects again and again (a third of validate's time on a
    # 5 MiB policy). Reference counting still frees garbage; in-process callers get it back.
    collecting = gc.isenabled()
    gc.disable()
    try:
        code: int = args.run(args)
    except Reported as exc:
        return exc.code
    except UsageError as exc:
        print(f"policyctl {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # `policyctl resolve ... | head`
        return 0
    finally:
        if collecting:
            gc.enable()
    return code


if __name__ == "__main__":
    raise SystemExit(main())
