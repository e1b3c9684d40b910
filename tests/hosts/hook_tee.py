"""Run a hook command for a host and log the exchange: ``hook_tee.py LOG COMMAND...``.

The host's JSON goes to COMMAND unchanged, COMMAND's stdout and exit status go back to the host
unchanged; one JSON line ``{"stdin", "stdout", "exit"}`` is appended to LOG, so a test can show
that the hook ran and what it answered.
"""

from __future__ import annotations

import json
import subprocess
import sys


def main() -> int:
    log, command = sys.argv[1], sys.argv[2:]
    payload = sys.stdin.read()
    done = subprocess.run(command, input=payload, capture_output=True, text=True, check=False)
    try:
        sent: object = json.loads(payload)
    except ValueError:
        sent = payload
    with open(log, "a", encoding="utf-8") as out:
        out.write(
            json.dumps({"stdin": sent, "stdout": done.stdout, "exit": done.returncode}) + "\n"
        )
    sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
