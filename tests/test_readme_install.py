"""The README's install instructions: what it tells operators to run is what CI runs."""

from __future__ import annotations

import re

from conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
CI = (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_readme_never_sends_operators_to_the_index_for_policyctl() -> None:
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:  # and the manual
        for line in page.read_text(encoding="utf-8").splitlines():
            if re.search(r"pip install ['\"]?policyctl\b(?![-\w])", line):
                assert "finds nothing" in line, f"{page.name} installs from an index: {line!r}"


def test_readme_builds_the_wheel_the_way_ci_does() -> None:
    build = re.search(r"python -m pip wheel --no-deps --wheel-dir (\S+) \.", README)
    assert build, "README does not say how to build a wheel"
    assert "python -m pip wheel --quiet --no-deps --wheel-dir" in CI
    assert f"pip install {build.group(1)}/policyctl-*.whl" in README
    assert "pip install ." in README  # from a checkout
