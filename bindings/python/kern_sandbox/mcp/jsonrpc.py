"""JSON-RPC 2.0 messages: decoding hostile frames and building replies.

Everything here is pure: a frame goes in, a ``Request``, a ``Notification``,
a ``Response`` (the client answering, which this server never asks for) or a
``Refusal`` (the error reply the frame deserves) comes out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Union

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# Implementation-defined server error (JSON-RPC reserves -32000..-32099).
SERVER_BUSY = -32000

RequestId = Union[str, int]

# Long digit strings make int() slow on interpreters without the 3.11 limit
# (and raise on those with it); no valid MCP field needs them.
_MAX_INT_DIGITS = 40


@dataclass(frozen=True)
class Request:
    id: RequestId
    method: str
    params: Dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Notification:
    method: str
    params: Dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Response:
    """A result or error sent by the client; ignored."""

    id: Optional[RequestId]


@dataclass(frozen=True)
class Refusal:
    """The frame is not a usable message: reply with this error (``id`` may be
    None when the frame did not carry a readable one), unless ``silent``."""

    id: Optional[RequestId]
    code: int
    message: str
    silent: bool = False


Message = Union[Request, Notification, Response, Refusal]


class _Refused(ValueError):
    pass


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) > _MAX_INT_DIGITS:
        raise _Refused("number too long")
    return int(text)


def _parse_constant(name: str) -> Any:
    raise _Refused(f"{name} is not JSON")


def decode(frame: bytes) -> Union[Any, Refusal]:
    """The JSON value of ``frame``, or a parse-error ``Refusal``."""
    try:
        text = frame.decode("utf-8")
    except UnicodeDecodeError:
        return Refusal(None, PARSE_ERROR, "Parse error: the message is not UTF-8")
    try:
        value = json.loads(text, parse_int=_parse_int, parse_constant=_parse_constant)
    except _Refused as e:
        return Refusal(None, PARSE_ERROR, f"Parse error: {e}")
    # The C decoder turns a document nested too deep into RecursionError.
    except (ValueError, RecursionError) as e:
        return Refusal(None, PARSE_ERROR, f"Parse error: {str(e)[:200]}")
    return value


def _valid_id(value: Any) -> bool:
    # bool is an int in Python; JSON true is no id.
    if isinstance(value, bool):
        return False
    return isinstance(value, str) or isinstance(value, int)


def classify(value: Any) -> Message:
    """One decoded JSON value (not a batch) as a message."""
    if not isinstance(value, dict):
        return Refusal(None, INVALID_REQUEST, "Invalid Request: a message must be a JSON object")
    rid = value.get("id")
    known_id = rid if _valid_id(rid) else None
    if value.get("jsonrpc") != "2.0":
        return Refusal(known_id, INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"',
                       silent="id" not in value and "method" in value)
    if "method" not in value:
        if "result" in value or "error" in value:
            return Response(known_id)
        return Refusal(known_id, INVALID_REQUEST, 'Invalid Request: no "method"')
    method = value["method"]
    is_request = "id" in value
    if not isinstance(method, str):
        return Refusal(known_id, INVALID_REQUEST, 'Invalid Request: "method" must be a string',
                       silent=not is_request)
    if is_request and not _valid_id(rid):
        return Refusal(None, INVALID_REQUEST,
                       'Invalid Request: "id" must be a string or an integer')
    params = value.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        return Refusal(known_id, INVALID_PARAMS, 'Invalid params: "params" must be an object',
                       silent=not is_request)
    if is_request:
        return Request(rid, method, params)
    return Notification(method, params)


def result(rid: RequestId, value: Dict[str, Any]) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": value}


def error(rid: Optional[RequestId], code: int, message: str,
          data: Optional[Any] = None) -> Dict[str, Any]:
    err: Dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": rid, "error": err}


def notification(method: str, params: Dict[str, Any]) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def refusal_reply(r: Refusal) -> Optional[Dict[str, Any]]:
    return None if r.silent else error(r.id, r.code, r.message)


def batch_items(value: Any) -> Optional[List[Any]]:
    """The members of a JSON-RPC batch, or None when ``value`` is not one."""
    return value if isinstance(value, list) else None
