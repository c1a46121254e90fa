"""Backups of a branch, on the emulator clock, the backup policies of a database, and restores.

    create -> pending --backup_step_delay--> running --backup_step_delay--> success
                                                                       \\-> failed | canceled (backup_fail_state)

A backup's ``protected`` changes through PATCH only (the only key PATCH takes); a protected backup, or one a
required policy made, cannot be deleted (422). Deleted backups leave the lists (``all=true`` shows them, with
``deleted_at``) and answer 404. Each database has the platform's required policy (``required: true``, every
12 hours, kept 2 days), which cannot be deleted (422); policies are records, they do not run on the clock.
A restore is a new branch created with ``backup_id`` (a successful backup of the database): it starts with the
schema the backup holds and is listed in the backup's ``restored_branches``; ``seed_data:
last_successful_backup`` does the same from the parent's newest successful backup. On the data plane a backup is
a real dump of its branch and a restore loads it, tables and rows (dataplane/servers.py, data_backup_taken).

Mixed into state.World: every public method runs under its lock.
"""

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Annotated, ClassVar, Literal

from pydantic import Field, StrictBool, StrictInt, StrictStr, model_validator

from .models import Actor, Body, BranchCreate, Name, Record, ResourceRef, User
from .records import BranchRecord, DatabaseRecord, OrgRecord, Paging, Window, invalid_params, locked, not_found
from .records import stamp, unprocessable, window

MIB = 1024**2
BACKUP_STATES = ("pending", "running", "success", "failed", "canceled", "ignored")
RetentionUnit = Literal["hour", "day", "week", "month", "year"]
FrequencyUnit = Literal["hour", "day", "week", "month"]
UNIT_HOURS = {"hour": 1, "day": 24, "week": 24 * 7, "month": 24 * 30, "year": 24 * 365}
ScheduleTime = Annotated[StrictStr, Field(pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$")]
RetentionValue = Annotated[StrictInt, Field(ge=1, le=1000)]
# the platform's required policy of every database: every 12 hours, kept 2 days
REQUIRED_POLICY = dict(name="default", display_name="Default", target="production", retention_value=2,
                       retention_unit="day", frequency_value=12, frequency_unit="hour", schedule_time="00:00")


class BackupPolicy(Record):
    record_type: ClassVar[str] = "BackupPolicy"

    id: str
    display_name: str
    name: str
    target: Literal["production", "development"]
    retention_value: int
    retention_unit: str
    frequency_value: int
    frequency_unit: str
    schedule_time: str
    schedule_day: int | None = None
    schedule_week: int | None = None
    created_at: str
    updated_at: str
    last_ran_at: str | None = None
    next_run_at: str | None = None
    required: bool = False


class Backup(Record):
    record_type: ClassVar[str] = "Backup"

    id: str
    name: str
    state: Literal["pending", "running", "success", "failed", "canceled", "ignored"] = "pending"
    size: int = 0
    estimated_storage_cost: float = 0.0
    created_at: str
    updated_at: str
    started_at: str | None = None
    expires_at: str | None = None
    completed_at: str | None = None
    deleted_at: str | None = None
    pvc_size: int = 0
    uncompressed_size: int = 0
    protected: bool = False
    required: bool = False
    restored_branches: list[ResourceRef] = []
    actor: Actor | None
    backup_policy: BackupPolicy | None = None
    schema_snapshot: dict | None = None
    database_branch: ResourceRef | None = None


class BackupCreate(Body):
    name: Name | None = None
    retention_unit: RetentionUnit | None = None
    retention_value: RetentionValue | None = None
    emergency: StrictBool = False

    @model_validator(mode="after")
    def _retention(self) -> "BackupCreate":
        if (self.retention_unit is None) != (self.retention_value is None):
            raise ValueError("retention_unit and retention_value go together")
        return self


class BackupUpdate(Body):
    protected: StrictBool | None = None


class BackupPolicyFields(Body):
    name: Name | None = None
    target: Literal["production", "development"] | None = None
    retention_value: RetentionValue | None = None
    retention_unit: RetentionUnit | None = None
    frequency_value: Annotated[StrictInt, Field(ge=1, le=1000)] | None = None
    frequency_unit: FrequencyUnit | None = None
    schedule_time: ScheduleTime | None = None
    schedule_day: Annotated[StrictInt, Field(ge=0, le=6)] | None = None
    schedule_week: Annotated[StrictInt, Field(ge=0, le=3)] | None = None


class BackupPolicyCreate(BackupPolicyFields):
    @model_validator(mode="after")
    def _required(self) -> "BackupPolicyCreate":
        missing = [key for key in ("name", "retention_value", "retention_unit", "frequency_value", "frequency_unit")
                   if getattr(self, key) is None]
        if missing:
            raise ValueError(f"{', '.join(missing)}: required to create a backup policy")
        return self


@dataclass
class BackupRecord:
    """A backup and what drives its state: created, one step pending, one step running, then its end."""

    model: Backup
    branch: BranchRecord
    created: datetime
    step: float
    end_state: str = "success"
    schema: dict = field(default_factory=dict)  # the description of the branch's tables when it was taken
    source: str | None = None  # the server schema a restore is made from (dataplane/schema.py: a copy, or a template)
    dump_size: int = 0  # bytes of its dump on the data plane (dataplane/servers.py data_backup_taken), once made

    def settle(self, now: datetime) -> Backup:
        model = self.model
        started = self.created + timedelta(seconds=self.step)
        finished = started + timedelta(seconds=self.step)
        if now < started:
            model.state, model.started_at, model.completed_at, changed = "pending", None, None, self.created
        elif now < finished:
            model.state, model.started_at, model.completed_at, changed = "running", stamp(started), None, started
        else:
            model.state, model.started_at, model.completed_at = self.end_state, stamp(started), stamp(finished)
            changed = finished
            if self.end_state == "success":
                model.size = self.dump_size or MIB * (1 + len(self.schema))
                model.uncompressed_size = 3 * model.size
                model.pvc_size = 10 * 1024 * MIB
                model.estimated_storage_cost = round(model.size / (1024 * MIB) * 0.023, 6)
        model.updated_at = max(model.updated_at, stamp(changed))
        b = self.branch.model
        model.database_branch = ResourceRef(id=b.id, name=b.name, created_at=b.created_at, updated_at=b.updated_at)
        return model


def _parse_time(value: str, name: str) -> datetime:
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise invalid_params(f"{name}: {value!r} is not an ISO 8601 time") from None
    if moment.tzinfo is None:
        raise invalid_params(f"{name}: {value!r} needs a time zone (Z for UTC)")
    return moment


def next_run(policy: BackupPolicy, now: datetime) -> datetime:
    """When a policy runs next after ``now``: at schedule_time, every frequency (day of week, week of month)."""
    hour, minute = (int(part) for part in policy.schedule_time.split(":"))
    unit, every = policy.frequency_unit, max(policy.frequency_value, 1)
    if unit == "hour":  # every few hours from schedule_time
        moment = now.replace(hour=hour, minute=minute, second=0, microsecond=0) - timedelta(days=1)
        while moment <= now:
            moment += timedelta(hours=every)
        return moment
    moment = now.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if unit == "month":
        moment = moment.replace(day=1) + timedelta(weeks=policy.schedule_week or 0)
    if unit in ("week", "month") and policy.schedule_day is not None:
        moment += timedelta(days=(policy.schedule_day - (moment.weekday() + 1) % 7) % 7)
    step = {"day": timedelta(days=every), "week": timedelta(weeks=every), "month": timedelta(days=30 * every)}[unit]
    while moment <= now:
        moment += step
    return moment


class Backups:
    """World methods of backups, backup policies and restores (mixed into state.World)."""

    # ------------------------------------------------------------ creation (no validation)

    def add_required_policies(self, db: DatabaseRecord) -> BackupPolicy:
        now = stamp(self.now())
        policy = BackupPolicy(id=self.new_id(), created_at=now, updated_at=now, required=True, **REQUIRED_POLICY)
        db.backup_policies[policy.id] = policy
        return policy

    def add_backup(self, branch: BranchRecord, actor: User | None, name: str, created: datetime, *,
                   retention_hours: float | None = None, policy: BackupPolicy | None = None,
                   end_state: str = "success") -> BackupRecord:
        model = Backup(
            id=self.new_id(),
            name=name,
            created_at=stamp(created),
            updated_at=stamp(created),
            expires_at=stamp(created + timedelta(hours=retention_hours)) if retention_hours else None,
            actor=actor.actor() if actor else None,
            backup_policy=policy,
            required=bool(policy and policy.required),
        )
        source, description = self.data_backup_schema(branch, model.id)
        record = BackupRecord(model, branch, created, self.settings.backup_step_delay, end_state, description,
                              source)
        branch.backups[model.id] = record
        self.data_backup_taken(branch, record)  # a real dump (dataplane/servers.py)
        record.settle(self.now())
        return record

    # ------------------------------------------------------------ backups

    def _backup(self, org: OrgRecord, database: str, branch: str, backup_id: str) -> BackupRecord:
        record = self.find_branch(org, database, branch).backups.get(backup_id)
        if record is None or record.model.deleted_at is not None:
            raise not_found("Backup")
        return record

    @locked
    def backups(self, org: OrgRecord, database: str, branch: str, paging: Paging, *, include_deleted: bool = False,
                state: str | None = None, policy: str | None = None, since: str | None = None,
                until: str | None = None, running_at: str | None = None,
                production: bool | None = None) -> Window[Backup]:
        record = self.find_branch(org, database, branch)
        now = self.now()
        start = _parse_time(since, "from") if since else None
        end = _parse_time(until, "to") if until else None
        during = None
        if running_at:
            parts = running_at.split("..")
            if len(parts) != 2:
                raise invalid_params(f"running_at: {running_at!r} is not a range START..END")
            during = (_parse_time(parts[0], "running_at"), _parse_time(parts[1], "running_at"))
        found = []
        for backup in reversed(record.backups.values()):  # newest first
            model = backup.settle(now)
            if model.deleted_at is not None and not include_deleted:
                continue
            if state is not None and model.state != state or policy is not None and (
                    model.backup_policy is None or model.backup_policy.id != policy):
                continue
            if production is not None and record.model.production != production:
                continue
            if start and backup.created < start or end and backup.created > end:
                continue
            if during and not self._ran_during(backup, during, now):
                continue
            found.append(model)
        return window(found, paging)

    @staticmethod
    def _ran_during(backup: BackupRecord, during: tuple[datetime, datetime], now: datetime) -> bool:
        started = backup.created + timedelta(seconds=backup.step)
        finished = min(started + timedelta(seconds=backup.step), now)
        return started <= during[1] and finished >= during[0]

    @locked
    def create_backup(self, org: OrgRecord, database: str, branch: str, body: BackupCreate, who) -> Backup:
        db = self.find_database(org, database)
        record = self.find_branch(org, database, branch)
        if body.emergency and db.model.kind != "postgresql":
            raise unprocessable("Emergency backups are only supported for PostgreSQL databases")
        if not record.settle(self.now()).ready:
            raise unprocessable(f"Branch {branch!r} is not ready yet: it cannot be backed up")
        now = self.now()
        hours = UNIT_HOURS[body.retention_unit] * body.retention_value if body.retention_unit else None
        name = body.name or f"{branch}-{now:%Y.%m.%d-%H%M%S}"
        backup = self.add_backup(record, who.user, name, now, retention_hours=hours,
                                 end_state=self.settings.backup_fail_state or "success")
        return backup.model

    @locked
    def backup(self, org: OrgRecord, database: str, branch: str, backup_id: str) -> Backup:
        return self._backup(org, database, branch, backup_id).settle(self.now())

    @locked
    def update_backup(self, org: OrgRecord, database: str, branch: str, backup_id: str, body: BackupUpdate) -> Backup:
        record = self._backup(org, database, branch, backup_id)
        if body.protected is not None and body.protected != record.model.protected:
            record.model.protected = body.protected
            record.model.updated_at = stamp(self.now())
        return record.settle(self.now())

    @locked
    def delete_backup(self, org: OrgRecord, database: str, branch: str, backup_id: str) -> None:
        record = self._backup(org, database, branch, backup_id)
        model = record.model
        if model.protected:
            raise unprocessable(f"Backup {model.name!r} is protected: set protected to false before deleting it")
        if model.required:
            raise unprocessable(f"Backup {model.name!r} was made by a required backup policy and cannot be deleted")
        model.deleted_at = model.updated_at = stamp(self.now())
        self.data_backup_deleted(record)  # its dump goes (dataplane/servers.py)

    # ------------------------------------------------------------ backup policies

    def _policy(self, org: OrgRecord, database: str, policy_id: str) -> tuple[DatabaseRecord, BackupPolicy]:
        db = self.find_database(org, database)
        policy = db.backup_policies.get(policy_id)
        if policy is None:
            raise not_found("Backup policy")
        return db, policy

    def _render_policy(self, db: DatabaseRecord, policy: BackupPolicy) -> BackupPolicy:
        policy.next_run_at = stamp(next_run(policy, self.now()))
        ran = [b.created for branch in db.branches.values() for b in branch.backups.values()
               if b.model.backup_policy is not None and b.model.backup_policy.id == policy.id]
        policy.last_ran_at = stamp(max(ran)) if ran else None
        return policy

    @staticmethod
    def _check_policy_name(db: DatabaseRecord, name: str | None, policy: BackupPolicy | None = None) -> None:
        if name is not None and any(p is not policy and p.name == name for p in db.backup_policies.values()):
            raise unprocessable(f"Name has already been taken: backup policy {name!r} exists")

    @locked
    def backup_policies(self, org: OrgRecord, database: str, paging: Paging) -> Window[BackupPolicy]:
        db = self.find_database(org, database)
        page = window(list(db.backup_policies.values()), paging)
        return Window([self._render_policy(db, p) for p in page.items], page.total)

    @locked
    def create_backup_policy(self, org: OrgRecord, database: str, body: BackupPolicyCreate) -> BackupPolicy:
        db = self.find_database(org, database)
        self._check_policy_name(db, body.name)
        now = stamp(self.now())
        values = body.model_dump(exclude_none=True)
        values.setdefault("target", "production")
        values.setdefault("schedule_time", "00:00")
        policy = BackupPolicy(id=self.new_id(), display_name=body.name, created_at=now, updated_at=now, **values)
        db.backup_policies[policy.id] = policy
        return self._render_policy(db, policy)

    @locked
    def backup_policy(self, org: OrgRecord, database: str, policy_id: str) -> BackupPolicy:
        db, policy = self._policy(org, database, policy_id)
        return self._render_policy(db, policy)

    @locked
    def update_backup_policy(self, org: OrgRecord, database: str, policy_id: str,
                             body: BackupPolicyFields) -> BackupPolicy:
        db, policy = self._policy(org, database, policy_id)
        self._check_policy_name(db, body.name, policy)
        changes = body.model_dump(exclude_none=True)
        if policy.required and "name" in changes and changes["name"] != policy.name:
            raise unprocessable(f"Backup policy {policy.name!r} is required by the platform: it cannot be renamed")
        for key, value in changes.items():
            setattr(policy, key, value)
        if "name" in changes:
            policy.display_name = changes["name"]
        policy.updated_at = stamp(self.now())
        return self._render_policy(db, policy)

    @locked
    def delete_backup_policy(self, org: OrgRecord, database: str, policy_id: str) -> None:
        db, policy = self._policy(org, database, policy_id)
        if policy.required:
            raise unprocessable(f"Backup policy {policy.name!r} is required by the platform and cannot be deleted")
        del db.backup_policies[policy_id]

    # ------------------------------------------------------------ restores

    def restore_source(self, db: DatabaseRecord, parent: BranchRecord,
                       body: BranchCreate) -> tuple[ResourceRef | None, BackupRecord | None]:
        """What a new branch is restored from: the backup of ``backup_id``, or the parent's newest successful
        backup for ``seed_data``; (None, None) for a plain branch. 422 when there is no such successful backup."""
        now = self.now()
        backup = None
        if body.backup_id is not None:
            backup = next((b for branch in db.branches.values() for b in branch.backups.values()
                           if b.model.id == body.backup_id and b.model.deleted_at is None), None)
            if backup is None:
                raise unprocessable(f"Backup {body.backup_id!r} does not exist in database {db.model.name!r}")
            state = backup.settle(now).state
            if state != "success":
                raise unprocessable(f"Backup {backup.model.name!r} is {state}: only a successful backup can be "
                                    "restored")
        elif body.seed_data is not None:
            done = [b for b in parent.backups.values()
                    if b.model.deleted_at is None and b.settle(now).state == "success"]
            if not done:
                raise unprocessable(f"Branch {parent.model.name!r} has no successful backup to seed data from")
            backup = max(done, key=lambda b: b.created)
        if backup is None:
            return None, None
        source = backup.branch.model
        return ResourceRef(id=source.id, name=source.name, created_at=source.created_at,
                           updated_at=source.updated_at), backup

    def restored_into(self, backup: BackupRecord | None, branch: BranchRecord) -> None:
        if backup is None:
            return
        self.data_restore_schema(branch, backup.source, backup.schema)
        b = branch.model
        backup.model.restored_branches.append(ResourceRef(id=b.id, name=b.name, created_at=b.created_at,
                                                          updated_at=b.updated_at))
        self.data_branch_restored(backup, branch)  # its dump loaded: its tables and rows (dataplane/servers.py)

