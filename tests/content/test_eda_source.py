# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Event-Driven Ansible event source planetscale.cloud.webhook_deliveries
(extensions/eda/plugins/event_source/webhook_deliveries.py; webhook.py is its former name, still working),
driven as ansible-rulebook drives a source: its main(queue, args) runs in an event loop (here a thread's own) with an
asyncio queue, and each event it puts there is what a rulebook's rules see.

The emulator's webhooks send real deliveries to it (the test delivery, a deploy request reaching pending_cutover),
signed with the webhook's secret: they reach the queue, without their signature. Requests without a signature, with a
wrong one, a real delivery of another webhook replayed with its own (other) signature, a body changed under a
signature, oversized bodies (with and without a length), bodies that are not JSON objects, a delivery accepted once and
sent again, and deliveries dated outside max_delivery_age are refused, and none is queued.

Nobody needs the secret to open a connection: connections that send part of a request and go silent are answered 408
and closed after request_timeout; beyond max_connections the oldest of them makes way for a new one, and when every
connection is being answered a new one is refused at once; running out of file descriptors is logged once.

Every refused request is one log line (status, why, client; never the signature or the body), at most 20 a minute.

Then ansible-rulebook itself (in build/rulebook, `make setup-rulebook`; it needs a Java runtime) runs the Automation
Platform guide's command as printed, with the rulebook the collection ships, extensions/eda/rulebooks/cutover.yml: a
deploy request that reaches pending_cutover is cut over by the playbook planetscale.cloud.cutover. Both shipped
rulebooks pass ansible-rulebook's schema, and the source's former name is redirected. Without ansible-rulebook those
tests are skipped, saying so. The docs site's page of the source is its DOCUMENTATION.
"""

from __future__ import annotations

import ast
import asyncio
import hashlib
import hmac
import http.client
import importlib.util
import json
import logging
import os
import re
import shlex
import shutil
import socket
import ssl
import subprocess
import sys
import signal
import textwrap
import threading
import time
from datetime import datetime, timezone

import pytest
import yaml

from harness import ROOT, credentials_env

SOURCE = os.path.join(ROOT, "extensions", "eda", "plugins", "event_source", "webhook_deliveries.py")
FORMER = os.path.join(ROOT, "extensions", "eda", "plugins", "event_source", "webhook.py")  # its deprecated name
RULEBOOKS = os.path.join(ROOT, "extensions", "eda", "rulebooks")
GUIDE = os.path.join(ROOT, "docs", "docsite", "rst", "guide_automation_platform.rst")
PAGE = os.path.join(ROOT, "docs", "docsite", "rst", "event_source_webhook_deliveries.rst")
RULEBOOK_BIN = os.path.join(ROOT, "build", "rulebook", "bin")
DATABASE_PATH = "/organizations/acme/databases/app"
TABLE = "CREATE TABLE `invoices_%s` (`id` bigint NOT NULL, PRIMARY KEY (`id`))"
SIGNATURE = "X-PlanetScale-Signature"


def load_source(path=SOURCE):
    spec = importlib.util.spec_from_file_location("planetscale_cloud_webhook_source", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def listening(port, deadline, process=None):
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.1)
    return False


def sign(secret, body):
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def delivery(event="branch.ready", **fields):
    """A delivery's body as the platform sends it (compact JSON, dated now in seconds unless fields say otherwise)."""
    body = dict(timestamp=int(time.time()), event=event, organization="acme", database="app",
                resource=dict(name="main"))
    body.update(fields)
    return json.dumps(dict((k, v) for k, v in body.items() if v is not None), separators=(",", ":")).encode()


def stalled(port, data):
    """A connection that sends data (a part of a request, or nothing) and then nothing more."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    if data:
        sock.sendall(data)
    return sock


def answer_of(sock, timeout=8):
    """What the server sends on a connection until it closes it; None when it is still open after timeout seconds."""
    sock.settimeout(timeout)
    data = b""
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return data
            data += chunk
    except socket.timeout:
        return None
    except ConnectionResetError:
        return data
    finally:
        sock.close()


PARTIAL_HEAD = b"POST /planetscale HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl"
HEAD = b"POST /planetscale HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"


class Queue(asyncio.Queue):
    """asyncio's queue that counts the events waiting to be put on it (when it is full)."""

    waiting = 0

    async def put(self, item):
        self.waiting += 1
        try:
            await super().put(item)
        finally:
            self.waiting -= 1


class RunningSource:
    """main(queue, args) of the source in an event loop of a thread of its own, as ansible-rulebook runs it."""

    def __init__(self, queue_size=0, path=SOURCE, **args):
        self.port = args.setdefault("port", free_port())
        args.setdefault("host", "127.0.0.1")
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.queue = self.call(self._queue(queue_size))  # ansible-rulebook gives a source a queue of size 1
        self.task = self.call(self._start(load_source(path).main(self.queue, args)))
        if not listening(self.port, time.monotonic() + 10):
            self.stop()
            raise AssertionError("the source does not listen on %d: %r" % (self.port, self.task))
        self.url = "http://127.0.0.1:%d/planetscale" % self.port

    @staticmethod
    async def _queue(size):
        return Queue(size)

    @staticmethod
    async def _start(coroutine):
        return asyncio.get_running_loop().create_task(coroutine)

    async def _cancel(self):
        self.task.cancel()
        try:
            await self.task
        except asyncio.CancelledError:
            pass

    def call(self, coroutine, timeout=10):
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def get(self, timeout=30):
        """The next event on the queue."""
        return self.call(asyncio.wait_for(self.queue.get(), timeout), timeout + 5)

    def waiting(self):
        """How many events are on the queue."""
        async def size():
            return self.queue.qsize()
        return self.call(size())

    def putting(self):
        """How many events wait to be put on the queue."""
        async def count():
            return self.queue.waiting
        return self.call(count())

    def post(self, body, headers=None, chunked=False, method="POST", ca_file=None):
        """Send a request (over HTTPS trusting ca_file, when given); its status."""
        if ca_file:
            connection = http.client.HTTPSConnection("127.0.0.1", self.port, timeout=10,
                                                     context=ssl.create_default_context(cafile=ca_file))
        else:
            connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            headers = dict({"Content-Type": "application/json"}, **(headers or {}))
            if chunked:
                connection.request(method, "/planetscale", body=iter([body[i:i + 1000] for i in range(0, len(body),
                                                                                                      1000)]),
                                   headers=headers, encode_chunked=True)
            else:
                connection.request(method, "/planetscale", body=body, headers=headers)
            response = connection.getresponse()
            response.read()
            return response.status
        except (ConnectionResetError, BrokenPipeError):
            return "connection closed"
        finally:
            connection.close()

    def stop(self):
        """Cancel main() as ansible-rulebook does when the activation stops, and wait until it has cleaned up."""
        self.call(self._cancel())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def add_webhook(emulator, url, events):
    """A webhook of the seeded database app that sends to url; its record, with its secret."""
    return emulator.api("POST", DATABASE_PATH + "/webhooks", dict(url=url, events=events))


def pending_cutover(emulator, name):
    """A deploy request of a branch with a new table, deployed with a gated cutover; its number."""
    emulator.api("POST", DATABASE_PATH + "/branches", dict(name=name, parent_branch="main"))
    emulator.advance(3)
    emulator.ddl("app", name, [TABLE % name.replace("-", "_")])
    number = emulator.api("POST", DATABASE_PATH + "/deploy-requests",
                          dict(branch=name, into_branch="main", auto_cutover=False))["number"]
    emulator.advance(1)
    emulator.api("POST", DATABASE_PATH + "/deploy-requests/%d/deploy" % number)
    return number


def test_the_emulators_signed_deliveries_reach_the_queue(emulator):
    emulator.reset()
    port = free_port()
    url = "http://127.0.0.1:%d/planetscale" % port
    hook = add_webhook(emulator, url, ["deploy_request.pending_cutover"])
    source = RunningSource(port=port, hmac_secret=hook["secret"])
    try:
        emulator.api("POST", DATABASE_PATH + "/webhooks/%s/test" % hook["id"])
        event = source.get()
        assert event["payload"]["event"] == "webhook.test"
        assert event["payload"]["resource"]["id"] == hook["id"] and not event["payload"]["resource"].get("secret")
        assert event["meta"]["endpoint"] == "planetscale"
        assert event["meta"]["headers"]["Content-Type"] == "application/json"
        # whoever reads the events cannot send the delivery again: its signature is not among them
        assert SIGNATURE.lower() not in [name.lower() for name in event["meta"]["headers"]]
        assert sign(hook["secret"], json.dumps(event["payload"], separators=(",", ":")).encode()) not in json.dumps(
            event)

        number = pending_cutover(emulator, "gated")
        deadline = time.monotonic() + 30
        while not source.waiting() and time.monotonic() < deadline:
            emulator.advance(1)
            time.sleep(0.3)
        event = source.get()
        assert event["payload"]["event"] == "deploy_request.pending_cutover"
        assert (event["payload"]["organization"], event["payload"]["database"]) == ("acme", "app")
        assert event["payload"]["resource"]["number"] == number
        assert event["payload"]["resource"]["deployment_state"] == "pending_cutover"
        assert source.waiting() == 0
    finally:
        source.stop()
    delivered = [(d["event"], d["status"], d["success"]) for d in emulator.webhook_deliveries()]
    assert delivered == [("webhook.test", 200, True), ("deploy_request.pending_cutover", 200, True)]


class Recorder:
    """Another webhook's receiver: keeps the raw body and the signature of each delivery."""

    def __init__(self):
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        received = self.received = []

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):  # noqa: N802 (the name http.server calls)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                received.append((body, self.headers.get(SIGNATURE)))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d/elsewhere" % self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, kwargs=dict(poll_interval=0.05), daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_unsigned_wrongly_signed_replayed_and_oversized_requests_are_refused_and_never_queued(emulator):
    emulator.reset()
    recorder = Recorder()
    port = free_port()
    ours = add_webhook(emulator, "http://127.0.0.1:%d/planetscale" % port, ["branch.ready"])
    theirs = add_webhook(emulator, recorder.url, ["branch.ready"])
    assert ours["secret"] != theirs["secret"]
    source = RunningSource(port=port, hmac_secret=ours["secret"], max_body_size=4096)
    try:
        emulator.api("POST", DATABASE_PATH + "/webhooks/%s/test" % theirs["id"])
        deadline = time.monotonic() + 20
        while not recorder.received and time.monotonic() < deadline:
            time.sleep(0.1)
        body, their_signature = recorder.received[0]
        assert json.loads(body)["event"] == "webhook.test" and their_signature == sign(theirs["secret"], body)
        tampered = body.replace(b'"webhook.test"', b'"deploy_request.pending_cutover"')
        big = json.dumps(dict(event="branch.ready", padding="x" * 5000)).encode()
        refused = dict(
            unsigned=source.post(body),
            empty_signature=source.post(body, {SIGNATURE: ""}),
            wrong_secret=source.post(body, {SIGNATURE: sign("not the secret", body)}),
            not_hex=source.post(body, {SIGNATURE: "z" * 64}),
            replayed_with_its_own_signature=source.post(body, {SIGNATURE: their_signature}),
            body_changed_under_a_signature=source.post(tampered, {SIGNATURE: sign(ours["secret"], body)}),
            oversized=source.post(big, {SIGNATURE: sign(ours["secret"], big)}),
            oversized_chunked=source.post(big, {SIGNATURE: sign(ours["secret"], big)}, chunked=True),
            not_json=source.post(b"event=branch.ready", {SIGNATURE: sign(ours["secret"], b"event=branch.ready")}),
            not_an_object=source.post(b"[1, 2]", {SIGNATURE: sign(ours["secret"], b"[1, 2]")}),
            get=source.post(b"", {SIGNATURE: sign(ours["secret"], b"")}, method="GET"),
        )
        assert refused == dict(unsigned=401, empty_signature=401, wrong_secret=401, not_hex=401,
                               replayed_with_its_own_signature=401, body_changed_under_a_signature=401,
                               oversized=413, oversized_chunked=413, not_json=400, not_an_object=400, get=405)
        assert source.waiting() == 0
        # the same body signed with this source's secret is taken: the refusals were for their signatures
        assert source.post(body, {SIGNATURE: sign(ours["secret"], body).upper()}) == 200
        assert source.get(5)["payload"] == json.loads(body) and source.waiting() == 0
        # taken once: the same delivery sent again (as the platform signed it) is refused
        assert source.post(body, {SIGNATURE: sign(ours["secret"], body)}) == 409
        assert source.waiting() == 0
    finally:
        source.stop()
        recorder.close()


def iso(seconds):
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def test_a_delivery_is_taken_once_and_only_while_its_timestamp_is_recent():
    """Deliveries dated in seconds (as the emulator sends them) or in ISO 8601, within max_delivery_age (300 seconds
    by default) of now, before or after, are taken, each once; older ones, ones dated further ahead, and ones without
    a readable timestamp are refused; no event carries the signature or the request's credentials."""
    secret = "a webhook secret"
    source = RunningSource(hmac_secret=secret)
    narrow = RunningSource(hmac_secret=secret, max_delivery_age=30)
    now = time.time()
    bodies = dict(
        now=delivery(),
        iso_a_minute_ago=delivery("deploy_request.opened", timestamp=iso(now - 60)),
        two_minutes_ahead=delivery("deploy_request.queued", timestamp=int(now + 120)),
        thirty_days_old=delivery("deploy_request.closed", timestamp=int(now - 30 * 86400)),
        iso_thirty_days_old=delivery("deploy_request.closed", timestamp=iso(now - 30 * 86400)),
        an_hour_ahead=delivery("deploy_request.errored", timestamp=int(now + 3600)),
        undated=delivery("deploy_request.reverted", timestamp=None),
        unreadable=delivery("deploy_request.reverted", timestamp="yesterday"),
    )
    try:
        answers = dict((name, source.post(body, {SIGNATURE: sign(secret, body), "Authorization": "Basic dXNlcjpwdw=="}))
                       for name, body in bodies.items())
        assert answers == dict(now=200, iso_a_minute_ago=200, two_minutes_ahead=200, thirty_days_old=400,
                               iso_thirty_days_old=400, an_hour_ahead=400, undated=400, unreadable=400)
        events = [source.get(5) for unused in range(3)]
        assert [event["payload"]["event"] for event in events] == [
            "branch.ready", "deploy_request.opened", "deploy_request.queued"]
        for event in events:
            assert not set(event["meta"]["headers"]) & {SIGNATURE, "Authorization"}, event["meta"]["headers"]
        # each of them sent again (a replay of what an event's reader saw) is refused, however often
        assert [source.post(bodies[name], {SIGNATURE: sign(secret, bodies[name])}) for name in
                ("now", "now", "iso_a_minute_ago", "two_minutes_ahead")] == [409, 409, 409, 409]
        assert source.waiting() == 0
        # the window is an option: a minute old is too old for 30 seconds
        assert narrow.post(bodies["iso_a_minute_ago"], {SIGNATURE: sign(secret, bodies["iso_a_minute_ago"])}) == 400
        assert narrow.post(bodies["now"], {SIGNATURE: sign(secret, bodies["now"])}) == 200
        assert narrow.get(5)["payload"] == json.loads(bodies["now"]) and narrow.waiting() == 0
    finally:
        source.stop()
        narrow.stop()


def test_the_deliveries_remembered_leave_with_their_window_and_are_at_most_a_bound():
    accepted = load_source().Accepted(300, limit=3)
    now = time.time()
    assert [accepted.take(b"delivery %d" % i, now - 200, now) for i in range(3)] == [None, None, None]
    assert accepted.take(b"delivery 3", now, now)[0] == 503  # full: refused, not forgotten to make room
    assert accepted.take(b"delivery 0", now - 200, now)[0] == 409
    later = now + 101  # the three leave the window
    assert accepted.take(b"delivery 0", now - 200, later)[0] == 400  # too old now, whether remembered or not
    assert accepted.take(b"delivery 3", later, later) is None and len(accepted.until) == 1


def test_a_request_that_does_not_arrive_within_request_timeout_is_answered_408_and_closed():
    secret = "a webhook secret"
    source = RunningSource(hmac_secret=secret, request_timeout=1)
    try:
        started = time.monotonic()
        connections = dict(silent=stalled(source.port, b""), partial_head=stalled(source.port, PARTIAL_HEAD),
                           head_and_partial_body=stalled(source.port, HEAD % 200 + b'{"event":"branch.re'))
        answers = dict((name, answer_of(sock)) for name, sock in connections.items())
        assert all(answer and answer.startswith(b"HTTP/1.1 408 ") for answer in answers.values()), answers
        assert time.monotonic() - started >= 0.9  # not before request_timeout
        assert source.waiting() == 0
        body = delivery()
        assert source.post(body, {SIGNATURE: sign(secret, body)}) == 200
        assert source.get(5)["payload"]["event"] == "branch.ready"
    finally:
        source.stop()


def test_beyond_max_connections_the_oldest_stalled_connection_makes_way_and_a_delivery_is_served():
    """request_timeout is long here: the stalled connections that are closed are closed to make way."""
    secret = "a webhook secret"
    source = RunningSource(hmac_secret=secret, request_timeout=60, max_connections=5)
    stalls = []
    try:
        for data in (PARTIAL_HEAD, b"", HEAD % 200, PARTIAL_HEAD, PARTIAL_HEAD):
            stalls.append(stalled(source.port, data))
            time.sleep(0.1)  # accepted in this order
        time.sleep(0.3)
        stalls.append(stalled(source.port, PARTIAL_HEAD))  # a sixth: the first makes way
        assert (answer_of(stalls[0]) or b"").startswith(b"HTTP/1.1 408 ")
        body = delivery()
        assert source.post(body, {SIGNATURE: sign(secret, body)}) == 200  # a seventh: the second makes way
        assert source.get(5)["payload"] == json.loads(body)
        assert (answer_of(stalls[1]) or b"").startswith(b"HTTP/1.1 408 ")
        stalls[3].settimeout(0.5)
        with pytest.raises(socket.timeout):  # the others still have their time
            stalls[3].recv(100)
    finally:
        for sock in stalls:
            sock.close()
        source.stop()


def test_when_every_connection_is_being_answered_one_more_is_refused_at_once():
    """With ansible-rulebook's queue of one event, deliveries wait until the rules take the one before; with
    max_connections of them waiting, one more connection is answered 503 (not held) and the waiting ones are served."""
    secret = "a webhook secret"
    source = RunningSource(hmac_secret=secret, max_connections=2, queue_size=1)
    bodies = [delivery("deploy_request.%s" % state) for state in ("opened", "queued", "in_progress", "closed")]
    try:
        assert source.post(bodies[0], {SIGNATURE: sign(secret, bodies[0])}) == 200  # the queue is full
        answers = {}
        waiting = [threading.Thread(target=lambda i=i: answers.__setitem__(i, source.post(
            bodies[i], {SIGNATURE: sign(secret, bodies[i])}))) for i in (1, 2)]
        for thread in waiting:
            thread.start()
        deadline = time.monotonic() + 10
        while source.putting() < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert source.putting() == 2 and answers == {}  # both wait for the queue
        assert source.post(bodies[3], {SIGNATURE: sign(secret, bodies[3])}) == 503
        events = [source.get(5)["payload"]["event"] for unused in range(3)]
        for thread in waiting:
            thread.join(10)
        assert answers == {1: 200, 2: 200}
        assert sorted(events) == sorted(json.loads(body)["event"] for body in bodies[:3])
        assert source.post(bodies[3], {SIGNATURE: sign(secret, bodies[3])}) == 200  # refused, not taken: now it is
        assert source.get(5)["payload"]["event"] == "deploy_request.closed"
    finally:
        source.stop()


RUN_SOURCE = textwrap.dedent("""\
    import asyncio, importlib.util, logging, os, resource, sys
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    spec = importlib.util.spec_from_file_location("webhook", sys.argv[1])
    source = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(source)

    async def run():
        queue = asyncio.Queue()
        task = asyncio.ensure_future(source.main(queue, dict(host="127.0.0.1", port=int(sys.argv[2]),
                                                             hmac_secret="s", request_timeout=1,
                                                             max_connections=1000)))
        await asyncio.sleep(0.5)
        spare = 20  # descriptors left for connections: fewer than the test opens
        resource.setrlimit(resource.RLIMIT_NOFILE, (len(os.listdir("/proc/self/fd")) + spare,
                                                    resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
        print("limited", flush=True)
        while True:
            event = await queue.get()
            print("event", event["payload"]["event"], flush=True)

    asyncio.run(run())
    """)


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts its descriptors in /proc/self/fd")
def test_running_out_of_file_descriptors_is_logged_once_and_the_source_recovers(tmp_path):
    """The source in a process of its own, its limit of open files 20 above what it has open: 30 stalled connections
    use them up, asyncio cannot accept the others; the source says so once, and once they time out it serves a
    delivery."""
    port = free_port()
    log = open(str(tmp_path / "source.log"), "w+", encoding="utf-8")  # pylint: disable=consider-using-with
    process = subprocess.Popen([sys.executable, "-c", RUN_SOURCE, SOURCE, str(port)], stdout=subprocess.PIPE,
                               stderr=log, text=True)
    stalls = []
    try:
        assert process.stdout.readline().strip() == "limited", open(log.name, encoding="utf-8").read()[-3000:]
        stalls = [stalled(port, PARTIAL_HEAD) for unused in range(30)]
        for sock in stalls:
            answer = answer_of(sock)
            assert answer and answer.startswith(b"HTTP/1.1 408 "), answer
        body = delivery()
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request("POST", "/planetscale", body=body, headers={SIGNATURE: sign("s", body)})
        assert connection.getresponse().status == 200
        connection.close()
        assert process.stdout.readline().strip() == "event branch.ready"
    finally:
        for sock in stalls:
            sock.close()
        process.terminate()
        process.wait(10)
        log.close()
    output = open(log.name, encoding="utf-8").read()
    assert output.count("out of file descriptors") == 1, output[-3000:]
    assert "Traceback" not in output and "Too many open files" in output, output[-3000:]


SECRET = dict(hmac_secret="s3cret-value")


@pytest.mark.parametrize("args, message", [
    (dict(port=5000), "set hmac_secret"),
    (dict(port=5000, secret="  "), "set hmac_secret"),
    (dict(port=5000, hmac_secret="s3cret-value", secret="another"), "hmac_secret and secret (its alias) differ"),
    (SECRET, "set port"),
    (dict(SECRET, port="http"), "port must be a whole number"),
    (dict(SECRET, port=0), "port must be a whole number of at least 1"),
    (dict(SECRET, port=70000), "port must be at most 65535"),
    (dict(SECRET, port=5000, max_body_size=-1), "max_body_size must be a whole number of at least 1"),
    (dict(SECRET, port=5000, max_delivery_age=0), "max_delivery_age must be a whole number of at least"),
    (dict(SECRET, port=5000, request_timeout="soon"), "request_timeout must be a whole number"),
    (dict(SECRET, port=5000, max_connections=0), "max_connections must be a whole number of at least"),
    (dict(SECRET, port=5000, keyfile="server.key"), "keyfile needs certfile"),
    (dict(SECRET, port=5000, certfile="/nonexistent/server.crt"), "cannot serve HTTPS with certfile"),
    # ansible.eda.webhook's options without a counterpart: refused, never ignored (a token would protect nothing)
    (dict(SECRET, port=5000, hmac_header="X-Hub-Signature-256"), "hmac_header is an option of ansible.eda.webhook "
     "that this source does not take (the platform sends the signature in X-PlanetScale-Signature only)"),
    (dict(SECRET, port=5000, hmac_algo="sha512"), "hmac_algo is an option of ansible.eda.webhook"),
    (dict(SECRET, port=5000, token="s3cret-value"), "token is an option of ansible.eda.webhook"),
])
def test_bad_arguments_fail_before_anything_listens(args, message):
    with pytest.raises(ValueError) as error:
        asyncio.run(asyncio.wait_for(load_source().main(asyncio.Queue(), args), 10))  # never listens for ever
    assert message in str(error.value) and "s3cret-value" not in str(error.value)


def test_with_a_certificate_the_source_serves_https_only(emulator):
    """certfile and keyfile (the emulator's data plane certificate for 127.0.0.1, from its CA); the secret given by
    its former name, secret (an alias of hmac_secret, for existing rulebooks)."""
    secret = "a webhook secret"
    body = delivery()
    source = RunningSource(secret=secret, certfile=os.path.join(emulator.cert_dir, "server.crt"),
                           keyfile=os.path.join(emulator.cert_dir, "server.key"))
    try:
        assert source.post(body, {SIGNATURE: sign(secret, body)}) != 200  # plain HTTP to the TLS port
        assert source.waiting() == 0
        assert source.post(body, {SIGNATURE: sign("another secret", body)}, ca_file=emulator.ca_file) == 401
        assert source.post(body, {SIGNATURE: sign(secret, body)}, ca_file=emulator.ca_file) == 200
        assert source.get(5)["payload"]["event"] == "branch.ready" and source.waiting() == 0
    finally:
        source.stop()


def rulebook_bin():
    """ansible-rulebook of build/rulebook; the test is skipped, saying so, without it or without Java."""
    rulebook = os.path.join(RULEBOOK_BIN, "ansible-rulebook")
    if not os.path.exists(rulebook):
        pytest.skip("ansible-rulebook is not installed in build/rulebook: `make setup-rulebook` installs it (it also "
                    "needs a Java runtime, Debian's default-jre-headless)")
    if not shutil.which("java"):
        pytest.skip("ansible-rulebook needs a Java runtime (Debian's default-jre-headless), and there is no java")
    return rulebook


def collections_env(tmp_path, emulator=None):
    """The environment of ansible-rulebook: this tree as the only installed planetscale.cloud, build/rulebook first on
    PATH, and the emulator's PLANETSCALE_* credentials when given."""
    collections = tmp_path / "collections" / "ansible_collections" / "planetscale"
    collections.mkdir(parents=True)
    os.symlink(ROOT, str(collections / "cloud"))
    env = dict((k, v) for k, v in os.environ.items() if not k.startswith(("ANSIBLE_", "PLANETSCALE_")))
    env.update(PATH=os.pathsep.join((RULEBOOK_BIN, env.get("PATH", ""))),
               ANSIBLE_COLLECTIONS_PATH=str(tmp_path / "collections"), ANSIBLE_HOME=str(tmp_path / "ansible-home"),
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_PYTHON_INTERPRETER=os.path.join(RULEBOOK_BIN, "python"))
    if emulator is not None:
        env.update(credentials_env(emulator))
    return env


def guide_blocks(language):
    """The text of each ``.. code-block:: <language>`` of the Automation Platform guide (options left out),
    dedented."""
    with open(GUIDE, encoding="utf-8") as handle:
        text = handle.read()
    pattern = re.compile(r"^(?P<indent>[ \t]*)\.\. code-block:: *%s *\n(?:(?P=indent)[ \t]+:.*\n)*\n"
                         r"(?P<body>(?:(?P=indent)[ \t]+\S.*\n|[ \t]*\n)*)" % re.escape(language), re.M)
    return [textwrap.dedent(match.group("body")).strip("\n") + "\n" for match in pattern.finditer(text)]


def test_the_guides_rulebook_command_cuts_over_a_deploy_request_that_waits_for_it(emulator, tmp_path):
    """The guide's console block, run as printed by bash (its port, 5000, made a free one), with the webhook's secret
    in PLANETSCALE_WEBHOOK_SECRET and the service token in PLANETSCALE_*: ansible-rulebook runs the collection's
    rulebook planetscale.cloud.cutover with the source; the emulator's pending_cutover delivery makes it run the
    playbook planetscale.cloud.cutover, which cuts the deploy request over."""
    rulebook_bin()
    commands = [block for block in guide_blocks("console") if "$ ansible-rulebook " in block]
    assert len(commands) == 1, commands
    lines = [line[2:] for line in commands[0].splitlines() if line.startswith("$ ")]
    assert lines[-1].startswith("ansible-rulebook ") and "--inventory" in shlex.split(lines[-1])
    port = free_port()
    script = "\n".join(["set -e"] + [line.replace("5000", str(port)) for line in lines[:-1]] + ["exec " + lines[-1]])
    assert str(port) in script  # the guide's port was there to replace
    emulator.reset()
    # the rulebook answers from the loop that also starts the playbook: on a loaded machine that can take longer
    # than the platform's 2 s, which is not what this test is about
    emulator.settings(deploy_check_delay=0.2, deploy_step_delay=0.2, webhook_timeout=30)
    hook = add_webhook(emulator, "http://127.0.0.1:%d/planetscale" % port, ["deploy_request.pending_cutover"])
    env = collections_env(tmp_path, emulator)
    env["PLANETSCALE_WEBHOOK_SECRET"] = hook["secret"]
    log = open(str(tmp_path / "rulebook.log"), "w+", encoding="utf-8")  # pylint: disable=consider-using-with
    process = subprocess.Popen(["bash", "-c", script + " --verbose"], cwd=str(tmp_path), env=env, stdout=log,
                               stderr=subprocess.STDOUT, start_new_session=True)
    try:
        assert listening(port, time.monotonic() + 120, process), open(log.name, encoding="utf-8").read()[-3000:]
        assert oct(os.stat(str(tmp_path / "vars.yml")).st_mode & 0o777) == "0o600"  # the secret's file
        number = pending_cutover(emulator, "gated-eda")
        path = DATABASE_PATH + "/deploy-requests/%d" % number
        deadline = time.monotonic() + 180
        state = None
        while time.monotonic() < deadline and process.poll() is None:
            state = emulator.api("GET", path)["deployment_state"]
            if state in ("complete", "complete_pending_revert"):
                break
            time.sleep(1)
        output = open(log.name, encoding="utf-8").read()
        assert state in ("complete", "complete_pending_revert"), (state, output[-5000:])
    finally:
        os.killpg(process.pid, signal.SIGTERM)  # bash exec'd ansible-rulebook: its group is this test's
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.close()
    deliveries = [(d["event"], d["status"], d["result"]) for d in emulator.webhook_deliveries()]
    assert ("deploy_request.pending_cutover", 200, "200 OK") in deliveries, deliveries
    assert hook["secret"] not in output
    applied = [r for r in emulator.requests() if r["method"] == "POST" and r["path"].endswith("/apply-deploy")]
    assert len(applied) == 1, output[-3000:]


CHECK_RULEBOOKS = textwrap.dedent("""\
    import json, sys, yaml
    from ansible_rulebook import rules_parser
    from ansible_rulebook.collection import EVENT_SOURCE_OBJ_TYPE, apply_plugin_routing
    from ansible_rulebook.validators import Validate
    found = {}
    for path in sys.argv[1:]:
        with open(path) as handle:
            data = yaml.safe_load(handle)
        Validate.rulebook(data)  # ansible-rulebook's schema, which it checks a rulebook file against
        rulesets = rules_parser.parse_rule_sets(data)
        found[path] = [dict(sources=[source.source_name for source in ruleset.sources],
                            actions=[action.action for rule in ruleset.rules for action in rule.actions])
                       for ruleset in rulesets]
    found["planetscale.cloud.webhook"] = apply_plugin_routing("planetscale.cloud.webhook", EVENT_SOURCE_OBJ_TYPE, {},
                                                              Exception)
    print(json.dumps(found))
    """)


def test_the_shipped_rulebooks_load_in_ansible_rulebook_and_the_former_source_name_is_redirected(tmp_path):
    """Both rulebooks pass ansible-rulebook's schema and parse (the EDA controller's run_job_template beside
    ansible-rulebook's run_playbook), and the source's former name resolves to the new one through
    extensions/eda/eda_runtime.yml. The guide shows the job template rulebook as it ships."""
    rulebook_bin()
    paths = [os.path.join(RULEBOOKS, name) for name in ("cutover.yml", "cutover_job_template.yml")]
    assert sorted(os.listdir(RULEBOOKS)) == sorted(os.path.basename(path) for path in paths)
    done = subprocess.run([os.path.join(RULEBOOK_BIN, "python"), "-c", CHECK_RULEBOOKS] + paths,
                          env=collections_env(tmp_path), cwd=str(tmp_path), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.splitlines()[-1])
    assert found.pop("planetscale.cloud.webhook") == "planetscale.cloud.webhook_deliveries"
    assert "planetscale.cloud.webhook has been deprecated" in done.stderr
    assert found == {
        paths[0]: [dict(sources=["planetscale.cloud.webhook_deliveries"], actions=["run_playbook"])],
        paths[1]: [dict(sources=["planetscale.cloud.webhook_deliveries"], actions=["run_job_template"])]}
    with open(paths[1], encoding="utf-8") as handle:
        shipped = yaml.safe_load(handle)
    assert [block for block in guide_blocks("yaml+jinja") if "run_job_template" in block
            and yaml.safe_load(block) == shipped], "the guide does not show cutover_job_template.yml as it ships"


def source_documentation():
    """DOCUMENTATION and EXAMPLES of the source, parsed (its DOCUMENTATION must be YAML)."""
    with open(SOURCE, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    strings = dict((node.targets[0].id, node.value.value) for node in tree.body
                   if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) in ("DOCUMENTATION",
                                                                                                "EXAMPLES"))
    return yaml.safe_load(strings["DOCUMENTATION"]), strings["EXAMPLES"]


MARKUP = re.compile(r"\b([OCVM])\(([^()]*)\)")


def rst_text(text, indent):
    """Ansible's semantic markup as reStructuredText (O(), C(), V(): literals; M(): the module's page), filled."""
    def convert(match):
        kind, value = match.groups()
        return ":ansplugin:`%s#module`" % value if kind == "M" else "``%s``" % value
    return textwrap.fill(MARKUP.sub(convert, " ".join(text.split())), width=110, subsequent_indent=indent,
                         break_long_words=False, break_on_hyphens=False)


def reference(documentation, examples):
    """The part of the source's page generated from its documentation: synopsis, options table, example."""
    lines = ["Synopsis", "--------", ""]
    for paragraph in documentation["description"]:
        lines += ["- " + rst_text(paragraph, "  "), ""]
    lines += ["Options", "-------", "", ".. list-table::", "  :header-rows: 1", "  :widths: 20 10 15 55", "",
              "  * - Option", "    - Type", "    - Default", "    - Description"]
    for name, option in documentation["options"].items():
        paragraphs = option["description"]
        paragraphs = [paragraphs] if isinstance(paragraphs, str) else list(paragraphs)
        if option.get("aliases"):
            paragraphs.append("Aliases: %s." % ", ".join("C(%s)" % alias for alias in option["aliases"]))
        default = "required" if option.get("required") else (
            "``%s``" % option["default"] if "default" in option else "")
        lines += ["  * - ``%s``" % name, "    - %s" % option["type"], "    - %s" % default,
                  "    - " + rst_text(paragraphs[0], "      ")]
        for paragraph in paragraphs[1:]:
            lines += ["", "      " + rst_text(paragraph, "      ")]
    # a rulebook: text, not yaml, which the examples test would take for a playbook to run (test_examples.py)
    lines += ["", "Example", "-------", "", ".. code-block:: text", ""]
    lines += [("    " + line) if line else "" for line in examples.strip("\n").splitlines()]
    return "\n".join(lines) + "\n"


def test_the_sources_page_on_the_docs_site_is_its_documentation():
    """ansible-doc shows no event source: the docs site's page of the source carries its DOCUMENTATION (synopsis,
    every option with its type, default and description, the example); any difference fails, with the text to
    paste."""
    documentation, examples = source_documentation()
    with open(PAGE, encoding="utf-8") as handle:
        page = handle.read()
    begin, end = ".. BEGIN generated from the source's DOCUMENTATION\n\n", "\n.. END generated\n"
    assert begin in page and end in page
    shown = page[page.index(begin) + len(begin):page.index(end)]
    assert shown == reference(documentation, examples), "docs/docsite/rst/%s: put this between the markers:\n%s" % (
        os.path.basename(PAGE), reference(documentation, examples))
    with open(os.path.join(ROOT, "docs", "docsite", "extra-docs.yml"), encoding="utf-8") as handle:
        extra_docs = yaml.safe_load(handle)
    assert "event_source_webhook_deliveries" in [entry for section in extra_docs["sections"]
                                                 for entry in section["toctree"]]


def refusal_lines(records):
    return [record.getMessage() for record in records if "refused a request from" in record.getMessage()]


def test_every_refused_request_is_logged_in_one_line_without_its_signature_or_body(caplog):
    """Each refusal (the handler's, a stalled request's 408, aiohttp's 400 for a head that is not HTTP) is one
    warning line with its status, why and the client's address; no line holds the signature, the body or a
    traceback."""
    caplog.set_level(logging.WARNING)
    secret = "a webhook secret"
    source = RunningSource(hmac_secret=secret, request_timeout=1, max_body_size=4096)
    body = delivery(resource=dict(name="classified-branch-name"))
    wrong = sign("not the secret", body)
    big = json.dumps(dict(event="branch.ready", padding="x" * 5000)).encode()
    try:
        answers = [
            source.post(body),
            source.post(body, {SIGNATURE: wrong}),
            source.post(big, {SIGNATURE: sign(secret, big)}),
            source.post(b"[1, 2]", {SIGNATURE: sign(secret, b"[1, 2]")}),
            source.post(b"", method="GET"),
            source.post(body, {SIGNATURE: sign(secret, body)}),
            source.post(body, {SIGNATURE: sign(secret, body)}),
        ]
        assert answers == [401, 401, 413, 400, 405, 200, 409]
        assert source.get(5)["payload"]["resource"]["name"] == "classified-branch-name"
        raw = dict(stalled=answer_of(stalled(source.port, PARTIAL_HEAD)),
                   too_long=answer_of(stalled(source.port, b"POST /planetscale HTTP/1.1\r\nX-Long: %s\r\n\r\n"
                                              % (b"y" * 9000))),
                   not_http=answer_of(stalled(source.port, b"\x16\x03\x01\x02\x00 not http\r\n\r\n")))
        assert [(answer or b"- none").split(b" ")[1] for answer in raw.values()] == [b"408", b"400", b"400"], raw
    finally:
        source.stop()
    lines = refusal_lines(caplog.records)
    statuses = [int(re.search(r"from 127\.0\.0\.1: (\d{3}), ", line).group(1)) for line in lines]
    assert statuses == [401, 401, 413, 400, 405, 409, 408, 400, 400], lines
    assert "missing or invalid X-PlanetScale-Signature" in lines[0] and "already received" in lines[5]
    assert "not a valid HTTP request" in lines[-1] and "not a valid HTTP request" in lines[-2]
    for record in caplog.records:
        text = record.getMessage()
        assert record.exc_info is None and "Traceback" not in text, text
        for forbidden in (secret, wrong, sign(secret, body), "classified-branch-name", "yyyy", "not http"):
            assert forbidden not in text, text


def test_refusals_beyond_twenty_a_minute_are_counted_in_one_line(caplog):
    caplog.set_level(logging.WARNING)
    now = [1000.0]
    refusals = load_source().Refusals(clock=lambda: now[0])
    for unused in range(25):
        refusals(401, "missing or invalid X-PlanetScale-Signature", ("198.51.100.7", 40000))
    assert len(refusal_lines(caplog.records)) == 20 and len(caplog.records) == 20
    now[0] += 61
    refusals(400, "the body is not a JSON object", None)
    messages = [record.getMessage() for record in caplog.records[20:]]
    assert len(messages) == 2 and "5 more requests were refused in the last 61 seconds and not logged" in messages[0]
    assert messages[1].endswith("refused a request from an unknown address: 400, the body is not a JSON object")
    refusals.flush(force=True)  # nothing left out: nothing more said
    assert len(caplog.records) == 22


def test_the_former_name_runs_the_same_source_and_warns_once(caplog):
    """extensions/eda/plugins/event_source/webhook.py, for ansible-rulebook before 1.3 (which does not read
    eda_runtime.yml): the same source, with its former option name, and one deprecation warning."""
    caplog.set_level(logging.WARNING)
    secret = "a webhook secret"
    source = RunningSource(path=FORMER, secret=secret)
    try:
        body = delivery()
        assert source.post(body, {SIGNATURE: sign(secret, body)}) == 200
        assert source.get(5)["payload"] == json.loads(body)
        assert source.post(body) == 401
    finally:
        source.stop()
    warnings = [record.getMessage() for record in caplog.records if "deprecated" in record.getMessage()]
    assert len(warnings) == 1 and "planetscale.cloud.webhook_deliveries" in warnings[0], warnings


def test_the_cutover_playbook_cuts_over_the_request_an_event_names_or_the_variables_name(ansible, emulator):
    """planetscale.cloud.cutover as a job template of Automation Platform runs it for a rulebook activation (the event
    in the extra variable ansible_eda), and by hand with its own variables."""
    emulator.settings(deploy_check_delay=0.2, deploy_step_delay=0.2)
    event = dict(payload=dict(event="deploy_request.pending_cutover", organization="acme", database="app",
                              resource=dict(number=pending_cutover(emulator, "gated-job"))),
                 meta=dict(endpoint="planetscale", headers={}))
    by_hand = pending_cutover(emulator, "gated-hand")
    for number in (event["payload"]["resource"]["number"], by_hand):
        deadline = time.monotonic() + 60
        while emulator.api("GET", DATABASE_PATH + "/deploy-requests/%d" % number)["deployment_state"] != \
                "pending_cutover" and time.monotonic() < deadline:
            emulator.advance(1)
            time.sleep(0.2)
    ansible.run("planetscale.cloud.cutover", extra_vars=dict(ansible_eda=dict(event=event, rule="cut over"))
                ).succeeded(changed=1)
    ansible.run("planetscale.cloud.cutover", extra_vars=dict(cutover_database="app", cutover_number=by_hand)
                ).succeeded(changed=1)
    for number in (event["payload"]["resource"]["number"], by_hand):
        assert emulator.api("GET", DATABASE_PATH + "/deploy-requests/%d" % number)["deployment_state"] in (
            "complete", "complete_pending_revert")
