"""Integrations: policyctl's decisions delivered to agent hosts that policyctl does not run.

nanobot/  nanobot's agent loop: its tool list and every call decided in process (the
          `nanobot` extra), with the refusal texts the runtime gives (`explain.refusal`)
hosts/  the hook protocols of Claude Code, Gemini CLI and Codex: one pure handler (payload +
        policy -> the host's reply) that `policyctl hook` runs per call and a server can serve

An integration is a consumer of the pipeline, like the runtime and the CLI: it imports the
stages below it and never the runtime (whose start-up would cost every hook call).
"""
