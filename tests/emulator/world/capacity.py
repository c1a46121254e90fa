"""Capacity and configuration of branches: change requests (PostgreSQL: cluster size, replicas, storage,
parameters), a MySQL branch's cluster size, VTGate resize requests, the PostgreSQL parameter and extension
catalogue, and the read-only regions of a database.

Change and resize requests follow the emulator clock, like backups:

    PATCH .../changes, PATCH .../cluster, PUT .../resizes
        -> pending (change_initial_state) --change_step_delay--> resizing --change_step_delay--> completed
                                           \\-> canceled (change_fail_state, DELETE .../resizes, the control API)

A completed request's values go to the branch (``cluster_name``, ``has_replicas``, ``vtgate_*``, the parameters'
``value``); on the data plane a completed parameter change that PostgreSQL applies per database (``per_database``
in the catalogue: work_mem, statement_timeout...) is set with ``ALTER DATABASE <branch database> SET``.
A request asked while one of the branch is ``pending`` updates that one (the operations are "upserts", same id);
asked while one is ``resizing``: 422. Asking for what the branch has answers 204 ("No changes to apply").

Mixed into state.World: every public method runs under its lock.
"""

import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, RootModel, StrictBool, StrictFloat, StrictInt, StrictStr

from .databases import SKUS, size_for
from .models import Actor, Body, Record, Region, User
from .records import BranchRecord, DatabaseRecord, OrgRecord, Paging, Window, invalid_params, locked, not_found
from .records import stamp, unprocessable, window

GIB = 1024**3
VTGATE_SIZES = ("VTG_5", "VTG_10", "VTG_20", "VTG_40", "VTG_80", "VTG_160")
RUNNING = ("queued", "pending", "resizing")
STORAGE_DEFAULTS = dict(minimum_storage_bytes=10 * GIB, maximum_storage_bytes=100 * GIB, storage_autoscaling=True,
                        storage_shrinking=False, storage_type="gp3", storage_iops=3000, storage_throughput_mibs=125)
STORAGE_KEYS = ("minimum_storage_bytes", "maximum_storage_bytes", "storage_autoscaling", "storage_iops",
                "storage_throughput_mibs")
VTGATE_KEYS = ("vtgate_size", "vtgate_count", "vtgate_max_count", "vtgate_autoscaling",
               "vtgate_target_cpu_utilization")
CATALOGUE_TIME = "2025-01-01T00:00:00.000Z"
DOCS = "https://planetscale.com/docs/postgres/cluster-configuration/parameters"
EXTENSION_DOCS = "https://planetscale.com/docs/postgres/extensions"


# ---------------------------------------------------------------- the parameter catalogue


@dataclass(frozen=True)
class ParameterSpec:
    """One parameter the platform lists: namespace, name, type, default, range or options, and whether a change
    needs a restart, is refused (immutable), or is set per database on the data plane (per_database).

    restart is what the emulator answers without a data plane: with one, a pgconf parameter's restart is what the
    real PostgreSQL says (pg_settings.context 'postmaster'; Capacity.restarts)."""

    namespace: str
    name: str
    parameter_type: str
    default: str
    category: str
    description: str
    min: float = 0
    max: float = 0
    options: tuple[str, ...] = ()
    restart: bool = False
    immutable: bool = False
    per_database: bool = False
    extension: str | None = None  # the extension it belongs to


INT_MAX = 2147483647
PARAMETERS = (
    ParameterSpec("pgconf", "max_connections", "integer", "100", "Connections and Authentication",
                  "Maximum number of concurrent connections.", 25, 5000, restart=True),
    ParameterSpec("pgconf", "shared_buffers", "integer", "16384", "Resource Usage / Memory",
                  "Memory used for shared buffers, in 8kB pages.", 16, 1073741823, restart=True),
    ParameterSpec("pgconf", "work_mem", "integer", "4096", "Resource Usage / Memory",
                  "Memory for each sort or hash operation before spilling to disk, in kB.", 64, INT_MAX,
                  per_database=True),
    ParameterSpec("pgconf", "maintenance_work_mem", "integer", "65536", "Resource Usage / Memory",
                  "Memory for maintenance operations (VACUUM, CREATE INDEX), in kB.", 1024, INT_MAX,
                  per_database=True),
    ParameterSpec("pgconf", "statement_timeout", "integer", "0", "Client Connection Defaults",
                  "Abort any statement that takes longer than this, in milliseconds (0: no limit).", 0, INT_MAX,
                  per_database=True),
    ParameterSpec("pgconf", "lock_timeout", "integer", "0", "Client Connection Defaults",
                  "Abort any statement that waits longer than this for a lock, in milliseconds (0: no limit).", 0,
                  INT_MAX, per_database=True),
    ParameterSpec("pgconf", "idle_in_transaction_session_timeout", "integer", "0", "Client Connection Defaults",
                  "End sessions idle in a transaction longer than this, in milliseconds (0: never).", 0, INT_MAX,
                  per_database=True),
    ParameterSpec("pgconf", "log_min_duration_statement", "integer", "-1", "Reporting and Logging",
                  "Log statements running at least this long, in milliseconds (-1: off).", -1, INT_MAX,
                  per_database=True),
    ParameterSpec("pgconf", "random_page_cost", "float", "4", "Query Tuning",
                  "The planner's estimate of the cost of a non-sequentially fetched disk page.", 0, 1.0e10,
                  per_database=True),
    ParameterSpec("pgconf", "log_statement", "select", "none", "Reporting and Logging",
                  "Which statements are logged.", options=("none", "ddl", "mod", "all")),
    ParameterSpec("pgconf", "wal_level", "select", "logical", "Write-Ahead Log",
                  "How much information is written to the WAL (set by the platform).", options=("replica", "logical"),
                  restart=True, immutable=True),
    ParameterSpec("pgconf", "pg_stat_statements.max", "integer", "5000", "Extensions",
                  "Maximum number of statements tracked by pg_stat_statements.", 100, 1073741823, restart=True,
                  extension="pg_stat_statements"),
    ParameterSpec("pgconf", "pg_stat_statements.track", "select", "top", "Extensions",
                  "Which statements pg_stat_statements counts.", options=("none", "top", "all"),
                  extension="pg_stat_statements"),
    ParameterSpec("patroni", "synchronous_mode", "boolean", "false", "Replication",
                  "Commit only when a replica has the transaction."),
    ParameterSpec("patroni", "maximum_lag_on_failover", "integer", "1048576", "Replication",
                  "Bytes a replica may lag behind and still be promoted.", 0, INT_MAX),
    ParameterSpec("pgbouncer", "default_pool_size", "integer", "20", "PgBouncer",
                  "Server connections per user and database pair.", 1, 10000),
    ParameterSpec("pgbouncer", "max_client_conn", "integer", "1000", "PgBouncer",
                  "Maximum number of client connections.", 1, 100000),
    ParameterSpec("pgbouncer", "pool_mode", "select", "transaction", "PgBouncer",
                  "When a server connection goes back to the pool.", options=("session", "transaction", "statement")),
)
CATALOGUE = {(spec.namespace, spec.name): spec for spec in PARAMETERS}


@dataclass(frozen=True)
class ExtensionSpec:
    name: str
    description: str
    loader: str
    available: bool = True
    unavailable_reason: str = ""


EXTENSIONS = (
    ExtensionSpec("pg_stat_statements", "Track planning and execution statistics of all SQL statements",
                  "shared_preload_libraries"),
    ExtensionSpec("pgcrypto", "Cryptographic functions", "create_extension"),
    ExtensionSpec("postgis", "PostGIS geometry and geography spatial types and functions", "create_extension"),
    ExtensionSpec("pg_trgm", "Text similarity measurement and index searching based on trigrams", "create_extension"),
    ExtensionSpec("uuid-ossp", "Generate universally unique identifiers (UUIDs)", "create_extension"),
    ExtensionSpec("vector", "Vector data type and ivfflat and hnsw access methods", "create_extension"),
    ExtensionSpec("pg_cron", "Job scheduler for PostgreSQL", "shared_preload_libraries"),
    ExtensionSpec("timescaledb", "Time-series data", "shared_preload_libraries", available=False,
                  unavailable_reason="Not offered on this platform"),
)


_CONTEXTS: dict[int, dict[str, str]] = {}  # id of a data plane -> PostgreSQL's pg_settings: name -> context


def _catalogue_id(*parts: str) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()[:12]


def check_value(spec: ParameterSpec, value: Any) -> str:
    """The value as the platform stores it (a string), or invalid_params with a sentence."""
    where = f"parameters.{spec.namespace}.{spec.name}"
    if spec.immutable:
        raise invalid_params(f"{where}: the parameter is immutable and cannot be changed")
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, (int, float, str)):
        text = str(value).strip()
    else:
        raise invalid_params(f"{where}: expected a string, a number or a boolean")
    kind = spec.parameter_type
    if kind == "boolean":
        if text.lower() not in ("true", "false", "on", "off"):
            raise invalid_params(f"{where}: {text!r} is not a boolean (true or false)")
        return "true" if text.lower() in ("true", "on") else "false"
    if kind == "select":
        if text not in spec.options:
            raise invalid_params(f"{where}: {text!r} is not one of {', '.join(spec.options)}")
        return text
    if kind in ("integer", "float"):
        try:
            number = int(text) if kind == "integer" else float(text)
        except ValueError:
            raise invalid_params(f"{where}: {text!r} is not {'an integer' if kind == 'integer' else 'a number'}") \
                from None
        if not spec.min <= number <= spec.max:
            low, high = (int(spec.min), int(spec.max)) if kind == "integer" else (spec.min, spec.max)
            raise invalid_params(f"{where}: {text} is out of range (minimum {low}, maximum {high})")
        return text
    return text


# ---------------------------------------------------------------- records


class CatalogueParameter(Record):
    record_type: ClassVar[str] = "ClusterParameter"

    id: str
    name: str
    display_name: str
    namespace: Literal["patroni", "pgconf", "pgbouncer"]
    category: str
    description: str
    extension: bool
    immutable: bool
    parameter_type: str
    default_value: str
    value: str
    required: bool = False
    created_at: str
    updated_at: str
    restart: bool
    max: int | float
    min: int | float
    url: str
    options: list[str]
    actor: Actor


class Extension(Record):
    record_type: ClassVar[str] = "ClusterExtension"

    id: str
    name: str
    description: str
    internal: bool = False
    loader: str
    url: str
    available: bool
    unavailable_reason: str
    parameters: list[CatalogueParameter]


class ParameterList(RootModel[list[CatalogueParameter]]):
    pass


class ExtensionList(RootModel[list[Extension]]):
    pass


class ChangeRequest(Record):
    record_type: ClassVar[str] = "BranchChangeRequest"

    id: str
    state: Literal["queued", "pending", "resizing", "canceled", "completed"]
    started_at: str | None = None
    completed_at: str | None = None
    created_at: str
    updated_at: str
    actor: Actor
    cluster_name: str
    cluster_display_name: str
    cluster_metal: bool
    replicas: int
    parameters: dict[str, dict[str, str]]
    previous_cluster_name: str
    previous_cluster_display_name: str
    previous_cluster_metal: bool
    previous_replicas: int
    previous_parameters: dict[str, dict[str, str]]
    minimum_storage_bytes: int
    maximum_storage_bytes: int
    storage_autoscaling: bool
    storage_shrinking: bool
    storage_type: str
    storage_iops: int
    storage_throughput_mibs: int
    previous_minimum_storage_bytes: int
    previous_maximum_storage_bytes: int
    previous_storage_autoscaling: bool
    previous_storage_shrinking: bool
    previous_storage_type: str
    previous_storage_iops: int
    previous_storage_throughput_mibs: int

    def _lean(self, data: dict[str, Any], context: dict) -> dict[str, Any]:
        if context.get("recorded_capacity") and self.state == "completed":
            data.pop("replicas", None)  # the platform's completed change requests carry none
        return data


class ResizeRequest(Record):
    record_type: ClassVar[str] = "BranchResizeRequest"

    id: str
    state: Literal["pending", "resizing", "canceled", "completed", "queued"]
    started_at: str | None = None
    completed_at: str | None = None
    created_at: str
    updated_at: str
    vtgate_size: str
    previous_vtgate_size: str
    vtgate_count: int
    previous_vtgate_count: int
    vtgate_max_count: int
    previous_vtgate_max_count: int
    vtgate_autoscaling: bool
    previous_vtgate_autoscaling: bool
    vtgate_target_cpu_utilization: int | float
    previous_vtgate_target_cpu_utilization: int | float
    vtgate_name: str
    vtgate_display_name: str
    previous_vtgate_name: str
    previous_vtgate_display_name: str
    actor: Actor


class ReadOnlyRegion(Record):
    record_type: ClassVar[str] = "ReadOnlyRegion"

    id: str
    display_name: str
    created_at: str
    updated_at: str
    ready_at: str | None = None
    ready: bool
    actor: Actor
    region: Region


# ---------------------------------------------------------------- request bodies

Count = Annotated[StrictInt, Field(ge=0)]
Value = StrictStr | StrictInt | StrictFloat | StrictBool


class StorageChange(Body):
    minimum_storage_bytes: Count | None = None
    maximum_storage_bytes: Count | None = None
    storage_autoscaling: StrictBool | None = None
    storage_iops: Annotated[StrictInt, Field(ge=100, le=64000)] | None = None
    storage_throughput_mibs: Annotated[StrictInt, Field(ge=125, le=4000)] | None = None


class ChangeBody(Body):
    cluster_size: Annotated[StrictStr, Field(min_length=1)] | None = None
    replicas: Annotated[StrictInt, Field(ge=0, le=15)] | None = None
    parameters: dict[StrictStr, dict[StrictStr, Value]] | None = None
    storage: StorageChange | None = None


class ClusterBody(Body):
    cluster_size: Annotated[StrictStr, Field(min_length=1)]


class ResizeBody(Body):
    vtgate_size: StrictStr | None = None
    vtgate_count: Annotated[StrictInt, Field(ge=1, le=64)] | None = None
    vtgate_max_count: Annotated[StrictInt, Field(ge=1, le=64)] | None = None
    vtgate_autoscaling: StrictBool | None = None
    vtgate_target_cpu_utilization: Annotated[StrictInt, Field(ge=1, le=100)] | None = None


# ---------------------------------------------------------------- the state of a branch


@dataclass
class Config:
    """What a branch has (or a request asks for): cluster, replicas, parameters, storage, VTGates."""

    cluster: str
    replicas: int
    parameters: dict[tuple[str, str], str] = field(default_factory=dict)  # only those set away from the default
    storage: dict[str, Any] = field(default_factory=lambda: dict(STORAGE_DEFAULTS))
    vtgate: dict[str, Any] = field(default_factory=dict)

    def copy(self) -> "Config":
        return Config(self.cluster, self.replicas, dict(self.parameters), dict(self.storage), dict(self.vtgate))


@dataclass
class RequestRecord:
    """A change or resize request on the clock: pending one step, resizing one step, then its end."""

    kind: Literal["change", "resize"]
    id: str
    branch: BranchRecord
    actor: Actor
    created: datetime
    step: float
    before: Config
    after: Config
    asked: dict[tuple[str, str], str]  # the parameters it sets
    initial: str = "pending"
    end_state: str = "completed"
    canceled_at: datetime | None = None
    applied: bool = False
    updated: datetime | None = None

    def times(self) -> tuple[datetime, datetime]:
        started = self.created + timedelta(seconds=self.step)
        return started, started + timedelta(seconds=self.step)

    def state(self, now: datetime) -> tuple[str, datetime | None, datetime | None]:
        """(state, started, ended)."""
        started, finished = self.times()
        if self.canceled_at is not None and now >= self.canceled_at:
            return "canceled", (started if self.canceled_at >= started else None), self.canceled_at
        if self.end_state == "canceled" and now >= started:
            return "canceled", None, started
        if now < started:
            return self.initial, None, None
        if now < finished:
            return "resizing", started, None
        return "completed", started, finished


def _sku(engine: str, name: str):
    return next((sku for sku in SKUS[engine] if sku.name == name), None)


def _display(name: str) -> str:
    return name.replace("_", "-")


class Capacity:
    """World methods of change and resize requests, parameters, extensions and read-only regions."""

    def _capacity(self) -> dict:
        if not hasattr(self, "capacity_state"):
            self.capacity_state = {"configs": {}, "requests": {}, "regions": {}}
        return self.capacity_state

    def branch_config(self, branch: BranchRecord) -> Config:
        """What the branch has: its record says the cluster, the VTGates and whether it has replicas (promote and
        demote change that); the replica count, the parameters and the storage are kept here."""
        configs = self._capacity()["configs"]
        m = branch.model
        config = configs.setdefault(m.id, Config(m.cluster_name, 2 if m.has_replicas else 0))
        config.cluster, config.vtgate = m.cluster_name, self._vtgate_of(branch)
        if m.has_replicas != (config.replicas > 0):
            config.replicas = 2 if m.has_replicas else 0
        m.replica_count = config.replicas
        return config

    @staticmethod
    def _vtgate_of(branch: BranchRecord) -> dict:
        m = branch.model
        return dict(vtgate_size=m.vtgate_name or m.vtgate_size, vtgate_count=m.vtgate_count,
                    vtgate_max_count=m.vtgate_max_count if m.vtgate_max_count is not None else m.vtgate_count,
                    vtgate_autoscaling=m.vtgate_autoscaling,
                    vtgate_target_cpu_utilization=m.vtgate_target_cpu_utilization or 0)

    def _requests(self, branch: BranchRecord, adding: bool = False) -> list[RequestRecord]:
        requests = self._capacity()["requests"]
        return requests.setdefault(branch.model.id, []) if adding else requests.get(branch.model.id, [])

    # ------------------------------------------------------------ the clock

    def settle_capacity(self, db: DatabaseRecord) -> None:
        """Apply every request of the database's branches that has completed by now (called when it is read)."""
        now = self.now()
        for branch in db.branches.values():
            for request in reversed(self._requests(branch)):  # oldest first
                state, _, ended = request.state(now)
                if state == "completed" and not request.applied:
                    request.applied = True
                    self._apply(db, branch, request, ended)

    def _apply(self, db: DatabaseRecord, branch: BranchRecord, request: RequestRecord, when: datetime) -> None:
        config = self.branch_config(branch)
        after = request.after
        m = branch.model
        if request.kind == "resize":
            v = after.vtgate
            m.vtgate_size = m.vtgate_name = v["vtgate_size"]
            m.vtgate_count, m.vtgate_autoscaling = v["vtgate_count"], v["vtgate_autoscaling"]
            m.vtgate_max_count = v["vtgate_max_count"]
            m.vtgate_target_cpu_utilization = v["vtgate_target_cpu_utilization"] or None
        else:
            config.cluster, config.replicas = after.cluster, after.replicas
            m.replica_count = after.replicas
            config.storage = dict(after.storage)
            config.parameters.update(request.asked)
            m.cluster_name, m.has_replicas = after.cluster, after.replicas > 0
            sku = _sku(db.model.kind, after.cluster)
            m.metal = bool(sku and sku.metal)
            m.cluster_iops = after.storage.get("storage_iops", m.cluster_iops)
            self.data_parameters_changed(branch, request.asked)
        m.updated_at = max(m.updated_at, stamp(when))

    def data_parameters_changed(self, branch: BranchRecord, asked: dict) -> None:
        """A completed parameter change that PostgreSQL applies per database: ALTER DATABASE ... SET."""
        settings = {name: value for (namespace, name), value in asked.items()
                    if CATALOGUE[(namespace, name)].per_database}
        name = self.data_names.get(branch.model.id) if self.data is not None else None
        if not settings or name is None or branch.model.kind != "postgresql" or not self._data_go_live():
            return
        from psycopg import sql

        self._data_database(name)
        for parameter, value in settings.items():
            spec = CATALOGUE[("pgconf", parameter)]
            statement = sql.SQL("ALTER DATABASE {} SET {} = {}").format(
                sql.Identifier(name), sql.Identifier(parameter), sql.Literal(value))
            if value == spec.default:
                statement = sql.SQL("ALTER DATABASE {} RESET {}").format(sql.Identifier(name),
                                                                         sql.Identifier(parameter))
            self.data.pg(statement)

    def _render(self, request: RequestRecord, now: datetime) -> ChangeRequest | ResizeRequest:
        state, started, ended = request.state(now)
        changed = max(x for x in (request.created, request.updated, started, ended) if x is not None)
        common = dict(id=request.id, state=state, started_at=stamp(started) if started else None,
                      completed_at=stamp(ended) if ended else None, created_at=stamp(request.created),
                      updated_at=stamp(changed), actor=request.actor)
        before, after = request.before, request.after
        if request.kind == "resize":
            fields = {}
            for key in VTGATE_KEYS:
                fields[key], fields[f"previous_{key}"] = after.vtgate[key], before.vtgate[key]
            return ResizeRequest(**common, **fields, vtgate_name=after.vtgate["vtgate_size"],
                                 vtgate_display_name=_display(after.vtgate["vtgate_size"]),
                                 previous_vtgate_name=before.vtgate["vtgate_size"],
                                 previous_vtgate_display_name=_display(before.vtgate["vtgate_size"]))
        engine = request.branch.model.kind
        nested, previous = {}, {}
        for (namespace, name), value in request.asked.items():
            nested.setdefault(namespace, {})[name] = value
            previous.setdefault(namespace, {})[name] = before.parameters.get((namespace, name),
                                                                            CATALOGUE[(namespace, name)].default)
        storage = {key: after.storage[key] for key in STORAGE_DEFAULTS}
        storage.update({f"previous_{key}": before.storage[key] for key in STORAGE_DEFAULTS})
        new_sku, old_sku = _sku(engine, after.cluster), _sku(engine, before.cluster)
        return ChangeRequest(**common, cluster_name=after.cluster, cluster_display_name=_display(after.cluster),
                             cluster_metal=bool(new_sku and new_sku.metal), replicas=after.replicas,
                             parameters=nested, previous_cluster_name=before.cluster,
                             previous_cluster_display_name=_display(before.cluster),
                             previous_cluster_metal=bool(old_sku and old_sku.metal), previous_replicas=before.replicas,
                             previous_parameters=previous, **storage)

    # ------------------------------------------------------------ asking for a change

    def _running(self, branch: BranchRecord, kind: str) -> RequestRecord | None:
        now = self.now()
        return next((r for r in self._requests(branch) if r.kind == kind and r.state(now)[0] in RUNNING), None)

    def _target(self, branch: BranchRecord, kind: str) -> tuple[RequestRecord | None, Config]:
        """The pending request to update (an upsert) or None, and the configuration the new values go over."""
        running = self._running(branch, kind)
        if running is None:
            return None, self.branch_config(branch).copy()
        state = running.state(self.now())[0]
        if state == "resizing":
            what = "resize request" if kind == "resize" else "change request"
            raise unprocessable(f"Branch {branch.model.name!r} has a {what} resizing ({running.id}): wait for it "
                                f"to complete before asking for another")
        return running, running.after.copy()

    def _submit(self, branch: BranchRecord, kind: str, pending: RequestRecord | None, after: Config,
                asked: dict, user: User, end_state: str | None = None) -> RequestRecord | None:
        now = self.now()
        if pending is not None:
            if after == pending.after and not asked.keys() - pending.asked.keys():
                return pending
            pending.after, pending.updated = after, now
            pending.asked.update(asked)
            return pending
        before = self.branch_config(branch).copy()
        if after == before:
            return None  # nothing to change: 204
        s = self.settings
        request = RequestRecord(kind, self.new_id(), branch, user.actor(), now, s.change_step_delay, before, after,
                                dict(asked), initial=s.change_initial_state,
                                end_state=end_state or s.change_fail_state or "completed")
        self._requests(branch, adding=True).insert(0, request)  # newest first
        return request

    def _postgres(self, org: OrgRecord, database: str, name: str, what: str, write: bool = False) -> BranchRecord:
        branch = self.find_branch(org, database, name)
        if branch.model.kind != "postgresql":
            raise unprocessable(f"{what} are for PostgreSQL branches: {name!r} is a MySQL branch")
        return self._ready_branch(org, database, name, "be resized") if write else branch

    def _mysql(self, org: OrgRecord, database: str, name: str, what: str) -> BranchRecord:
        branch = self.find_branch(org, database, name)
        if branch.model.kind != "mysql":
            raise unprocessable(f"{what} is for MySQL branches: {name!r} is a PostgreSQL branch")
        return self._ready_branch(org, database, name, "be resized")

    @staticmethod
    def _check_size(engine: str, size: str) -> str:
        """The size as the branch keeps it, where the engine lists it (databases.size_for); else 422."""
        return size_for(engine, size)

    def _change_config(self, branch: BranchRecord, body: ChangeBody, base: Config) -> tuple[Config, dict]:
        after = base.copy()
        if body.cluster_size is not None:
            after.cluster = self._check_size(branch.model.kind, body.cluster_size)
        if body.replicas is not None:
            after.replicas = body.replicas
        asked = {}
        for namespace, values in (body.parameters or {}).items():
            if namespace not in ("patroni", "pgconf", "pgbouncer"):
                raise invalid_params(f"parameters.{namespace}: no such namespace (patroni, pgconf or pgbouncer)")
            for name, value in values.items():
                spec = CATALOGUE.get((namespace, name))
                if spec is None:
                    raise invalid_params(f"parameters.{namespace}.{name}: no such parameter on this branch")
                text = check_value(spec, value)
                current = self.branch_config(branch).parameters.get((namespace, name), spec.default)
                if text != after.parameters.get((namespace, name), current):
                    asked[(namespace, name)] = text
                    after.parameters[(namespace, name)] = text
        if body.storage is not None:
            given = body.storage.model_dump(exclude_none=True)
            after.storage.update(given)
            if after.storage["minimum_storage_bytes"] > after.storage["maximum_storage_bytes"]:
                raise invalid_params("storage: minimum_storage_bytes is larger than maximum_storage_bytes")
        return after, asked

    @locked
    def request_change(self, org: OrgRecord, database: str, name: str, body: ChangeBody, user: User,
                       end_state: str | None = None) -> ChangeRequest | None:
        branch = self._postgres(org, database, name, "Change requests", write=True)
        pending, base = self._target(branch, "change")
        after, asked = self._change_config(branch, body, base)
        request = self._submit(branch, "change", pending, after, asked, user, end_state)
        return None if request is None else self._render(request, self.now())

    @locked
    def change_cluster(self, org: OrgRecord, database: str, name: str, body: ClusterBody, user: User,
                       end_state: str | None = None) -> RequestRecord | None:
        branch = self._mysql(org, database, name, "PATCH .../cluster")
        size = self._check_size("mysql", body.cluster_size)
        pending, base = self._target(branch, "change")
        after = base.copy()
        after.cluster = size
        return self._submit(branch, "change", pending, after, {}, user, end_state)

    @locked
    def request_resize(self, org: OrgRecord, database: str, name: str, body: ResizeBody, user: User,
                       end_state: str | None = None) -> ResizeRequest | None:
        branch = self._mysql(org, database, name, "A VTGate resize")
        pending, base = self._target(branch, "resize")
        after = base.copy()
        given = body.model_dump(exclude_none=True)
        if "vtgate_size" in given and given["vtgate_size"] not in VTGATE_SIZES:
            raise unprocessable(f"VTGate size {given['vtgate_size']!r} does not exist: one of "
                                f"{', '.join(VTGATE_SIZES)}")
        after.vtgate.update(given)
        v = after.vtgate
        if v["vtgate_autoscaling"]:
            if v["vtgate_max_count"] < v["vtgate_count"]:
                raise invalid_params("vtgate_max_count: smaller than vtgate_count")
            if not v["vtgate_target_cpu_utilization"]:
                raise invalid_params("vtgate_target_cpu_utilization: needed when vtgate_autoscaling is true")
        request = self._submit(branch, "resize", pending, after, {}, user, end_state)
        return None if request is None else self._render(request, self.now())

    @locked
    def cancel_requests(self, org: OrgRecord, database: str, name: str, kinds=("resize", "change"),
                        force: bool = False) -> list[str]:
        """Cancel the branch's pending requests (force: resizing ones too); answer their ids. None: 422."""
        branch = self.find_branch(org, database, name)
        now = self.now()
        canceled = []
        for request in self._requests(branch):
            state = request.state(now)[0]
            if request.kind in kinds and (state in ("queued", "pending") or (force and state == "resizing")):
                request.canceled_at = now
                canceled.append(request.id)
        if not canceled:
            if any(r.kind in kinds and r.state(now)[0] == "resizing" for r in self._requests(branch)):
                raise unprocessable(f"Branch {name!r} is resizing: a request cannot be canceled once resizing")
            raise unprocessable(f"Branch {name!r} has no pending request to cancel")
        return canceled

    # ------------------------------------------------------------ reading

    @locked
    def change_requests(self, org: OrgRecord, database: str, name: str, paging: Paging,
                        kind: str = "change") -> Window:
        branch = self.find_branch(org, database, name)
        now = self.now()
        return window([self._render(r, now) for r in self._requests(branch) if r.kind == kind], paging)

    @locked
    def change_request(self, org: OrgRecord, database: str, name: str, rid: str, kind: str = "change"):
        branch = self.find_branch(org, database, name)
        found = next((r for r in self._requests(branch) if r.kind == kind and r.id == rid), None)
        if found is None:
            raise not_found("Resize request" if kind == "resize" else "Change request")
        return self._render(found, self.now())

    def _parameter(self, spec: ParameterSpec, branch: BranchRecord) -> CatalogueParameter:
        value = self.branch_config(branch).parameters.get((spec.namespace, spec.name), spec.default)
        actor = branch.model.actor
        return CatalogueParameter(
            id=_catalogue_id(spec.namespace, spec.name), name=spec.name, display_name=spec.name,
            namespace=spec.namespace, category=spec.category, description=spec.description,
            extension=spec.extension is not None, immutable=spec.immutable, parameter_type=spec.parameter_type,
            default_value=spec.default, value=value, created_at=CATALOGUE_TIME, updated_at=branch.model.updated_at,
            restart=self.restarts(spec), max=spec.max, min=spec.min, url=f"{DOCS}#{spec.name}",
            options=list(spec.options), actor=actor)

    def restarts(self, spec: ParameterSpec) -> bool:
        """Whether a change of the parameter restarts the server: for a pgconf parameter the data plane's PostgreSQL
        lists, its pg_settings.context is 'postmaster' (read once a data plane); otherwise (no data plane, a
        parameter of patroni or pgbouncer, or one PostgreSQL does not list) the catalogue's restart."""
        contexts = _CONTEXTS.get(id(self.data)) if self.data is not None else None
        if self.data is not None and contexts is None:
            try:
                contexts = dict(self.data.pg("SELECT name, context FROM pg_settings"))
            except Exception:  # pylint: disable=broad-except  # a server that does not answer: the catalogue's flags
                contexts = {}
            _CONTEXTS[id(self.data)] = contexts
        if spec.namespace == "pgconf" and spec.name in (contexts or {}):
            return contexts[spec.name] == "postmaster"
        return spec.restart

    @locked
    def parameters(self, org: OrgRecord, database: str, name: str) -> ParameterList:
        branch = self._postgres(org, database, name, "Cluster parameters")
        return ParameterList([self._parameter(spec, branch) for spec in PARAMETERS])

    @locked
    def extensions(self, org: OrgRecord, database: str, name: str) -> ExtensionList:
        branch = self._postgres(org, database, name, "Cluster extensions")
        return ExtensionList([
            Extension(id=_catalogue_id("extension", spec.name), name=spec.name, description=spec.description,
                      loader=spec.loader, url=f"{EXTENSION_DOCS}/{spec.name}", available=spec.available,
                      unavailable_reason=spec.unavailable_reason,
                      parameters=[self._parameter(p, branch) for p in PARAMETERS if p.extension == spec.name])
            for spec in EXTENSIONS])

    # ------------------------------------------------------------ read-only regions

    def add_read_only_region(self, org: OrgRecord, db: DatabaseRecord, slug: str, user: User,
                             ready: bool = True) -> ReadOnlyRegion:
        region = org.regions.get(slug)
        if region is None:
            raise unprocessable(f"Region {slug!r} does not exist")
        regions = self._capacity()["regions"].setdefault(db.model.id, {})
        if slug in regions or slug == db.model.region.slug:
            raise unprocessable(f"Database {db.model.name!r} already serves region {slug!r}")
        now = stamp(self.now())
        record = ReadOnlyRegion(id=_catalogue_id(db.model.id, slug), display_name=region.display_name,
                                created_at=now, updated_at=now, ready_at=now if ready else None, ready=ready,
                                actor=user.actor(), region=region)
        regions[slug] = record
        return record

    @locked
    def read_only_regions(self, org: OrgRecord, database: str, paging: Paging) -> Window[ReadOnlyRegion]:
        db = self.find_database(org, database)
        return window(list(self._capacity()["regions"].get(db.model.id, {}).values()), paging)

