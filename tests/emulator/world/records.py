"""Building blocks of the world: errors, settings, the clock, paging, and the records that
hold resources together with their internal bookkeeping."""

import functools
import re
import string
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from itertools import islice
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .models import (
    Branch,
    Database,
    OAuthAccessesByResource,
    OrganizationMember,
    Password,
    QueryPatternReport,
    Region,
    ResourceRef,
    ServiceTokenAccess,
    Team,
    TeamMember,
    User,
)

T = TypeVar("T")

ID_ALPHABET = string.ascii_lowercase + string.digits
SECRET_ALPHABET = string.ascii_letters + string.digits


class ApiError(Exception):
    """An error of the resource API, answered as {"code": ..., "message": ...}."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message

    def body(self) -> dict:
        return {"code": self.code, "message": self.message}


def unauthorized() -> ApiError:
    return ApiError(401, "unauthorized", "Missing or invalid credentials in the Authorization header")


def not_found(what: str) -> ApiError:
    return ApiError(404, "not_found", f"{what} not found")


def unprocessable(message: str) -> ApiError:
    return ApiError(422, "unprocessable", message)


def invalid_params(message: str) -> ApiError:
    return ApiError(422, "invalid_params", message)


class OAuthError(Exception):
    """An RFC 6749 error of the token endpoint."""

    def __init__(self, status: int, error: str, description: str):
        super().__init__(description)
        self.status, self.error, self.description = status, error, description


# The shapes real responses take beside the published OpenAPI (../shared/reference/README.md):
# ``lean: true`` turns on the leanest combination, ``lean: false`` goes back to the full shapes.
LEAN = {"list_envelope": "bare", "cluster_rate_name": True, "type_keys": True, "recorded_databases": True}
FULL = {"list_envelope": "full", "cluster_rate_name": False, "type_keys": False, "recorded_databases": False}
# Lean answers to writes and zero times (issue 30): a deploy request's close, deploy and cancel answers, a webhook
# that has sent nothing.
LEAN.update(lean_write_answers=True, zero_times=True)
FULL.update(lean_write_answers=False, zero_times=False)
# What the platform's records of capacity say (issue 43): a branch states its replicas and no vtgate_* fields, a
# completed change request no replicas.
LEAN.update(recorded_capacity=True)
FULL.update(recorded_capacity=False)
# What the platform's answers about keyspaces say (issue 46): lean keyspace records, lists without per_page, resize
# requests without display names and vector fields, a VSchema's html beside raw; workflows without the keys their
# recorded answers lack, with null actors.
LEAN.update(recorded_vitess=True)
FULL.update(recorded_vitess=False)
# What the platform's metrics answers are (issue 47): series and instant metrics as objects, table maps by keyspace.
LEAN.update(recorded_metrics=True)
FULL.update(recorded_metrics=False)
# What the platform's invoices and OAuth applications say (issue 47): lean list envelopes, billing periods as dates,
# token records with null fields that still carry their secrets.
LEAN.update(recorded_billing_oauth=True)
FULL.update(recorded_billing_oauth=False)
# What the platform's public regions and query-pattern reports say (issue 47): the public list bare, its regions with
# type and current_default and without public_ip_addresses; a report's create answer without download_url and
# finished_at, a completed report without actor and url.
LEAN.update(recorded_regions_reports=True)
FULL.update(recorded_regions_reports=False)
# What the platform's query insights say (issue 47): fractional durations, lean list envelopes, items with type.
LEAN.update(recorded_insights=True)
FULL.update(recorded_insights=False)


def expand_lean(changes: dict) -> dict:
    """Replace a boolean ``lean`` key by the settings it stands for; keys given beside it win."""
    lean = changes.get("lean")
    if not isinstance(lean, bool):
        return changes
    rest = {key: value for key, value in changes.items() if key != "lean"}
    return {**(LEAN if lean else FULL), **rest}


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ready_delay: float = Field(2.0, ge=0, description="seconds until a new branch is ready")
    report_delay: float = Field(1.0, ge=0, description="seconds until a new report is completed")
    webhook_timeout: float = Field(
        2.0, gt=0, description="seconds a webhook delivery waits for its answer (the platform waits 2); a test "
        "whose receiver shares a loaded machine gives it longer")
    rate_limit: int | None = Field(None, ge=1, description="requests a minute per credential; null is off")
    token_ttl: int = Field(3600, ge=1, description="lifetime of OAuth access tokens in seconds")
    max_per_page: int = Field(
        100, ge=1, le=100, description="the largest page a list answers (a smaller per_page is answered as asked): "
        "fewer records make more than a page")
    list_envelope: Literal["full", "no_totals", "bare"] = Field(
        "full",
        description="page lists: full envelope, no_totals (without current_page, total_count, total_pages) "
        'or bare ({"data": [...]} only, also for cursor lists)',
    )
    cluster_rate_name: bool = Field(False, description="branch records carry cluster_rate_name, not cluster_name")
    type_keys: bool = Field(False, description='records carry "type" ("Branch", "Region", ...)')
    lean_write_answers: bool = Field(
        False, description="a deploy request's close, deploy, cancel, complete-deploy and force-cutover answers "
        "carry only id, number and deployment.state (no state, no deployment_state; force-cutover also "
        "force_cutover_requested_at), and a password's create answer no username, as the "
        "platform's recorded answers do")
    zero_times: bool = Field(
        False, description="a webhook that has sent nothing has last_sent_at 0001-01-01T00:00:00.000Z (the zero "
        "time the platform writes), not null")
    recorded_databases: bool = Field(
        False, description="database records carry neither ready nor kind, as the platform's recorded ones"
    )
    recorded_capacity: bool = Field(
        False, description="branch records carry replicas (the count) and no vtgate_* fields, and completed change "
        "requests no replicas, as the platform's recorded ones: the VTGates are in the newest completed resize")
    recorded_vitess: bool = Field(
        False, description="keyspace records carry only type, id, name, shards, sharded and times, keyspace lists no "
        "per_page, keyspace resize requests no display names nor vector fields (a pending one its completed_at), an "
        "actor without avatar_url, VSchema answers html beside raw, and workflows without defer_secondary_keys, "
        "on_ddl, workflow_errors, may_restart, sequence_tables_applied, global_keyspace, with a null "
        "workflow_subtype and null *_by actors (lists without per_page), as the platform's recorded answers")
    recorded_billing_oauth: bool = Field(
        False, description="invoices and their line items listed as {type, next_page, data} with billing periods as "
        "dates; OAuth applications and tokens listed as a bare {data}, times without milliseconds, applications with "
        "mcp_tool_groups, tokens with a null name, expires_at, actor_id and service_token_accesses, only database in "
        "oauth_accesses_by_resource, and their token and plain_text_refresh_token, as the platform's recorded answers")
    recorded_regions_reports: bool = Field(
        False, description="the public regions carry current_default and no public_ip_addresses; a pending "
        "query-pattern report no download_url nor finished_at, a completed one no actor nor url, as the platform's "
        "recorded answers")
    recorded_metrics: bool = Field(
        False, description="metrics answers as the platform's (planetscale/cli): series and instant metrics as objects "
        "(points [unix seconds, value]), .../metrics/tables keyed by keyspace, the tablets' instant branch with only "
        "its name; off: as the published description types them (JSON strings, tables keyed by table name)")
    recorded_insights: bool = Field(
        False, description="query insights as the platform's recorded answers (planetscale-go): durations as "
        "fractions, lists as {type, current_page, data} (tags, tag summaries and a fingerprint's statistics {type, "
        "data}), queries and errors with their type and without the egress, ingress, block and shard-query fields, "
        "samples without statement_type, keyspace, tables and password")
    insights_slow_query_ms: float = Field(
        1000.0, ge=0, description="query insights: a minute in which a statement of the branch ran at least this "
        "long is a minute in violation (anomalies)")
    deploy_check_delay: float = Field(1.0, ge=0, description="seconds a new deploy request stays pending (its check)")
    deploy_step_delay: float = Field(1.0, ge=0, description="seconds each step of a deploy, cancel or revert takes")
    revert_window: float = Field(1800.0, ge=0, description="seconds a deployed request can be reverted")
    deploy_fail_state: Literal["error", "complete_error", "cancelled", "complete_revert_error"] | None = Field(
        None,
        description="deploys started while set end in this state after in_progress (complete_revert_error: "
        "reverts started while set end so); null: deploys succeed",
    )
    cutover_blocked: bool = Field(
        False, description="a long transaction holds the locks a cutover needs: deploys wait in in_progress_cutover "
        "(also with auto_cutover) until force-cutover is asked, or until this is turned off")
    deploy_storage_remaining: int = Field(
        99 * 2**30, ge=0, description="bytes of storage left on each shard of a production branch (1 GiB is used): "
        "the deploy storage check says enough_storage false when a deploy needs more")
    backup_step_delay: float = Field(1.0, ge=0, description="seconds a new backup stays pending, then running")
    backup_fail_state: Literal["failed", "canceled"] | None = Field(
        None, description="backups created while set end in this state instead of success; null: they succeed"
    )
    change_step_delay: float = Field(
        1.0, ge=0, description="seconds a new change or resize request stays pending, then resizing (capacity.py)")
    change_initial_state: Literal["pending", "queued"] = Field(
        "pending", description="the state a new change or resize request starts in")
    change_fail_state: Literal["canceled"] | None = Field(
        None, description="change and resize requests asked while set end canceled instead of completed")
    workflow_copy_delay: float = Field(
        1.0, ge=0, description="seconds a new (or retried) workflow stays copying before it is running (its rows "
        "copied)")
    workflow_step_delay: float = Field(
        1.0, ge=0, description="seconds each other step of a workflow takes: verifying_data, switching_replicas, "
        "switching_primaries, reversing_traffic, cutting_over, reversing_traffic_for_cancel, cancelling")
    workflow_fail_state: Literal["error"] | None = Field(
        None, description="workflows created (or retried) while set end their copy in error (workflow_errors, "
        "may_retry); null: the copy succeeds")
    workflow_verify_stale_after: float = Field(
        86400.0, ge=0, description="seconds after which a workflow's data check is stale (verified_data_stale)")
    multiple_admins_required_for_deletion: bool = Field(
        False, description="deleting a database needs two administrators: the first DELETE opens a deletion request"
    )
    webhook_public_https_only: bool = Field(
        False, description="webhook URLs must be https and public, as the platform requires (off: local URLs too)"
    )

    @model_validator(mode="before")
    @classmethod
    def _lean(cls, data: object) -> object:
        if isinstance(data, dict) and "lean" in data:
            if not isinstance(data["lean"], bool):
                raise ValueError("lean must be true or false")
            return expand_lean(data)
        return data

    def serialization(self) -> dict:
        """The serialization context of the record shapes these settings ask for."""
        return {"type_keys": self.type_keys, "cluster_rate_name": self.cluster_rate_name, "zero_times": self.zero_times,
                "recorded_databases": self.recorded_databases, "recorded_capacity": self.recorded_capacity,
                "recorded_vitess": self.recorded_vitess, "recorded_regions_reports": self.recorded_regions_reports}


class Clock:
    """Real UTC time shifted by an offset that only moves forward."""

    def __init__(self) -> None:
        self.offset = timedelta()
        self.started = datetime.now(UTC)  # real time: what the servers ran before belongs to an earlier world
        self.advances: list[tuple[datetime, timedelta]] = []  # (real moment, the offset from then on)

    def now(self) -> datetime:
        return datetime.now(UTC) + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += timedelta(seconds=seconds)
        self.advances.append((datetime.now(UTC), self.offset))

    def at(self, real: datetime) -> datetime:
        """A real moment (a statement the servers ran) on this clock: shifted by the offset in effect then."""
        offset = timedelta()
        for moment, after in self.advances:
            if moment > real:
                break
            offset = after
        return real + offset


def stamp(moment: datetime) -> str:
    """ISO 8601 UTC with milliseconds, as the platform writes it: 2026-11-22T01:02:03.000Z."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def slugify(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "team"


@dataclass
class Paging:
    page: int = 1
    per_page: int = 25


@dataclass
class Window(Generic[T]):
    """One page of a collection and the size of the whole collection."""

    items: list[T]
    total: int


def window(values: Collection[T], paging: Paging) -> Window[T]:
    start = (paging.page - 1) * paging.per_page
    return Window(list(islice(values, start, start + paging.per_page)), len(values))


# ---------------------------------------------------------------- records


@dataclass
class PasswordRecord:
    model: Password
    expires: datetime | None
    secret_digest: str | None = None  # SHA-256 of the plain text, to check a connection's password

    def settle(self, now: datetime) -> Password:
        self.model.expired = self.expires is not None and now >= self.expires
        return self.model


@dataclass
class ReportRecord:
    model: QueryPatternReport
    finishes_at: datetime

    def settle(self, now: datetime) -> QueryPatternReport:
        done = now >= self.finishes_at
        self.model.state = "completed" if done else "pending"
        self.model.finished_at = stamp(self.finishes_at) if done else None
        return self.model


@dataclass
class BranchRecord:
    model: Branch
    ready_at: datetime
    passwords: dict[str, PasswordRecord] = field(default_factory=dict)
    reports: dict[str, ReportRecord] = field(default_factory=dict)
    template: str | None = None  # the server schema describing it until it is made (dataplane/schema.py); None: empty
    base: dict | None = None  # the description it was made from (its deploy requests' base); None: its target's
    backups: dict[str, Any] = field(default_factory=dict)  # id -> backups.BackupRecord
    roles: dict[str, Any] = field(default_factory=dict)  # id -> postgres.RoleRecord (PostgreSQL branches)
    keyspaces: dict[str, Any] = field(default_factory=dict)  # name -> keyspaces.KeyspaceRecord (MySQL branches)

    def settle(self, now: datetime) -> Branch:
        ready = now >= self.ready_at
        self.model.state = "ready" if ready else "pending"
        self.model.ready = self.model.schema_ready = ready
        return self.model


@dataclass
class DatabaseRecord:
    model: Database
    branches: dict[str, BranchRecord] = field(default_factory=dict)
    deploy_requests: dict[int, Any] = field(default_factory=dict)  # number -> deploys.DeployRecord
    ready_at: datetime | None = None  # a new database is pending until then (None: ready)
    backup_policies: dict[str, Any] = field(default_factory=dict)  # id -> backups.BackupPolicy
    deletion_request: Any = None  # databases.DeletionRequest, pending until another administrator deletes
    webhooks: dict[str, Any] = field(default_factory=dict)  # id -> webhooks.WebhookRecord
    workflows: dict[int, Any] = field(default_factory=dict)  # number -> workflows.WorkflowRecord


@dataclass
class TeamRecord:
    model: Team
    members: dict[str, TeamMember] = field(default_factory=dict)  # by membership id
    by_user: dict[str, str] = field(default_factory=dict)  # user id -> membership id

    def render(self) -> Team:
        return self.model.model_copy(update={"members": [m.user for m in self.members.values()]})


@dataclass
class OrgRecord:
    ref: ResourceRef
    regions: dict[str, Region] = field(default_factory=dict)  # by slug
    databases: dict[str, DatabaseRecord] = field(default_factory=dict)
    members: dict[str, OrganizationMember] = field(default_factory=dict)  # by user id
    teams: dict[str, TeamRecord] = field(default_factory=dict)  # by slug


@dataclass
class OAuthApp:
    id: str
    name: str
    organization: str
    client_id: str
    client_secret: str
    redirect_uri: str
    scopes: str


@dataclass
class ServiceToken:
    id: str
    secret: str
    user: User
    # an organization's token (access.py); seeded tokens have no name
    organization: str | None = None
    name: str | None = None
    created: datetime | None = None
    expires: datetime | None = None  # None: never expires
    last_used: datetime | None = None
    accesses: list = field(default_factory=list)  # access.AccessRecord


@dataclass
class AuthCode:
    app: OAuthApp
    redirect_uri: str
    scope: str
    user: User
    expires: datetime


@dataclass
class Grant:
    """An OAuth application authorized by a user. A refresh renews it in place: new access
    and refresh tokens, and the previous access token is revoked at once."""

    id: str
    app: OAuthApp
    user: User
    scope: str
    created: datetime
    issued: datetime
    expires: datetime
    access_token: str
    refresh_token: str
    accesses: list[ServiceTokenAccess]
    by_resource: OAuthAccessesByResource
    last_used: datetime | None = None


@dataclass(frozen=True)
class Principal:
    kind: Literal["service_token", "bearer"]
    user: User


def locked(method):
    """Run a method of an object with a ``lock`` attribute under that lock."""

    @functools.wraps(method)
    def run_locked(self, *args, **kwargs):
        with self.lock:
            return method(self, *args, **kwargs)

    return run_locked
