"""The policy a hook decides with: compiled once, then read back from a cache per call.

A host starts `policyctl hook` for every tool call, so the policy must load in a few
milliseconds. The first call compiles the policy file (or loads the bundle, checking its
hashes and signature) and stores the compiled policy in the cache directory; later calls
read it back without the loader, the schema validation or the compiler. An entry is keyed
by the SHA-256 of the policy file's bytes, policyctl's version and the files it is installed
as (size and time), and the bundle key in use,
and it lists every file the compile read (what `extends` names, operator catalogs) with its
digest: a later call re-reads and re-hashes those files, and a mismatch compiles afresh.

The cache holds pickles, which run code when read, so the directory must be the user's own
and unreadable to others (created 0700; a directory another user owns or can write is not
used, and the policy is compiled on every call instead). Any failure to load is
`PolicyUnreadable`, which the hook answers with a refusal.
"""

from __future__ import annotations

import contextlib
import copyreg
import hashlib
import io
import os
import pickle
import stat
import sys
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...compile.compiled import CompiledPolicy

#: bumped when the entry's layout changes; with policyctl's version in every key
CACHE_FORMAT = "policyctl-hook-cache-1"
_MISSING = "missing"


class PolicyUnreadable(Exception):
    """The policy cannot be used; the message carries its diagnostics (file:line:col)."""


@dataclass(frozen=True, slots=True)
class LoadedPolicy:
    policy: CompiledPolicy
    #: what the decision log records as the policy's revision: the SHA-256 of its file
    revision: str
    #: whether it came from the cache
    cached: bool = False
    #: every file the compile read (absolute path -> SHA-256), to tell when it is stale
    files: Mapping[str, str] = field(default_factory=dict)


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "policyctl" / "hooks"


def load_for_hook(path: str, cache_dir: Path | None = None) -> LoadedPolicy:
    """The compiled policy of `path` (a policy file or a `*.bundle.json`); `cache_dir` None
    compiles every time."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise PolicyUnreadable(f"the policy {path} cannot be read: {exc.strerror}") from None
    revision = "sha256:" + hashlib.sha256(raw).hexdigest()
    key = _key(path, raw)
    usable = cache_dir is not None and private_dir(cache_dir)
    entry = cache_dir / f"{key}.pickle" if usable and cache_dir is not None else None
    if entry is not None:
        found = _read_entry(entry)
        if found is not None:
            return LoadedPolicy(found[0], revision, cached=True, files=found[1])
    policy, files = _compile(path)
    if entry is not None:
        _write_entry(entry, policy, files)
    return LoadedPolicy(policy, revision, files=files)


def _key(path: str, raw: bytes) -> str:
    from ... import __version__
    from ...settings import bundle_key_file

    digest = hashlib.sha256()
    for part in (CACHE_FORMAT, __version__, sys.version, os.path.abspath(path), _installed()):
        digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
    digest.update(hashlib.sha256(raw).digest())
    key_file = bundle_key_file()
    if key_file is not None:  # a bundle verified under one key is not verified under another
        digest.update(b"key\0" + file_digest(Path(key_file)).encode())
    # the loader's limits come from POLICYCTL_* variables: a policy compiled under looser
    # limits must not be served under stricter ones
    for name in sorted(n for n in os.environ if n.startswith("POLICYCTL_")):
        digest.update(f"{name}={os.environ[name]}\0".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def _installed() -> str:
    """The installed policyctl, as the files it is made of (name, size, mtime): an entry
    compiled by other code (an upgrade, a checkout moved to another commit without a new
    version number) is never read back. About 200 stat calls, well under a millisecond."""
    package = Path(__file__).resolve().parents[2]
    roots = [package, package / "_data", package.parent / "profiles", package.parent / "commands"]
    parts: list[str] = []
    for root in roots:
        if not root.is_dir():
            continue
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith((".py", ".toml", ".json")):
                    st = os.stat(os.path.join(folder, name))
                    parts.append(f"{folder}/{name}:{st.st_size}:{st.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogateescape")).hexdigest()


def _compile(path: str) -> tuple[CompiledPolicy, dict[str, str]]:
    """Compile (or load the bundle), digesting every file read on the way."""
    from ...api import compile_loaded
    from ...diagnostics import PolicyError
    from ...document.extends import load_document
    from ...formats.files import read_capped
    from ...formats.read import decode
    from ...settings import default_limits

    seen: dict[str, str] = {}
    try:
        if path.endswith(".bundle.json"):
            from ...compile.bundle import load_bundle

            policy = load_bundle(path)
            seen[os.path.abspath(path)] = file_digest(Path(path))
            return policy, seen
        limits = default_limits()

        def read(file: Path) -> str:
            try:
                raw = read_capped(file, limits.max_file_bytes)
            except OSError:
                seen[os.path.abspath(file)] = _MISSING
                raise
            seen[os.path.abspath(file)] = hashlib.sha256(raw).hexdigest()
            return decode(raw, str(file), limits)

        loaded = load_document(path, limits, reader=read)
        return compile_loaded(loaded, limits, read), seen
    except PolicyError as exc:
        shown = "; ".join(str(d) for d in exc.diagnostics[:5])
        more = len(exc.diagnostics) - 5
        tail = f" (and {more} more)" if more > 0 else ""
        raise PolicyUnreadable(f"the policy {path} cannot be used: {shown}{tail}") from None
    except OSError as exc:
        raise PolicyUnreadable(f"the policy {path} cannot be read: {exc.strerror}") from None


def file_digest(path: Path | str) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return _MISSING


def private_dir(directory: Path) -> bool:
    """Create the directory (0700) if needed; usable only when it is ours and private."""
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = directory.stat()
    except OSError:
        return False
    if not hasattr(os, "getuid"):
        return False  # no owner to check: do without the cache
    return info.st_uid == os.getuid() and not info.st_mode & (stat.S_IRWXG | stat.S_IRWXO)


def _proxy(mapping: dict[Any, Any]) -> types.MappingProxyType[Any, Any]:
    """Read-only mappings of the compiled policy, rebuilt on load (pickle has no reducer)."""
    return types.MappingProxyType(mapping)


def _reduce_proxy(proxy: types.MappingProxyType[Any, Any]) -> tuple[Any, ...]:
    return (_proxy, (dict(proxy),))


def _write_entry(entry: Path, policy: CompiledPolicy, files: dict[str, str]) -> None:
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = {**copyreg.dispatch_table, types.MappingProxyType: _reduce_proxy}
    try:
        pickler.dump((CACHE_FORMAT, files, policy))
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        return  # a policy that cannot be stored is compiled again next time
    temporary = entry.with_name(f".{entry.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(buffer.getvalue())
        os.replace(temporary, entry)  # readers see the old entry or the whole new one
    except OSError:
        with contextlib.suppress(OSError):
            temporary.unlink()


def _read_entry(entry: Path) -> tuple[CompiledPolicy, dict[str, str]] | None:
    try:
        info = entry.lstat()
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
            return None
        with entry.open("rb") as source:
            tag, files, policy = pickle.load(source)
    except FileNotFoundError:
        return None
    except Exception:  # a damaged entry is a miss: the policy is compiled again
        return None
    if tag != CACHE_FORMAT or not isinstance(files, dict):
        return None
    for file, digest in files.items():
        if file_digest(file) != digest:
            return None  # a file the compile read has changed since
    return policy, files
