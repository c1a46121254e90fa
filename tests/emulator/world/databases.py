"""Databases: list, create (pending until ready on the emulator clock), settings (PATCH), delete (deletion
protection, and the deletion requests of an organization that requires several administrators to delete),
and the organization's cluster sizes.

A new database is ``pending``/``ready: false`` for ``ready_delay`` seconds, like its first branch (``main``,
production, of the cluster size asked for). With the setting ``multiple_admins_required_for_deletion`` a DELETE
deletes nothing: it answers a pending deletion request (202, a body), which the database record shows as
``deletion_request``; the same administrator asking again gets the same request, another administrator's
DELETE (or the control API's ``deletion-approval``) deletes the database.

Mixed into state.World: every public method runs under its lock.
"""

from datetime import timedelta
from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, Field, RootModel, StrictBool, StrictInt, StrictStr, model_validator

from .postgres import DEFAULT_MAJOR_VERSION, MAJOR_VERSIONS
from .models import Actor, Body, BranchName, Database, Record, ResourceRef
from .records import DatabaseRecord, OrgRecord, Paging, Principal, Window, invalid_params, locked, not_found, stamp
from .records import unprocessable, window

GIB = 1024**3
VITESS_ONLY = ("automatic_migrations", "migration_framework", "migration_table_name", "allow_data_branching",
               "allow_foreign_key_constraints")


class ClusterSku(BaseModel):
    name: str
    display_name: str
    cpu: str
    storage: int | None
    ram: int
    metal: bool = False
    enabled: bool = True
    provider: str | None = "AWS"
    default_vtgate: str = "VTG_5"
    default_vtgate_rate: float | None = None
    replica_rate: float | None = None
    rate: float | None = None
    sort_order: int
    architecture: str | None = "x86_64"
    development: bool = False
    production: bool = True


def _sku(name: str, cpu: str, ram_gib: float, rate: float, order: int, **extra) -> ClusterSku:
    display = name.replace("_", "-")
    extra.setdefault("storage", None)
    return ClusterSku(name=name, display_name=display, cpu=cpu, ram=int(ram_gib * GIB), rate=rate, sort_order=order,
                      **extra)


# the sizes of the organization, per engine, in the platform's forms (../shared/reference/README.md): MySQL (Vitess)
# PS_DEV, PS_10 ... and Metal without a cloud; PostgreSQL the size, cloud and processor (PS_10_AWS_ARM, PS_DEV_AWS_X86)
# and Metal with them. PS_640 exists but is not enabled for the organization. A size is taken where its engine lists it
# (enabled); SIZE_10, the older spelling of PS_10, is taken as PS_10.
SKUS: dict[str, list[ClusterSku]] = {
    "mysql": [
        _sku("PS_DEV", "1/16", 0.5, 0.0, 0, development=True, production=False, storage=10 * GIB),
        _sku("PS_10", "1/8", 1, 39.0, 10, development=True),
        _sku("PS_20", "1/4", 2, 59.0, 20, development=True),
        _sku("PS_40", "1/2", 4, 99.0, 40),
        _sku("PS_80", "1", 8, 179.0, 80),
        _sku("PS_160", "2", 16, 349.0, 160),
        _sku("PS_320", "4", 32, 699.0, 320),
        _sku("PS_640", "8", 64, 1399.0, 640, enabled=False),
        _sku("M7_160_D_METAL_460", "2", 16, 609.0, 1160, metal=True, storage=460 * 10**9),
    ],
    "postgresql": [
        _sku("PS_DEV_AWS_X86", "1/16", 0.5, 0.0, 0, development=True, production=False, storage=10 * GIB),
        _sku("PS_5_AWS_X86", "1/16", 0.5, 5.0, 5, development=True),
        _sku("PS_5_AWS_ARM", "1/16", 0.5, 5.0, 6, development=True, architecture="arm64"),
        _sku("PS_10_AWS_X86", "1/8", 1, 13.0, 10, development=True),
        _sku("PS_10_AWS_ARM", "1/8", 1, 12.0, 11, development=True, architecture="arm64"),
        _sku("PS_20_AWS_X86", "1/4", 2, 26.0, 20),
        _sku("PS_20_AWS_ARM", "1/4", 2, 24.0, 21, architecture="arm64"),
        _sku("PS_40_AWS_X86", "1/2", 4, 52.0, 40),
        _sku("PS_80_AWS_X86", "1", 8, 104.0, 80),
        _sku("PS_5_GCP_X86", "1/16", 0.5, 5.0, 105, development=True, provider="GCP"),
        _sku("PS_10_GCP_X86", "1/8", 1, 13.0, 110, development=True, provider="GCP"),
        _sku("M1_10_AWS_AMD_D_METAL_10", "1/8", 1, 50.0, 1010, metal=True, storage=10 * 10**9),
    ],
}


def size_for(engine: str, size: str) -> str:
    """The size as the branch keeps it, where the organization may use it for the engine; else 422 naming those it
    may. SIZE_10 is the older spelling of PS_10."""
    name = "PS_" + size[len("SIZE_"):] if size.startswith("SIZE_") else size
    sizes = [sku.name for sku in SKUS[engine] if sku.enabled]
    if name not in sizes:
        raise unprocessable(f"Cluster size {size!r} is not available for {engine} databases in this organization: "
                            f"choose one of {', '.join(sizes)}")
    return name


class ClusterSkuList(RootModel[list[ClusterSku]]):
    pass


class DeletionRequest(Record):
    """A deletion request waiting for another administrator (not in the published OpenAPI)."""

    record_type: ClassVar[str] = "DatabaseDeletionRequest"

    id: str
    state: Literal["pending"] = "pending"
    actor: Actor
    database: ResourceRef
    approvals_required: int = 2
    approvals: list[Actor]
    created_at: str
    updated_at: str


class Storage(Body):
    minimum_storage_bytes: Annotated[StrictInt, Field(ge=0)] | None = None
    maximum_storage_bytes: Annotated[StrictInt, Field(ge=0)] | None = None


class DatabaseCreate(Body):
    name: BranchName
    cluster_size: Annotated[StrictStr, Field(min_length=1)]
    region: StrictStr | None = None
    replicas: Annotated[StrictInt, Field(ge=0)] | None = None
    kind: Literal["mysql", "postgresql"] = "mysql"
    major_version: StrictStr | None = None
    storage: Storage | None = None

    @model_validator(mode="after")
    def _engine_fields(self) -> "DatabaseCreate":
        if self.replicas == 1:
            raise ValueError("replicas: 0 for a database without high availability, 2 or more for one with it")
        if self.major_version is not None and self.kind != "postgresql":
            raise ValueError("major_version is only for PostgreSQL databases")
        return self


class DatabaseUpdate(Body):
    new_name: BranchName | None = None
    automatic_migrations: StrictBool | None = None
    migration_framework: Annotated[StrictStr, Field(min_length=1)] | None = None
    migration_table_name: Annotated[StrictStr, Field(min_length=1)] | None = None
    require_approval_for_deploy: StrictBool | None = None
    restrict_branch_region: StrictBool | None = None
    allow_data_branching: StrictBool | None = None
    allow_foreign_key_constraints: StrictBool | None = None
    insights_raw_queries: StrictBool | None = None
    deletion_protected: StrictBool | None = None
    production_branch_web_console: StrictBool | None = None
    default_branch: Annotated[StrictStr, Field(min_length=1)] | None = None


class Databases:
    """World methods of databases (mixed into state.World: self.lock, self.now(), add_database...)."""

    def render_database(self, db: DatabaseRecord) -> Database:
        """The database record as of now: readiness, branch counts, the organization's deletion rule."""
        model = db.model
        ready = db.ready_at is None or self.now() >= db.ready_at
        model.ready, model.state = ready, "ready" if ready else "pending"
        production = sum(b.model.production for b in db.branches.values())
        model.branches_count = len(db.branches)
        model.production_branches_count = production
        model.development_branches_count = len(db.branches) - production
        model.multiple_admins_required_for_deletion = self.settings.multiple_admins_required_for_deletion
        model.deletion_request = db.deletion_request
        return model

    @locked
    def databases(self, org: OrgRecord, paging: Paging, q: str | None) -> Window[Database]:
        records = [db for db in org.databases.values() if not q or q in db.model.name]
        page = window(records, paging)
        return Window([self.render_database(self.find_database(org, db.model.name)) for db in page.items],
                      page.total)

    @locked
    def create_database(self, org: OrgRecord, body: DatabaseCreate, who: Principal) -> Database:
        if body.name in org.databases:
            raise unprocessable(f"Name has already been taken: database {body.name!r} exists")
        region = next(r for r in org.regions.values() if r.current_default)
        if body.region is not None:
            region = org.regions.get(body.region)
            if region is None or not region.enabled:
                raise unprocessable(f"Region {body.region!r} is not available for this organization")
        if not (region.postgresql_supported if body.kind == "postgresql" else region.mysql_supported):
            raise unprocessable(f"Region {region.slug!r} does not support {body.kind} databases")
        size = size_for(body.kind, body.cluster_size)
        if body.major_version is not None and body.major_version not in MAJOR_VERSIONS:
            raise unprocessable(f"major_version {body.major_version!r} is not supported: choose one of "
                                f"{', '.join(MAJOR_VERSIONS)}")
        now = self.now()
        db = self.add_database(org, body.name, region, now)
        db.model.kind = body.kind
        db.model.schema_last_updated_at = None
        db.ready_at = now + timedelta(seconds=self.settings.ready_delay)
        main = self.add_branch(org, db, "main", region, who.user, production=True, cluster=size)
        main.model.has_replicas = body.replicas != 0
        main.model.replica_count = body.replicas
        if body.kind == "postgresql":
            main.model.major_version = body.major_version or DEFAULT_MAJOR_VERSION
        self.add_required_policies(db)
        return self.render_database(db)

    @locked
    def update_database(self, org: OrgRecord, name: str, body: DatabaseUpdate) -> Database:
        db = self.find_database(org, name)
        model = db.model
        given = body.model_dump(exclude_none=True)
        refused = [key for key in VITESS_ONLY if key in given]
        if refused and model.kind == "postgresql":
            raise unprocessable(f"{', '.join(refused)}: only for MySQL (Vitess) databases, {name!r} is PostgreSQL")
        if body.default_branch is not None and body.default_branch not in db.branches:
            raise unprocessable(f"Default branch {body.default_branch!r} does not exist in database {name!r}")
        framework = body.migration_framework or model.migration_framework
        if body.automatic_migrations and not framework:
            raise unprocessable("automatic_migrations needs a migration_framework (and a migration_table_name)")
        if body.new_name is not None and body.new_name != name:
            if body.new_name in org.databases:
                raise unprocessable(f"Name has already been taken: database {body.new_name!r} exists")
            self._rename_database(org, db, body.new_name)
        renamed = {"allow_foreign_key_constraints": "foreign_keys_enabled"}
        for key, value in given.items():
            if key != "new_name":
                setattr(model, renamed.get(key, key), value)
        model.updated_at = stamp(self.now())
        return self.render_database(db)

    def _rename_database(self, org: OrgRecord, db: DatabaseRecord, new: str) -> None:
        model, old = db.model, db.model.name
        org.databases = {(new if key == old else key): value for key, value in org.databases.items()}
        old_url, old_html = model.url, model.html_url
        model.name = new
        model.url = f"/v1/organizations/{org.ref.name}/databases/{new}"
        model.branches_url = f"{model.url}/branches"
        model.html_url = f"/{org.ref.name}/{new}"
        for branch in db.branches.values():
            branch.model.url = branch.model.url.replace(old_url, model.url, 1)
            branch.model.html_url = branch.model.html_url.replace(old_html, model.html_url, 1)
        for record in db.deploy_requests.values():
            record.model.html_url = record.model.html_url.replace(old_html, model.html_url, 1)
        for team in org.teams.values():
            for ref in team.model.databases:
                if ref.id == model.id:
                    ref.name, ref.url, ref.branches_url = new, model.url, model.branches_url

    @locked
    def delete_database(self, org: OrgRecord, name: str, who: Principal) -> DeletionRequest | None:
        """Delete the database, or answer the deletion request that waits for another administrator."""
        db = self.find_database(org, name)
        if db.model.deletion_protected:
            raise unprocessable(f"Database {name!r} is deletion protected: turn deletion protection off before "
                                "deleting it")
        if self.settings.multiple_admins_required_for_deletion:
            request = db.deletion_request
            if request is None:
                now = stamp(self.now())
                model = db.model
                db.deletion_request = DeletionRequest(
                    id=self.new_id(), actor=who.user.actor(), approvals=[who.user.actor()], created_at=now,
                    updated_at=now, database=ResourceRef(id=model.id, name=model.name, created_at=model.created_at,
                                                         updated_at=model.updated_at))
                return db.deletion_request
            if request.actor.id == who.user.id:
                return request  # the same administrator again: still waiting for another one
        self._remove_database(org, db)
        return None

    @locked
    def approve_deletion(self, organization: str, name: str) -> dict:
        """Another administrator requests deletion too (control API): the database is deleted."""
        org = self.orgs.get(organization)
        if org is None:
            raise not_found("Organization")
        db = self.find_database(org, name)
        if db.deletion_request is None:
            raise unprocessable(f"Database {name!r} has no pending deletion request")
        self._remove_database(org, db)
        return {"deleted": name}

    def _remove_database(self, org: OrgRecord, db: DatabaseRecord) -> None:
        del org.databases[db.model.name]
        for team in org.teams.values():
            team.model.databases = [ref for ref in team.model.databases if ref.id != db.model.id]

    @locked
    def cluster_sizes(self, org: OrgRecord, engine: str, rates: bool, region: str | None,
                      database: str | None) -> ClusterSkuList:
        if region is not None and region not in org.regions:
            raise invalid_params(f"region: no region {region!r} in this organization")
        if database is not None:
            self.find_database(org, database)
        found = []
        for sku in SKUS[engine]:
            priced = rates and sku.rate is not None
            found.append(sku.model_copy(update={
                "rate": sku.rate if rates else None,
                "replica_rate": round(sku.rate / 2, 2) if priced else None,
                "default_vtgate_rate": 0.0 if priced else None,
            }))
        return ClusterSkuList(found)
