"""The organization's audit log and its settings (the ``operations`` group of the published OpenAPI).

The audit log records the writes the emulator serves: ``AuditRecorder`` (an ASGI layer just inside the traffic
layer, so a write whose answer a fault rule replaces after it committed is recorded too) matches each successful
``POST``/``PATCH``/``PUT``/``DELETE`` under ``/v1/organizations/{organization}`` against ``AUDITED`` and records one
event: who (the service token or the OAuth user of the Authorization header), what (``target_*``: the password,
role, service token, member, team, database or branch; ``auditable_*``: the organization or database it belongs to),
the action (``audit_action`` such as ``database_branch_password.created``, ``action`` ``created``/``updated``/
``deleted``/``renewed``) and when (the emulator clock). A secret is never recorded.

``GET .../audit-log`` answers them newest first, cursor-paged (``starting_after``/``ending_before``, ``limit``
1..100), only those of the actions ``filters[]=audit_action:<action>`` names when given (repeatable; what the
platform's Go client and ``pscale audit-log list --action`` send, though the published OpenAPI does not declare it). Organization settings: ``billing_email``, ``idp_managed_roles``, ``invoice_budget_amount`` (a string in
the answers, an integer in ``PATCH``), seeded ``billing@<organization>.test``, ``false``, ``"0"``.

Mixed into state.World: every public method runs under its lock.
"""

import json
import re
from dataclasses import dataclass, field
from datetime import timedelta
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt

from .models import CursorPage, Record
from .records import OrgRecord, Paging, Principal, Window, invalid_params, locked, not_found, stamp, unprocessable
from .records import window

ORG_PATH = re.compile(r"^/v1/organizations/(?P<org>[^/]+)(?P<rest>/.*)?$")
WRITES = ("POST", "PATCH", "PUT", "DELETE")
VERBS = {"POST": "created", "PATCH": "updated", "PUT": "updated", "DELETE": "deleted"}
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")

# (method or None for every write, path below the organization, target type, audit action's prefix, verb or None)
AUDITED = [
    (None, r"", "Organization", "organization", None),
    (None, r"/databases(?:/(?P<database>[^/]+))?", "Database", "database", None),
    (None, r"/databases/(?P<database>[^/]+)/branches(?:/(?P<branch>[^/]+))?", "DatabaseBranch", "branch", None),
    ("POST", r"/databases/(?P<database>[^/]+)/branches/(?P<branch>[^/]+)/passwords/(?P<password>[^/]+)/renew",
     "DatabaseBranchPassword", "database_branch_password", "renewed"),
    (None, r"/databases/(?P<database>[^/]+)/branches/(?P<branch>[^/]+)/passwords(?:/(?P<password>[^/]+))?",
     "DatabaseBranchPassword", "database_branch_password", None),
    ("POST", r"/databases/(?P<database>[^/]+)/branches/(?P<branch>[^/]+)/roles/(?P<role>[^/]+)/(?:renew|reset)",
     "DatabaseBranchRole", "database_branch_role", "renewed"),
    (None, r"/databases/(?P<database>[^/]+)/branches/(?P<branch>[^/]+)/roles(?:/(?P<role>[^/]+))?",
     "DatabaseBranchRole", "database_branch_role", None),
    (None, r"/service-tokens(?:/(?P<token>[^/]+))?", "ServiceToken", "service_token", None),
    (None, r"/service-tokens/(?P<token>[^/]+)/access", "ServiceToken", "service_token", "updated"),
    (None, r"/members/(?P<member>[^/]+)", "OrganizationMembership", "organization_membership", None),
    (None, r"/teams(?:/(?P<team>[^/]+))?", "Team", "team", None),
    (None, r"/teams/(?P<team>[^/]+)/members(?:/(?P<member>[^/]+))?", "TeamMembership", "team_membership", None),
]
PATTERNS = [(method, re.compile("^" + path + "/?$"), kind, prefix, verb)
            for method, path, kind, prefix, verb in AUDITED]


class AuditLogEntry(Record):
    record_type: ClassVar[str] = "AuditLog"

    id: str
    actor_id: str | None
    actor_type: str | None
    auditable_id: str | None
    auditable_type: str | None
    target_id: str | None
    target_type: str | None
    location: str | None = None
    target_display_name: str | None
    audit_action: str
    action: str
    actor_display_name: str
    auditable_display_name: str
    remote_ip: str | None
    created_at: str
    updated_at: str
    metadata: dict | None = None


class AuditEventsSeed(BaseModel):
    """Events added to an organization's log, all at one time, hours_ago back (the control API: paging tests)."""

    model_config = ConfigDict(extra="forbid")

    count: int = Field(ge=1, le=10000)
    audit_action: str = Field("team.updated", pattern=r"^[a-z_]+\.[a-z_]+$")
    hours_ago: float = Field(0, ge=0)


class OrganizationSettingsUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    billing_email: str | None = None
    idp_managed_roles: StrictBool | None = None
    invoice_budget_amount: StrictInt | None = Field(None, ge=0)


class Organization(Record):
    record_type: ClassVar[str] = "Organization"

    id: str
    name: str
    billing_email: str
    created_at: str
    updated_at: str
    plan: str = "scaler_pro"
    valid_billing_info: bool = True
    sso: bool = True
    sso_directory: bool = True
    single_tenancy: bool = False
    managed_tenancy: bool = False
    has_past_due_invoices: bool | None = False
    database_count: int
    sso_portal_url: str | None = None
    features: dict = Field(default_factory=dict)
    idp_managed_roles: bool
    invoice_budget_amount: str
    keyspace_shard_limit: int = 32
    has_card: bool = True
    payment_info_required: bool = False


@dataclass
class OrgSettings:
    billing_email: str
    idp_managed_roles: bool = False
    invoice_budget_amount: int = 0
    events: list[AuditLogEntry] = field(default_factory=list)  # oldest first


@dataclass
class Subject:
    """What a write is about: its id and display name, and the database it is in."""

    id: str | None
    name: str | None
    database: tuple[str, str] | None = None  # (id, name)


class AuditLog:
    # ------------------------------------------------------------ organization settings

    def org_settings(self, org: OrgRecord) -> OrgSettings:
        table = self.__dict__.setdefault("_org_settings", {})
        if org.ref.name not in table:
            table[org.ref.name] = OrgSettings(billing_email=f"billing@{org.ref.name}.test")
        return table[org.ref.name]

    def _render_org(self, org: OrgRecord) -> Organization:
        settings = self.org_settings(org)
        return Organization(id=org.ref.id, name=org.ref.name, billing_email=settings.billing_email,
                            created_at=org.ref.created_at, updated_at=org.ref.updated_at,
                            database_count=len(org.databases), idp_managed_roles=settings.idp_managed_roles,
                            invoice_budget_amount=str(settings.invoice_budget_amount))

    @locked
    def organizations(self, who: Principal, paging: Paging) -> Window[Organization]:
        mine = [self._render_org(org) for org in self.orgs.values() if who.user.id in org.members]
        return window(mine, paging)

    @locked
    def organization_record(self, org: OrgRecord) -> Organization:
        return self._render_org(org)

    @locked
    def update_organization(self, org: OrgRecord, body: OrganizationSettingsUpdate) -> Organization:
        settings = self.org_settings(org)
        if body.billing_email is not None and not EMAIL.match(body.billing_email):
            raise unprocessable(f"Billing email {body.billing_email!r} is not an email address")
        for name in ("billing_email", "idp_managed_roles", "invoice_budget_amount"):
            value = getattr(body, name)
            if value is not None:
                setattr(settings, name, value)
        org.ref.updated_at = stamp(self.now())
        return self._render_org(org)

    # ------------------------------------------------------------ the audit log

    def _audit_positions(self, org: OrgRecord, stored: list) -> dict:
        """{event id: its place in the stored log (oldest first)}, made again when the log has changed (events are
        only ever added: a seed adds and sorts them, a write adds one)."""
        table = self.__dict__.setdefault("_audit_places", {})
        key = (id(stored), len(stored), stored[0].id if stored else None, stored[-1].id if stored else None)
        found = table.get(org.ref.name)
        if found is None or found[0] != key:
            found = table[org.ref.name] = (key, dict((entry.id, n) for n, entry in enumerate(stored)))
        return found[1]

    @locked
    def audit_log(self, org: OrgRecord, limit: int, starting_after: str | None, ending_before: str | None,
                  filters: list[str] | None = None) -> CursorPage[AuditLogEntry]:
        """Newest first; starting_after / ending_before name an event id of the previous page. filters: the
        platform's ``filters[]`` (``audit_action:<action>``, repeatable): only events of one of those actions."""
        if starting_after is not None and ending_before is not None:
            raise invalid_params("Give starting_after or ending_before, not both")
        actions = set()
        for entry in filters or []:
            kind, _, value = entry.partition(":")
            if kind != "audit_action" or not value:
                raise invalid_params(f"filters[]: {entry!r} is not audit_action:<action>")
            actions.add(value)
        stored = self.org_settings(org).events  # oldest first; n counts from the newest
        count = len(stored)

        def event(n: int) -> AuditLogEntry:
            return stored[count - 1 - n]

        def keeps(n: int) -> bool:
            return not actions or event(n).audit_action in actions

        def position(cursor: str, name: str) -> int:
            found = self._audit_positions(org, stored).get(cursor)
            if found is None:
                raise invalid_params(f"{name}: no audit log event with id {cursor!r}")
            return count - 1 - found

        # the cursor is any event's id; the page holds the events the filters keep from there on. Each page reads
        # the events of its own (and the filters' gaps), never the whole log: a long log is read page by page at
        # the cost of its pages, as the platform's is
        if ending_before is not None:
            end = position(ending_before, "ending_before")
            before = []
            for n in range(end - 1, -1, -1):
                if keeps(n):
                    before.append(n)
                    if len(before) > limit:
                        break
            chosen = sorted(before[:limit])
            has_next, has_prev = any(keeps(n) for n in range(end, count)), len(before) > limit
        else:
            after = position(starting_after, "starting_after") if starting_after is not None else -1
            chosen, n = [], after + 1
            while n < count and len(chosen) < limit:
                if keeps(n):
                    chosen.append(n)
                n += 1
            has_next = any(keeps(m) for m in range(n, count))
            has_prev = any(keeps(m) for m in range(after, -1, -1))
        data = [event(n) for n in chosen]
        return CursorPage[AuditLogEntry](has_next=has_next, has_prev=has_prev,
                                         cursor_start=data[0].id if data else None,
                                         cursor_end=data[-1].id if data else None, data=data)

    @locked
    def seed_audit_events(self, org_name: str, body: AuditEventsSeed) -> int:
        org = self.orgs.get(org_name)
        if org is None:
            raise not_found("Organization")
        at = stamp(self.now() - timedelta(hours=body.hours_ago))
        admin = self.default_user
        kind, verb = body.audit_action.split(".")
        events = self.org_settings(org).events
        for n in range(body.count):
            events.append(AuditLogEntry(
                id=self.new_id(), actor_id=admin.id, actor_type="User", actor_display_name=admin.display_name,
                auditable_type="Organization", auditable_id=org.ref.id, auditable_display_name=org.ref.name,
                target_type=kind.title().replace("_", ""), target_id=None, target_display_name=f"seeded-{n + 1}",
                audit_action=body.audit_action, action=verb, remote_ip=None, created_at=at, updated_at=at,
                metadata={}))
        events.sort(key=lambda event: event.created_at)  # in the log's order of time (stable: ties keep theirs)
        return len(events)

    @locked
    def audit_subject(self, org_name: str, kind: str, names: dict) -> tuple[tuple | None, tuple | None]:
        """What a write's path names, as it is now: ((id, display name) or None, (database id, name) or None)."""
        org = self.orgs.get(org_name)
        if org is None:
            return None, None
        database = org.databases.get(names.get("database") or "")
        db_ref = (database.model.id, database.model.name) if database else None
        branch = database.branches.get(names.get("branch") or "") if database else None
        found = None
        if kind == "Organization":
            found = (org.ref.id, org.ref.name)
        elif kind == "Database":
            found = db_ref
        elif kind == "DatabaseBranch" and branch:
            found = (branch.model.id, branch.model.name)
        elif kind == "DatabaseBranchPassword" and branch and names.get("password") in branch.passwords:
            model = branch.passwords[names["password"]].model
            found = (model.id, model.name)
        elif kind == "DatabaseBranchRole" and branch and names.get("role") in branch.roles:
            model = branch.roles[names["role"]].model
            found = (model.id, getattr(model, "name", None) or model.username)
        elif kind == "ServiceToken" and names.get("token") in self.auth.service_tokens:
            token = self.auth.service_tokens[names["token"]]
            found = (token.id, token.name or token.id)
        elif kind == "OrganizationMembership" and names.get("member"):
            member = org.members.get(names["member"]) or next(
                (m for m in org.members.values() if m.id == names["member"]), None)
            found = (member.user.id, member.user.email) if member else None
        elif kind == "Team" and names.get("team") in org.teams:
            found = (org.teams[names["team"]].model.id, org.teams[names["team"]].model.name)
        elif kind == "TeamMembership" and names.get("team") in org.teams and names.get("member"):
            team = org.teams[names["team"]]
            mid = names["member"] if names["member"] in team.members else team.by_user.get(names["member"])
            found = (team.members[mid].user.id, team.members[mid].user.email) if mid else None
        return found, (None if kind == "Database" else db_ref)

    @locked
    def audit_actor(self, header: str | None) -> tuple[str, str, str] | None:
        """Who a request's Authorization header is: (id, type, display name) of its service token or OAuth user."""
        who = self.auth.authenticate(header)
        if who is None:
            return None
        token = self.auth.service_tokens.get((header or "").partition(":")[0].strip())
        if who.kind == "service_token" and token is not None:
            return token.id, "ServiceToken", token.name or token.id
        return who.user.id, "User", who.user.display_name

    @locked
    def record_audit(self, org_name: str, actor: tuple[str, str, str], kind: str, action: str, verb: str,
                     subject: Subject, remote_ip: str | None, metadata: dict) -> None:
        org = self.orgs.get(org_name)
        if org is None:
            return
        now = stamp(self.now())
        auditable = ("Database",) + subject.database if subject.database else ("Organization", org.ref.id, org.ref.name)
        self.org_settings(org).events.append(AuditLogEntry(
            id=self.new_id(), actor_id=actor[0], actor_type=actor[1], actor_display_name=actor[2],
            auditable_type=auditable[0], auditable_id=auditable[1], auditable_display_name=auditable[2],
            target_type=kind, target_id=subject.id, target_display_name=subject.name,
            audit_action=f"{action}.{verb}", action=verb,
            remote_ip=remote_ip, created_at=now, updated_at=now, metadata=metadata))


def audited(method: str, path: str):
    """(organization, target type, action prefix, verb, path names) of a write the log records, or None."""
    found = ORG_PATH.match(path)
    if method not in WRITES or found is None:
        return None
    rest = found.group("rest") or ""
    for only, pattern, kind, prefix, verb in PATTERNS:
        match = pattern.match(rest)
        if match and (only is None or only == method):
            return found.group("org"), kind, prefix, verb or VERBS[method], match.groupdict()
    return None


def answered_subject(body: bytes, kind: str) -> tuple[str | None, str | None]:
    """The id and display name a write's answer gives (a create's new record); never a secret."""
    try:
        record = json.loads(body) if body else None
    except ValueError:
        return None, None
    if not isinstance(record, dict):
        return None, None
    if kind in ("OrganizationMembership", "TeamMembership") and isinstance(record.get("user"), dict):
        return record["user"].get("id"), record["user"].get("email")
    return record.get("id"), record.get("name") or record.get("display_name") or record.get("username")


class AuditRecorder:
    """ASGI layer: after a successful write under /v1/organizations/{organization}, one audit event."""

    def __init__(self, app, owner):
        self.app, self.owner = app, owner

    async def __call__(self, scope, receive, send):
        found = audited(scope.get("method", ""), scope.get("path", "")) if scope["type"] == "http" else None
        if found is None:
            await self.app(scope, receive, send)
            return
        org_name, kind, prefix, verb, names = found
        world = self.owner.state.world
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        actor = world.audit_actor(headers.get("authorization"))  # before: a token may delete itself
        if actor is None:  # the request is answered 401
            await self.app(scope, receive, send)
            return
        before, database = world.audit_subject(org_name, kind, names)
        answer = {"status": 500, "body": b""}

        async def capture(message):
            if message["type"] == "http.response.start":
                answer["status"] = message["status"]
            elif message["type"] == "http.response.body":
                answer["body"] += message.get("body", b"")
            await send(message)
        await self.app(scope, receive, capture)
        if not 200 <= answer["status"] < 300:
            return
        subject = Subject(*(before or (None, None)), database=database)
        if verb != "deleted" or before is None:  # what a write's answer names wins (a rename's new name)
            new_id, new_name = answered_subject(answer["body"], kind)
            if new_id or new_name:
                subject = Subject(new_id, new_name, database)
        metadata = {key: value for key, value in names.items() if value is not None and key in ("database", "branch")}
        client = scope.get("client")
        world.record_audit(org_name, actor, kind, prefix, verb, subject, client[0] if client else None, metadata)
