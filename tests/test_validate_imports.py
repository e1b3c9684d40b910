"""What `validate` loads: the call-rule package imports its stages on first use, so checking
a policy's call rules never loads the shell analysis or the deciders a running agent needs."""

from __future__ import annotations

import subprocess
import sys

from conftest import EXAMPLES

import policyctl.callrules as callrules


def test_every_name_of_the_call_rule_package_is_found_where_it_is_said_to_live() -> None:
    assert set(callrules._HOME) == set(callrules.__all__)
    for name in callrules.__all__:
        value = getattr(callrules, name)
        assert value.__module__ == f"policyctl.callrules.{callrules._HOME[name]}", name


def test_an_unknown_name_of_the_call_rule_package_is_an_attribute_error() -> None:
    try:
        callrules.decide_everything  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as exc:
        assert "decide_everything" in str(exc)
    else:  # pragma: no cover - the assertion below reports it
        raise AssertionError("an unknown name was found")


def test_validating_call_rules_loads_neither_the_shell_analysis_nor_the_deciders() -> None:
    script = (
        "import sys\n"
        "from policyctl.validation import validate_path\n"
        f"assert validate_path({str(EXAMPLES / 'team.yaml')!r}) == []\n"
        "loaded = {m for m in sys.modules if m.startswith('policyctl.callrules.')}\n"
        "assert 'policyctl.callrules.specifiers' in loaded, loaded\n"
        "print(sorted(loaded & {'policyctl.callrules.' + m for m in\n"
        "      ('decide', 'subject', 'shell', 'shell_words', 'patch')}))\n"
        "from policyctl.callrules import decide_call\n"
        "print(decide_call.__module__)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["[]", "policyctl.callrules.decide"]
