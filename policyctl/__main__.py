from policyctl.cli import run

run()
