# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""planetscale.cloud.webhook_deliveries: an Event-Driven Ansible event source that receives the deliveries of the
platform's webhooks (the webhooks that the module planetscale.cloud.webhook manages, hence the name).

Each delivery is a POST of a JSON object with the header X-PlanetScale-Signature, the hex HMAC-SHA256 of the exact
body keyed by the webhook's secret. A delivery is put on the queue only when its signature is that of its body with
the secret given to the source (hmac_secret), compared in constant time, when its timestamp is within max_delivery_age
of this host's clock, and when the same delivery was not accepted before; anything else is answered with an error
status, logged in one line and never queued. Nobody needs the secret to open a connection, so each connection has
request_timeout seconds to deliver its whole request, and at most max_connections are open at once: a new one closes
the oldest that is still arriving.
"""

from __future__ import annotations

DOCUMENTATION = r"""
---
short_description: Receive PlanetScale webhook deliveries and verify their signature.
description:
  - An HTTP server that receives the deliveries of a PlanetScale webhook (the webhooks that
    M(planetscale.cloud.webhook) manages). The platform sends to public HTTPS URLs only, so its URL reaches O(host)
    and O(port) through a proxy that terminates TLS, or the source serves HTTPS itself with O(certfile) and
    O(keyfile).
  - Every delivery's C(X-PlanetScale-Signature) must be the hex HMAC-SHA256 of its body keyed by O(hmac_secret),
    compared in constant time. A request without it or with another one is answered C(401), a body larger than
    O(max_body_size) C(413), a body that is not a JSON object C(400); none of them becomes an event.
  - The platform signs every delivery the same way, so the options of C(ansible.eda.webhook) that choose how a
    signature is made or sent (C(hmac_algo), C(hmac_header), C(hmac_format)) and its other ways in (C(token),
    C(password), C(cafile), C(capath)) are not options here; a rulebook that gives one is refused with a sentence
    before anything listens. O(hmac_secret), O(host), O(port), O(certfile) and O(keyfile) mean what they mean there.
  - A signed delivery must also carry its C(timestamp) (ISO 8601, such as C(2024-01-19T15:21:34.000Z), or seconds
    since 1970), within O(max_delivery_age) of this host's clock, past or future; one without a readable
    C(timestamp) or outside that window is answered C(400). A second copy of a delivery already accepted (the same
    body, hence the same signature) is answered C(409), so that a delivery read by someone else cannot be sent again to
    start a second run. The source remembers the deliveries it accepted until they leave the window, at most
    10000 of them; beyond that it answers C(503) until some leave it.
  - >-
    Each accepted delivery becomes an event C({"payload": <the delivery>, "meta": {"endpoint": <path>,
    "headers": <headers>}}); the delivery has C(event) (such as C(deploy_request.pending_cutover)),
    C(organization), C(database), C(timestamp) and C(resource). The headers are those of the request without
    C(X-PlanetScale-Signature), C(Authorization) and C(Proxy-Authorization).
  - Every refused request is logged at warning level in one line, with its status, the reason and the address of
    its client, never its signature or its body; at most 20 such lines a minute, then one line a minute with how
    many were left out. A request whose head is not HTTP, or too long, is such a line too, not a traceback.
  - Opening a connection needs no secret, so the source bounds what a connection may hold. Each connection must
    deliver its whole request (its head and its body) within O(request_timeout) seconds of being opened (with
    O(certfile), of the end of its TLS handshake, which has as long); a request that has not arrived by then is
    answered C(408) and its connection closed. Each connection carries one request and is closed after its answer.
    At most O(max_connections) connections are open at once; one more closes the oldest that is still waiting
    for its request (answered C(408)), or, when all of them have theirs, is answered C(503) at once and closed
    once its client has read that (within a second).
    A request line or header longer than 8190 bytes is answered C(400).
  - When the process runs out of file descriptors, the source says so once in its log (and again only after a
    minute without it) and takes new connections as others close; raise the activation's file limit or lower
    O(max_connections).
  - This source was named C(planetscale.cloud.webhook) before; that name still works for existing rulebooks and
    logs a deprecation warning.
options:
  host:
    description:
      - The address to listen on. The default listens on every address of the host; behind a proxy on the same host,
        listen on C(127.0.0.1) only.
    type: str
    default: 0.0.0.0
  port:
    description: The TCP port to listen on.
    type: int
    required: true
  hmac_secret:
    description:
      - The webhook's secret, as the platform shows it (M(planetscale.cloud.webhook) with C(return_secret)).
      - Keep it in a credential of the rulebook activation (the collection's credential type
        C(PlanetScale webhook secret) gives it as the variable C(planetscale_webhook_secret)), never in the rulebook.
      - Its alias C(secret) is the name it had before.
    type: str
    required: true
    aliases: [secret]
  max_body_size:
    description: The largest body accepted, in bytes.
    type: int
    default: 1048576
  max_delivery_age:
    description:
      - How far, in seconds, a delivery's C(timestamp) may be from this host's clock, before or after it. Older
        deliveries (and deliveries dated too far ahead) are refused, and a delivery accepted once is refused again
        for as long as it is within this window.
    type: int
    default: 300
  request_timeout:
    description: The seconds a connection has to deliver its whole request, from its head to the end of its body.
    type: int
    default: 10
  max_connections:
    description: The most connections open at once.
    type: int
    default: 100
  certfile:
    description: A PEM file with the server's certificate (and its chain); the source then serves HTTPS only.
    type: str
  keyfile:
    description: A PEM file with the certificate's private key, when O(certfile) does not hold it.
    type: str
"""

EXAMPLES = r"""
- name: Cut over deploy requests that wait for it
  hosts: all
  sources:
    - planetscale.cloud.webhook_deliveries:
        host: 0.0.0.0
        port: 5000
        hmac_secret: "{{ planetscale_webhook_secret }}"
  rules:
    - name: A deploy request waits for its cutover
      condition: event.payload.event == "deploy_request.pending_cutover"
      action:
        run_job_template:
          name: Cut over a PlanetScale deploy request
          organization: Default
"""

import asyncio
import errno
import hashlib
import heapq
import hmac
import json
import logging
import math
import re
import ssl
import time
from datetime import datetime, timezone
from typing import Any, NamedTuple

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

NAME = "planetscale.cloud.webhook_deliveries"
SIGNATURE_HEADER = "X-PlanetScale-Signature"
PRIVATE_HEADERS = frozenset(("x-planetscale-signature", "authorization", "proxy-authorization"))  # never in an event
MAX_BODY_SIZE = 1024 * 1024
MAX_DELIVERY_AGE = 300
REQUEST_TIMEOUT = 10
MAX_CONNECTIONS = 100
MAX_REMEMBERED = 10000  # accepted deliveries remembered within max_delivery_age
MAX_LINE_SIZE = 8190  # the request line and each header, in bytes (aiohttp's default, set so that it stays)
BACKLOG = 128
REFUSED_LINGER = 1  # seconds a connection answered 503 stays open for its client to read the answer
STARVED_QUIET = 60  # seconds without running out of file descriptors before it is logged again
REFUSALS_LOGGED = 20  # refused requests logged a minute, at most; the others are counted
REFUSALS_WINDOW = 60
# ansible.eda.webhook's options that have no counterpart here: the platform signs every delivery one way
NOT_TAKEN = dict(
    token="the platform sends no token; it signs every delivery with the webhook's secret (hmac_secret)",
    hmac_algo="the platform signs with HMAC-SHA256 only",
    hmac_header="the platform sends the signature in X-PlanetScale-Signature only",
    hmac_format="the platform sends the signature in hex only",
    password="give keyfile a key without a passphrase",
    cafile="the platform presents no client certificate",
    capath="the platform presents no client certificate",
)

logger = logging.getLogger(__name__)


class Settings(NamedTuple):
    host: str
    port: int
    secret: bytes
    max_body_size: int
    max_delivery_age: int
    request_timeout: int
    max_connections: int


def _positive(args: dict[str, Any], name: str, default: int | None = None) -> int:
    value = args.get(name, default)
    if value is None:
        raise ValueError(NAME + ": set %s" % name)
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValueError(NAME + ": %s must be a whole number, not %r" % (name, value)) from None
    if isinstance(value, bool) or number < 1 or str(number) != str(value).strip():
        raise ValueError(NAME + ": %s must be a whole number of at least 1, not %r" % (name, value))
    return number


def _tls(args: dict[str, Any]) -> ssl.SSLContext | None:
    """The server's TLS context from certfile and keyfile, or None (plain HTTP)."""
    certfile, keyfile = args.get("certfile"), args.get("keyfile")
    if not certfile:
        if keyfile:
            raise ValueError(NAME + ": keyfile needs certfile, the certificate it is the key of")
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(certfile, keyfile or None)
    except (OSError, ssl.SSLError) as error:
        raise ValueError(NAME + ": cannot serve HTTPS with certfile %s and keyfile %s: %s"
                         % (certfile, keyfile, error)) from None
    return context


def _secret(args: dict[str, Any]) -> bytes:
    """hmac_secret (or secret, its alias), checked."""
    secret, alias = args.get("hmac_secret"), args.get("secret")
    if secret is None:
        secret = alias
    elif alias is not None and alias != secret:
        raise ValueError(NAME + ": hmac_secret and secret (its alias) differ; give hmac_secret only")
    if not isinstance(secret, str) or not secret.strip():
        raise ValueError(NAME + ": set hmac_secret to the webhook's secret; a delivery is accepted only when it is "
                         "signed with it")
    return secret.encode("utf-8")


def _settings(args: dict[str, Any]) -> Settings:
    """The source's arguments, checked before anything listens."""
    for name in sorted(set(NOT_TAKEN) & set(args)):
        raise ValueError(NAME + ": %s is an option of ansible.eda.webhook that this source does not take (%s); "
                         "remove it" % (name, NOT_TAKEN[name]))
    secret = _secret(args)
    port = _positive(args, "port")
    if port > 65535:
        raise ValueError(NAME + ": port must be at most 65535, not %d" % port)
    host = args.get("host") or "0.0.0.0"
    return Settings(str(host), port, secret, _positive(args, "max_body_size", MAX_BODY_SIZE),
                    _positive(args, "max_delivery_age", MAX_DELIVERY_AGE),
                    _positive(args, "request_timeout", REQUEST_TIMEOUT),
                    _positive(args, "max_connections", MAX_CONNECTIONS))


class Refusals:
    """The log of refused requests: one warning line each (status, why, client), at most REFUSALS_LOGGED in
    REFUSALS_WINDOW seconds; beyond that they are counted, and the count is logged once the window is over."""

    def __init__(self, clock=time.monotonic):
        self.clock = clock
        self.started = clock()
        self.logged = 0
        self.left_out = 0

    def __call__(self, status: int, reason: str, peer: Any) -> None:
        self.flush()
        if self.logged >= REFUSALS_LOGGED:
            self.left_out += 1
            return
        self.logged += 1
        logger.warning("%s: refused a request from %s: %d, %s", NAME, _address(peer), status, reason)

    def flush(self, force: bool = False) -> None:
        """When the window is over (or force): the count of the refusals left out, and a new window."""
        now = self.clock()
        if now - self.started < REFUSALS_WINDOW and not force:
            return
        if self.left_out:
            logger.warning("%s: %d more requests were refused in the last %d seconds and not logged (at most %d a "
                           "minute are)", NAME, self.left_out, int(now - self.started), REFUSALS_LOGGED)
        self.started, self.logged, self.left_out = now, 0, 0


def _address(peer: Any) -> str:
    """A client's address as a transport gives it (host, port...), or unknown."""
    if isinstance(peer, (tuple, list)) and peer:
        return str(peer[0])
    return str(peer) if peer else "an unknown address"


class ServerLog:
    """What aiohttp logs of a request it answers itself: a head that is not HTTP or is too long is a refusal (one
    line, no traceback); anything else goes to aiohttp's own logger."""

    def __init__(self, refusals: Refusals, inner: logging.Logger):
        self.refusals, self.inner = refusals, inner

    def exception(self, message: str, *args: Any, exc_info: Any = None, **kw: Any) -> None:
        if isinstance(exc_info, HttpProcessingError):
            self.refusals(exc_info.code or 400, "its head is not a valid HTTP request (%s)" % type(exc_info).__name__,
                          args[0] if args else None)
        else:
            self.inner.exception(message, *args, exc_info=exc_info, **kw)

    def debug(self, message: str, *args: Any, exc_info: Any = None, **kw: Any) -> None:
        if isinstance(exc_info, HttpProcessingError):
            self.exception(message, *args, exc_info=exc_info)
        else:
            self.inner.debug(message, *args, exc_info=exc_info, **kw)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def signed(secret: bytes, body: bytes, signature: str | None) -> bool:
    """Whether signature is the hex HMAC-SHA256 of body keyed by secret (constant time)."""
    if not signature:
        return False
    expected = hmac.new(secret, body, hashlib.sha256).hexdigest().encode("ascii")
    return hmac.compare_digest(expected, signature.strip().lower().encode("utf-8", "surrogateescape"))


def delivery_time(value: Any) -> float | None:
    """A delivery's timestamp in seconds since 1970, from ISO 8601 (UTC when it has no offset) or a number of
    seconds; None when it is neither."""
    if isinstance(value, str) and re.fullmatch(r"\s*\d+(\.\d+)?\s*", value):
        value = float(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            seconds = float(value)
        except OverflowError:
            return None
        return seconds if math.isfinite(seconds) else None
    if not isinstance(value, str):
        return None
    text = re.sub(r"(\.\d{6})\d+", r"\1", value.strip())  # nanoseconds (Go's RFC 3339) to what Python reads
    if text[-1:] in ("Z", "z"):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        return moment.timestamp()
    except (ValueError, OverflowError):
        return None


class Accepted:
    """The deliveries accepted (their body's digest), each until its timestamp leaves the window, at most limit."""

    def __init__(self, window: int, limit: int = MAX_REMEMBERED):
        self.window, self.limit = window, limit
        self.until: dict[bytes, float] = {}
        self.expiries: list[tuple[float, bytes]] = []

    def take(self, body: bytes, moment: float | None, now: float) -> tuple[int, str] | None:
        """None when the delivery is new and within the window (it is then remembered); else the answer's status and
        why."""
        if moment is None:
            return 400, ("the delivery has no readable timestamp (ISO 8601 or seconds since 1970); the source takes "
                         "only dated deliveries")
        if abs(now - moment) > self.window:
            return 400, ("the delivery's timestamp is %d seconds %s this host's clock, more than max_delivery_age "
                         "(%d seconds)" % (abs(now - moment), "behind" if moment < now else "ahead of", self.window))
        while self.expiries and self.expiries[0][0] < now:
            self.until.pop(heapq.heappop(self.expiries)[1], None)
        key = hashlib.sha256(body).digest()
        if key in self.until:
            return 409, "this delivery was already received; it is not taken twice"
        if len(self.until) >= self.limit:
            return 503, ("the source received %d deliveries within max_delivery_age and remembers no more; send it "
                         "again later" % self.limit)
        self.until[key] = moment + self.window
        heapq.heappush(self.expiries, (moment + self.window, key))
        return None


def _raw(status: int, reason: str, error: str) -> bytes:
    """An answer written to a connection whose request aiohttp never got (a JSON error, then the connection closes)."""
    body = json.dumps(dict(error=error)).encode("utf-8")
    head = "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
    return (head % (status, reason, len(body))).encode("ascii") + body


class Connection(asyncio.Protocol):
    """A client's connection: aiohttp's protocol for it, once admitted, behind the deadline of its request."""

    def __init__(self, connections: "Connections"):
        self.connections = connections
        self.inner: asyncio.Protocol | None = None  # aiohttp's, when admitted
        self.transport: asyncio.Transport | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.reading: asyncio.Future | None = None  # the body being read by the handler
        self.arrived = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        loop = asyncio.get_running_loop()
        if not self.connections.admit(self):
            self.connections.refusals(503, "max_connections (%d) connections are being answered"
                                      % self.connections.limit, transport.get_extra_info("peername"))
            transport.write(self.connections.busy)
            if transport.can_write_eof():
                transport.write_eof()
            # what the client still sends is read and dropped (closing on it would reset the connection, and the
            # client could lose the answer) until it closes, for a second at most
            self.timer = loop.call_later(REFUSED_LINGER, transport.close)
            return
        self.timer = loop.call_later(self.connections.timeout, self.expire)
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self.inner is not None:
            self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received() if self.inner is not None else None

    def pause_writing(self) -> None:
        if self.inner is not None:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self.inner is not None:
            self.inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.timer is not None:
            self.timer.cancel()
        if self.inner is not None:
            self.connections.open.pop(self.inner, None)
            self.inner.connection_lost(exc)

    def expire(self) -> None:
        """The request has not arrived in time, or a newer connection takes this one's place: answer 408, close."""
        self.timer.cancel()
        self.connections.open.pop(self.inner, None)
        if self.reading is not None:
            self.reading.cancel()  # the handler answers
        elif not self.arrived and not self.transport.is_closing():
            self.connections.refusals(408, "the request did not arrive within request_timeout (%d s)"
                                      % self.connections.timeout, self.transport.get_extra_info("peername"))
            self.transport.write(self.connections.late)
            self.transport.close()

    async def arrival(self, reading: asyncio.Future) -> bool:
        """Whether reading (the body) ends before the request's deadline, when expire() cancels it."""
        self.reading = reading
        try:
            await asyncio.wait({reading})
        finally:
            reading.cancel()  # nothing when it is done
            self.reading = None
        if reading.cancelled():
            return False
        self.arrived = True
        self.timer.cancel()
        return True


class Connections:
    """The source's protocol factory: the open connections, each with request_timeout seconds to deliver its request,
    at most max_connections of them; and the report of running out of file descriptors, once."""

    def __init__(self, runner: web.AppRunner, settings: Settings, refusals: Refusals):
        self.runner, self.timeout, self.limit = runner, settings.request_timeout, settings.max_connections
        self.refusals = refusals
        self.address = "%s:%d" % (settings.host, settings.port)
        self.open: dict[asyncio.Protocol, Connection] = {}  # by aiohttp's protocol, the oldest first
        self.late = _raw(408, "Request Timeout", "the request did not arrive within request_timeout (%d s)"
                         % self.timeout)
        self.busy = _raw(503, "Service Unavailable", "the source has max_connections (%d) connections that are "
                         "being answered; try again" % self.limit)
        self.sockets: set[int] = set()
        self.starved: float | None = None  # when the source last ran out of file descriptors

    def __call__(self) -> Connection:
        return Connection(self)

    def admit(self, connection: Connection) -> bool:
        """Whether the new connection is served; one more than max_connections closes the oldest whose request has
        not arrived."""
        if len(self.open) >= self.limit:
            oldest = next((c for c in self.open.values() if not c.arrived), None)
            if oldest is None:
                return False
            oldest.expire()
        connection.inner = self.runner.server()
        self.open[connection.inner] = connection
        return True

    def of(self, request: web.Request) -> Connection | None:
        """The connection of a request, while its request has time to arrive."""
        return self.open.get(request.protocol)

    def exception_handler(self, previous):
        """The event loop's exception handler while the source listens: running out of file descriptors as it
        accepts is said once, and again only after STARVED_QUIET seconds without it (asyncio logs it with its
        traceback at every attempt); anything else goes to the handler before it."""
        def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
            error, sock = context.get("exception"), context.get("socket")
            if isinstance(error, OSError) and error.errno in (errno.EMFILE, errno.ENFILE) and sock is not None \
                    and sock.fileno() in self.sockets:
                now, last = loop.time(), self.starved
                self.starved = now
                if last is None or now - last > STARVED_QUIET:
                    logger.warning("%s: out of file descriptors (%s) while accepting connections on %s; new "
                                   "connections wait until open ones close. Raise the activation's limit of open "
                                   "files or lower max_connections (%d).",
                                   NAME, error.strerror, self.address, self.limit)
                return
            if previous is None:
                loop.default_exception_handler(context)
            else:
                previous(loop, context)
        return handle


def _answer(status: int, error: str | None = None, **headers: str) -> web.Response:
    """A JSON answer, after which the connection closes: one request a connection."""
    response = web.json_response(dict(error=error) if error else dict(received=True), status=status,
                                 headers=headers or None)
    response.force_close()
    return response


async def _late(request: web.Request, error: str) -> web.Response:
    """A 408 answer, written now, and the connection closed at once: what a stalled client may still send is not read
    (aiohttp would read it for another lingering_time after the answer)."""
    response = _answer(408, error)
    try:
        await response.prepare(request)
        await response.write_eof()
    except ConnectionError:  # the client went first
        pass
    request.protocol.force_close()
    return response


async def _read(request: web.Request, max_body_size: int) -> bytes | None:
    """The body, or None when it is larger than max_body_size."""
    if request.content_length is not None and request.content_length > max_body_size:
        return None
    body = bytearray()
    async for chunk in request.content.iter_any():  # a chunked body has no length: count it as it comes
        body += chunk
        if len(body) > max_body_size:
            return None
    return bytes(body)


def _handler(queue: asyncio.Queue, settings: Settings, connections: Connections):
    accepted = Accepted(settings.max_delivery_age)
    late = "the request did not arrive within request_timeout (%d s)" % settings.request_timeout

    def refuse(request: web.Request, status: int, error: str, **headers: str) -> web.Response:
        connections.refusals(status, error, request.remote)
        return _answer(status, error, **headers)

    async def receive(request: web.Request) -> web.Response:
        if request.method != "POST":
            return refuse(request, 405, "a delivery is a POST", Allow="POST")
        connection = connections.of(request)
        if connection is None:  # its time ran out (or a newer connection took its place) as its head arrived: the
            return refuse(request, 408, late)  # connection was answered and closed
        reading = asyncio.ensure_future(_read(request, settings.max_body_size))
        if not await connection.arrival(reading):
            connections.refusals(408, late, request.remote)
            return await _late(request, late)
        body = reading.result()
        if body is None:
            return refuse(request, 413, "body larger than %d bytes" % settings.max_body_size)
        if not signed(settings.secret, body, request.headers.get(SIGNATURE_HEADER)):
            return refuse(request, 401, "missing or invalid %s" % SIGNATURE_HEADER)
        try:
            payload = json.loads(body)
        except ValueError:
            payload = None
        if not isinstance(payload, dict):
            return refuse(request, 400, "the body is not a JSON object")
        refusal = accepted.take(body, delivery_time(payload.get("timestamp")), time.time())
        if refusal is not None:
            return refuse(request, *refusal)
        headers = dict((name, request.headers[name]) for name in request.headers
                       if name.lower() not in PRIVATE_HEADERS)
        await queue.put(dict(payload=payload, meta=dict(endpoint=request.path.lstrip("/"), headers=headers)))
        return _answer(200)

    return receive


async def main(queue: asyncio.Queue, args: dict[str, Any]) -> None:
    """Receive deliveries on host:port until cancelled, putting each signed one on queue."""
    settings = _settings(args)
    context = _tls(args)
    app = web.Application(client_max_size=settings.max_body_size)
    refusals = Refusals()
    runner = web.AppRunner(app, access_log=None, max_line_size=MAX_LINE_SIZE, max_field_size=MAX_LINE_SIZE,
                           logger=ServerLog(refusals, logging.getLogger("aiohttp.server")))
    connections = Connections(runner, settings, refusals)
    app.router.add_route("*", "/{endpoint:.*}", _handler(queue, settings, connections))
    await runner.setup()
    loop = asyncio.get_running_loop()
    previous = loop.get_exception_handler()
    handler = connections.exception_handler(previous)
    listener = None
    try:
        listener = await loop.create_server(connections, settings.host, settings.port, ssl=context, backlog=BACKLOG,
                                            ssl_handshake_timeout=settings.request_timeout if context else None)
        connections.sockets = set(sock.fileno() for sock in listener.sockets)
        loop.set_exception_handler(handler)
        await asyncio.Event().wait()  # until the activation stops (cancels this task)
    finally:
        if loop.get_exception_handler() is handler:
            loop.set_exception_handler(previous)
        if listener is not None:
            listener.close()
        await runner.cleanup()
        refusals.flush(force=True)
