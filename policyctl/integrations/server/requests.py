"""The decision server's request bodies, validated strictly, and its structured errors.

A body that is not what the API documents is refused with a 4xx and a JSON error (a code from
the diagnostics registry, a message, the offending field's path): never a traceback, and
never a decision made from half a request, because a client that sends a malformed request
must not get a looser answer than one that sends a correct one.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import Field, ValidationError

from ...analysis.contextspec import ContextSpec
from ...formats.strict import StrictModel

#: the most items one batch may decide
MAX_BATCH = 100
Detail = Literal["minimal", "layer", "full"]


class ApiError(Exception):
    """A request refused: HTTP status, diagnostic code, message, and where in the body."""

    def __init__(self, status: int, code: str, message: str, path: str | None = None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.path = path

    def body(self) -> dict[str, Any]:
        from ...diagnostics import CODES

        error: dict[str, Any] = {"code": self.code, "title": CODES[self.code].title}
        error["message"] = self.message
        if self.path is not None:
            error["path"] = self.path
        return {"error": error}


class InventoryTool(StrictModel):
    name: str = Field(min_length=1, max_length=512)
    plugin_id: str | None = Field(None, alias="pluginId", max_length=512)
    optional: bool = False


class ResolveRequest(StrictModel):
    context: ContextSpec = Field(default_factory=ContextSpec)
    #: the run's whole inventory; absent: the policy catalog's tools
    tools: list[InventoryTool] | None = Field(None, max_length=10_000)


class DecideRequest(StrictModel):
    context: ContextSpec = Field(default_factory=ContextSpec)
    #: the tool's policyctl name (`exec`, `read`, `github__create_issue` for MCP tools)
    tool: str = Field(min_length=1, max_length=512)
    arguments: dict[str, Any] = Field(default_factory=dict)
    #: an MCP tool (`server__tool`): not in the catalog, decided by its name's rules
    mcp: bool = False
    detail: Detail = "layer"


class BatchRequest(StrictModel):
    items: list[DecideRequest] = Field(min_length=1, max_length=MAX_BATCH)


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose keys are unique. A key given twice is refused: parsers disagree on
    which one counts, so a proxy or PEP in front of the server could act on a call other
    than the one decided."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            shown = json.dumps(key[:100], ensure_ascii=True)
            raise ApiError(400, "PC521", f"the body gives the key {shown} twice in one object")
        out[key] = value
    return out


def parse_json(raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8"), object_pairs_hook=_no_duplicate_keys)
    except UnicodeDecodeError as exc:
        raise ApiError(400, "PC521", f"the body is not UTF-8 (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        raise ApiError(400, "PC521", f"the body is not JSON ({where}): {exc.msg}") from None
    except RecursionError:
        raise ApiError(400, "PC521", "the body nests too deeply") from None


def validated(model: type[StrictModel], data: Any) -> Any:
    """`data` as `model`, or the first problem as a 422 naming its path."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        path = "/" + "/".join(str(p) for p in first["loc"]) if first["loc"] else ""
        message = f"{path or 'the body'}: {first['msg']}"
        raise ApiError(422, "PC522", message, path) from None
    except RecursionError:
        raise ApiError(422, "PC522", "the body nests too deeply") from None


def context_json(spec: ContextSpec) -> dict[str, Any]:
    """The context as the request gave it (JSON names, empty fields left out), for logs."""
    return spec.model_dump(by_alias=True, exclude_defaults=True, mode="json")
