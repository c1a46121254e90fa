"""Keyspaces of MySQL (Vitess) branches, their resize requests on the clock, their rollout status and their VSchema.

A MySQL branch has its *default* keyspace, named after the database (``default: true``, unsharded, the branch's
cluster size); ``POST .../keyspaces`` adds others (``cluster_size`` from the sizes the organization lists,
``shards`` 1..128, ``extra_replicas``). A child branch starts with its parent's keyspaces (records and VSchema; on
the data plane their tables, as the default keyspace's). Each keyspace is its own MariaDB schema
(dataplane/keyspaces.py: the default keyspace's is the branch's schema, ``<database>__<branch>``, another's
``<database>__<branch>$<keyspace>``); the branch's passwords are granted on every one of them.

Resize requests (``PUT .../keyspaces/{keyspace}/resizes``) follow the clock as capacity's do (capacity.RequestRecord:
``change_step_delay``, ``change_initial_state``, ``change_fail_state``)::

    PUT .../resizes -> pending --change_step_delay--> resizing --change_step_delay--> completed
                               \\-> canceled (change_fail_state, DELETE .../resizes, the control API)

A request asked while one is pending updates that one (an upsert, same id); while one is resizing: 422; one that
changes nothing: 422 "No changes to apply" (the OpenAPI declares no 204 for it). A completed request's cluster size,
extra replicas and vector pool allocation reach the keyspace (the default keyspace's cluster size is the branch's:
one reaches the other). The rollout status is ``in_progress`` while the keyspace is new (``ready_delay``) or a
resize runs, else ``complete``; its shards are named by even key ranges (1: ``-``; 2: ``-80``, ``80-``; 4: ``-40``,
``40-80``, ``80-c0``, ``c0-``).

A VSchema is checked against the keyspace's real tables and columns (world/vschema.py) and kept parsed; ``raw`` is
answered as a JSON string. Under the ``recorded_vitess`` setting the answers take the shapes the platform's recorded
ones have (../shared/reference/README.md): lean keyspace records, lists without ``per_page``, resize requests
without display names and vector fields (a pending one with ``completed_at``), ``html`` beside ``raw``.

Every operation on a PostgreSQL branch answers 422. Mixed into state.World: every public method runs under its lock.
"""

import copy
import hashlib
import html
import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, Field, StrictBool, StrictInt, StrictStr

from .capacity import RUNNING, RequestRecord, _display, _sku
from .databases import size_for
from .models import Actor, Body, Record, User
from .records import BranchRecord, DatabaseRecord, OrgRecord, Paging, Window, invalid_params, locked, not_found
from .records import stamp, unprocessable, window
from .vschema import check_vschema, parse_vschema, tables_without_primary_vindex
from ..dataplane.schema import lint, lint_error

KEYSPACE_NAME = r"^[a-z0-9][a-z0-9_-]{0,62}$"
MAX_SHARDS = 128
STRATEGIES = ("available", "lag", "always")
FLAGS = dict(optimize_inserts=True, allow_no_blob_binlog_row_image=False, vplayer_batching=False)
VINDEX_DOCS = "https://planetscale.com/docs/vitess/sharding/vindexes"
RECORDED_KEYSPACE_KEYS = ("type", "id", "name", "shards", "sharded", "created_at", "updated_at")
RECORDED_RESIZE_WITHOUT = ("cluster_display_name", "previous_cluster_display_name", "vector_pool_allocation",
                           "previous_vector_pool_allocation")


# ---------------------------------------------------------------- records


class Keyspace(Record):
    record_type: ClassVar[str] = "Keyspace"

    id: str
    name: str
    shards: int
    sharded: bool
    replicas: int
    extra_replicas: int
    created_at: str
    updated_at: str
    cluster_name: str
    cluster_display_name: str
    resizing: bool
    resize_in_progress: bool
    resize_pending: bool
    config_change_in_progress: bool = False
    ready: bool
    metal: bool
    default: bool
    imported: bool = False
    vector_pool_allocation: float | None
    node_ttl_strategy: str = "node_ttl_follow_maintenance"
    replication_durability_constraints: dict[str, str | None]
    vreplication_flags: dict[str, bool]
    mysqld_options: dict[str, Any] = {}
    vttablet_options: dict[str, Any] = {}

    def _lean(self, data: dict[str, Any], context: dict) -> dict[str, Any]:
        if context.get("recorded_vitess"):
            return {key: value for key, value in data.items() if key in RECORDED_KEYSPACE_KEYS}
        return data


class KeyspaceResizeRequest(Record):
    record_type: ClassVar[str] = "KeyspaceResizeRequest"

    id: str
    state: str
    started_at: str | None = None
    completed_at: str | None = None
    created_at: str
    updated_at: str
    extra_replicas: int
    vector_pool_allocation: float
    previous_vector_pool_allocation: float
    cluster_name: str
    cluster_display_name: str
    previous_cluster_name: str
    previous_cluster_display_name: str
    replicas: int
    previous_replicas: int
    actor: Actor

    def _lean(self, data: dict[str, Any], context: dict) -> dict[str, Any]:
        if not context.get("recorded_vitess"):
            return data
        data = {key: value for key, value in data.items() if key not in RECORDED_RESIZE_WITHOUT}
        data["actor"] = {key: value for key, value in data["actor"].items() if key != "avatar_url"}
        if data["state"] in ("pending", "queued") and data["completed_at"] is None:
            data["completed_at"] = data["created_at"]  # the platform's pending requests already carry one
        return data


class RolloutShard(BaseModel):
    name: str
    last_rollout_started_at: str
    last_rollout_finished_at: str
    state: str


class RolloutStatus(Record):
    record_type: ClassVar[str] = "BranchInfrastructureKeyspace"

    name: str
    state: str
    shards: list[RolloutShard]


class VSchemaDocument(Record):
    raw: str
    html: str

    def _lean(self, data: dict[str, Any], context: dict) -> dict[str, Any]:
        if not context.get("recorded_vitess"):
            data.pop("html", None)  # the OpenAPI names raw only; the platform's answers add html
        return data


# ---------------------------------------------------------------- request bodies


class KeyspaceCreate(Body):
    name: Annotated[StrictStr, Field(pattern=KEYSPACE_NAME)]
    cluster_size: Annotated[StrictStr, Field(min_length=1)]
    extra_replicas: Annotated[StrictInt, Field(ge=0, le=16)] | None = None
    shards: Annotated[StrictInt, Field(ge=1, le=MAX_SHARDS)] | None = None


class Durability(Body):
    strategy: StrictStr | None = None


class VReplicationFlags(Body):
    optimize_inserts: StrictBool | None = None
    allow_no_blob_binlog_row_image: StrictBool | None = None
    vplayer_batching: StrictBool | None = None


class KeyspaceUpdate(Body):
    replication_durability_constraints: Durability | None = None
    io_constraints: Durability | None = None  # planetscale-go's UpdateSettings sends the strategy under this key
    vreplication_flags: VReplicationFlags | None = None


class KeyspaceResizeBody(Body):
    cluster_size: Annotated[StrictStr, Field(min_length=1)] | None = None
    extra_replicas: Annotated[StrictInt, Field(ge=0, le=16)] | None = None
    vector_pool_allocation: Annotated[StrictInt, Field(ge=0, le=100)] | None = None


class VSchemaUpdate(Body):
    vschema: StrictStr


# ---------------------------------------------------------------- the state of a keyspace


@dataclass
class KeyspaceConfig:
    """What a keyspace has (or a resize asks for)."""

    cluster: str
    extra_replicas: int = 0
    vector_pool_allocation: float | None = None

    def copy(self) -> "KeyspaceConfig":
        return KeyspaceConfig(self.cluster, self.extra_replicas, self.vector_pool_allocation)


@dataclass
class KeyspaceRecord:
    id: str
    name: str
    created: datetime
    ready_at: datetime
    shards: int
    config: KeyspaceConfig
    default: bool = False
    vschema: dict = field(default_factory=dict)
    updated: datetime | None = None
    strategy: str = "available"  # openapi-core takes no null for the nullable enum: the first of the enum
    flags: dict = field(default_factory=lambda: dict(FLAGS))
    resizes: list[RequestRecord] = field(default_factory=list)  # newest first

    @property
    def sharded(self) -> bool:
        return self.shards > 1 or bool(self.vschema.get("sharded"))


def keyspace_id(branch: BranchRecord, name: str) -> str:
    """A keyspace's id, from its branch and name (the world's random ids stay as they were before keyspaces)."""
    return hashlib.sha256(f"{branch.model.id}/{name}".encode()).hexdigest()[:12]


def shard_names(shards: int) -> list[str]:
    """The shards' key ranges, even: 1 -> ['-'], 2 -> ['-80', '80-'], 4 -> ['-40', '40-80', '80-c0', 'c0-']."""
    if shards == 1:
        return ["-"]
    bounds = [""] + [f"{i * 256 // shards:02x}" for i in range(1, shards)] + [""]
    return [f"{bounds[i]}-{bounds[i + 1]}" for i in range(shards)]


def _range(value: str, name: str) -> tuple[datetime, datetime]:
    parts = value.split("..")
    if len(parts) != 2:
        raise invalid_params(f"{name}: {value!r} is not a range START..END")
    moments = []
    for part in parts:
        try:
            moment = datetime.fromisoformat(part.replace("Z", "+00:00"))
        except ValueError:
            raise invalid_params(f"{name}: {part!r} is not an ISO 8601 time") from None
        if moment.tzinfo is None:
            raise invalid_params(f"{name}: {part!r} needs a time zone (Z for UTC)")
        moments.append(moment)
    return moments[0], moments[1]


class Keyspaces:
    """World methods of keyspaces, their resize requests, rollout status and VSchema."""

    # ------------------------------------------------------------ branches

    def keyspaces_branched(self, db: DatabaseRecord, branch: BranchRecord, parent: BranchRecord | None) -> None:
        """A new MySQL branch: its parent's keyspaces (records, sizes, VSchema), or its default keyspace."""
        if db.model.kind != "mysql":
            return
        created = datetime.fromisoformat(branch.model.created_at.replace("Z", "+00:00"))
        if parent is None or not parent.keyspaces:
            config = KeyspaceConfig(branch.model.cluster_name)
            branch.keyspaces[db.model.name] = KeyspaceRecord(keyspace_id(branch, db.model.name), db.model.name,
                                                             created, branch.ready_at, 1, config, default=True)
            return
        for name, record in parent.keyspaces.items():
            config = KeyspaceConfig(branch.model.cluster_name) if record.default else record.config.copy()
            branch.keyspaces[name] = KeyspaceRecord(
                keyspace_id(branch, name), name, created, branch.ready_at, record.shards, config, record.default,
                copy.deepcopy(record.vschema), strategy=record.strategy, flags=dict(record.flags))

    def keyspace_names(self, branch: BranchRecord) -> list[str]:
        """The branch's keyspaces, the default one first."""
        return sorted(branch.keyspaces, key=lambda name: not branch.keyspaces[name].default)

    def _vitess_branch(self, org: OrgRecord, database: str, name: str) -> BranchRecord:
        branch = self.find_branch(org, database, name)
        if branch.model.kind != "mysql":
            raise unprocessable(f"Keyspaces are for MySQL (Vitess) branches: {name!r} is a PostgreSQL branch")
        return branch

    def _keyspace(self, org: OrgRecord, database: str, branch: str, keyspace: str) -> tuple[BranchRecord,
                                                                                              KeyspaceRecord]:
        found = self._vitess_branch(org, database, branch)
        record = found.keyspaces.get(keyspace)
        if record is None:
            raise not_found("Keyspace")
        return found, record

    # ------------------------------------------------------------ the clock

    def _keyspace_config(self, branch: BranchRecord, record: KeyspaceRecord) -> KeyspaceConfig:
        if record.default:  # the default keyspace's size is the branch's (PATCH .../cluster, capacity.py)
            record.config.cluster = branch.model.cluster_name
        return record.config

    def settle_keyspaces(self, db: DatabaseRecord) -> None:
        """Apply every keyspace resize request that has completed by now (called when the database is read)."""
        now = self.now()
        for branch in db.branches.values():
            for record in branch.keyspaces.values():
                for request in reversed(record.resizes):  # oldest first
                    state, _, ended = request.state(now)
                    if state == "completed" and not request.applied:
                        request.applied = True
                        record.config = request.after.copy()
                        record.updated = ended
                        if record.default:
                            branch.model.cluster_name = request.after.cluster
                            branch.model.updated_at = max(branch.model.updated_at, stamp(ended))

    # ------------------------------------------------------------ rendering

    @staticmethod
    def _keyspace_replicas(branch: BranchRecord, config: KeyspaceConfig) -> int:
        return (2 if branch.model.has_replicas else 0) + config.extra_replicas

    def render_keyspace(self, branch: BranchRecord, record: KeyspaceRecord) -> Keyspace:
        now = self.now()
        config = self._keyspace_config(branch, record)
        states = [request.state(now)[0] for request in record.resizes]
        sku = _sku("mysql", config.cluster)
        changed = max(x for x in (record.created, record.updated) if x is not None)
        return Keyspace(
            id=record.id, name=record.name, shards=record.shards, sharded=record.sharded,
            replicas=self._keyspace_replicas(branch, config), extra_replicas=config.extra_replicas,
            created_at=stamp(record.created), updated_at=stamp(changed), cluster_name=config.cluster,
            cluster_display_name=_display(config.cluster), resizing="resizing" in states,
            resize_in_progress=any(state in RUNNING for state in states),
            resize_pending=any(state in ("pending", "queued") for state in states), ready=now >= record.ready_at,
            metal=bool(sku and sku.metal), default=record.default,
            vector_pool_allocation=config.vector_pool_allocation,
            replication_durability_constraints={"strategy": record.strategy},
            vreplication_flags=dict(record.flags))

    def _render_keyspace_resize(self, branch: BranchRecord, request: RequestRecord) -> KeyspaceResizeRequest:
        state, started, ended = request.state(self.now())
        changed = max(x for x in (request.created, request.updated, started, ended) if x is not None)
        before, after = request.before, request.after
        return KeyspaceResizeRequest(
            id=request.id, state=state, started_at=stamp(started) if started else None,
            completed_at=stamp(ended) if ended else None, created_at=stamp(request.created),
            updated_at=stamp(changed), extra_replicas=after.extra_replicas,
            vector_pool_allocation=after.vector_pool_allocation or 0,
            previous_vector_pool_allocation=before.vector_pool_allocation or 0, cluster_name=after.cluster,
            cluster_display_name=_display(after.cluster), previous_cluster_name=before.cluster,
            previous_cluster_display_name=_display(before.cluster), replicas=self._keyspace_replicas(branch, after),
            previous_replicas=self._keyspace_replicas(branch, before), actor=request.actor)

    # ------------------------------------------------------------ keyspaces

    @locked
    def list_keyspaces(self, org: OrgRecord, database: str, branch: str, paging: Paging) -> Window[Keyspace]:
        found = self._vitess_branch(org, database, branch)
        return window([self.render_keyspace(found, found.keyspaces[name]) for name in self.keyspace_names(found)],
                      paging)

    @locked
    def get_keyspace(self, org: OrgRecord, database: str, branch: str, keyspace: str) -> Keyspace:
        return self.render_keyspace(*self._keyspace(org, database, branch, keyspace))

    @locked
    def create_keyspace(self, org: OrgRecord, database: str, branch: str, body: KeyspaceCreate) -> Keyspace:
        found = self._vitess_branch(org, database, branch)
        if body.name in found.keyspaces:
            raise unprocessable(f"Name has already been taken: keyspace {body.name!r} exists on branch {branch!r}")
        size = size_for("mysql", body.cluster_size)
        shards = body.shards or 1
        now = self.now()
        self._data_go_live()  # the servers first hold the world as it was; the keyspace's schema is made below
        record = KeyspaceRecord(keyspace_id(found, body.name), body.name, now,
                                now + timedelta(seconds=self.settings.ready_delay), shards,
                                KeyspaceConfig(size, body.extra_replicas or 0),
                                vschema={"sharded": True} if shards > 1 else {})
        found.keyspaces[body.name] = record
        self.data_keyspace_created(found, body.name)
        self._keyspaces_changed(found)
        return self.render_keyspace(found, record)

    @locked
    def update_keyspace(self, org: OrgRecord, database: str, branch: str, keyspace: str,
                        body: KeyspaceUpdate) -> Keyspace:
        found, record = self._keyspace(org, database, branch, keyspace)
        durability = body.replication_durability_constraints or body.io_constraints
        if durability is not None and durability.strategy is not None:
            if durability.strategy not in STRATEGIES:
                raise invalid_params(f"replication_durability_constraints.strategy: {durability.strategy!r} is not "
                                     f"one of {', '.join(STRATEGIES)}")
            record.strategy = durability.strategy
        if body.vreplication_flags is not None:
            record.flags.update(body.vreplication_flags.model_dump(exclude_none=True))
        record.updated = self.now()
        return self.render_keyspace(found, record)

    @locked
    def delete_keyspace(self, org: OrgRecord, database: str, branch: str, keyspace: str) -> None:
        found, record = self._keyspace(org, database, branch, keyspace)
        if record.default:
            raise unprocessable(f"Keyspace {keyspace!r} is the default keyspace of branch {branch!r} and cannot be "
                                "deleted")
        self.refuse_keyspace_of_live_workflow(org.databases[database], found, keyspace)  # world/workflows.py
        self.data_keyspace_removed(found, keyspace)
        del found.keyspaces[keyspace]
        self._keyspaces_changed(found)

    def _keyspaces_changed(self, branch: BranchRecord) -> None:
        m = branch.model
        m.keyspace_count = len(branch.keyspaces)
        m.sharded = any(record.sharded for record in branch.keyspaces.values())
        m.shard_count = sum(record.shards for record in branch.keyspaces.values())
        m.updated_at = stamp(self.now())

    # ------------------------------------------------------------ resize requests

    @locked
    def keyspace_resizes(self, org: OrgRecord, database: str, branch: str, keyspace: str, paging: Paging,
                         completed_at: str | None = None) -> Window[KeyspaceResizeRequest]:
        found, record = self._keyspace(org, database, branch, keyspace)
        during = _range(completed_at, "completed_at") if completed_at else None
        now = self.now()
        requests = []
        for request in record.resizes:
            ended = request.state(now)[2]
            if ended is not None:  # as answered: to the millisecond
                ended = ended.replace(microsecond=ended.microsecond // 1000 * 1000)
            if during is None or ended is not None and during[0] <= ended <= during[1]:
                requests.append(self._render_keyspace_resize(found, request))
        return window(requests, paging)

    @locked
    def keyspace_resize(self, org: OrgRecord, database: str, branch: str, keyspace: str,
                        rid: str) -> KeyspaceResizeRequest:
        found, record = self._keyspace(org, database, branch, keyspace)
        request = next((r for r in record.resizes if r.id == rid), None)
        if request is None:
            raise not_found("Keyspace resize request")
        return self._render_keyspace_resize(found, request)

    @locked
    def request_keyspace_resize(self, org: OrgRecord, database: str, branch: str, keyspace: str,
                                body: KeyspaceResizeBody, user: User,
                                end_state: str | None = None) -> KeyspaceResizeRequest:
        """A new resize request, or the pending one updated (an upsert); 422 while one is resizing or when
        nothing would change."""
        found, record = self._keyspace(org, database, branch, keyspace)
        now = self.now()
        running = next((r for r in record.resizes if r.state(now)[0] in RUNNING), None)
        if running is not None and running.state(now)[0] == "resizing":
            raise unprocessable(f"Keyspace {keyspace!r} has a resize request resizing ({running.id}): wait for it "
                                "to complete before asking for another")
        current = self._keyspace_config(found, record)
        after = (running.after if running is not None else current).copy()
        if body.cluster_size is not None:
            after.cluster = size_for("mysql", body.cluster_size)
        if body.extra_replicas is not None:
            after.extra_replicas = body.extra_replicas
        if body.vector_pool_allocation is not None:
            after.vector_pool_allocation = float(body.vector_pool_allocation)
        if running is not None:
            running.after, running.updated = after, now
            return self._render_keyspace_resize(found, running)
        if after == current:
            raise unprocessable(f"No changes to apply: keyspace {keyspace!r} already has what the request asks for")
        s = self.settings
        request = RequestRecord("resize", self.new_id(), found, user.actor(), now, s.change_step_delay,
                                current.copy(), after, {}, initial=s.change_initial_state,
                                end_state=end_state or s.change_fail_state or "completed")
        record.resizes.insert(0, request)
        return self._render_keyspace_resize(found, request)

    @locked
    def cancel_keyspace_resize(self, org: OrgRecord, database: str, branch: str, keyspace: str,
                               force: bool = False) -> list[str]:
        """Cancel the keyspace's pending resize request (force: a resizing one too); 422 when there is none."""
        _, record = self._keyspace(org, database, branch, keyspace)
        now = self.now()
        canceled = []
        for request in record.resizes:
            state = request.state(now)[0]
            if state in ("queued", "pending") or (force and state == "resizing"):
                request.canceled_at = now
                canceled.append(request.id)
        if not canceled:
            if any(r.state(now)[0] == "resizing" for r in record.resizes):
                raise unprocessable(f"Keyspace {keyspace!r} is resizing: a request cannot be canceled once resizing")
            raise unprocessable(f"Keyspace {keyspace!r} has no pending resize request to cancel")
        return canceled

    @locked
    def keyspace_rollout(self, org: OrgRecord, database: str, branch: str, keyspace: str) -> RolloutStatus:
        record = self._keyspace(org, database, branch, keyspace)[1]
        now = self.now()
        busy = now < record.ready_at or any(r.state(now)[0] == "resizing" for r in record.resizes)
        done = [r.state(now) for r in record.resizes if r.state(now)[0] == "completed"]
        started, finished = (done[0][1], done[0][2]) if done else (record.created, record.ready_at)
        state = "in_progress" if busy else "complete"
        shards = [RolloutShard(name=name, last_rollout_started_at=stamp(started),
                               last_rollout_finished_at=stamp(finished), state=state)
                  for name in shard_names(record.shards)]
        return RolloutStatus(name=record.name, state=state, shards=shards)

    # ------------------------------------------------------------ VSchema

    @staticmethod
    def _vschema_answer(record: KeyspaceRecord) -> VSchemaDocument:
        raw = json.dumps(record.vschema, indent=2)
        return VSchemaDocument(raw=raw, html=f'<pre class="highlight json">{html.escape(raw)}</pre>')

    @locked
    def keyspace_vschema(self, org: OrgRecord, database: str, branch: str, keyspace: str) -> VSchemaDocument:
        return self._vschema_answer(self._keyspace(org, database, branch, keyspace)[1])

    @locked
    def update_keyspace_vschema(self, org: OrgRecord, database: str, branch: str, keyspace: str,
                                text: str) -> VSchemaDocument:
        """The keyspace's VSchema replaced, once checked against its real tables (world/vschema.py); else 422."""
        found, record = self._keyspace(org, database, branch, keyspace)
        document = parse_vschema(text, keyspace)
        check_vschema(document, keyspace, record.shards, self.describe_keyspace(found, keyspace))
        record.vschema = document
        record.updated = self.now()
        self._keyspaces_changed(found)
        return self._vschema_answer(record)

    # ------------------------------------------------------------ lint of every keyspace

    def keyspace_lint(self, branch: BranchRecord, keyspace: str | None = None) -> list[dict]:
        """The lint errors of the branch's keyspaces (one, when named): the tables' (NO_UNIQUE_KEY) and, for a
        sharded keyspace, each real table its VSchema gives no primary vindex (VSCHEMA_NO_PRIMARY_VINDEX, the
        emulator's code; subject_type vschema)."""
        names = self.keyspace_names(branch) if keyspace is None else [keyspace]
        if not branch.keyspaces:  # a PostgreSQL branch: its tables are no keyspace's
            return []
        errors = []
        for name in names:
            description = self.describe_keyspace(branch, name)
            errors += lint(description, name)
            for table in tables_without_primary_vindex(branch.keyspaces[name].vschema, description):
                error = lint_error("VSCHEMA_NO_PRIMARY_VINDEX", name, table,
                                   f"Table `{table}` of sharded keyspace `{name}` has no primary vindex in the "
                                   "VSchema.", VINDEX_DOCS)
                error.update(subject_type="vschema", json_path=f"$.tables.{table}.column_vindexes")
                errors.append(error)
        return errors
