# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""planetscale.cloud.webhook: an Event-Driven Ansible event source that receives the platform's webhook deliveries.

Each delivery is a POST of a JSON object with the header X-PlanetScale-Signature, the hex HMAC-SHA256 of the exact
body keyed by the webhook's secret. A delivery is put on the queue only when its signature is that of its body with
the secret given to the source, compared in constant time; a request without the header, with another signature,
with a body larger than max_body_size or with a body that is not a JSON object is answered with an error status
and never queued.
"""

from __future__ import annotations

DOCUMENTATION = r"""
---
short_description: Receive PlanetScale webhook deliveries and verify their signature.
description:
  - An HTTP server that receives the deliveries of a PlanetScale webhook. The platform sends to public HTTPS URLs
    only, so its URL reaches O(host) and O(port) through a proxy that terminates TLS, or the source serves HTTPS
    itself with O(certfile) and O(keyfile).
  - Every delivery's C(X-PlanetScale-Signature) must be the hex HMAC-SHA256 of its body keyed by O(secret), compared
    in constant time. A request without it or with another one is answered C(401), a body larger than
    O(max_body_size) C(413), a body that is not a JSON object C(400); none of them becomes an event.
  - Each accepted delivery becomes an event C({"payload": <the delivery>, "meta": {"endpoint": <path>,
    "headers": <headers>}}); the delivery has C(event) (such as C(deploy_request.pending_cutover)),
    C(organization), C(database), C(timestamp) and C(resource).
options:
  host:
    description: The address to listen on.
    type: str
    default: 0.0.0.0
  port:
    description: The TCP port to listen on.
    type: int
    required: true
  secret:
    description:
      - The webhook's secret, as the platform shows it (M(planetscale.cloud.webhook) with C(return_secret)).
      - Keep it in a credential of the rulebook activation, never in the rulebook.
    type: str
    required: true
  max_body_size:
    description: The largest body accepted, in bytes.
    type: int
    default: 1048576
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
    - planetscale.cloud.webhook:
        host: 0.0.0.0
        port: 5000
        secret: "{{ planetscale_webhook_secret }}"
  rules:
    - name: A deploy request waits for its cutover
      condition: event.payload.event == "deploy_request.pending_cutover"
      action:
        run_job_template:
          name: Cut over a deploy request
          organization: Default
"""

import asyncio
import hashlib
import hmac
import json
import ssl
from typing import Any

from aiohttp import web

SIGNATURE_HEADER = "X-PlanetScale-Signature"
MAX_BODY_SIZE = 1024 * 1024


def _positive(args: dict[str, Any], name: str, default: int | None = None) -> int:
    value = args.get(name, default)
    if value is None:
        raise ValueError("planetscale.cloud.webhook: set %s" % name)
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValueError("planetscale.cloud.webhook: %s must be a whole number, not %r" % (name, value)) from None
    if isinstance(value, bool) or number < 1 or str(number) != str(value).strip():
        raise ValueError("planetscale.cloud.webhook: %s must be a whole number of at least 1, not %r" % (name, value))
    return number


def _tls(args: dict[str, Any]) -> ssl.SSLContext | None:
    """The server's TLS context from certfile and keyfile, or None (plain HTTP)."""
    certfile, keyfile = args.get("certfile"), args.get("keyfile")
    if not certfile:
        if keyfile:
            raise ValueError("planetscale.cloud.webhook: keyfile needs certfile, the certificate it is the key of")
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(certfile, keyfile or None)
    except (OSError, ssl.SSLError) as error:
        raise ValueError("planetscale.cloud.webhook: cannot serve HTTPS with certfile %s and keyfile %s: %s"
                         % (certfile, keyfile, error)) from None
    return context


def _settings(args: dict[str, Any]) -> tuple[str, int, bytes, int]:
    """The source's arguments, checked before anything listens."""
    secret = args.get("secret")
    if not isinstance(secret, str) or not secret.strip():
        raise ValueError("planetscale.cloud.webhook: set secret to the webhook's secret; a delivery is accepted only "
                         "when it is signed with it")
    port = _positive(args, "port")
    if port > 65535:
        raise ValueError("planetscale.cloud.webhook: port must be at most 65535, not %d" % port)
    host = args.get("host") or "0.0.0.0"
    return str(host), port, secret.encode("utf-8"), _positive(args, "max_body_size", MAX_BODY_SIZE)


def signed(secret: bytes, body: bytes, signature: str | None) -> bool:
    """Whether signature is the hex HMAC-SHA256 of body keyed by secret (constant time)."""
    if not signature:
        return False
    expected = hmac.new(secret, body, hashlib.sha256).hexdigest().encode("ascii")
    return hmac.compare_digest(expected, signature.strip().lower().encode("utf-8", "surrogateescape"))


def _handler(queue: asyncio.Queue, secret: bytes, max_body_size: int):
    async def receive(request: web.Request) -> web.Response:
        if request.content_length is not None and request.content_length > max_body_size:
            return web.json_response(dict(error="body larger than %d bytes" % max_body_size), status=413)
        body = bytearray()
        async for chunk in request.content.iter_any():  # a chunked body has no length: count it as it comes
            body += chunk
            if len(body) > max_body_size:
                return web.json_response(dict(error="body larger than %d bytes" % max_body_size), status=413)
        body = bytes(body)
        if not signed(secret, body, request.headers.get(SIGNATURE_HEADER)):
            return web.json_response(dict(error="missing or invalid %s" % SIGNATURE_HEADER), status=401)
        try:
            payload = json.loads(body)
        except ValueError:
            payload = None
        if not isinstance(payload, dict):
            return web.json_response(dict(error="the body is not a JSON object"), status=400)
        await queue.put(dict(payload=payload, meta=dict(endpoint=request.path.lstrip("/"),
                                                        headers=dict(request.headers))))
        return web.json_response(dict(received=True))

    return receive


async def main(queue: asyncio.Queue, args: dict[str, Any]) -> None:
    """Receive deliveries on host:port until cancelled, putting each signed one on queue."""
    host, port, secret, max_body_size = _settings(args)
    context = _tls(args)
    app = web.Application(client_max_size=max_body_size)
    app.router.add_post("/{endpoint:.*}", _handler(queue, secret, max_body_size))
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port, ssl_context=context).start()
        await asyncio.Event().wait()  # until the activation stops (cancels this task)
    finally:
        await runner.cleanup()
