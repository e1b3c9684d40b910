"""The `policyctl` command: `main.py` parses the command line, one module per subcommand."""

from __future__ import annotations


def run() -> None:
    """The installed `policyctl` script and `python -m policyctl`: one command, then exit.

    A command's process is short and its objects live to the end, so the cyclic collector
    only costs time: it is paused before the first import (`main` itself pauses it around
    the command only, for in-process callers), and what the process holds is frozen before
    the interpreter exits, whose final collections would otherwise scan all of it again
    (a tenth of a `resolve`). Nothing is left to finalise by then: the streams are flushed
    by the interpreter as always, and no command leaves a file open."""
    import gc
    import sys

    gc.disable()
    from .streams import open_closed_streams

    open_closed_streams()  # before the warm client, which reads and writes them too
    if len(sys.argv) > 2 and sys.argv[1] == "hook" and "--warm" in sys.argv:
        # a hook call served by the warm helper imports nothing of the engine
        from .hook_warm import answer_warm

        served = answer_warm(sys.argv[2:])
        if served is not None:
            sys.stdout.flush()
            sys.exit(served)
    from .main import main

    try:
        code = main()
    finally:  # argparse's --help and --version end the process with SystemExit
        gc.freeze()
    sys.exit(code)
