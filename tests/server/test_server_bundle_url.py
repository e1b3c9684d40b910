"""A bundle pulled from a URL: ETag polling, signature checks, the copy kept on disk, and
the last good revision kept through every kind of failure."""

from __future__ import annotations

import json
from pathlib import Path

from bundle_server import BundleServer, compile_bundle, make_key
from starlette.testclient import TestClient

from policyctl.integrations.server.app import build_app
from policyctl.integrations.server.bundlepoll import UrlSource
from policyctl.integrations.server.metrics import Metrics

DENY_EXEC = "tools:\n  profile: full\n  deny: [exec]\n"
DENY_READ = "tools:\n  profile: full\n  deny: [read]\n"


def verdict(api: TestClient, tool: str) -> tuple[str, str]:
    answer = api.post("/v1/decide", json={"tool": tool}).json()
    return answer["verdict"], answer["revision"]


def test_polling_swaps_in_new_revisions_and_keeps_the_last_good(tmp_path: Path) -> None:
    key = make_key(tmp_path / "bundle.key")
    server = BundleServer()
    server.body = compile_bundle(DENY_EXEC, key, tmp_path / "a.bundle.json")
    with server.running():
        metrics = Metrics()
        source = UrlSource(
            server.url,
            str(tmp_path / "kept"),
            key.read_bytes().strip(),
            listener=metrics.reloaded,
        )
        api = TestClient(build_app(source, metrics=metrics))
        assert verdict(api, "exec")[0] == "deny"
        first = source.snapshot.revision  # type: ignore[union-attr]
        # nothing changed: a conditional request, answered 304
        assert source.poll() is False
        asked, status = server.requests[-1]
        assert status == 304 and asked is not None
        # a new bundle: in service after one poll
        server.body = compile_bundle(DENY_READ, key, tmp_path / "b.bundle.json")
        assert source.poll() is True
        assert verdict(api, "exec") == ("allow", source.snapshot.revision)  # type: ignore[union-attr]
        second = source.snapshot.revision  # type: ignore[union-attr]
        assert second != first
        # the bundle server down, serving garbage, or a bundle signed with another key
        other = make_key(tmp_path / "other.key", "o" * 32)
        for mode, body, code in [
            ("down", server.body, "PC527"),
            ("garbage", server.body, "PC528"),
            ("ok", compile_bundle(DENY_EXEC, other, tmp_path / "c.bundle.json"), "PC528"),
        ]:
            server.mode, server.body = mode, body
            assert source.poll() is False
            health = api.get("/health")
            assert health.status_code == 200 and health.json()["status"] == "degraded"
            assert health.json()["lastReload"]["error"].startswith(code)
            assert verdict(api, "read") == ("deny", second)  # still the last good one
        failures = [
            line
            for line in api.get("/metrics").text.splitlines()
            if line.startswith("policyctl_policy_reload_failures_total")
        ]
        assert failures == ["policyctl_policy_reload_failures_total 3.0"]


def test_an_unsigned_bundle_is_never_served(tmp_path: Path) -> None:
    from policyctl.cli.main import main

    key = make_key(tmp_path / "bundle.key")
    (tmp_path / "p.yaml").write_text(DENY_EXEC)
    out = tmp_path / "p.bundle.json"
    assert main(["compile", str(tmp_path / "p.yaml"), "-o", str(out)]) == 0
    server = BundleServer()
    server.body = out.read_bytes()
    with server.running():
        source = UrlSource(server.url, str(tmp_path / "kept"), key.read_bytes().strip())
        assert source.snapshot is None
        assert "not signed" in (source.last_event.error or "")  # type: ignore[union-attr]
        api = TestClient(build_app(source))
        assert api.get("/health").status_code == 503
        assert api.post("/v1/decide", json={"tool": "read"}).status_code == 503


def test_a_restarted_replica_serves_the_kept_bundle_while_the_url_is_down(
    tmp_path: Path,
) -> None:
    key = make_key(tmp_path / "bundle.key")
    server = BundleServer()
    server.body = compile_bundle(DENY_EXEC, key, tmp_path / "a.bundle.json")
    kept = str(tmp_path / "kept")
    with server.running():
        first = UrlSource(server.url, kept, key.read_bytes().strip())
        revision = first.snapshot.revision  # type: ignore[union-attr]
        server.mode = "down"
        again = UrlSource(server.url, kept, key.read_bytes().strip())
        assert again.snapshot is not None and again.snapshot.revision == revision
        assert again.last_event is not None and not again.last_event.ok
        # a kept copy tampered with on disk is verified like a fetched one, and refused
        path = next(Path(kept).glob("*.bundle.json"))
        data = json.loads(path.read_text())
        data["document"]["tools"]["deny"] = []
        path.write_text(json.dumps(data))
        tampered = UrlSource(server.url, kept, key.read_bytes().strip())
        assert tampered.snapshot is None
