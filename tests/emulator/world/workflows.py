"""MoveTables workflows of a MySQL (Vitess) database, on the emulator's clock, moving real rows
(dataplane/workflows.py).

A workflow moves tables of its database's production branch from one keyspace to another (the API names no branch:
the default branch's keyspaces). ``POST .../workflows`` answers 201 with the workflow ``copying`` (numbered per
database); every action is a ``PATCH .../workflows/{number}/<action>`` (cancel: ``DELETE``) that starts a step, and
each step ends ``workflow_step_delay`` seconds later (the copy: ``workflow_copy_delay``), at the time it was due,
whenever the database is read next (``settle_workflows``)::

    create           -> copying --copy--> running (rows copied, forward replication) | error (workflow_fail_state)
    verify-data      running|verified_data|switched_replicas -> verifying_data --> verified_data (no difference,
                     from running or verified_data) | running (differences) | switched_replicas (from there)
    switch-replicas  running|verified_data -> switching_replicas --> switched_replicas
    switch-primaries running|verified_data|switched_replicas -> switching_primaries --> switched_primaries
    reverse-traffic  switched_replicas|switched_primaries -> reversing_traffic --> running (reversed_at)
    cutover          switched_primaries -> cutting_over --> cutover (the source tables dropped)
    reverse-cutover  cutover -> reversed_cutover (at once: routing back)
    complete         cutover|reversed_cutover -> completed (at once)
    cancel (DELETE)  any state before cutting_over -> cancelling --> cancelled (the target's tables dropped);
                     primaries switched: reversing_traffic_for_cancel --> cancelling --> cancelled
    retry            error (may_retry) -> copying --copy--> running

An action the state does not allow answers 422 naming the state. A data check (``vdiff``, planetscale-go's shape)
compares the rows by primary key; ``verified_data_stale`` once ``workflow_verify_stale_after`` seconds have passed
since it ended. Each ``*_by`` actor is who took that step, the creator until then (the OpenAPI makes them objects,
never null); ``global_keyspace`` is the one named at creation, else the source keyspace. Under ``recorded_vitess`` a
workflow lacks ``defer_secondary_keys``, ``on_ddl``, ``workflow_errors``, ``may_restart``, ``sequence_tables_applied``
and ``global_keyspace``, and its ``workflow_subtype`` and ``*_by`` are null; under ``lean_write_answers`` an action
answers the workflow as it was before with only ``state`` changed (``complete`` for complete), as the platform's
recorded answers (../shared/reference/README.md).

Mixed into state.World: every public method runs under its lock.
"""

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, StrictBool, StrictStr

from .keyspaces import _range, shard_names
from .models import Actor, Body, Record, User
from .records import DatabaseRecord, OrgRecord, Paging, Window, locked, not_found, stamp, unprocessable, window
from ..dataplane import workflows as rows

ENDED = ("completed", "cancelled")
# the states each action starts from
ALLOWED = {
    "verify-data": ("running", "verified_data", "switched_replicas"),
    "switch-replicas": ("running", "verified_data"),
    "switch-primaries": ("running", "verified_data", "switched_replicas"),
    "reverse-traffic": ("switched_replicas", "switched_primaries"),
    "cutover": ("switched_primaries",),
    "reverse-cutover": ("cutover",),
    "complete": ("cutover", "reversed_cutover"),
    "retry": ("error",),
    "cancel": ("pending", "copying", "running", "stopped", "verifying_data", "verified_data", "switching_replicas",
               "switched_replicas", "switching_primaries", "switched_primaries", "reversing_traffic", "error"),
}
ACTORS = ("verify_data", "reversed", "switch_replicas", "switch_primaries", "cancelled", "completed", "retried",
          "cutover", "reversed_cutover")
RECORDED_WITHOUT = ("defer_secondary_keys", "on_ddl", "workflow_errors", "may_restart", "sequence_tables_applied",
                    "global_keyspace")
COPY_ERROR = ("vttablet: rpc error: code = Unknown desc = copying the rows of {tables} failed: the emulator's "
              "workflow_fail_state is error")


def _ms(moment: datetime) -> datetime:
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


# ---------------------------------------------------------------- records


class WorkflowRef(Record):
    id: str
    name: str
    created_at: str
    updated_at: str
    deleted_at: str | None = None


class WorkflowBranch(WorkflowRef):
    record_type: ClassVar[str] = "Branch"


class WorkflowKeyspace(WorkflowRef):
    record_type: ClassVar[str] = "BranchKeyspace"


class WorkflowTable(Record):
    record_type: ClassVar[str] = "WorkflowTable"

    id: str
    name: str
    created_at: str
    updated_at: str
    rows_copied: int
    rows_total: int
    rows_percentage: int


class WorkflowStream(Record):
    record_type: ClassVar[str] = "WorkflowStream"

    id: str
    state: str
    created_at: str
    updated_at: str
    target_shard: str
    source_shard: str
    rows_copied: int
    primary_serving: bool


class VDiffTableReport(Record):
    record_type: ClassVar[str] = "WorkflowVDiffTableReport"

    id: str
    table_name: str
    shard: str
    mismatched_rows_count: int
    extra_source_rows_count: int
    extra_target_rows_count: int
    extra_source_rows: list[dict[str, Any]]
    extra_target_rows: list[dict[str, Any]]
    mismatched_rows: list[dict[str, Any]]
    sample_extra_source_rows_query: str | None
    sample_extra_target_rows_query: str | None
    sample_mismatched_rows_query: str | None
    created_at: str
    updated_at: str


class VDiff(Record):
    record_type: ClassVar[str] = "WorkflowVDiff"

    id: str
    state: str
    created_at: str
    updated_at: str
    started_at: str | None
    completed_at: str | None
    has_mismatch: bool
    progress_percentage: int
    eta_seconds: int | None
    table_reports: list[VDiffTableReport]


class Workflow(Record):
    record_type: ClassVar[str] = "Workflow"

    id: str
    name: str
    number: int
    state: str
    created_at: str
    updated_at: str
    started_at: str | None
    completed_at: str | None
    cancelled_at: str | None
    reversed_at: str | None
    retried_at: str | None
    data_copy_completed_at: str | None
    cutover_at: str | None
    replicas_switched: bool
    primaries_switched: bool
    switch_replicas_at: str | None
    switch_primaries_at: str | None
    verify_data_at: str | None
    workflow_type: str = "move_tables"
    workflow_subtype: str = "None"  # Vitess's MoveTables subtype of a whole-table move
    defer_secondary_keys: bool
    on_ddl: str
    workflow_errors: str
    may_retry: bool
    may_restart: bool = False
    verified_data_stale: bool
    sequence_tables_applied: bool
    actor: Actor
    verify_data_by: Actor
    reversed_by: Actor
    switch_replicas_by: Actor
    switch_primaries_by: Actor
    cancelled_by: Actor
    completed_by: Actor
    retried_by: Actor
    cutover_by: Actor
    reversed_cutover_by: Actor
    branch: WorkflowBranch
    source_keyspace: WorkflowKeyspace
    target_keyspace: WorkflowKeyspace
    global_keyspace: WorkflowKeyspace
    streams: list[WorkflowStream]
    tables: list[WorkflowTable]
    vdiff: VDiff | None

    def _lean(self, data: dict[str, Any], context: dict) -> dict[str, Any]:
        if not context.get("recorded_vitess"):
            return data
        data = {key: value for key, value in data.items() if key not in RECORDED_WITHOUT}
        data["workflow_subtype"] = None
        data.update({f"{name}_by": None for name in ACTORS})
        return data


class WorkflowCreate(Body):
    name: Annotated[StrictStr, Field(min_length=1, max_length=63)]
    source_keyspace: Annotated[StrictStr, Field(min_length=1)]
    target_keyspace: Annotated[StrictStr, Field(min_length=1)]
    global_keyspace: Annotated[StrictStr, Field(min_length=1)] | None = None
    defer_secondary_keys: StrictBool | None = None
    on_ddl: Literal["IGNORE", "STOP", "EXEC", "EXEC_IGNORE"] | None = None
    tables: Annotated[list[Annotated[StrictStr, Field(min_length=1)]], Field(min_length=1)]


# ---------------------------------------------------------------- the state of a workflow


@dataclass
class WorkflowRecord:
    id: str
    number: int
    name: str
    branch: WorkflowBranch
    source: WorkflowKeyspace
    target: WorkflowKeyspace
    global_keyspace: WorkflowKeyspace
    tables: list[str]
    defer_secondary_keys: bool
    on_ddl: str
    creator: Actor
    created: datetime
    target_shards: int = 1
    state: str = "copying"
    next_at: datetime | None = None  # when the step in progress ends (None: settled)
    fail: str | None = None  # the state the copy ends in instead of running (workflow_fail_state when it began)
    verify_from: str = "running"  # the state a data check goes back to
    at: dict[str, datetime] = field(default_factory=dict)  # started, completed, cancelled, ... -> when
    by: dict[str, Actor] = field(default_factory=dict)  # verify_data, reversed, ... -> who
    updated: datetime | None = None
    replicas_switched: bool = False
    primaries_switched: bool = False
    routed: bool = False  # the source tables are views routing to the target (primaries switched on the server)
    errors: str = ""
    may_retry: bool = False
    rows_total: dict[str, int] = field(default_factory=dict)
    rows_copied: dict[str, int] = field(default_factory=dict)
    table_ids: dict[str, str] = field(default_factory=dict)
    vdiff: dict | None = None  # id, state, created, started, completed, reports

    @property
    def live(self) -> bool:
        return self.state not in ENDED

    @property
    def prefix(self) -> str:
        """The names of its triggers (per table: <prefix>_<index>_<i|u|d>)."""
        return f"_wf_{self.id}"


class WorkflowServerError(Exception):
    """A statement of a workflow's step that the server refused (a moved table changed or dropped meanwhile)."""

    def __init__(self, step: str, message: str):
        super().__init__(message)
        self.step = step


class Workflows:
    """World methods of MoveTables workflows."""

    # ------------------------------------------------------------ finding

    def _wf_branch(self, db: DatabaseRecord):
        if db.model.kind != "mysql":
            raise unprocessable(f"Workflows are for MySQL (Vitess) databases: {db.model.name!r} is a PostgreSQL "
                                "database")
        branch = db.branches.get(db.model.default_branch)
        if branch is None:
            raise not_found("Branch")
        return branch

    def _wf_find(self, org: OrgRecord, database: str, number: int) -> tuple[DatabaseRecord, WorkflowRecord]:
        db = self.find_database(org, database)
        self._wf_branch(db)
        record = db.workflows.get(number)
        if record is None:
            raise not_found("Workflow")
        return db, record

    def refuse_keyspace_of_live_workflow(self, db: DatabaseRecord, branch, keyspace: str) -> None:
        """422 when a workflow not completed nor cancelled moves tables from or into the keyspace (keyspace
        delete)."""
        if branch.model.name != db.model.default_branch:
            return
        for record in db.workflows.values():
            if record.live and keyspace in (record.source.name, record.target.name, record.global_keyspace.name):
                raise unprocessable(f"Keyspace {keyspace!r} is used by workflow {record.name!r} (#{record.number}, "
                                    f"{record.state}): complete or cancel it first")

    # ------------------------------------------------------------ the data plane

    def _wf_schemas(self, db: DatabaseRecord, record: WorkflowRecord) -> tuple[str, str] | None:
        """The source and target keyspaces' schemas on the server (made), or None without a data plane."""
        if self.data is None:
            return None
        branch = self._wf_branch(db)
        return (self.made_keyspace_schema(branch, record.source.name),
                self.made_keyspace_schema(branch, record.target.name))

    def _wf_rows(self, db: DatabaseRecord, record: WorkflowRecord, step: str) -> None:
        """The step's statements on the server (dataplane/workflows.py)."""
        schemas = self._wf_schemas(db, record)
        if schemas is None:
            return
        source, target = schemas
        import pymysql

        try:
            self._wf_run(step, record, source, target, rows.kept_schema(record.id))
        except pymysql.MySQLError as error:
            message = error.args[-1] if error.args else str(error)
            raise WorkflowServerError(step, f"{step}: the server refused a statement: {message}") from None

    def _wf_run(self, step: str, record: WorkflowRecord, source: str, target: str, kept: str) -> None:
        data, tables, prefix = self.data, record.tables, record.prefix
        with data.lock:
            if step == "copy":
                record.rows_copied = rows.copy_rows(data, source, target, tables, prefix)
            elif step == "verify":
                self._wf_compare(record, source, target, kept)
            elif step == "switch":
                rows.switch_primaries(data, source, target, kept, tables, prefix)
            elif step == "reverse":
                rows.reverse_traffic(data, source, target, kept, tables, prefix)
            elif step == "cutover":
                rows.cutover(data, source, target, kept, tables, prefix)
            elif step == "reverse-cutover":
                rows.reverse_cutover(data, source, target, tables)
            elif step == "complete":
                rows.complete(data, source, kept, tables)
            elif step == "cancel":
                rows.cancel(data, source, target, kept, tables, prefix)

    def _wf_compare(self, record: WorkflowRecord, source: str, target: str, kept: str) -> None:
        origin = kept if record.routed else source  # while switched, the source's rows are the kept tables
        now = self.now()
        reports = []
        for table in record.tables:
            found = rows.compare(self.data, origin, target, table)
            reports.append(dict(found, id=self.new_id(), table_name=table, shard="-", created_at=stamp(now),
                                updated_at=stamp(now)))
        record.vdiff["reports"] = reports

    # ------------------------------------------------------------ the clock

    def settle_workflows(self, db: DatabaseRecord) -> None:
        """Run every step of the database's workflows that is due by now, at the time it was due."""
        now = self.now()
        for record in db.workflows.values():
            while record.next_at is not None and record.next_at <= now:
                at, record.next_at = record.next_at, None
                try:
                    self._wf_step_done(db, record, at)
                except WorkflowServerError as error:  # the server refused a statement: the workflow says so
                    record.errors = str(error)
                    record.may_retry = error.step == "copy"
                    self._wf_enter(record, "error", at)

    def _wf_after(self, at: datetime, copy: bool = False) -> datetime:
        s = self.settings
        return at + timedelta(seconds=s.workflow_copy_delay if copy else s.workflow_step_delay)

    def _wf_enter(self, record: WorkflowRecord, state: str, at: datetime, next_at: datetime | None = None) -> None:
        record.state, record.updated, record.next_at = state, at, next_at

    def _wf_step_done(self, db: DatabaseRecord, record: WorkflowRecord, at: datetime) -> None:
        state = record.state
        if state == "copying":
            if record.fail:
                record.errors = COPY_ERROR.format(tables=", ".join(record.tables))
                record.may_retry = True
                self._wf_enter(record, record.fail, at)
                return
            self._wf_rows(db, record, "copy")
            record.at["data_copy_completed"] = at
            self._wf_enter(record, "running", at)
        elif state == "verifying_data":
            self._wf_rows(db, record, "verify")
            vdiff = record.vdiff
            vdiff["completed"] = at
            vdiff["state"] = "completed"
            record.at["verify_data"] = at
            clean = not any(self._wf_differs(report) for report in vdiff.get("reports", []))
            back = record.verify_from
            ended = back if back == "switched_replicas" else ("verified_data" if clean else "running")
            self._wf_enter(record, ended, at)
        elif state == "switching_replicas":
            record.replicas_switched = True
            record.at["switch_replicas"] = at
            self._wf_enter(record, "switched_replicas", at)
        elif state == "switching_primaries":
            self._wf_rows(db, record, "switch")
            record.routed = record.replicas_switched = record.primaries_switched = True
            record.at["switch_primaries"] = at
            self._wf_enter(record, "switched_primaries", at)
        elif state in ("reversing_traffic", "reversing_traffic_for_cancel"):
            if record.routed:
                self._wf_rows(db, record, "reverse")
            record.routed = record.replicas_switched = record.primaries_switched = False
            if state == "reversing_traffic":
                record.at["reversed"] = at
                self._wf_enter(record, "running", at)
            else:
                self._wf_enter(record, "cancelling", at, self._wf_after(at))
        elif state == "cutting_over":
            self._wf_rows(db, record, "cutover")
            record.routed = False
            record.at["cutover"] = at
            self._wf_enter(record, "cutover", at)
        elif state == "cancelling":
            self._wf_rows(db, record, "cancel")
            record.at["cancelled"] = at
            self._wf_enter(record, "cancelled", at)

    def _wf_immediately(self, db: DatabaseRecord, record: WorkflowRecord, step: str) -> None:
        try:
            self._wf_rows(db, record, step)
        except WorkflowServerError as error:
            raise unprocessable(f"Workflow {record.name!r} (#{record.number}): {error}") from None

    @staticmethod
    def _wf_differs(report: dict) -> bool:
        return any(report[key] for key in ("mismatched_rows_count", "extra_source_rows_count",
                                           "extra_target_rows_count"))

    # ------------------------------------------------------------ rendering

    def render_workflow(self, record: WorkflowRecord) -> Workflow:
        now = self.now()
        at = {key: stamp(value) for key, value in record.at.items()}
        checked = record.at.get("verify_data")
        stale = checked is not None and now - checked > timedelta(seconds=self.settings.workflow_verify_stale_after)
        created = stamp(record.created)
        copied = record.state not in ("pending", "copying") and "data_copy_completed" in record.at
        tables = []
        for table in record.tables:
            total = max(record.rows_total.get(table, 0), record.rows_copied.get(table, 0))
            done = record.rows_copied.get(table, 0) if copied else 0
            tables.append(WorkflowTable(id=record.table_ids[table], name=table, created_at=created,
                                        updated_at=stamp(record.updated or record.created), rows_copied=done,
                                        rows_total=total, rows_percentage=100 if copied else 0))
        stream_state = {"copying": "copying", "error": "error", "cancelled": "stopped", "completed": "stopped",
                        "cutover": "stopped", "reversed_cutover": "stopped"}.get(record.state, "running")
        streams = [WorkflowStream(id=f"{record.id}-{shard}", state=stream_state, created_at=created,
                                  updated_at=stamp(record.updated or record.created), target_shard=shard,
                                  source_shard="-", rows_copied=sum(t.rows_copied for t in tables),
                                  primary_serving=record.primaries_switched)
                   for shard in shard_names(record.target_shards)]
        vdiff = None
        if record.vdiff is not None:
            v = record.vdiff
            reports = [VDiffTableReport(**report) for report in v.get("reports", [])]
            done = v["completed"] is not None
            vdiff = VDiff(id=v["id"], state=v["state"], created_at=stamp(v["created"]),
                          updated_at=stamp(v["completed"] or v["created"]), started_at=stamp(v["created"]),
                          completed_at=stamp(v["completed"]) if done else None,
                          has_mismatch=any(self._wf_differs(report) for report in v.get("reports", [])),
                          progress_percentage=100 if done else 0, eta_seconds=0 if done else None,
                          table_reports=reports)
        by = {f"{name}_by": record.by.get(name, record.creator) for name in ACTORS}
        return Workflow(
            id=record.id, name=record.name, number=record.number, state=record.state, created_at=created,
            updated_at=stamp(record.updated or record.created), started_at=at.get("started"),
            completed_at=at.get("completed"), cancelled_at=at.get("cancelled"), reversed_at=at.get("reversed"),
            retried_at=at.get("retried"), data_copy_completed_at=at.get("data_copy_completed"),
            cutover_at=at.get("cutover"), replicas_switched=record.replicas_switched,
            primaries_switched=record.primaries_switched, switch_replicas_at=at.get("switch_replicas"),
            switch_primaries_at=at.get("switch_primaries"), verify_data_at=at.get("verify_data"),
            defer_secondary_keys=record.defer_secondary_keys, on_ddl=record.on_ddl, workflow_errors=record.errors,
            may_retry=record.state == "error" and record.may_retry, verified_data_stale=stale,
            sequence_tables_applied=record.primaries_switched and record.global_keyspace.name != record.source.name,
            actor=record.creator, **by, branch=record.branch, source_keyspace=record.source,
            target_keyspace=record.target, global_keyspace=record.global_keyspace, streams=streams, tables=tables,
            vdiff=vdiff)

    # ------------------------------------------------------------ the API

    @locked
    def list_workflows(self, org: OrgRecord, database: str, paging: Paging,
                       between: str | None = None) -> Window[Workflow]:
        """The database's workflows, newest first; with between (START..END), those active during that time: created
        before its end and not ended (completed, cancelled) before its start."""
        db = self.find_database(org, database)
        self._wf_branch(db)
        during = _range(between, "between") if between else None
        found = []
        for record in sorted(db.workflows.values(), key=lambda r: r.number, reverse=True):
            if during is not None:  # the times as answered: to the millisecond
                ended = record.at.get("completed") or record.at.get("cancelled")
                if _ms(record.created) > during[1] or (ended is not None and _ms(ended) < during[0]):
                    continue
            found.append(self.render_workflow(record))
        return window(found, paging)

    @locked
    def get_workflow(self, org: OrgRecord, database: str, number: int) -> Workflow:
        return self.render_workflow(self._wf_find(org, database, number)[1])

    @locked
    def create_workflow(self, org: OrgRecord, database: str, body: WorkflowCreate, user: User) -> Workflow:
        db = self.find_database(org, database)
        branch = self._wf_branch(db)
        names = (body.source_keyspace, body.target_keyspace)
        if body.source_keyspace == body.target_keyspace:
            raise unprocessable(f"The source and target keyspaces are the same ({body.source_keyspace!r}): a workflow "
                                "moves tables to another keyspace")
        for name in names + ((body.global_keyspace,) if body.global_keyspace else ()):
            if name not in branch.keyspaces:
                raise unprocessable(f"Keyspace {name!r} does not exist on branch {branch.model.name!r}")
        if len(set(body.tables)) != len(body.tables):
            raise unprocessable("tables: each table is named once")
        for record in db.workflows.values():
            if not record.live:
                continue
            if record.name == body.name and record.target.name == body.target_keyspace:
                raise unprocessable(f"Name has already been taken: workflow {body.name!r} (#{record.number}) moves "
                                    f"tables into keyspace {body.target_keyspace!r} and is {record.state}")
            taken = sorted(set(body.tables) & set(record.tables))
            if taken and record.source.name == body.source_keyspace:
                raise unprocessable(f"Table {taken[0]!r} is moved by workflow {record.name!r} (#{record.number}, "
                                    f"{record.state})")
        self._data_go_live()
        if self.data is not None:
            self._wf_check_tables(branch, body)
        now = self.now()
        number = max(db.workflows, default=0) + 1
        refs = {name: self._wf_keyspace(branch, name) for name in names + (body.global_keyspace,) if name}
        b = branch.model
        record = WorkflowRecord(
            id=self.new_id(), number=number, name=body.name,
            branch=WorkflowBranch(id=b.id, name=b.name, created_at=b.created_at, updated_at=b.updated_at),
            source=refs[body.source_keyspace], target=refs[body.target_keyspace],
            global_keyspace=refs[body.global_keyspace or body.source_keyspace], tables=list(body.tables),
            defer_secondary_keys=bool(body.defer_secondary_keys), on_ddl=body.on_ddl or "IGNORE",
            creator=user.actor(), created=now, target_shards=branch.keyspaces[body.target_keyspace].shards,
            next_at=self._wf_after(now, copy=True),
            fail=self.settings.workflow_fail_state)
        record.at["started"] = now
        record.table_ids = {table: self.new_id() for table in body.tables}
        schemas = self._wf_schemas(db, record)
        if schemas is not None:
            rows.create_targets(self.data, schemas[0], schemas[1], record.tables)
            record.rows_total = {table: rows.count_rows(self.data, schemas[0], table) for table in record.tables}
        db.workflows[number] = record
        return self.render_workflow(record)

    def _wf_keyspace(self, branch, name: str) -> WorkflowKeyspace:
        keyspace = branch.keyspaces[name]
        changed = max(x for x in (keyspace.created, keyspace.updated) if x is not None)
        return WorkflowKeyspace(id=keyspace.id, name=name, created_at=stamp(keyspace.created),
                                updated_at=stamp(changed))

    def _wf_check_tables(self, branch, body: WorkflowCreate) -> None:
        """Each table a real one of the source keyspace with a primary key, none in the target keyspace yet."""
        source = self.describe_keyspace(branch, body.source_keyspace)
        target = self.describe_keyspace(branch, body.target_keyspace)
        for table in body.tables:
            if table not in source:
                raise unprocessable(f"Table {table!r} does not exist in keyspace {body.source_keyspace!r}")
            if not any(index["name"] == "PRIMARY" for index in source[table]["indexes"]):
                raise unprocessable(f"Table {table!r} of keyspace {body.source_keyspace!r} has no primary key: a "
                                    "workflow compares and replicates rows by it")
            if table in target:
                raise unprocessable(f"Table {table!r} already exists in keyspace {body.target_keyspace!r}")

    @locked
    def workflow_action(self, org: OrgRecord, database: str, number: int, action: str,
                        user: User) -> tuple[Workflow, Workflow]:
        """Start an action (verify-data, switch-replicas, ..., cancel); the workflow before it and after it. 422 when
        its state does not allow it."""
        db, record = self._wf_find(org, database, number)
        before = self.render_workflow(record)
        state = record.state
        allowed = ALLOWED[action]
        if action == "retry" and state == "error" and not record.may_retry:
            raise unprocessable(f"Workflow {record.name!r} (#{record.number}) is in state 'error' and may not be "
                                "retried (may_retry is false): cancel it")
        if state not in allowed:
            raise unprocessable(f"Workflow {record.name!r} (#{record.number}) is in state {state!r}: {action} needs "
                                f"state {' or '.join(repr(s) for s in allowed)}")
        now = self.now()
        step = self._wf_after(now)
        if action == "verify-data":
            record.verify_from = "switched_replicas" if state == "switched_replicas" else "running"
            record.vdiff = {"id": self.new_id(), "state": "started", "created": now, "completed": None,
                            "reports": []}
            record.by["verify_data"] = user.actor()
            self._wf_enter(record, "verifying_data", now, step)
        elif action == "switch-replicas":
            record.by["switch_replicas"] = user.actor()
            self._wf_enter(record, "switching_replicas", now, step)
        elif action == "switch-primaries":
            record.by["switch_primaries"] = user.actor()
            self._wf_enter(record, "switching_primaries", now, step)
        elif action == "reverse-traffic":
            record.by["reversed"] = user.actor()
            self._wf_enter(record, "reversing_traffic", now, step)
        elif action == "cutover":
            record.by["cutover"] = user.actor()
            self._wf_enter(record, "cutting_over", now, step)
        elif action == "reverse-cutover":
            self._wf_immediately(db, record, "reverse-cutover")
            record.by["reversed_cutover"] = user.actor()
            self._wf_enter(record, "reversed_cutover", now)
        elif action == "complete":
            self._wf_immediately(db, record, "complete")
            record.by["completed"] = user.actor()
            record.at["completed"] = now
            self._wf_enter(record, "completed", now)
        elif action == "retry":
            record.by["retried"] = user.actor()
            record.at["retried"] = now
            record.errors, record.may_retry, record.fail = "", False, self.settings.workflow_fail_state
            self._wf_enter(record, "copying", now, self._wf_after(now, copy=True))
        else:  # cancel
            record.by["cancelled"] = user.actor()
            first = "reversing_traffic_for_cancel" if record.routed else "cancelling"
            self._wf_enter(record, first, now, step)
        return before, self.render_workflow(record)
