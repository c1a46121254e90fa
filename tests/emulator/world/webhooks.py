"""Webhooks of a database and their deliveries. World methods, mixed into state.World before DeployRequests
so that deploy-request transitions (``_enter``, creation, closing) announce their events.

Deliveries are real HTTP POSTs made by a background thread pool, so no API answer waits for them: a JSON body
``{"timestamp", "event", "organization", "database", "resource"}`` with ``X-PlanetScale-Signature``, the hex
HMAC-SHA256 of the exact body bytes keyed by the webhook's secret; a 2-second timeout, redirects not followed.

Branch readiness is computed lazily (on read), so a ticker thread (started with the first webhook of the world)
looks every TICK seconds at the databases that have webhooks: it settles their deploy requests (their
transitions announce themselves, once each, at the moment they were due) and announces every branch that became
ready since (each branch once).
"""

import hashlib
import hmac
import http.client
import ipaddress
import json
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, ClassVar
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, StrictBool, StrictStr

from .models import Record
from .records import (
    ApiError,
    DatabaseRecord,
    OrgRecord,
    Paging,
    Window,
    invalid_params,
    locked,
    not_found,
    stamp,
    unprocessable,
    window,
)

EVENTS = (
    "branch.ready", "branch.anomaly", "branch.out_of_memory", "branch.primary_promoted",
    "branch.schema_recommendation", "branch.sleeping", "branch.start_maintenance", "cluster.storage",
    "database.access_request", "deploy_request.closed", "deploy_request.errored", "deploy_request.in_progress",
    "deploy_request.opened", "deploy_request.pending_cutover", "deploy_request.queued", "deploy_request.reverted",
    "deploy_request.schema_applied", "keyspace.storage", "webhook.test",
)
MAX_PER_DATABASE = 5
TEST_INTERVAL = timedelta(seconds=20)
TIMEOUT = 2.0
TICK = 0.2
SIGNATURE_HEADER = "X-PlanetScale-Signature"
ZERO_TIME = "0001-01-01T00:00:00.000Z"  # what the platform writes for a time that has not been (zero_times setting)
# deployment states whose entry is an event (schema_applied also when reaching complete without the window)
STATE_EVENTS = {
    "queued": "deploy_request.queued",
    "in_progress": "deploy_request.in_progress",
    "pending_cutover": "deploy_request.pending_cutover",
    "complete_pending_revert": "deploy_request.schema_applied",
    "complete_error": "deploy_request.errored",
    "complete_revert_error": "deploy_request.errored",
    "complete_revert": "deploy_request.reverted",
}


class Webhook(Record):
    record_type: ClassVar[str] = "Webhook"

    id: str
    url: str
    secret: str
    enabled: bool
    last_sent_result: str = ""
    last_sent_success: bool = False
    last_sent_at: str | None = None
    created_at: str
    updated_at: str
    events: list[str]

    def _lean(self, data: dict[str, Any], context: dict) -> dict[str, Any]:
        if context.get("zero_times") and data.get("last_sent_at") is None:
            data = {**data, "last_sent_at": ZERO_TIME}
        return data


class WebhookCreate(BaseModel):
    model_config = ConfigDict(extra="ignore")

    url: StrictStr
    enabled: StrictBool = True
    events: list[StrictStr] = []


class WebhookUpdate(BaseModel):
    model_config = ConfigDict(extra="ignore")

    url: StrictStr | None = None
    enabled: StrictBool | None = None
    events: list[StrictStr] | None = None


@dataclass
class WebhookRecord:
    model: Webhook
    last_test: datetime | None = None


@dataclass
class Delivery:
    """One POST to a webhook, as the control API's delivery log shows it."""

    webhook: str
    database: str
    event: str
    url: str
    body: bytes
    signature: str
    at: datetime
    status: int | None = None
    success: bool | None = None  # None while it is on its way
    result: str = ""

    def describe(self) -> dict:
        return {"webhook": self.webhook, "database": self.database, "event": self.event, "url": self.url,
                "at": stamp(self.at), "status": self.status, "success": self.success, "result": self.result}


@dataclass
class HookState:
    """The world's delivery machinery: announced branches, seen deploy requests, the log and the threads."""

    announced: set[str] = field(default_factory=set)  # ids of branches whose readiness was announced
    deliveries: list[Delivery] = field(default_factory=list)
    pool: ThreadPoolExecutor | None = None
    queues: dict[str, deque] = field(default_factory=dict)  # webhook id -> deliveries waiting, in order
    queue_lock: threading.Lock = field(default_factory=threading.Lock)
    ticker: threading.Thread | None = None
    closed: threading.Event = field(default_factory=threading.Event)


def signature(secret: str, body: bytes) -> str:
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def _public_https_problem(url: str) -> str | None:
    parts = urlsplit(url)
    if parts.scheme != "https":
        return "the URL must use https"
    host = (parts.hostname or "").lower()
    if host == "localhost" or host.endswith((".localhost", ".local", ".internal")):
        return f"{host} is not a public host"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None
    return None if address.is_global else f"{host} is not a public address"


def _post(delivery: Delivery, timeout: float = TIMEOUT) -> tuple[int | None, bool, str]:
    """POST the delivery (http.client: the header's case as the platform writes it, no redirect followed)."""
    parts = urlsplit(delivery.url)
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    connection = kind(parts.hostname, parts.port, timeout=timeout)
    try:
        connection.request("POST", path, body=delivery.body, headers={
            "Content-Type": "application/json", "User-Agent": "PlanetScale-Webhook (emulator)",
            SIGNATURE_HEADER: delivery.signature})
        response = connection.getresponse()
        response.read()
        return response.status, 200 <= response.status < 300, f"{response.status} {response.reason}".strip()
    except (OSError, http.client.HTTPException, ValueError) as exc:
        return None, False, f"error: {exc or type(exc).__name__}"
    finally:
        connection.close()


class Webhooks:
    """World methods of webhooks (self.lock, self.now(), self.find_database...)."""

    # ------------------------------------------------------------ machinery

    def _hooks(self) -> HookState:
        state = self.__dict__.get("_hook_state")
        if state is None:
            state = self.__dict__["_hook_state"] = HookState()
        return state

    def close(self) -> None:
        """Stop the ticker and the delivery threads (the world is being replaced)."""
        state = self._hooks()
        state.closed.set()
        if state.pool is not None:
            state.pool.shutdown(wait=False, cancel_futures=True)

    def _start(self) -> None:
        state = self._hooks()
        if state.pool is None:
            state.pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="webhook-delivery")
        if state.ticker is None:
            state.ticker = threading.Thread(target=_tick_loop, args=(weakref.ref(self), state.closed),
                                            name="webhook-ticker", daemon=True)
            state.ticker.start()

    def _emit(self, org_name: str, db: DatabaseRecord, event: str, resource: BaseModel, at: datetime,
              only: WebhookRecord | None = None) -> None:
        """Queue a delivery of ``event`` to each enabled webhook of the database subscribed to it (or to
        ``only``, whatever it subscribes to)."""
        targets = [only] if only is not None else [
            w for w in db.webhooks.values() if w.model.enabled and event in w.model.events]
        if not targets:
            return
        context = {"base": "", **self.settings.serialization()}
        payload = {"timestamp": int(at.timestamp()), "event": event, "organization": org_name,
                   "database": db.model.name, "resource": resource.model_dump(mode="json", context=context)}
        body = json.dumps(payload, separators=(",", ":")).encode()
        state = self._hooks()
        self._start()
        for hook in targets:
            delivery = Delivery(hook.model.id, db.model.name, event, hook.model.url, body,
                                signature(hook.model.secret, body), self.now())
            state.deliveries.append(delivery)
            with state.queue_lock:
                queue = state.queues.get(hook.model.id)
                if queue is not None:  # a worker is sending this webhook's earlier deliveries: it takes this one
                    queue.append(delivery)
                    continue
                state.queues[hook.model.id] = deque([delivery])
            try:
                state.pool.submit(self._drain, hook)
            except RuntimeError:  # the world was closed
                return

    def _drain(self, hook: WebhookRecord) -> None:
        """Send a webhook's deliveries one after the other, in the order of their events."""
        state = self._hooks()
        while not state.closed.is_set():
            with state.queue_lock:
                queue = state.queues[hook.model.id]
                if not queue:
                    del state.queues[hook.model.id]
                    return
                delivery = queue.popleft()
            status, success, result = _post(delivery, self.settings.webhook_timeout)
            with self.lock:
                delivery.status, delivery.success, delivery.result = status, success, result
                hook.model.last_sent_at = stamp(delivery.at)
                hook.model.last_sent_success = success
                hook.model.last_sent_result = result

    def _org_of(self, db: DatabaseRecord) -> str:
        for org in self.orgs.values():
            if any(d is db for d in org.databases.values()):
                return org.ref.name
        return ""

    @locked
    def tick(self) -> None:
        """Announce what happened on the clock in the databases that have webhooks."""
        now = self.now()
        announced = self._hooks().announced
        for org in self.orgs.values():
            for db in org.databases.values():
                if not db.webhooks:
                    continue
                self.settle_deploys(db)  # transitions announce themselves (_enter)
                for branch in db.branches.values():
                    if branch.model.id not in announced and now >= branch.ready_at:
                        announced.add(branch.model.id)
                        self._emit(org.ref.name, db, "branch.ready", branch.settle(now), branch.ready_at)

    # ------------------------------------------------------------ deploy-request hooks (override DeployRequests)

    def _enter(self, db, record, state, at, who=None):
        was_open = record.model.state == "open"
        previous = record.state
        super()._enter(db, record, state, at, who)
        if not db.webhooks:
            return
        event = STATE_EVENTS.get(state)
        if state == "complete" and previous != "complete_pending_revert":
            event = "deploy_request.schema_applied"  # instant deploys, complete-deploy after an error
        if state == "error" and previous not in ("pending",):
            event = "deploy_request.errored"
        org = self._org_of(db)
        if event:
            self._emit(org, db, event, record.render(), at)
        if was_open and record.model.state == "closed":
            self._emit(org, db, "deploy_request.closed", record.render(), at)

    def branch_deleted(self, db, branch_id, who, when):
        was_open = [r for r in db.deploy_requests.values() if r.model.state == "open"]
        super().branch_deleted(db, branch_id, who, when)
        for record in was_open:
            if record.model.state == "closed" and db.webhooks:
                self._emit(self._org_of(db), db, "deploy_request.closed", record.render(), self.now())

    def create_deploy_request(self, org, database, body, who):
        with self.lock:
            rendered = super().create_deploy_request(org, database, body, who)
            db = org.databases[database]
            self._emit(org.ref.name, db, "deploy_request.opened", rendered, self.now())
            return rendered

    def close_deploy_request(self, org, database, number, body, who):
        with self.lock:
            db = self.find_database(org, database)
            record = db.deploy_requests.get(number)
            was_open = record is not None and record.model.state == "open"
            rendered = super().close_deploy_request(org, database, number, body, who)
            if was_open and rendered.state == "closed":
                self._emit(org.ref.name, db, "deploy_request.closed", rendered, self.now())
            return rendered

    # ------------------------------------------------------------ the API

    def _find_webhook(self, db: DatabaseRecord, webhook_id: str) -> WebhookRecord:
        hook = db.webhooks.get(webhook_id)
        if hook is None:
            raise not_found("Webhook")
        return hook

    def _check_webhook(self, db: DatabaseRecord, url: str | None, events: list[str] | None,
                       hook: WebhookRecord | None = None) -> None:
        if url is not None:
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise unprocessable(f"Url {url!r} is not a valid http or https URL")
            if self.settings.webhook_public_https_only:
                problem = _public_https_problem(url)
                if problem:
                    raise unprocessable(f"Url must be a public HTTPS URL: {problem}")
            if any(w is not hook and w.model.url == url for w in db.webhooks.values()):
                raise unprocessable(f"Url has already been taken: a webhook of this database sends to {url}")
        if events is not None:
            unknown = sorted({e for e in events if e not in EVENTS})
            if unknown:
                raise invalid_params(f"events: unknown event {', '.join(unknown)}: valid events are "
                                     f"{', '.join(EVENTS)}")

    @locked
    def webhooks(self, org: OrgRecord, database: str, paging: Paging) -> Window[Webhook]:
        page = window(list(self.find_database(org, database).webhooks.values()), paging)
        return Window([w.model for w in page.items], page.total)

    @locked
    def webhook(self, org: OrgRecord, database: str, webhook_id: str) -> Webhook:
        return self._find_webhook(self.find_database(org, database), webhook_id).model

    @locked
    def add_webhook(self, org: OrgRecord, db: DatabaseRecord, url: str, events: list[str], enabled: bool = True,
                    ) -> WebhookRecord:
        if not db.webhooks:  # what was ready before the first webhook is not news
            now = self.now()
            self._hooks().announced.update(b.model.id for b in db.branches.values() if now >= b.ready_at)
        when = stamp(self.now())
        model = Webhook(id=self.new_id(), url=url, secret=self.new_secret("", 40), enabled=enabled,
                        created_at=when, updated_at=when, events=list(dict.fromkeys(events)))
        db.webhooks[model.id] = WebhookRecord(model)
        self._start()
        return db.webhooks[model.id]

    @locked
    def create_webhook(self, org: OrgRecord, database: str, body: WebhookCreate) -> Webhook:
        db = self.find_database(org, database)
        if len(db.webhooks) >= MAX_PER_DATABASE:
            raise unprocessable(f"A database can have at most {MAX_PER_DATABASE} webhooks: {database!r} has "
                                f"{len(db.webhooks)}")
        self._check_webhook(db, body.url, body.events)
        return self.add_webhook(org, db, body.url, body.events, body.enabled).model

    @locked
    def update_webhook(self, org: OrgRecord, database: str, webhook_id: str, body: WebhookUpdate) -> Webhook:
        db = self.find_database(org, database)
        hook = self._find_webhook(db, webhook_id)
        self._check_webhook(db, body.url, body.events, hook)
        model = hook.model
        for key, value in body.model_dump(exclude_none=True).items():
            setattr(model, key, list(dict.fromkeys(value)) if key == "events" else value)
        model.updated_at = stamp(self.now())
        return model

    @locked
    def delete_webhook(self, org: OrgRecord, database: str, webhook_id: str) -> None:
        db = self.find_database(org, database)
        self._find_webhook(db, webhook_id)
        del db.webhooks[webhook_id]

    @locked
    def test_webhook(self, org: OrgRecord, database: str, webhook_id: str) -> None:
        """Send the webhook.test event to this webhook; at most one test every 20 seconds (429 otherwise)."""
        db = self.find_database(org, database)
        hook = self._find_webhook(db, webhook_id)
        now = self.now()
        if hook.last_test is not None and now < hook.last_test + TEST_INTERVAL:
            wait = (hook.last_test + TEST_INTERVAL - now).total_seconds()
            raise TestTooSoon(wait)
        hook.last_test = now
        resource = hook.model.model_copy(update={"secret": ""})
        self._emit(org.ref.name, db, "webhook.test", _Public.model_validate(resource.model_dump()), now, only=hook)

    @locked
    def deliveries(self) -> list[dict]:
        return [d.describe() for d in self._hooks().deliveries]


class _Public(BaseModel):
    """A webhook as a test delivery describes it: without its secret."""

    id: str
    url: str
    enabled: bool
    events: list[str]
    created_at: str
    updated_at: str


class TestTooSoon(ApiError):
    def __init__(self, wait: float):
        super().__init__(429, "rate_limited", f"A webhook can be tested once every {int(TEST_INTERVAL.seconds)} "
                                              f"seconds: try again in {max(1, round(wait))} seconds")
        self.retry_after = max(1, round(wait + 0.5))


def _tick_loop(ref, closed: threading.Event) -> None:
    while not closed.wait(TICK):
        world = ref()
        if world is None:
            return
        try:
            world.tick()
        except Exception:  # noqa: BLE001 (a tick must never kill the thread; the next one tries again)
            pass
        del world
