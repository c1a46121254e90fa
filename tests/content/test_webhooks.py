# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""webhook against the emulator's real deliveries: a receiver on loopback gets the test delivery and the events of
a branch and a deploy request that the collection's modules made, each signed with the webhook's secret.

The playbook declares the webhook (and again: idempotent by URL, no write), reads its secret into a file as a user
would hand it to the receiver (no_log), sends a test, creates a branch and opens a deploy request. The receiver then
checks each delivery's X-PlanetScale-Signature: the hex HMAC-SHA256 of the body keyed by that secret.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

ORG, DATABASE = "acme", "app"
DATABASE_PATH = "/organizations/%s/databases/%s" % (ORG, DATABASE)
ORDERS = "CREATE TABLE orders (id bigint NOT NULL, PRIMARY KEY (id))"
EVENTS = ["webhook.test", "deploy_request.opened", "branch.ready"]
SIGNATURE = "x-planetscale-signature"  # X-PlanetScale-Signature, as the receiver keeps header names


class Receiver:
    """An HTTP server on loopback that answers 200 to every POST and keeps (headers, body) of each."""

    def __init__(self):
        self.deliveries = []
        received = self.deliveries

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep the test output quiet
                pass

            def do_POST(self):  # noqa: N802 (the name http.server calls)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                received.append(dict(path=self.path, body=body,  # header names are case-insensitive
                                     headers=dict((name.lower(), value) for name, value in self.headers.items())))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d/planetscale" % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs=dict(poll_interval=0.05), daemon=True)
        self.thread.start()

    def events(self):
        return [json.loads(delivery["body"])["event"] for delivery in self.deliveries]

    def wait_for(self, events, timeout=20):
        deadline = time.monotonic() + timeout
        while not set(events) <= set(self.events()) and time.monotonic() < deadline:
            time.sleep(0.1)
        return self.events()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def receiver():
    running = Receiver()
    yield running
    running.close()


def declare(url, **more):
    return {"planetscale.cloud.webhook": dict(dict(organization=ORG, database=DATABASE, url=url,
                                                   events=["deploy_request.opened", "branch.ready"]), **more)}


def test_a_receiver_gets_the_test_and_the_events_with_a_valid_signature(ansible, emulator, receiver, tmp_path):
    emulator.settings(deploy_check_delay=0.2, deploy_step_delay=0.2)
    emulator.api("POST", DATABASE_PATH + "/branches", dict(name="pr-hook", parent_branch="main"))
    emulator.advance(5)  # pr-hook is ready before the webhook exists: not news to it
    emulator.ddl(DATABASE, "pr-hook", [ORDERS])
    secret_file = tmp_path / "webhook-secret"
    play = dict(name="webhook", hosts="localhost", gather_facts=False, tasks=[
        dict(declare(receiver.url), name="Declare the webhook", register="declared"),
        dict(name="Read its secret for the receiver", register="with_secret", no_log=True,
             **declare(receiver.url, return_secret=True)),
        {"name": "Hand the secret to the receiver", "no_log": True, "ansible.builtin.copy": dict(
            content="{{ with_secret.webhook.secret }}", dest=str(secret_file), mode="0600")},
        dict(declare(receiver.url, send_test=True), name="Send a test delivery", register="tested"),
        {"name": "Create branch pr-new", "planetscale.cloud.branch": dict(
            organization=ORG, database=DATABASE, name="pr-new", parent_branch="main")},
        {"name": "Open a deploy request from pr-hook", "register": "opened", "planetscale.cloud.deploy_request": dict(
            organization=ORG, database=DATABASE, branch="pr-hook", into_branch="main", wait=False)},
    ])
    run = ansible.run([play], label="webhook with a receiver").without_failures()
    secret = secret_file.read_text()
    ansible.watch.learn(secret)  # the watch searches every run's output for it: no run may show it
    hooks = emulator.list(DATABASE_PATH + "/webhooks")
    assert [(hook["url"], hook["secret"]) for hook in hooks] == [(receiver.url, secret)]
    declared = run.result("Declare the webhook").result
    assert declared["changed"] and declared["webhook"]["id"] == hooks[0]["id"] and "secret" not in declared["webhook"]
    assert run.result("Send a test delivery").changed

    # The same task again: idempotent by URL, no write.
    emulator.clear_requests()
    again = ansible.run([dict(play, tasks=[dict(declare(receiver.url), name="Declare the webhook again")])],
                        label="webhook again").without_failures()
    assert not again.result("Declare the webhook again").changed and emulator.writes() == []

    seen = receiver.wait_for(EVENTS)
    assert sorted(set(seen)) == sorted(EVENTS), seen
    for delivery in receiver.deliveries:
        expected = hmac.new(secret.encode(), delivery["body"], hashlib.sha256).hexdigest()
        assert hmac.compare_digest(delivery["headers"][SIGNATURE], expected), delivery["headers"]
        assert delivery["path"] == "/planetscale"
    payloads = dict((json.loads(d["body"])["event"], json.loads(d["body"])) for d in receiver.deliveries)
    assert payloads["webhook.test"]["resource"]["id"] == hooks[0]["id"]
    assert not payloads["webhook.test"]["resource"].get("secret")
    number = run.result("Open a deploy request from pr-hook").result["deploy_request"]["number"]
    assert payloads["deploy_request.opened"]["resource"]["number"] == number
    assert payloads["deploy_request.opened"]["database"] == DATABASE
    assert payloads["branch.ready"]["resource"]["name"] == "pr-new"
    # A body changed in transit would not carry a valid signature.
    tampered = receiver.deliveries[0]["body"] + b" "
    assert receiver.deliveries[0]["headers"][SIGNATURE] != hmac.new(secret.encode(), tampered,
                                                                    hashlib.sha256).hexdigest()
