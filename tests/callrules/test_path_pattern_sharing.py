"""Two policies holding the same path rule share its compiled pattern (diff, a hot reload:
the second load compiles nothing again), and a dropped policy does not keep it alive."""

from __future__ import annotations

import gc
import re

from policyctl.callrules import paths


def test_the_same_pattern_text_is_compiled_once_while_held() -> None:
    first = paths.parse_path_pattern("/data/shared-x/**", "read(/data/shared-x/**)", 5)
    second = paths.parse_path_pattern("/data/shared-x/**", "read(/data/shared-x/**)", 5)
    assert first.regex is not None and first.regex is second.regex
    other = paths.parse_path_pattern("/data/shared-y/**", "read(/data/shared-y/**)", 5)
    assert other.regex is not first.regex
    # an anchored and an unanchored pattern of the same words are different patterns
    anywhere = paths.parse_path_pattern("shared-x", "read(shared-x)", 5)
    assert anywhere.regex is not first.regex


def test_a_pattern_no_policy_holds_is_not_kept() -> None:
    held = paths.parse_path_pattern("/data/dropped-z/**", "read(/data/dropped-z/**)", 5)
    assert "/data/dropped-z/**" in paths._REGEXES
    del held
    re.purge()  # `re` keeps its last 512 compiled patterns alive on its own
    gc.collect()
    assert "/data/dropped-z/**" not in paths._REGEXES
