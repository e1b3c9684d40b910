"""URL specifiers and call URLs (contract section 7).

Specifiers: `domain:example.com` (that host), `domain:*.example.com` (subdomains at any depth,
not the domain itself), `ip:10.0.0.0/8` (CIDR, or one address), and URL globs
`https://docs.example.com/api/*` (scheme and host exact or `*.`-prefixed, `*` in the path and
query crossing `/`). A `*` anywhere else in a host (`example.*`) is an error.

A call's URL is parsed strictly: userinfo dropped (`http://example.com@evil.test/` is a call to
`evil.test`), host lowercased, IDNA-encoded (UTS 46), trailing dot removed. A host written as an
IP address in any form a client accepts (`127.1`, `0x7f000001`, `[::ffff:127.0.0.1]`) is an IP
and matches only `ip:` specifiers; an unspecified address (0.0.0.0/8, `::`), which reaches
this host's loopback, also meets a deny or ask `ip:` rule for loopback (127.0.0.1 or ::1) of
either family. Backslashes, whitespace, control characters and
percent-encoded hosts are refused as unanalysable: parsers disagree about them.

A URL glob's path and a call's path are compared in one normal form (`normal_path`), so what a
rule names and what a server serves are the same text: `/%61dmin/`, `//admin/` and
`/a/../admin/` are all `/admin/`.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from ..names import Glob
from .model import Matcher, SpecifierError, SpecifierProblem
from .values import DEFAULT_PORTS, IP, CallURL, Part

_UNSAFE = re.compile(r"[\x00-\x20\x7f\\]")
MAX_URL = 8192


@dataclass(frozen=True, slots=True)
class HostPattern:
    base: str
    subdomains: bool

    def matches(self, host: str | None) -> bool:
        if host is None:
            return False
        if self.subdomains:
            return host.endswith("." + self.base)
        return host == self.base


@dataclass(frozen=True, slots=True)
class DomainPattern(Matcher):
    text: str
    host: HostPattern

    def matches(self, part: Part, strict: bool) -> bool:
        url = part.url
        if url is None or url.host is None:
            return False
        host = self.host  # HostPattern.matches, inlined: one call less per rule and call
        if host.subdomains:
            return url.host.endswith("." + host.base)
        return url.host == host.base


@dataclass(frozen=True, slots=True)
class IpPattern(Matcher):
    text: str
    network: ipaddress.IPv4Network | ipaddress.IPv6Network

    def matches(self, part: Part, strict: bool) -> bool:
        url = part.url
        if url is None or url.ip is None:
            return False
        if url.ip.version == self.network.version and url.ip in self.network:
            return True
        # 0.0.0.0/8 and `::` connect to this host's loopback (Linux): a deny or ask rule for
        # loopback meets them too; an allow rule never gains a call by this reading
        return not strict and is_unspecified(url.ip) and _holds_loopback(self.network)


_UNSPECIFIED_V4 = ipaddress.IPv4Network("0.0.0.0/8")
_LOOPBACK_V4 = ipaddress.IPv4Address("127.0.0.1")
_LOOPBACK_V6 = ipaddress.IPv6Address("::1")


def is_unspecified(ip: IP) -> bool:
    """0.0.0.0/8 or `::`: addresses a connect() on Linux sends to the loopback interface."""
    if isinstance(ip, ipaddress.IPv4Address):
        return ip in _UNSPECIFIED_V4
    return ip.is_unspecified


def _holds_loopback(network: ipaddress.IPv4Network | ipaddress.IPv6Network) -> bool:
    if isinstance(network, ipaddress.IPv4Network):
        return _LOOPBACK_V4 in network
    return _LOOPBACK_V6 in network


@dataclass(frozen=True, slots=True)
class UrlGlob(Matcher):
    text: str
    scheme: str
    host: HostPattern
    port: int | None
    path: Glob

    def matches(self, part: Part, strict: bool) -> bool:
        url = part.url
        if url is None or url.scheme != self.scheme or not self.host.matches(url.host):
            return False
        if self.port is not None:
            if (url.port or DEFAULT_PORTS.get(url.scheme)) != self.port:
                return False
        elif strict and not url.default_port:
            return False  # an allow without a port admits the scheme's default port only
        return self.path.matches(url.path)


def _problem(code: str, message: str, entry: str, offset: int, fix: str | None = None) -> None:
    raise SpecifierError(SpecifierProblem(code, message, entry, offset, fix))


def _host_pattern(text: str, entry: str, offset: int) -> HostPattern:
    subdomains = text.startswith("*.")
    base = text[2:] if subdomains else text
    star = base.find("*")
    if star >= 0:
        at = offset + star + (2 if subdomains else 0)
        _problem(
            "PC353",
            f'"*" in a domain may only start it ("*.example.com"): "{text}"',
            entry,
            at,
            "list each domain, or use *.example.com for subdomains",
        )
    host = normalise_host(base)
    if not isinstance(host, str):
        _problem("PC353", f'"{text}" is not a domain name ({host[1]})', entry, offset)
        raise AssertionError  # unreachable: _problem raises
    if _as_ip(host) is not None:
        _problem("PC353", f'"{text}" is an IP address', entry, offset, f'use "ip:{text}"')
    return HostPattern(host, subdomains)


def parse_url_pattern(spec: str, entry: str, offset: int) -> Matcher:
    text = spec.strip()
    at = offset + (spec.find(text[:1]) if text else 0)
    if text.startswith("domain:"):
        return DomainPattern(text, _host_pattern(text[7:].strip(), entry, at + 7))
    if text.startswith("ip:"):
        try:
            network = ipaddress.ip_network(text[3:].strip(), strict=True)
        except ValueError as exc:
            _problem("PC353", f'"{text}" is not an IP network: {exc}', entry, at + 3)
            raise AssertionError from None
        return IpPattern(text, network)
    if "://" not in text:
        _problem(
            "PC353",
            f'"{text}" is not a URL specifier',
            entry,
            at,
            "use domain:example.com, ip:10.0.0.0/8 or https://example.com/path/*",
        )
    scheme, _, rest = text.partition("://")
    if not scheme.isalpha():
        _problem("PC353", f'URL scheme "{scheme}" must be letters only', entry, at)
    authority, slash, path = rest.partition("/")
    for bad in "@\\?#":
        if bad in authority:
            _problem("PC353", f'"{bad}" in the host of a URL pattern', entry, at)
    host_text, port = authority, None
    if ":" in authority:
        host_text, _, port_text = authority.rpartition(":")
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            _problem("PC353", f'port "{port_text}" is not a number', entry, at)
        port = int(port_text)
    host = _host_pattern(host_text, entry, at + len(scheme) + 3)
    path_at = at + len(scheme) + 3 + len(authority)
    return UrlGlob(text, scheme.lower(), host, port, _path_glob(slash + path, entry, path_at))


def _path_glob(written: str, entry: str, offset: int) -> Glob:
    """The pattern's path in the form call URLs are compared in (`normal_path`), so
    `/%61dmin/*` and `//admin/*` name what `/admin/*` names. The query is compared as written."""
    path, question, query = (written or "/").partition("?")
    if "." in path and any(s in (".", "..") for s in path.split("/")):
        _problem(
            "PC353",
            f'"{written}": a URL pattern with . or .. segments can never match: call URLs are '
            "normalised",
            entry,
            offset,
            "write the path without . and ..",
        )
    normal = normal_path(path)
    if normal is None:
        _problem(
            "PC353",
            f'"{written}" holds an encoded slash, backslash or NUL (%2F, %5C, %00): a call URL '
            "holding one is refused as unanalysable, so this pattern can never match",
            entry,
            offset,
            "write the path with plain slashes",
        )
        raise AssertionError  # unreachable: _problem raises
    return Glob.compile(normal + question + query)


# -- call URLs -------------------------------------------------------------------------------


#: lowercase letter-digit-hyphen labels are their own IDNA form; everything else goes to idna
_LDH = re.compile(
    r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*"
)


def normalise_host(raw: str) -> str | tuple[None, str]:
    """A domain name lowercased, IDNA-encoded, without a trailing dot; or (None, why)."""
    host = raw[:-1] if raw.endswith(".") else raw
    if not host:
        return (None, "empty host")
    if "%" in host:
        return (None, "percent-encoded host")
    if len(host) <= 253 and "--" not in host and _LDH.fullmatch(host):
        return host  # what idna.encode returns for it, ~40 times faster
    try:
        import idna

        return idna.encode(host, uts46=True).decode("ascii").lower()
    except (idna.IDNAError, UnicodeError, ValueError) as exc:
        return (None, f"not a valid host name ({exc})")


def _whatwg_ipv4(host: str) -> IP | str | None:
    """A host whose last label is numeric is an IPv4 address to a WHATWG client; parse it so.

    Returns the address, None (not numeric: a domain), or a string saying why it is invalid.
    """
    labels = host.split(".")
    if labels and labels[-1] == "":
        labels.pop()
    if not labels or not _numeric(labels[-1]):
        return None
    numbers: list[int] = []
    for label in labels:
        if not _numeric(label):
            return "a numeric host with a non-numeric part"
        if label[:2].lower() == "0x":
            numbers.append(int(label[2:] or "0", 16))
        elif len(label) > 1 and label.startswith("0"):
            if not all(c in "01234567" for c in label):
                return "not an IPv4 address"  # `08`: octal to a client, and not a number
            numbers.append(int(label, 8))
        else:
            numbers.append(int(label))
    if len(numbers) > 4 or any(n > 255 for n in numbers[:-1]):
        return "not an IPv4 address"
    last_bits = 8 * (5 - len(numbers))
    if numbers[-1] >= 1 << last_bits:
        return "not an IPv4 address"
    value = numbers[-1]
    for i, n in enumerate(numbers[:-1]):
        value |= n << (8 * (3 - i))
    return ipaddress.IPv4Address(value)


def _numeric(label: str) -> bool:
    if label[:2].lower() == "0x":
        return all(c in "0123456789abcdefABCDEF" for c in label[2:])
    return label.isdigit() and label.isascii()


def _as_ip(host: str) -> IP | None:
    found = _whatwg_ipv4(host)
    return found if isinstance(found, ipaddress.IPv4Address) else None


#: scheme://authority path ?query #fragment (the characters that end each part, per RFC 3986)
_URL = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://([^/?#]*)([^?#]*)(?:\?([^#]*))?(?:#.*)?", re.S)


#: a URL already in its normal form (http or https, a lowercase letter-digit-hyphen host whose
#: last label starts with a letter, a port without leading zeros, a path without `%`, `//` or
#: dot segments, a non-empty query, no userinfo, no fragment): what `parse_call_url` would build
#: from it, and render back to the same text, without the general parser's steps
_NORMAL_URL = re.compile(
    r"(https?)://([a-z0-9.-]+)(?::([1-9][0-9]{0,4}))?"  # scheme, host, port
    r"(/[^?#%\x00-\x20\x7f\\]*)(\?[^#\x00-\x20\x7f\\]+)?"  # path, query
)


def parse_normal_url(raw: str) -> CallURL | None:
    """`raw` parsed when it is already in normal form (`render()` gives `raw` back), else None."""
    found = _NORMAL_URL.fullmatch(raw) if len(raw) <= MAX_URL else None
    if found is None:
        return None
    scheme, host, port_text, path, query = found.groups()
    if "/." in path or "//" in path or not _plain_host(host):
        return None  # dot segments, `//`, IDNA labels, odd or numeric names: the general parser
    port = None
    if port_text is not None:
        port = int(port_text)
        if port > 65535:
            return None
    return CallURL(scheme, host, None, port, path + query if query else path)


def _plain_host(host: str) -> bool:
    """Lowercase letter-digit-hyphen labels of 1-63 characters, no `--` (IDNA's mark), the
    last label starting with a letter (else it could be a number): `_LDH` with str methods,
    which are several times faster than the regex on a hot path."""
    if len(host) > 253 or "--" in host or ".." in host or "-." in host or ".-" in host:
        return False
    if host[0] in ".-" or host[-1] in ".-":
        return False
    if len(host) > 63 and max(len(label) for label in host.split(".")) > 63:
        return False
    return host[host.rfind(".") + 1].isalpha()


def parse_call_url(raw: str) -> CallURL | str:
    """The call's URL normalised, or why it cannot be analysed."""
    if len(raw) > MAX_URL:
        return f"the URL is longer than {MAX_URL} characters"
    if _UNSAFE.search(raw):
        return "the URL contains whitespace, a control character or a backslash"
    found = _URL.fullmatch(raw)
    if found is None:
        return "the URL has no scheme://host"
    scheme_text, authority, raw_path, query = found.groups()
    scheme = scheme_text.lower()
    path = _path(raw_path, query or "")
    if path is None:
        return "the URL's path holds an encoded slash, backslash or NUL"
    hostport = authority.rpartition("@")[2]  # userinfo is not where the call goes
    bracketed = hostport.startswith("[")
    if bracketed:
        host, bracket, rest = hostport[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            return "the URL's IPv6 host does not parse"
        port_text = rest[1:]
    else:
        host, colon, port_text = hostport.rpartition(":")
        if not colon:
            host, port_text = hostport, ""
    port: int | None = None
    if port_text:
        if not (port_text.isascii() and port_text.isdigit()) or int(port_text) > 65535:
            return f"the URL's port {port_text!r} is not a port"
        port = int(port_text)
    if bracketed:
        try:
            v6 = ipaddress.IPv6Address(host)
        except ValueError:
            return "the URL's IPv6 host does not parse"
        ip: IP = v6.ipv4_mapped or v6
        return CallURL(scheme, None, ip, port, path)
    if not host:
        return "the URL has no host"
    written = host
    host = host.lower()
    if not host.isascii():
        # a client maps the host first (`127。0。0。1`, fullwidth digits) and then reads a
        # numeric result as an address (WHATWG: domain to ASCII, then the IPv4 parser)
        mapped = normalise_host(host)
        if not isinstance(mapped, str):
            return f"the URL's host {written!r}: {mapped[1]}"
        host = mapped
    if host.rstrip(".").rpartition(".")[2][:1].isdigit():  # the last label could be a number
        numeric = _whatwg_ipv4(host)
        if isinstance(numeric, str):
            return f"the URL's host {written!r} is {numeric}"
        if numeric is not None:
            return CallURL(scheme, None, numeric, port, path)
    normal = normalise_host(host)
    if not isinstance(normal, str):
        return f"the URL's host {written!r}: {normal[1]}"
    return CallURL(scheme, normal, None, port, path)


#: a percent-encoded character: `%` and two hex digits
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
#: RFC 3986 section 2.3: ALPHA DIGIT - . _ ~, the characters whose encoding means the same
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
#: encodings servers disagree about: a slash or backslash inside a segment, NUL
_AMBIGUOUS = frozenset({"2F", "5C", "00"})
_SLASHES = re.compile(r"//+")


def _escape(found: re.Match[str]) -> str:
    code = found.group(1).upper()
    char = chr(int(code, 16))
    return char if char in _UNRESERVED else "%" + code


def normal_path(path: str) -> str | None:
    """A URL path in the one form rules and calls are compared in (RFC 3986 section 6.2.2):
    unreserved characters percent-decoded (`%61` is `a`, `%2e` is `.`), other escapes in
    upper case, runs of `/` collapsed (most servers merge them), dot segments removed
    (section 5.2.4). None when the path holds an encoded slash, backslash or NUL (`%2F`):
    servers split or decode them differently, so no rule can say what such a path names."""
    if "%" in path:
        if any(m.group(1).upper() in _AMBIGUOUS for m in _ESCAPE.finditer(path)):
            return None
        path = _ESCAPE.sub(_escape, path)
    if "//" in path:
        path = _SLASHES.sub("/", path)
    if "/." in path:
        path = _remove_dot_segments(path)
    return path or "/"


def _path(path: str, query: str) -> str | None:
    """The path as a server resolves it (`normal_path`) and the query; None when the path
    cannot be analysed."""
    if path and "%" not in path and "//" not in path and "/." not in path:
        return path + (f"?{query}" if query else "")  # already normal: the common case
    normal = normal_path(path)
    if normal is None:
        return None
    return normal + (f"?{query}" if query else "")


def _remove_dot_segments(path: str) -> str:
    """RFC 3986 section 5.2.4."""
    out: list[str] = []
    for segment in path.split("/")[1:]:
        if segment == "..":
            if out:
                out.pop()
        elif segment != ".":
            out.append(segment)
    trailing = "/" if out and path.endswith(("/.", "/..")) else ""
    return "/" + "/".join(out) + trailing
