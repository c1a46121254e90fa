"""Roles of PostgreSQL branches (the credentials of a Postgres database; ../shared/reference/
platform-openapi-postgres.json): list, create (200, the secret in the answer), get, the default role and its
reset, rename, delete with a ``successor`` that takes the role's objects over, reassign, renew, reset.

A role's secret (``password``) is in the answers of create, renew, reset and reset-default only; every other
answer carries ``""`` there (the OpenAPI declares a required string). A role with a ``ttl`` expires ``ttl``
seconds after its creation or its last renewal on the emulator clock: it then shows ``expired: true`` and no
longer logs in to the data plane (NOLOGIN). Renewing keeps the secret (reset changes it). Every
Postgres branch has a default role (``default: true``, name ``postgres``) that cannot be renamed, renewed or
deleted; reset-default gives it a new secret. On a MySQL branch every role operation answers 422.

Mixed into state.World: every public method runs under its lock.
"""

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, Field, StrictBool, StrictInt, StrictStr

from .models import Body, Name, Record
from .records import BranchRecord, OrgRecord, Paging, Window, invalid_params, locked, not_found, stamp
from .records import unprocessable, window

# the platform's roles a role may inherit (the OpenAPI's enum)
INHERITABLE = Literal[
    "pg_checkpoint", "pg_create_subscription", "pg_maintain", "pg_monitor", "pg_read_all_data",
    "pg_read_all_settings", "pg_read_all_stats", "pg_signal_backend", "pg_stat_scan_tables",
    "pg_use_reserved_connections", "pg_write_all_data", "postgres",
]
# the query-safety settings of a role: the strings the platform sends (off, warn, on), never booleans
QuerySafety = Literal["off", "warn", "on"]
MAJOR_VERSIONS = ("16", "17", "18")
DEFAULT_MAJOR_VERSION = "17"
DEFAULT_ROLE = "postgres"
STATUSES = ("active", "expired")


class RoleBranch(BaseModel):
    id: str
    name: str
    created_at: str
    updated_at: str
    deleted_at: str | None = None


class RoleActor(Record):
    record_type: ClassVar[str] = "User"

    id: str
    display_name: str
    avatar_url: str


class QuerySafetySettings(BaseModel):
    require_where_on_delete: QuerySafety = "warn"
    require_where_on_update: QuerySafety = "warn"


class Role(Record):
    record_type: ClassVar[str] = "PostgresRole"

    id: str
    name: str
    access_host_url: str
    private_access_host_url: str
    private_connection_service_name: str
    username: str
    base_username: str
    password: str = ""  # the secret: only in the create, renew and reset answers
    database_name: str = "postgres"
    created_at: str
    updated_at: str
    deleted_at: str | None = None
    expires_at: str | None = None
    dropped_at: str | None = None
    disabled_at: str | None = None
    drop_failed: str = ""
    ready: bool = False
    expired: bool = False
    default: bool = False
    ttl: int = 0
    inherited_roles: list[str] = []
    with_replication: bool = False
    branch: RoleBranch
    actor: RoleActor
    query_safety_settings: QuerySafetySettings = QuerySafetySettings()


class DefaultCredentials(BaseModel):
    """The answer of reset-default."""

    username: str
    password: str
    access_host_url: str


class RoleCreate(Body):
    name: Name | None = None
    ttl: Annotated[StrictInt, Field(ge=0)] = 0
    inherited_roles: list[INHERITABLE] = []
    with_replication: StrictBool = False
    require_where_on_delete: QuerySafety = "warn"
    require_where_on_update: QuerySafety = "warn"


class RoleUpdate(Body):
    name: Name | None = None
    require_where_on_delete: QuerySafety | None = None
    require_where_on_update: QuerySafety | None = None


class RoleReassign(Body):
    successor: Annotated[StrictStr, Field(min_length=1)]


@dataclass
class RoleRecord:
    model: Role
    expires: datetime | None = None
    secret: str = ""  # kept so that a renewal can answer it; never in a read
    # usernames of the roles whose objects this role took over (reassign, or delete with a successor)
    received: list[str] = field(default_factory=list)

    def settle(self, now: datetime, branch: BranchRecord) -> Role:
        self.model.expired = self.expires is not None and now >= self.expires
        self.model.ready = branch.settle(now).ready
        return self.model


class Roles:
    """World methods of Postgres roles (mixed into state.World: self.lock, self.now(), self.find_branch...)."""

    # ------------------------------------------------------------ creation (no validation)

    def add_role(self, branch: BranchRecord, actor, body: RoleCreate, *, default: bool = False) -> Role:
        """Create a role; the returned copy carries its secret."""
        now = self.now()
        rid = self.new_id()
        b = branch.model
        base = DEFAULT_ROLE if default else f"pscale_api_{self.new_id()}"
        region = b.region.slug
        model = Role(
            id=rid,
            name=body.name or base,
            access_host_url=f"{region}.pg.psdb.localhost",
            private_access_host_url=f"{region}.private-pg.psdb.localhost",
            private_connection_service_name=f"com.amazonaws.vpce.{region}.vpce-svc-{b.id}",
            username=f"{base}.{b.id}",
            base_username=base,
            created_at=stamp(now),
            updated_at=stamp(now),
            default=default,
            ttl=body.ttl,
            inherited_roles=list(body.inherited_roles),
            with_replication=body.with_replication,
            branch=RoleBranch(id=b.id, name=b.name, created_at=b.created_at, updated_at=b.updated_at),
            actor=RoleActor(**actor.actor().model_dump(include={"id", "display_name", "avatar_url"})),
            query_safety_settings=QuerySafetySettings(require_where_on_delete=body.require_where_on_delete,
                                                      require_where_on_update=body.require_where_on_update),
        )
        record = RoleRecord(model)
        branch.roles[rid] = record
        self._extend(record, now)
        return self._reveal(record, branch, self.new_secret("pscale_pw_", 43), created=True)

    def _extend(self, record: RoleRecord, now: datetime) -> None:
        if record.model.ttl:
            record.expires = now + timedelta(seconds=record.model.ttl)
            record.model.expires_at = stamp(record.expires)

    def _reveal(self, record: RoleRecord, branch: BranchRecord, secret: str, created: bool = False) -> Role:
        record.secret = secret
        self.data_role_secret(branch, record, secret, created)  # a real role (dataplane/servers.py)
        return record.settle(self.now(), branch).model_copy(update={"password": secret})

    # ------------------------------------------------------------ lookups

    def _pg_branch(self, org: OrgRecord, database: str, name: str) -> BranchRecord:
        branch = self.find_branch(org, database, name)
        if branch.model.kind != "postgresql":
            raise unprocessable(f"Branch {name!r} of database {database!r} is a MySQL branch: roles are for "
                                "PostgreSQL branches (MySQL branches have passwords)")
        if not any(r.model.default for r in branch.roles.values()):
            self.add_role(branch, self.default_user, RoleCreate(inherited_roles=["postgres"]), default=True)
        return branch

    def _role(self, org: OrgRecord, database: str, branch: str, rid: str) -> tuple[BranchRecord, RoleRecord]:
        found = self._pg_branch(org, database, branch)
        record = found.roles.get(rid)
        if record is None:
            raise not_found("Role")
        return found, record

    def _default(self, branch: BranchRecord) -> RoleRecord:
        return next(r for r in branch.roles.values() if r.model.default)

    def _successor(self, branch: BranchRecord, record: RoleRecord, successor: str) -> RoleRecord:
        """The role named by its id, or its username with or without the branch suffix."""
        suffix = "." + branch.model.id
        found = next((r for r in branch.roles.values()
                      if successor in (r.model.id, r.model.username, r.model.username.removesuffix(suffix))), None)
        if found is None:
            raise unprocessable(f"Successor {successor!r} is not a role of branch {branch.model.name!r}")
        if found is record:
            raise unprocessable("A role cannot be its own successor")
        return found

    # ------------------------------------------------------------ the API

    @locked
    def roles(self, org: OrgRecord, database: str, branch: str, paging: Paging, q: str | None,
              status: str | None) -> Window[Role]:
        found = self._pg_branch(org, database, branch)
        if status is not None and status not in STATUSES:
            raise invalid_params(f"status: one of {', '.join(STATUSES)}")
        now = self.now()
        records = [r.settle(now, found) for r in found.roles.values()]
        if q:
            records = [r for r in records if q in r.name or q in r.username]
        if status is not None:
            records = [r for r in records if r.expired == (status == "expired")]
        return window(records, paging)

    @locked
    def create_role(self, org: OrgRecord, database: str, branch: str, body: RoleCreate, who) -> Role:
        return self.add_role(self._pg_branch(org, database, branch), who.user, body)

    @locked
    def role(self, org: OrgRecord, database: str, branch: str, rid: str) -> Role:
        found, record = self._role(org, database, branch, rid)
        return record.settle(self.now(), found)

    @locked
    def default_role(self, org: OrgRecord, database: str, branch: str) -> Role:
        found = self._pg_branch(org, database, branch)
        return self._default(found).settle(self.now(), found)

    @locked
    def reset_default_role(self, org: OrgRecord, database: str, branch: str) -> DefaultCredentials:
        found = self._pg_branch(org, database, branch)
        role = self._reveal(self._default(found), found, self.new_secret("pscale_pw_", 43))
        return DefaultCredentials(username=role.username, password=role.password, access_host_url=role.access_host_url)

    @locked
    def update_role(self, org: OrgRecord, database: str, branch: str, rid: str, body: RoleUpdate) -> Role:
        found, record = self._role(org, database, branch, rid)
        model = record.model
        if model.default and body.name is not None and body.name != model.name:
            raise unprocessable("The default role cannot be renamed")
        if body.name is not None:
            model.name = body.name
        safety = model.query_safety_settings
        for key in ("require_where_on_delete", "require_where_on_update"):
            if getattr(body, key) is not None:
                setattr(safety, key, getattr(body, key))
        model.updated_at = stamp(self.now())
        return record.settle(self.now(), found)

    @locked
    def delete_role(self, org: OrgRecord, database: str, branch: str, rid: str, successor: str | None) -> None:
        found, record = self._role(org, database, branch, rid)
        if record.model.default:
            raise unprocessable("The default role cannot be deleted")
        heir = None
        if successor is not None:
            heir = self._successor(found, record, successor)
            self._hand_over(record, heir)
        self.data_role_deleted(found, record, heir)
        del found.roles[rid]

    @locked
    def reassign_role(self, org: OrgRecord, database: str, branch: str, rid: str, body: RoleReassign) -> None:
        found, record = self._role(org, database, branch, rid)
        heir = self._successor(found, record, body.successor)
        self._hand_over(record, heir)
        self.data_role_reassigned(found, record, heir)

    def _hand_over(self, record: RoleRecord, successor: RoleRecord) -> None:
        successor.received.extend([*record.received, record.model.username])
        record.received = []

    @locked
    def renew_role(self, org: OrgRecord, database: str, branch: str, rid: str) -> Role:
        found, record = self._role(org, database, branch, rid)
        if not record.model.ttl:
            raise unprocessable("Role has no ttl and cannot be renewed")
        now = self.now()
        self._extend(record, now)
        record.model.updated_at = stamp(now)
        return self._reveal(record, found, record.secret)

    @locked
    def reset_role(self, org: OrgRecord, database: str, branch: str, rid: str) -> Role:
        found, record = self._role(org, database, branch, rid)
        record.model.updated_at = stamp(self.now())
        return self._reveal(record, found, self.new_secret("pscale_pw_", 43))

    # ------------------------------------------------------------ branches of PostgreSQL databases

    def major_version_of(self, db, parent: BranchRecord, asked: str | None, restoring: bool) -> str | None:
        """The major version of a new branch: asked (PostgreSQL only, not for a restore), else the parent's."""
        if db.model.kind != "postgresql":
            if asked is not None:
                raise unprocessable("major_version is only for PostgreSQL databases")
            return None
        if asked is not None and not restoring:
            if asked not in MAJOR_VERSIONS:
                raise unprocessable(f"major_version {asked!r} is not supported: choose one of "
                                    f"{', '.join(MAJOR_VERSIONS)}")
            return asked
        return parent.model.major_version or DEFAULT_MAJOR_VERSION

    def check_restore_point(self, parent: BranchRecord, restore_point: str | None) -> bool:
        """A restore point is a moment in the past, not before the parent branch existed; True when given."""
        if restore_point is None:
            return False
        moment = datetime.fromisoformat(restore_point.replace("Z", "+00:00"))
        if moment.tzinfo is None:
            raise unprocessable(f"restore_point {restore_point!r} needs a time zone (e.g. 2026-01-01T00:00:00Z)")
        if moment > self.now():
            raise unprocessable(f"restore_point {restore_point!r} is in the future")
        if stamp(moment) < parent.model.created_at:
            raise unprocessable(f"restore_point {restore_point!r} is before branch {parent.model.name!r} existed")
        return True
