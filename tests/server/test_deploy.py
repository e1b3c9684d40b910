"""The deployment files under deploy/: their structure holds together (kubectl and docker
are not part of CI), the server's arguments in them are ones `policyctl serve` accepts, and
nginx accepts the compose file's nginx.conf (the real nginx, `nginx -t`)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from policyctl.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"


def load(path: Path) -> Any:
    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))


def serve_args(args: list[str]) -> Any:
    """The flags as `policyctl serve` parses them (argparse exits on a flag it lacks)."""
    return build_parser("serve").parse_args(["serve", *[str(a) for a in args]])


@pytest.fixture(scope="module")
def k8s() -> dict[str, Any]:
    kustomization = load(DEPLOY / "kubernetes" / "kustomization.yaml")
    docs = [load(DEPLOY / "kubernetes" / name) for name in kustomization["resources"]]
    files = {p.name for p in (DEPLOY / "kubernetes").glob("*.yaml")} - {"kustomization.yaml"}
    assert set(kustomization["resources"]) == files, "a manifest is left out of kustomization"
    by_kind = {d["kind"]: d for d in docs}
    assert set(by_kind) == {
        "Deployment",
        "Service",
        "HorizontalPodAutoscaler",
        "PodDisruptionBudget",
    }
    return by_kind


def test_the_deployment_pulls_a_signed_bundle_and_is_ready_on_health(k8s: dict[str, Any]) -> None:
    deployment = k8s["Deployment"]
    assert deployment["apiVersion"] == "apps/v1"
    spec = deployment["spec"]
    labels = spec["template"]["metadata"]["labels"]
    assert spec["selector"]["matchLabels"].items() <= labels.items()
    (container,) = spec["template"]["spec"]["containers"]
    args = serve_args(container["args"])
    assert args.policy.startswith("https://") and args.bundle_key
    assert args.token_file, "a non-loopback listener needs tokens"
    port = int(args.listen.rsplit(":", 1)[1])
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports["http"] == port
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"] == {"path": "/health", "port": "http"}
    # every file the arguments name sits on a mounted volume that exists
    volumes = {v["name"] for v in spec["template"]["spec"]["volumes"]}
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    assert set(mounts.values()) <= volumes
    for path in (args.bundle_key, args.token_file, args.bundle_dir + "/x"):
        assert any(path.startswith(m + "/") for m in mounts), path
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert spec["strategy"]["rollingUpdate"]["maxUnavailable"] == 0


def test_service_hpa_and_pdb_point_at_the_deployment(k8s: dict[str, Any]) -> None:
    deployment = k8s["Deployment"]
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    service = k8s["Service"]
    assert service["spec"]["selector"].items() <= labels.items()
    assert service["spec"]["ports"][0]["targetPort"] == "http"
    target = k8s["HorizontalPodAutoscaler"]["spec"]
    assert target["scaleTargetRef"] == {
        "apiVersion": deployment["apiVersion"],
        "kind": "Deployment",
        "name": deployment["metadata"]["name"],
    }
    assert 2 <= target["minReplicas"] < target["maxReplicas"]
    pdb = k8s["PodDisruptionBudget"]["spec"]
    assert pdb["selector"]["matchLabels"].items() <= labels.items()
    assert pdb["minAvailable"] < target["minReplicas"]  # a drain can always proceed


def dockerfile_instruction(name: str) -> str:
    text = (DEPLOY / "Dockerfile").read_text().replace("\\\n", " ")
    return re.findall(rf"^{name} (.*)$", text, flags=re.M)[-1]


def test_the_image_runs_policyctl_serve_with_tokens() -> None:
    entry = json.loads(dockerfile_instruction("ENTRYPOINT"))
    command = json.loads(dockerfile_instruction("CMD"))
    assert entry == ["policyctl", "serve"]
    args = serve_args(command)
    port = args.listen.rsplit(":", 1)[1]
    assert dockerfile_instruction("EXPOSE").strip() == port and args.token_file
    assert f"127.0.0.1:{port}/health" in dockerfile_instruction("HEALTHCHECK")
    assert dockerfile_instruction("USER").strip() != "root"
    assert '"/src[server]"' in dockerfile_instruction("RUN")


def test_compose_runs_replicas_behind_nginx() -> None:
    compose = load(DEPLOY / "compose" / "compose.yaml")
    server, nginx = compose["services"]["policyctl"], compose["services"]["nginx"]
    assert server["deploy"]["replicas"] >= 2
    args = serve_args(server["command"])
    listen_port = args.listen.rsplit(":", 1)[1]
    # the policy file the command names is the one the volume mounts, and it is valid
    host_dir, mounted = server["volumes"][0].split(":")[:2]
    policy = DEPLOY / "compose" / host_dir / Path(args.policy).relative_to(mounted)
    done = subprocess.run(
        [sys.executable, "-m", "policyctl", "validate", str(policy)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert args.token_file == "/run/secrets/" + server["secrets"][0]
    conf = (DEPLOY / "compose" / "nginx.conf").read_text()
    assert f"server policyctl:{listen_port} " in conf
    published, inside = nginx["ports"][0].split(":")
    assert re.search(rf"listen {inside};", conf) and published == "8181"  # as docs/server.md says
    assert nginx["depends_on"]["policyctl"]["condition"] == "service_healthy"


def test_nginx_accepts_the_compose_configuration(tmp_path: Path) -> None:
    """The real nginx checks the file (the upstream's name only resolves inside compose)."""
    conf = (DEPLOY / "compose" / "nginx.conf").read_text()
    local = conf.replace("server policyctl:", "server 127.0.0.1:").replace("/tmp/", f"{tmp_path}/")
    (tmp_path / "nginx.conf").write_text(local)
    done = subprocess.run(
        ["nginx", "-t", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr


def test_the_docs_show_these_files() -> None:
    doc = (ROOT / "docs" / "server.md").read_text()
    for command in (
        "kubectl apply -k deploy/kubernetes",
        "docker compose -f deploy/compose/compose.yaml up --build --scale policyctl=3",
        "docker build -f deploy/Dockerfile -t policyctl-server .",
    ):
        assert command in doc, command


def test_the_docs_name_the_load_switch_and_the_benchmark() -> None:
    doc = (ROOT / "docs" / "server.md").read_text()
    load = (ROOT / "tests" / "server" / "test_server_load.py").read_text()
    assert "POLICYCTL_LOAD_FULL=1" in doc and '"POLICYCTL_LOAD_FULL") == "1"' in load
    assert "SECONDS = 20.0 if FULL else 2.0" in load and "CONNECTIONS = 32 if FULL" in load
    assert (ROOT / "bench" / "bench_server.py").exists()
