"""A host a client maps to a numeric address (ideographic and fullwidth dots, fullwidth digits)
is that address to `ip:` rules: WHATWG maps the host to ASCII first, then reads a number."""

from __future__ import annotations

import ipaddress

from callrules_helpers import decide, env_for, layer
from hypothesis import given, settings
from hypothesis import strategies as st

from policyctl.callrules import Effect
from policyctl.callrules.urls import parse_call_url

DOTS = [".", "\u3002", "\uff0e", "\uff61"]  # full stop, ideographic, fullwidth, halfwidth
FULLWIDTH = {str(d): chr(0xFF10 + d) for d in range(10)}
ENV = env_for("openclaw")


@settings(max_examples=500)
@given(
    st.integers(0, 2**32 - 1),
    st.lists(st.sampled_from(DOTS), min_size=3, max_size=3),
    st.lists(st.booleans(), min_size=4, max_size=4),
)
def test_every_spelling_of_an_address_is_that_address(
    number: int, dots: list[str], wide: list[bool]
) -> None:
    address = ipaddress.IPv4Address(number)
    octets = [
        "".join(FULLWIDTH[c] for c in octet) if w else octet
        for octet, w in zip(str(address).split("."), wide, strict=True)
    ]
    host = octets[0] + "".join(d + o for d, o in zip(dots, octets[1:], strict=True))
    parsed = parse_call_url(f"http://{host}:8080/admin")
    assert not isinstance(parsed, str), parsed
    assert parsed.ip == address and parsed.host is None


def test_an_ip_deny_meets_a_loopback_written_with_ideographic_dots() -> None:
    rules = layer("tools.deny", ENV, web_fetch={"deny": ["web_fetch(ip:127.0.0.0/8)"]})
    for url in ("http://127\u30020\u30020\u30021:8080/admin", "http://\uff11\uff12\uff17.0.0.1/"):
        decision = decide([rules], "web_fetch", {"url": url}, ENV)
        assert decision.verdict.effect is Effect.DENY, (url, decision)
