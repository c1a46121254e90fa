"""Webhooks: the records (secret in every read, at most 5 a database, events, URLs, the public-HTTPS setting),
and real deliveries to a receiver on loopback (the test event, branch readiness, deploy-request states), each
signed with the webhook's secret, once per transition. Every answer is validated against the published OpenAPI
after the test (conftest.openapi_check)."""

import hashlib
import hmac
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from .conftest import DB

HOOKS = f"{DB}/webhooks"
ADD_TABLE = "CREATE TABLE `posts` (`id` bigint NOT NULL AUTO_INCREMENT, `title` varchar(255), PRIMARY KEY (`id`))"
DEPLOY_EVENTS = ["deploy_request.opened", "deploy_request.queued", "deploy_request.in_progress",
                 "deploy_request.pending_cutover", "deploy_request.schema_applied", "deploy_request.errored",
                 "deploy_request.reverted", "deploy_request.closed"]


class Receiver:
    """An HTTP server on loopback that keeps every POST (headers, raw body) and answers ``status``."""

    def __init__(self, status=200):
        self.status = status
        self.received: list[tuple[dict, bytes]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                receiver.received.append((dict(self.headers), body))
                self.send_response(receiver.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def events(self):
        return [json.loads(body)["event"] for _, body in self.received]

    def wait_for(self, count, timeout=10.0):
        deadline = time.monotonic() + timeout
        while len(self.received) < count:
            assert time.monotonic() < deadline, f"{len(self.received)} deliveries, {count} expected: {self.events()}"
            time.sleep(0.05)
        return self.received

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    running = Receiver()
    yield running
    running.close()


def error_of(response, status, code="unprocessable"):
    assert response.status_code == status, response.text
    body = response.json()
    assert body["code"] == code and body["message"], body
    return body["message"]


def create(api, url, status=201, database="app", **body):
    response = api.post(f"/v1/organizations/acme/databases/{database}/webhooks", json={"url": url, **body})
    assert response.status_code == status, response.text
    return response.json()


def settle(api, seconds=1.0):
    """Move the clock, then give the ticker (every 0.2 s) time to see what happened."""
    api.advance(seconds)
    time.sleep(0.5)


def verify(secret, headers, body):
    expected = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(headers["X-PlanetScale-Signature"], expected)  # the platform's spelling


# ---------------------------------------------------------------- records


def test_create_read_update_delete(api):
    hook = create(api, "https://hooks.example.com/a", events=["deploy_request.opened"])
    assert len(hook["secret"]) >= 32 and hook["enabled"] is True and hook["last_sent_at"] is None
    assert hook["last_sent_success"] is False and hook["last_sent_result"] == ""
    read = api.get(f"{HOOKS}/{hook['id']}").json()
    assert read == hook  # the secret in every read
    assert api.get(HOOKS).json()["data"] == [hook]
    changed = api.patch(f"{HOOKS}/{hook['id']}", json={"url": "https://hooks.example.com/b", "enabled": False,
                                                       "events": ["branch.ready", "branch.ready"]})
    assert changed.status_code == 200, changed.text
    body = changed.json()
    assert (body["url"], body["enabled"], body["events"], body["secret"]) == (
        "https://hooks.example.com/b", False, ["branch.ready"], hook["secret"])
    assert api.patch(f"{HOOKS}/{hook['id']}", json={}).json()["url"] == "https://hooks.example.com/b"
    assert api.delete(f"{HOOKS}/{hook['id']}").status_code == 204
    error_of(api.get(f"{HOOKS}/{hook['id']}"), 404, "not_found")
    error_of(api.delete(f"{HOOKS}/{hook['id']}"), 404, "not_found")
    error_of(api.get("/v1/organizations/acme/databases/nope/webhooks"), 404, "not_found")


def test_zero_times_setting_gives_a_webhook_that_has_sent_nothing_the_zero_time(api):
    """The platform writes the zero time for a webhook's last_sent_at until it sends (recorded answers)."""
    assert api.control("POST", "/settings", json={"zero_times": True}).status_code == 200
    hook = create(api, "https://hooks.example.com/zero")
    assert hook["last_sent_at"] == "0001-01-01T00:00:00.000Z"
    assert api.get(f"{HOOKS}/{hook['id']}").json()["last_sent_at"] == "0001-01-01T00:00:00.000Z"
    assert api.get(HOOKS).json()["data"][0]["last_sent_at"] == "0001-01-01T00:00:00.000Z"
    assert api.control("POST", "/settings", json={"lean": False}).status_code == 200
    assert api.get(f"{HOOKS}/{hook['id']}").json()["last_sent_at"] is None
    assert api.control("POST", "/settings", json={"lean": True}).json()["zero_times"] is True


def test_at_most_five_a_database(api):
    for n in range(5):
        create(api, f"https://hooks.example.com/{n}")
    assert "at most 5" in error_of(api.post(HOOKS, json={"url": "https://hooks.example.com/6"}), 422)
    assert api.get(HOOKS).json()["total_count"] == 5


def test_bad_events_and_urls_are_refused(api):
    hook = create(api, "https://hooks.example.com/a")
    assert "deploy_request.exploded" in error_of(
        api.post(HOOKS, json={"url": "https://hooks.example.com/b", "events": ["deploy_request.exploded"]}),
        422, "invalid_params")
    error_of(api.patch(f"{HOOKS}/{hook['id']}", json={"events": ["nope"]}), 422, "invalid_params")
    assert "already been taken" in error_of(api.post(HOOKS, json={"url": "https://hooks.example.com/a"}), 422)
    error_of(api.post(HOOKS, json={"url": "ftp://hooks.example.com/"}), 422)
    error_of(api.post(HOOKS, json={"url": "not a url"}), 422)
    error_of(api.post(HOOKS, json={}), 422, "invalid_params")
    assert api.get(HOOKS).json()["total_count"] == 1


def test_public_https_only_setting(api):
    create(api, "http://127.0.0.1:9/local")  # local URLs by default
    api.control("POST", "/settings", json={"webhook_public_https_only": True})
    for url in ("http://hooks.example.com/x", "https://127.0.0.1/x", "https://10.1.2.3/x", "https://localhost/x",
                "https://[::1]/x"):
        assert "public HTTPS" in error_of(api.post(HOOKS, json={"url": url}), 422), url
    create(api, "https://hooks.example.com/x")
    create(api, "https://93.184.215.14/x")


def test_seeded_webhooks_spread_over_databases(api):
    seeded = api.control("POST", "/seed", json={"databases": {"count": 10}, "webhooks": {"count": 30,
                                                                                         "per_database": 5}})
    assert seeded.status_code == 200, seeded.text
    assert len(seeded.json()["webhooks"]) == 30
    counts = {}
    for name in ["app"] + seeded.json()["databases"]:
        counts[name] = api.get(f"/v1/organizations/acme/databases/{name}/webhooks").json()["total_count"]
    assert max(counts.values()) == 5 and sum(counts.values()) == 30 and sum(c > 0 for c in counts.values()) == 6
    too_many = api.control("POST", "/seed", json={"webhooks": {"count": 100}})
    assert too_many.status_code == 422 and "seed more databases" in too_many.json()["message"]
    paged = api.get(HOOKS, params={"per_page": 2}).json()
    assert paged["next_page"] == 2 and len(paged["data"]) == 2


# ---------------------------------------------------------------- deliveries


def test_test_delivery_is_signed_and_limited_to_one_every_20_seconds(api, receiver):
    hook = create(api, receiver.url, events=["branch.ready"])
    assert api.post(f"{HOOKS}/{hook['id']}/test").status_code == 204
    ((headers, body),) = receiver.wait_for(1)
    verify(hook["secret"], headers, body)
    payload = json.loads(body)
    assert payload["event"] == "webhook.test" and payload["organization"] == "acme" and payload["database"] == "app"
    assert isinstance(payload["timestamp"], int) and payload["resource"]["id"] == hook["id"]
    assert hook["secret"] not in body.decode()
    too_soon = api.post(f"{HOOKS}/{hook['id']}/test")
    assert too_soon.status_code == 429 and int(too_soon.headers["Retry-After"]) >= 19
    assert too_soon.json()["code"] == "rate_limited"
    api.advance(20)
    assert api.post(f"{HOOKS}/{hook['id']}/test").status_code == 204
    receiver.wait_for(2)
    deadline = time.monotonic() + 5
    while not api.get(f"{HOOKS}/{hook['id']}").json()["last_sent_success"]:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    read = api.get(f"{HOOKS}/{hook['id']}").json()
    assert read["last_sent_at"] is not None and read["last_sent_result"].startswith("200")
    log = api.control("GET", "/webhook-deliveries").json()
    assert [(d["event"], d["status"], d["success"]) for d in log] == [("webhook.test", 200, True)] * 2


def test_a_failing_receiver_is_recorded(api, receiver):
    receiver.status = 500
    hook = create(api, receiver.url)
    assert api.post(f"{HOOKS}/{hook['id']}/test").status_code == 204
    receiver.wait_for(1)
    deadline = time.monotonic() + 5
    while api.get(f"{HOOKS}/{hook['id']}").json()["last_sent_at"] is None:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    read = api.get(f"{HOOKS}/{hook['id']}").json()
    assert read["last_sent_success"] is False and read["last_sent_result"].startswith("500")


def test_branch_ready_is_delivered_once_when_the_branch_becomes_ready(api, receiver):
    hook = create(api, receiver.url, events=["branch.ready"])
    quiet = create(api, receiver.url + "/disabled", events=["branch.ready"], enabled=False)
    assert api.post(f"{DB}/branches", json={"name": "feature", "parent_branch": "main"}).status_code == 201
    time.sleep(0.5)
    assert receiver.received == []  # pending, and main was ready before the webhook existed
    settle(api, 3)
    ((headers, body),) = receiver.wait_for(1)
    verify(hook["secret"], headers, body)
    payload = json.loads(body)
    assert (payload["event"], payload["resource"]["name"], payload["resource"]["ready"]) == (
        "branch.ready", "feature", True)
    settle(api, 3)
    api.get(f"{DB}/branches/feature")
    time.sleep(0.5)
    assert len(receiver.received) == 1
    assert api.get(f"{HOOKS}/{quiet['id']}").json()["last_sent_at"] is None


def test_deploy_request_states_are_delivered_in_order(api, receiver):
    hook = create(api, receiver.url, events=DEPLOY_EVENTS)
    assert api.post(f"{DB}/branches", json={"name": "dev", "parent_branch": "main"}).status_code == 201
    api.advance(3)
    ddl = api.control("POST", "/branches/acme/app/dev/ddl", json={"statements": [ADD_TABLE]})
    assert ddl.status_code == 200, ddl.text
    created = api.post(f"{DB}/deploy-requests", json={"branch": "dev", "into_branch": "main"})
    assert created.status_code == 201, created.text
    number = created.json()["number"]
    api.advance(1)
    deployed = api.post(f"{DB}/deploy-requests/{number}/deploy")
    assert deployed.status_code == 200, deployed.text
    settle(api, 5)  # queued -> in_progress -> complete_pending_revert, all due at once
    received = receiver.wait_for(5)
    assert receiver.events() == ["deploy_request.opened", "deploy_request.queued", "deploy_request.in_progress",
                                 "deploy_request.schema_applied", "deploy_request.closed"]
    for headers, body in received:
        verify(hook["secret"], headers, body)
        assert json.loads(body)["resource"]["number"] == number
    states = [json.loads(body)["resource"]["deployment_state"] for _, body in received]
    assert states == ["pending", "queued", "in_progress", "complete_pending_revert", "complete_pending_revert"]
    assert api.post(f"{DB}/deploy-requests/{number}/revert").status_code == 200
    settle(api, 2)
    receiver.wait_for(6)
    assert receiver.events()[-1] == "deploy_request.reverted"
    settle(api, 2)
    assert len(receiver.received) == 6  # each transition once


def test_closing_and_pending_cutover_and_errors(api, receiver):
    create(api, receiver.url, events=["deploy_request.closed", "deploy_request.pending_cutover",
                                      "deploy_request.errored"])
    for name in ("one", "two"):
        assert api.post(f"{DB}/branches", json={"name": name, "parent_branch": "main"}).status_code == 201
    api.advance(3)
    for name in ("one", "two"):
        table = ADD_TABLE.replace("posts", f"posts_{name}")
        assert api.control("POST", f"/branches/acme/app/{name}/ddl", json={"statements": [table]}).status_code == 200
    one = api.post(f"{DB}/deploy-requests", json={"branch": "one", "into_branch": "main"}).json()["number"]
    two = api.post(f"{DB}/deploy-requests", json={"branch": "two", "into_branch": "main",
                                                  "auto_cutover": False}).json()["number"]
    assert api.patch(f"{DB}/deploy-requests/{one}", json={"state": "closed"}).status_code == 200
    receiver.wait_for(1)
    api.advance(1)
    assert api.post(f"{DB}/deploy-requests/{two}/deploy").status_code == 200
    settle(api, 3)
    receiver.wait_for(2)
    assert receiver.events() == ["deploy_request.closed", "deploy_request.pending_cutover"]
    api.control("POST", "/settings", json={"deploy_fail_state": "complete_error"})
    assert api.post(f"{DB}/branches", json={"name": "three", "parent_branch": "main"}).status_code == 201
    api.advance(3)
    table = ADD_TABLE.replace("posts", "posts_three")
    assert api.control("POST", "/branches/acme/app/three/ddl", json={"statements": [table]}).status_code == 200
    three = api.post(f"{DB}/deploy-requests", json={"branch": "three", "into_branch": "main"}).json()["number"]
    api.advance(1)
    assert api.post(f"{DB}/deploy-requests/{three}/deploy").status_code == 200
    settle(api, 3)
    receiver.wait_for(3)
    assert receiver.events()[2] == "deploy_request.errored"
    create(api, receiver.url + "/applied", events=["deploy_request.schema_applied"])
    assert api.post(f"{DB}/deploy-requests/{three}/complete-deploy").status_code == 200
    receiver.wait_for(5)  # going live closes the request: closed to the first webhook, applied to the second
    assert sorted(receiver.events()[3:]) == ["deploy_request.closed", "deploy_request.schema_applied"]
    assert api.post(f"{DB}/branches", json={"name": "four", "parent_branch": "main"}).status_code == 201
    api.advance(3)
    table = ADD_TABLE.replace("posts", "posts_four")
    assert api.control("POST", "/branches/acme/app/four/ddl", json={"statements": [table]}).status_code == 200
    assert api.post(f"{DB}/deploy-requests", json={"branch": "four", "into_branch": "main"}).status_code == 201
    assert api.delete(f"{DB}/branches/four").status_code == 204
    receiver.wait_for(6)
    assert receiver.events()[5] == "deploy_request.closed"
    settle(api, 2)
    assert len(receiver.received) == 6
