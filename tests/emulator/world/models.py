"""Pydantic models: the platform's resources (spec section 2) and the request bodies.

Response models hold URL fields as server-relative paths (type ``Link``); they become
absolute when serialized with ``context={"base": "http://host:port"}``, so every URL
matches the address (and scheme) the client used. The same context carries the lean
settings (records.Settings): ``type_keys`` adds each record's ``"type"``, and
``cluster_rate_name`` names a branch's cluster size ``cluster_rate_name``.

Every field the platform's published OpenAPI requires is here with its declared type; the
emulator's suite validates every response against it (tests/openapi_check.py).
"""

import ipaddress
from datetime import datetime
from typing import Annotated, Any, ClassVar, Generic, Literal, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    StrictBool,
    StrictInt,
    StrictStr,
    model_serializer,
    model_validator,
)


def _absolute(path: str, info: SerializationInfo) -> str:
    return (info.context or {}).get("base", "") + path


def _unset(value: object) -> bool:
    return value is None


Link = Annotated[str, PlainSerializer(_absolute, return_type=str)]
# A secret shown once (OAuth token): the key is left out when unset.
Secret = Annotated[str | None, Field(default=None, exclude_if=_unset)]

T = TypeVar("T")


# ---------------------------------------------------------------- resources


class Record(BaseModel):
    """A resource record; with the ``type_keys`` setting it carries ``"type"`` as real records do."""

    record_type: ClassVar[str] = ""

    @model_serializer(mode="wrap")
    def _serialize(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> dict[str, Any]:
        data = handler(self)
        context = info.context or {}
        if context.get("type_keys") and self.record_type:
            data = {"type": self.record_type, **data}
        return self._lean(data, context)

    def _lean(self, data: dict[str, Any], context: dict) -> dict[str, Any]:
        return data


class Actor(Record):
    record_type: ClassVar[str] = "User"

    id: str
    display_name: str
    avatar_url: str


class Region(Record):
    record_type: ClassVar[str] = "Region"

    id: str
    provider: str
    enabled: bool
    public_ip_addresses: list[str]
    display_name: str
    location: str
    slug: str
    current_default: bool
    mysql_supported: bool = True
    postgresql_supported: bool = True


class ResourceRef(BaseModel):
    """Short reference: organization reference, restored_from_branch, access resource."""

    id: str
    name: str
    created_at: str
    updated_at: str
    deleted_at: str | None = None


class User(Record):
    record_type: ClassVar[str] = "User"

    id: str
    display_name: str
    name: str
    email: str
    avatar_url: str
    created_at: str
    updated_at: str
    two_factor_auth_configured: bool = False
    default_organization: ResourceRef | None
    sso: bool = False
    managed: bool = False
    directory_managed: bool = False
    email_verified: bool = True

    def actor(self) -> Actor:
        return Actor(id=self.id, display_name=self.display_name, avatar_url=self.avatar_url)


class OrganizationMember(Record):
    record_type: ClassVar[str] = "OrganizationMembership"

    id: str
    user: User
    role: Literal["admin", "member"]
    created_at: str
    updated_at: str


class DatabaseRef(BaseModel):
    id: str
    name: str
    url: Link
    branches_url: Link


class Team(Record):
    record_type: ClassVar[str] = "Team"

    id: str
    display_name: str
    creator: Actor
    members: list[User] = []
    databases: list[DatabaseRef] = []
    analyst_databases: list[DatabaseRef] = []
    name: str
    slug: str
    created_at: str
    updated_at: str
    description: str = ""
    managed: bool = False


class BranchSummary(BaseModel):
    name: str
    id: str
    production: bool
    mysql_edge_address: str
    private_edge_connectivity: bool


class Password(Record):
    record_type: ClassVar[str] = "Password"

    id: str
    name: str
    role: Literal["reader", "writer", "admin", "readwriter"]
    cidrs: list[str] | None
    created_at: str
    deleted_at: str | None = None
    expires_at: str | None = None
    last_used_at: str | None = None
    expired: bool = False
    direct_vtgate: bool = False
    direct_vtgate_addresses: list[str] = []
    ttl_seconds: int | None
    access_host_url: str
    access_host_regional_url: str
    access_host_regional_urls: list[str]
    actor: Actor
    region: Region
    username: str
    plain_text: str | None = None  # the secret: only in the create and renew answers, null in every other
    replica: bool
    renewable: bool
    database_branch: BranchSummary


class TeamMember(Record):
    record_type: ClassVar[str] = "TeamMembership"

    id: str
    user: User
    actor: Actor
    created_at: str
    updated_at: str
    passwords: list[Password] = []


class Branch(Record):
    record_type: ClassVar[str] = "Branch"

    id: str
    name: str
    created_at: str
    updated_at: str
    deleted_at: str | None = None
    restore_checklist_completed_at: str | None = None
    schema_last_updated_at: str
    kind: Literal["mysql", "postgresql"] = "mysql"
    mysql_address: str
    mysql_edge_address: str
    state: Literal["pending", "sleep_in_progress", "sleeping", "awakening", "ready"] = "pending"
    direct_vtgate: bool = False
    vtgate_size: str = "VTG_5"  # the platform's VTGate sizes: VTG_5, VTG_10... (capacity.py)
    vtgate_name: str | None = None
    vtgate_count: int = 1
    vtgate_autoscaling: bool = False
    vtgate_max_count: int | None = None
    vtgate_target_cpu_utilization: int | None = None
    cluster_name: str = "PS_10"
    cluster_iops: int = 3000
    ready: bool = False
    schema_ready: bool = False
    metal: bool = False
    production: bool = False
    safe_migrations: bool = False
    deletion_protected: bool = False
    sharded: bool = False
    shard_count: int = 1
    keyspace_count: int = 1
    stale_schema: bool = False
    actor: Actor
    restored_from_branch: ResourceRef | None = None
    private_edge_connectivity: bool = False
    has_replicas: bool = False
    has_read_only_replicas: bool = False
    html_url: Link
    url: Link
    region: Region
    parent_branch: str | None = None
    vtgate_options: dict[str, Any] = {}
    # PostgreSQL branches only (not in the published OpenAPI's branch record): the PostgreSQL major version
    major_version: str | None = Field(default=None, exclude_if=_unset)
    # the replica count (capacity.py keeps it), shown as replicas with the recorded_capacity setting
    replica_count: int | None = Field(default=None, exclude=True)

    def _lean(self, data: dict[str, Any], context: dict) -> dict[str, Any]:
        if context.get("cluster_rate_name") and "cluster_name" in data:
            data = {("cluster_rate_name" if key == "cluster_name" else key): value for key, value in data.items()}
        if context.get("recorded_capacity"):
            data = {key: value for key, value in data.items() if key not in RECORDED_WITHOUT}
            count = self.replica_count  # promote and demote change has_replicas: 2 or 0 then, as capacity.py does
            known = count is not None and (count > 0) == self.has_replicas
            data["replicas"] = count if known else 2 * self.has_replicas
        return data


# what the platform's branch records do not carry (the recorded_capacity setting): the VTGates are in its resizes
RECORDED_WITHOUT = ("vtgate_size", "vtgate_name", "vtgate_count", "vtgate_autoscaling", "vtgate_max_count",
                    "vtgate_target_cpu_utilization", "vtgate_options")


class Database(Record):
    record_type: ClassVar[str] = "Database"

    id: str
    name: str
    url: Link
    branches_url: Link
    html_url: Link
    region: Region
    kind: Literal["mysql", "postgresql"] = "mysql"
    state: str = "ready"
    ready: bool = True
    default_branch: str = "main"
    plan: str = "scaler_pro"
    sharded: bool = False
    branches_count: int = 0
    production_branches_count: int = 0
    development_branches_count: int = 0
    allow_data_branching: bool = True
    deletion_protected: bool = False
    open_schema_recommendations_count: int = 0
    multiple_admins_required_for_deletion: bool = False
    at_backup_restore_branches_limit: bool = False
    at_development_branch_usage_limit: bool = False
    default_branch_shard_count: int = 1
    default_branch_read_only_regions_count: int = 0
    default_branch_table_count: int = 0
    require_approval_for_deploy: bool = False
    resizing: bool = False
    resize_queued: bool = False
    config_changing: bool = False
    config_change_queued: bool = False
    foreign_keys_enabled: bool = False
    restrict_branch_region: bool = False
    insights_raw_queries: bool = False
    insights_enabled: bool = True
    production_branch_web_console: bool = False
    automatic_migrations: bool | None = False
    migration_framework: str | None = None
    migration_table_name: str | None = None
    issues_count: int | None = 0
    created_at: str
    updated_at: str
    schema_last_updated_at: str | None
    # not in the published OpenAPI: the pending deletion request, when the organization requires several
    # administrators to delete (databases.DeletionRequest; null when there is none)
    deletion_request: Any = None

    def _lean(self, data: dict[str, Any], context: dict) -> dict[str, Any]:
        if context.get("recorded_databases"):  # the platform's recorded databases: state only, no ready, no kind
            data = {key: value for key, value in data.items() if key not in ("ready", "kind")}
        return data


class QueryPatternReport(Record):
    record_type: ClassVar[str] = "QueryPatternsReport"

    id: str
    state: Literal["pending", "completed", "failed"] = "pending"
    created_at: str
    finished_at: str | None = None
    url: Link
    download_url: Link
    actor: Actor

    def _lean(self, data: dict[str, Any], context: dict) -> dict[str, Any]:
        if not context.get("recorded_regions_reports"):
            return data
        left_out = ("download_url", "finished_at") if data["state"] == "pending" else ("actor", "url")
        return {key: value for key, value in data.items() if key not in left_out}


class AccessName(BaseModel):
    name: str
    description: str


class ServiceTokenAccess(BaseModel):
    id: str
    access: str
    description: str
    resource_name: str
    resource_id: str
    resource_type: str
    resource: ResourceRef


class OrganizationItem(BaseModel):
    name: str
    id: str
    url: Link


class DatabaseItem(BaseModel):
    name: str
    id: str
    organization: str
    url: Link


class BranchItem(BaseModel):
    name: str
    id: str
    database: str
    organization: str
    url: Link


class UserItem(BaseModel):
    name: str
    id: str


class DatabaseAccesses(BaseModel):
    databases: list[DatabaseItem] = []
    accesses: list[AccessName] = []


class OrganizationAccesses(BaseModel):
    organizations: list[OrganizationItem] = []
    accesses: list[AccessName] = []


class BranchAccesses(BaseModel):
    branches: list[BranchItem] = []
    accesses: list[AccessName] = []


class UserAccesses(BaseModel):
    users: list[UserItem] = []
    accesses: list[AccessName] = []


class OAuthAccessesByResource(BaseModel):
    database: DatabaseAccesses = DatabaseAccesses()
    organization: OrganizationAccesses = OrganizationAccesses()
    branch: BranchAccesses = BranchAccesses()
    user: UserAccesses = UserAccesses()


class OAuthToken(Record):
    record_type: ClassVar[str] = "OauthApplicationToken"

    id: str
    name: str
    display_name: str
    token: Secret
    plain_text_refresh_token: Secret
    avatar_url: str
    created_at: str
    updated_at: str
    expires_at: str
    last_used_at: str | None
    actor_id: str
    actor_display_name: str
    actor_type: str
    service_token_accesses: list[ServiceTokenAccess]
    oauth_accesses_by_resource: OAuthAccessesByResource


class TokenInfo(BaseModel):
    active: bool
    scope: str
    client_id: str
    token_type: Literal["Bearer"] = "Bearer"
    exp: int
    iat: int
    sub: str


class TokenGrant(BaseModel):
    """Success body of POST /oauth/token."""

    access_token: str
    token_type: Literal["Bearer"] = "Bearer"
    expires_in: int
    refresh_token: str
    scope: str



# ---------------------------------------------------------------- schemas and deploy requests


class SchemaTable(BaseModel):
    name: str
    html: str
    raw: str


class SchemaList(BaseModel):
    data: list[SchemaTable]


class LintError(BaseModel):
    lint_error: str
    subject_type: Literal["table", "vschema", "routing_rules"] = "table"
    keyspace_name: str
    table_name: str
    error_description: str
    docs_url: str
    column_name: str = ""
    foreign_key_column_names: list[str] = []
    auto_increment_column_names: list[str] = []
    charset_name: str = ""
    engine_name: str = ""
    vindex_name: str = ""
    json_path: str = ""
    check_constraint_name: str = ""
    enum_value: str = ""
    partitioning_type: str = ""
    partition_name: str = ""


DeploymentState = Literal[
    "pending", "ready", "no_changes", "queued", "submitting", "in_progress", "pending_cutover",
    "in_progress_vschema", "in_progress_cancel", "in_progress_cutover", "complete", "complete_cancel",
    "complete_error", "complete_pending_revert", "in_progress_revert", "in_progress_revert_vschema",
    "complete_revert", "complete_revert_error", "cancelled", "error",
]
OperationState = Literal["pending", "queued", "in_progress", "complete", "cancelled", "error"]


class DeployOperation(Record):
    record_type: ClassVar[str] = "DeployOperation"

    id: str
    state: OperationState = "pending"
    keyspace_name: str
    table_name: str
    operation_name: str
    eta_seconds: float | None = None
    progress_percentage: float | None = None
    deploy_error_docs_url: str | None = None
    ddl_statement: str
    syntax_highlighted_ddl: str
    created_at: str
    updated_at: str
    throttled_at: str | None = None
    can_drop_data: bool
    table_locked: bool = False
    table_recently_used: bool = False
    table_recently_used_at: str | None = None
    removed_foreign_key_names: list[str] = []
    deploy_errors: str | None = None


class ShardOperation(BaseModel):
    id: str
    shard: str
    state: OperationState
    progress_percentage: float
    eta_seconds: int


class DeployOperationSummary(BaseModel):
    id: str
    created_at: str
    deploy_errors: str
    ddl_statement: str
    eta_seconds: int
    keyspace_name: str
    operation_name: str
    progress_percentage: float
    state: Literal["pending", "in_progress", "complete", "cancelled", "error"]
    syntax_highlighted_ddl: str
    table_name: str
    table_recently_used_at: str | None = None
    throttled_at: str | None = None
    removed_foreign_key_names: list[str] = []
    shard_count: int = 1
    shard_names: list[str] = ["-"]
    can_drop_data: bool
    table_recently_used: bool = False
    sharded: bool = False
    operations: list[ShardOperation]


class Deployment(Record):
    record_type: ClassVar[str] = "Deployment"

    id: str
    auto_cutover: bool
    auto_delete_branch: bool
    created_at: str
    cutover_at: str | None = None
    cutover_expiring: bool = False
    deploy_check_errors: str | None = None
    finished_at: str | None = None
    force_cutover_requested_at: str | None = None
    queued_at: str | None = None
    ready_to_cutover_at: str | None = None
    started_at: str | None = None
    state: DeploymentState = "pending"
    submitted_at: str | None = None
    updated_at: str
    into_branch: str
    deploy_request_number: int
    deployable: bool = False
    preceding_deployments: list[dict[str, Any]] = []
    deploy_operations: list[DeployOperation] = []
    deploy_operation_summaries: list[DeployOperationSummary] = []
    lint_errors: list[LintError] = []
    sequential_diff_dependencies: list[dict[str, Any]] = []
    lookup_vindex_operations: list[dict[str, Any]] = []
    throttler_configurations: dict[str, Any] | None = None
    deployment_revert_request: dict[str, Any] | None = None
    actor: Actor | None = None
    cutover_actor: Actor | None = None
    cancelled_actor: Actor | None = None
    schema_last_updated_at: str | None = None
    table_locked: bool = False
    locked_table_name: str | None = None
    instant_ddl: bool = False
    instant_ddl_eligible: bool = False
    queue_paused: bool = False
    queue_pause_reason: str | None = None


class DeployRequest(Record):
    record_type: ClassVar[str] = "DeployRequest"

    id: str
    number: int
    actor: Actor
    closed_by: Actor | None = None
    branch: str
    branch_id: str
    branch_deleted: bool = False
    branch_deleted_by: Actor | None = None
    branch_deleted_at: str | None = None
    into_branch: str
    into_branch_sharded: bool = False
    into_branch_shard_count: int = 1
    into_branch_keyspace_count: int = 1
    approved: bool = False
    state: Literal["open", "closed"] = "open"
    deployment_state: DeploymentState = "pending"
    deployment: Deployment
    num_comments: int = 0
    html_url: Link
    notes: str = ""
    html_body: str = ""
    created_at: str
    updated_at: str
    closed_at: str | None = None
    deployed_at: str | None = None


class DeployReview(Record):
    record_type: ClassVar[str] = "DeployRequestReview"

    id: str
    body: str
    html_body: str
    state: Literal["commented", "approved"]
    created_at: str
    updated_at: str
    actor: Actor


class ThrottlerConfiguration(BaseModel):
    keyspace_name: str
    ratio: float


class Throttler(BaseModel):
    keyspaces: list[str]
    configurable: ResourceRef
    configurations: list[ThrottlerConfiguration]


class StorageCheck(BaseModel):
    enough_storage: bool = True
    upgradeable: bool = False
    storage_bytes_needed: int = 0
    storage_report: dict[str, dict[str, dict[str, Any]]] = {}

# ---------------------------------------------------------------- envelopes


class Page(BaseModel, Generic[T]):
    type: Literal["list"] = "list"
    current_page: int
    per_page: int
    next_page: int | None
    next_page_url: str | None
    prev_page: int | None
    prev_page_url: str | None
    total_count: int
    total_pages: int
    data: list[T]


class CursorPage(BaseModel, Generic[T]):
    type: Literal["list"] = "list"
    has_next: bool
    has_prev: bool
    cursor_start: str | None
    cursor_end: str | None
    data: list[T]


# ---------------------------------------------------------------- request bodies


def _ip_or_cidr(value: str) -> str:
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        raise ValueError(f"{value!r} is not an IP address or CIDR range") from None
    return value


def _iso8601(value: str) -> str:
    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{value!r} is not an ISO 8601 timestamp") from None
    return value


Cidr = Annotated[StrictStr, AfterValidator(_ip_or_cidr)]
Iso8601 = Annotated[StrictStr, AfterValidator(_iso8601)]
Name = Annotated[StrictStr, Field(min_length=1, max_length=255)]
BranchName = Annotated[StrictStr, Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,62}$")]


class Body(BaseModel):
    """Request body: JSON types are taken strictly ("5" is not an integer); unknown keys ignored."""

    model_config = ConfigDict(strict=True)


class BranchCreate(Body):
    name: BranchName
    parent_branch: Name
    backup_id: StrictStr | None = None
    region: StrictStr | None = None
    restore_point: Iso8601 | None = None
    seed_data: Literal["last_successful_backup"] | None = None
    cluster_size: Annotated[StrictStr, Field(min_length=1)] | None = None
    major_version: Annotated[StrictStr, Field(min_length=1)] | None = None

    @model_validator(mode="after")
    def _cluster_size_with_backup(self) -> "BranchCreate":
        if self.backup_id is not None and self.cluster_size is None:
            raise ValueError("cluster_size is required when backup_id is given")
        return self


class PasswordCreate(Body):
    name: Name | None = None
    role: Literal["reader", "writer", "admin", "readwriter"] = "admin"
    replica: StrictBool = False
    ttl: Annotated[StrictInt, Field(ge=0)] = 0
    cidrs: list[Cidr] | None = None


class PasswordUpdate(Body):
    name: Name | None = None
    cidrs: list[Cidr] | None = None


class TeamCreate(Body):
    name: Name
    description: StrictStr = ""


class TeamUpdate(Body):
    name: Name | None = None
    description: StrictStr | None = None


class MemberAdd(Body):
    user_id: Name



class BranchUpdate(Body):
    new_name: BranchName | None = None
    deletion_protected: StrictBool | None = None


class SafeMigrationsUpdate(Body):
    safe_migrations: StrictBool


class DeployRequestCreate(Body):
    branch: Name
    into_branch: Name
    notes: StrictStr = ""
    auto_cutover: StrictBool = True
    auto_delete_branch: StrictBool = False


class DeployRequestUpdate(Body):
    state: Literal["closed"] | None = None


class DeployBody(Body):
    instant_ddl: StrictBool = False


class EnableBody(Body):
    enable: StrictBool


class ReviewCreate(Body):
    state: Literal["commented", "approved"] = "commented"
    body: StrictStr = ""


class ThrottlerKeyspace(Body):
    keyspace_name: Name
    ratio: Annotated[float, Field(ge=0, le=95)]


class ThrottlerUpdate(Body):
    ratio: Annotated[StrictInt, Field(ge=0, le=95)] | None = None
    configurations: list[ThrottlerKeyspace] | None = None


class AppTokenRequest(Body):
    """Body of the deprecated POST oauth-applications/{id}/token (spec 4.3)."""

    client_id: StrictStr
    client_secret: StrictStr
    grant_type: Literal["authorization_code", "refresh_token"]
    code: StrictStr | None = None
    redirect_uri: StrictStr | None = None
    refresh_token: StrictStr | None = None

    @model_validator(mode="after")
    def _grant_fields(self) -> "AppTokenRequest":
        needed = ("code", "redirect_uri") if self.grant_type == "authorization_code" else ("refresh_token",)
        missing = [field for field in needed if getattr(self, field) is None]
        if missing:
            raise ValueError(f"{', '.join(missing)} required for grant_type {self.grant_type}")
        return self
