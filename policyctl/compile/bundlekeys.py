"""Bundle keys: reading the HMAC key bundles are signed with, and what a load must say about
trust.

A bundle's hashes are unkeyed: whoever can write the file can remove a deny and recompute
them. Only a signature checked under a key protects it, so every way of getting that wrong is
said out loud: a key variable set to nothing or naming an empty file is an error (it reads as
"no key", which silently turns verification off); a key file other users can read is a warning
(as ssh refuses a private key others can read); and a bundle loaded with no key configured says
that nothing vouches for it, naming the bundle and how to sign it or configure a key.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..diagnostics import Diagnostic, PolicyError, Source
from ..formats.files import read_capped
from ..settings import BUNDLE_KEY_VARIABLE, bundle_key_file

#: the warnings a bundle load gives about its key and signature
TRUST_CODES = frozenset({"PC161", "PC162", "PC163"})

#: a key shorter than this is refused: HMAC-SHA256 under a guessable key vouches for nothing
MIN_KEY_BYTES = 16


def read_key(path: str | Path) -> bytes:
    """A signing key file's bytes (surrounding whitespace dropped); PC116 when unusable."""
    try:
        key = read_capped(Path(path), 64 * 1024).strip()
    except OSError as exc:
        raise PolicyError(
            [Diagnostic.make("PC116", f"cannot read the bundle key {path}: {exc}")]
        ) from None
    if not key:
        raise PolicyError(
            [
                Diagnostic.make(
                    "PC116",
                    f"the bundle key {path} is empty: an empty key is no key, and signatures "
                    "would go unchecked",
                    fix=f"write a random key of at least {MIN_KEY_BYTES} bytes into it "
                    "(`head -c 32 /dev/urandom | base64 > KEYFILE`)",
                )
            ]
        )
    if len(key) < MIN_KEY_BYTES:
        raise PolicyError(
            [
                Diagnostic.make(
                    "PC116", f"the bundle key {path} is shorter than {MIN_KEY_BYTES} bytes"
                )
            ]
        )
    return key


def configured_key() -> bytes | None:
    """The key of POLICYCTL_BUNDLE_KEY_FILE when it is set (PC160 when set to nothing)."""
    path = bundle_key_file()
    if path is None:
        return None
    if not path:
        raise PolicyError(
            [
                Diagnostic.make(
                    "PC160",
                    f"{BUNDLE_KEY_VARIABLE} is set but empty: it names no key file, and an "
                    "unset key would turn signature checks off",
                    fix=f"set {BUNDLE_KEY_VARIABLE} to the key file's path, or unset it",
                )
            ]
        )
    return read_key(path)


def key_file_warnings(path: str | Path) -> list[Diagnostic]:
    """PC161 when group or others may read the key file: whoever reads it can sign bundles."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return []  # read_key has reported it
    if not mode & (stat.S_IRWXG | stat.S_IRWXO):
        return []
    return [
        Diagnostic.make(
            "PC161",
            f"the bundle key {path} is accessible by group or others (mode "
            f"{stat.S_IMODE(mode):03o}): anyone who can read it can sign a forged bundle",
            fix=f"chmod 600 {path}",
        )
    ]


def trust_warnings(shown: str, signed: bool, key_path: str | None) -> list[Diagnostic]:
    """What a bundle load says about who vouches for the bundle: PC162 when it is unsigned and
    no key is configured (its hashes prove nothing against an edit), PC163 when it is signed
    but no key is configured to check the signature, PC161 for a key file others can read."""
    if key_path is not None:
        return key_file_warnings(key_path)
    where = Source(shown, 1, 1)
    if signed:
        return [
            Diagnostic.make(
                "PC163",
                f"the bundle {shown} is signed, but no key is configured: its signature was "
                "not checked",
                where,
                fix=f"set {BUNDLE_KEY_VARIABLE} to the key it was signed with",
            )
        ]
    return [
        Diagnostic.make(
            "PC162",
            f"the bundle {shown} has hashes but no signature, and no key is configured: "
            "anyone who can write it can change the policy and recompute the hashes",
            where,
            fix=f"sign it with `policyctl compile --key KEYFILE` and set {BUNDLE_KEY_VARIABLE} "
            "to that key where it is loaded",
        )
    ]
