"""The outermost ASGI layer: request log, fault injection and rate limiting.

It sees every request before FastAPI does and receives the server's own ``send``, so a
"drop" fault can abort the TCP connection. The control API under /_emulator/ passes
through untouched (never logged, never faulted), except the signed download URLs, which
stand for another host and are logged like the platform's own requests.
"""

import asyncio
import math
import os
import random
import re
import threading
from collections import deque
from email.utils import formatdate
from http import HTTPStatus
from typing import Any, Literal
from urllib.parse import parse_qsl

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from starlette.datastructures import Headers
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from ..world.records import Principal, unauthorized
from ..world.state import World

CONTROL_PREFIX = "/_emulator/"
SIGNED_PREFIX = "/_emulator/signed/"
# What the resource API answers without credentials (a request that sends invalid ones is still refused).
PUBLIC_PATHS = frozenset(("/v1/regions",))
GATEWAY_PAGE = "<html><head><title>{0}</title></head><body><center><h1>{0}</h1></center></body></html>\n"
# the body a status answers when the rule names none
DEFAULT_BODIES = {429: "code", 500: "code", 502: "html", 503: "html", 504: "html"}
CODES = {422: "unprocessable", 429: "rate_limited"}
MESSAGES = {429: "Too many requests, retry later"}
BodyKind = Literal["code", "html", "errors", "text", "empty_object", "empty", "json"]
# Where the emulator notes each request the collection's plugins sent that the platform's API answered (method and
# path, once each), for the suite's count of the published operations driven through a plugin (hack/api-coverage.py)
OPERATIONS_LOG = "EMULATOR_OPERATIONS_LOG"
COLLECTION_AGENT = "planetscale.cloud/"


class OperationsLog:
    """The requests a plugin sent (its User-Agent says so) that were answered without error or fault: one line
    "METHOD PATH" each, once per emulator process, in DIRECTORY/emulator-PID.log."""

    def __init__(self, directory: str | None) -> None:
        self.path = os.path.join(directory, "emulator-%d.log" % os.getpid()) if directory else None
        self.seen: set[tuple[str, str]] = set()
        self.lock = threading.Lock()

    def note(self, scope: Scope, status: int, fault: dict | None) -> None:
        if self.path is None or fault is not None or status >= 400:
            return
        if not (Headers(scope=scope).get("user-agent") or "").startswith(COLLECTION_AGENT):
            return
        key = (scope["method"], scope["path"])
        with self.lock:
            if key in self.seen:
                return
            self.seen.add(key)
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write("%s %s\n" % key)


class ValidationEntry(BaseModel):
    """One entry of the platform's validation error shape {"errors": [...]}."""

    model_config = ConfigDict(extra="forbid")

    namespace: str
    name: str
    errors: list[str]


class FaultRule(BaseModel):
    """Matches method ("*" = any) and path (regular expression, searched in the request path)."""

    model_config = ConfigDict(extra="forbid")

    method: str = "*"
    path: str = ""
    status: int | None = Field(None, ge=200, le=599)
    body: BodyKind | None = None
    message: str | None = None
    errors: list[ValidationEntry] | None = None
    value: Any = None
    delay: float = Field(0, ge=0, le=300)
    drop: bool = False
    after_commit: bool = False
    times: int | None = Field(None, ge=1)
    probability: float | None = Field(None, ge=0, le=1)
    seed: int | None = None
    retry_after: int = Field(1, ge=0)

    @field_validator("path")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from None
        return value

    @model_validator(mode="after")
    def _one_effect(self) -> "FaultRule":
        if self.body is not None and self.status is None:
            raise ValueError("body needs a status")
        if self.status is not None and self.drop:
            raise ValueError("a rule answers a status or drops the connection, not both")
        if self.status is None and not self.drop and not self.delay:
            raise ValueError("a rule needs status, drop or delay")
        if self.after_commit and self.status is None and not self.drop:
            raise ValueError("after_commit needs status or drop")
        self._check_body()
        return self

    def _check_body(self) -> None:
        if self.status is not None and self.body is None and self.status not in DEFAULT_BODIES:
            raise ValueError(f"status {self.status} needs a body (only 429, 500, 502, 503 and 504 have a default one)")
        if self.status in (204, 304) and self.body != "empty":
            raise ValueError(f"status {self.status} carries no body: give body \"empty\"")
        if (self.body == "json") != ("value" in self.model_fields_set):
            raise ValueError('body "json" answers the rule\'s value: give both, or neither')
        if self.errors is not None and self.body != "errors":
            raise ValueError('errors are the entries of body "errors"')
        if self.message is not None and self.answered_body not in ("code", "errors", "text"):
            raise ValueError('message is the text of body "code", "errors" or "text"')

    @property
    def answered_body(self) -> str | None:
        return self.body or DEFAULT_BODIES.get(self.status)

    @property
    def fails(self) -> bool:
        return self.status is not None or self.drop


class FaultRules(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rules: list[FaultRule]


class ActiveRule:
    def __init__(self, rule: FaultRule):
        self.rule = rule
        self.pattern = re.compile(rule.path)
        self.remaining = rule.times
        self.rng = random.Random(rule.seed)

    def fires(self, method: str, path: str) -> bool:
        rule = self.rule
        if rule.method not in ("*", "") and rule.method.upper() != method:
            return False
        if self.remaining == 0 or not self.pattern.search(path):
            return False
        if rule.probability is not None and self.rng.random() >= rule.probability:
            return False
        if self.remaining is not None:
            self.remaining -= 1
        return True

    def describe(self) -> dict:
        return {**self.rule.model_dump(), "remaining": self.remaining}


class Traffic:
    """Request log, fault rules and rate-limit windows of one emulator run."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.log: list[dict] = []
        self.rules: list[ActiveRule] = []
        self.windows: dict[str, deque[float]] = {}
        self.accepted = 0  # connections the server accepted (python -m emulator counts them)
        self.made = 0  # ... of which the HTTP protocol saw made: over TLS, once the handshake succeeded
        self.operations = OperationsLog(os.environ.get(OPERATIONS_LOG))

    def count_connection(self, made: bool = False) -> None:
        with self.lock:
            if made:
                self.made += 1
            else:
                self.accepted += 1

    def connections(self) -> dict:
        """Connections accepted since the last reset or clear, and those refused: closed before the HTTP
        protocol saw them made, which over TLS is a failed handshake (a certificate the client refused)."""
        with self.lock:
            return {"accepted": self.accepted, "refused": self.accepted - self.made}

    def record(self, entry: dict) -> None:
        with self.lock:
            self.log.append(entry)

    def requests(self) -> list[dict]:
        with self.lock:
            return [dict(entry) for entry in self.log]

    def clear_requests(self) -> None:
        with self.lock:
            self.log.clear()
            self.accepted = self.made = 0

    def add_rules(self, rules: list[FaultRule]) -> None:
        with self.lock:
            self.rules.extend(ActiveRule(rule) for rule in rules)

    def clear_rules(self) -> None:
        with self.lock:
            self.rules.clear()

    def describe_rules(self) -> list[dict]:
        with self.lock:
            return [rule.describe() for rule in self.rules]

    def match(self, method: str, path: str) -> FaultRule | None:
        with self.lock:
            return next((active.rule for active in self.rules if active.fires(method, path)), None)

    def admit(self, key: str, now: float, per_minute: int) -> int | None:
        """Count a request in its credential's one-minute window; seconds to wait if over the limit."""
        with self.lock:
            window = self.windows.setdefault(key, deque())
            while window and window[0] <= now - 60:
                window.popleft()
            if len(window) >= per_minute:
                return max(1, math.ceil(window[0] + 60 - now))
            window.append(now)
            return None


def reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def fault_response(rule: FaultRule) -> Response:
    """The answer a firing rule gives: its status with the body it names (or the status's default)."""
    status, kind = rule.status, rule.answered_body
    headers = {"Retry-After": str(rule.retry_after)} if status in (429, 503) else None
    message = rule.message or MESSAGES.get(status) or reason(status)
    if kind == "code":
        code = CODES.get(status) or reason(status).lower().replace(" ", "_").replace("-", "_")
        return JSONResponse({"code": code, "message": message}, status, headers=headers)
    if kind == "errors":
        entries = rule.errors or [ValidationEntry(namespace="request", name="base", errors=[message])]
        return JSONResponse({"errors": [entry.model_dump() for entry in entries]}, status, headers=headers)
    if kind == "text":
        return Response(message + "\n", status, headers=headers, media_type="text/plain")
    if kind == "empty_object":
        return JSONResponse({}, status, headers=headers)
    if kind == "json":
        return JSONResponse(rule.value, status, headers=headers)
    if kind == "empty":
        return Response(None, status, headers=headers)
    # html: what a proxy in front of the platform answers
    return Response(GATEWAY_PAGE.format(f"{status} {reason(status)}"), status, headers=headers, media_type="text/html")


async def drop_connection(send: Send) -> None:
    """Close the TCP connection without an answer (uvicorn's ``send`` is bound to its cycle)."""
    transport = getattr(getattr(send, "__self__", None), "transport", None)
    if transport is None:
        raise ConnectionResetError("fault rule dropped the connection (needs a real server)")
    transport.abort()
    await asyncio.sleep(0)  # let the server notice the connection is gone before the app returns


async def discard(message: dict) -> None:
    """The response of an after_commit request: the client gets the fault instead."""


def query_of(text: str) -> dict:
    """A request's query: name to value, or to the list of its values when the name repeats (filters[]=...)."""
    query: dict = {}
    for name, value in parse_qsl(text, keep_blank_values=True):
        if name in query:
            query[name] = (query[name] if isinstance(query[name], list) else [query[name]]) + [value]
        else:
            query[name] = value
    return query


def log_entry(scope: Scope, header: str | None, principal: Principal | None) -> dict:
    """What the request log keeps of a request: never the credential itself."""
    return {
        "method": scope["method"],
        "path": scope["path"],
        "query": query_of(scope["query_string"].decode("latin-1")),
        "status": None,
        "credential": "none" if header is None else principal.kind if principal else "invalid",
        "authorization_sent": header is not None,
        "fault": None,
    }


def refusal(
    path: str, header: str | None, principal: Principal | None, world: World, traffic: Traffic
) -> Response | None:
    """The resource API authenticates every request first, then applies the rate limit."""
    if not path.startswith("/v1/"):
        return None
    if principal is None and not (header is None and path in PUBLIC_PATHS):
        error = unauthorized()
        return JSONResponse(error.body(), error.status)
    limit = world.settings.rate_limit
    retry_after = limit and traffic.admit(header, world.now().timestamp(), limit)
    if retry_after:
        body = {"code": "rate_limited", "message": f"Rate limit of {limit} requests a minute exceeded"}
        return JSONResponse(body, 429, headers={"Retry-After": str(retry_after)})
    return None


class TrafficMiddleware:
    def __init__(self, app: ASGIApp, host):
        self.app = app
        self.host = host  # the FastAPI app: its state holds the current world and traffic

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw_send = send  # a dropped connection needs uvicorn's own
        if scope["type"] == "http":
            send = self._dated(send)
        path = scope.get("path", "")
        if scope["type"] != "http" or (path.startswith(CONTROL_PREFIX) and not path.startswith(SIGNED_PREFIX)):
            await self.app(scope, receive, send)
            return
        world, traffic = self.host.state.world, self.host.state.traffic
        header = Headers(scope=scope).get("authorization")
        principal = world.auth.authenticate(header)
        entry = log_entry(scope, header, principal)
        traffic.record(entry)

        async def send_recorded(message: dict) -> None:
            if message["type"] == "http.response.start":
                entry["status"] = message["status"]
                traffic.operations.note(scope, message["status"], entry["fault"])
            await send(message)

        rule = traffic.match(scope["method"], path)
        if rule is not None:
            entry["fault"] = rule.model_dump(
                include={"status", "body", "drop", "delay", "after_commit"}, exclude_defaults=True
            )
            scope["emulator.fault"] = entry["fault"]  # for whoever wraps the app (the suite's OpenAPI check)
            if rule.delay:
                await asyncio.sleep(rule.delay)
            if rule.fails and not rule.after_commit:
                await self._fail(rule, scope, receive, raw_send, send_recorded)
                return
        refused = refusal(path, header, principal, world, traffic)
        if refused is not None:
            await refused(scope, receive, send_recorded)
        elif rule is not None and rule.fails:  # after_commit: apply the request, then fail
            await self.app(scope, receive, discard)
            await self._fail(rule, scope, receive, raw_send, send_recorded)
        else:
            await self.app(scope, receive, send_recorded)

    def _dated(self, send: Send) -> Send:
        """Every answer's Date header tells the emulator's clock (uvicorn's own is off), as the platform's tells its."""
        async def send_dated(message: dict) -> None:
            if message["type"] == "http.response.start":
                date = formatdate(self.host.state.world.now().timestamp(), usegmt=True).encode()
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"date"]
                message = dict(message, headers=headers + [(b"date", date)])
            await send(message)
        return send_dated

    @staticmethod
    async def _fail(rule: FaultRule, scope: Scope, receive: Receive, send: Send, send_recorded: Send) -> None:
        if rule.drop:
            await drop_connection(send)
        else:
            await fault_response(rule)(scope, receive, send_recorded)
