"""URLs already in normal form skip the general parser: for every URL `parse_normal_url`
accepts, the general parser gives the same CallURL and renders it back to the same text."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from policyctl.callrules.urls import MAX_URL, parse_call_url, parse_normal_url

PIECES = [
    *("http://", "https://", "HTTPS://", "ftp://", "a", "z", "0", "9", "-", "--", ".", ".."),
    *("xn--", "example.com", "docs.python.org", ":", ":443", ":0", ":08", ":65536", "/", "/."),
    *("/..", "%2e", "%2F", "?", "#", "@", "é", "\u00a0", " ", "\\", "[::1]", "127.0.0.1", "1"),
    *("A", "_", "=", "&", "~"),
]
urls = st.one_of(
    st.lists(st.sampled_from(PIECES), max_size=12).map("".join),
    st.builds(
        lambda scheme, host, rest: scheme + host + rest,
        st.sampled_from(["http://", "https://"]),
        st.text("abz09.-", min_size=1, max_size=20),
        st.lists(st.sampled_from(PIECES), max_size=6).map("".join),
    ),
)


@settings(max_examples=3000, deadline=None)
@given(urls)
@example("https://api.example.com/v1/items?page=2")
@example("https://a.example.com:0443/")  # leading zero: not the normal form
@example("https://a.example.com/?")  # an empty query renders without `?`
@example("https://a.example.com")  # no path renders as `/`
@example("https://xn--bcher-kva.example.com/")
@example("https://a.example.com/x/../y")
@example("https://a.example.com:65536/")
@example("https://1.2.3.4/")
@example("https://a.0x1/")  # a last label that starts with a digit may be a number
@example("https://-a.com/")
@example("https://a-.com/")
@example("https://a..com/")
@example("https://.a.com/")
@example("https://a.com./")
@example("https://" + "a" * 64 + ".com/")
@example("https://" + ("a" * 60 + ".") * 5 + "com/")
def test_the_fast_path_builds_what_the_parser_builds(raw: str) -> None:
    fast = parse_normal_url(raw)
    if fast is not None:
        assert parse_call_url(raw) == fast
        assert fast.render() == raw


@pytest.mark.parametrize(
    "raw",
    ["https://api.example.com/v1/items?page=2", "http://docs.python.org/3/", "https://a.b:8443/"],
)
def test_common_urls_take_the_fast_path(raw: str) -> None:
    assert parse_normal_url(raw) == parse_call_url(raw)


def test_an_overlong_url_is_left_to_the_parser() -> None:
    raw = "https://example.com/" + "a" * MAX_URL
    assert parse_normal_url(raw) is None
    assert isinstance(parse_call_url(raw), str)
