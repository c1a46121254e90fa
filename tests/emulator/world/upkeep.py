"""The upkeep of a database: its schema recommendations and its maintenance schedules with their windows.

Schema recommendations are numbered per database (1, 2, ...). Besides the seeded ones (seed.py: ``seed_upkeep``)
and those the control API adds, they are *derived from the real data plane*: at every read of a MySQL database's
recommendations, the production branches' tables are described from MariaDB's catalogs (dataplane/schema.py
``describe``) and

- an index whose columns are the leading columns of another index of the same table (not the primary key, not
  unique) is a ``duplicate_index``, open, with ``ALTER TABLE ... DROP INDEX ...`` (once per table and index);
- an open ``duplicate_index`` whose index is gone from the server is ``applied`` (its ``applied_at`` the moment it
  was found gone).

A dismissal (``POST .../{number}/dismiss``, an optional ``reason`` of at most 500 characters) turns an open one
``dismissed`` with ``dismissed_at`` and ``dismissed_by`` (the caller); any other state is refused (422).
``state=open`` lists the open ones, ``state=closed`` the applied, dismissed and stale ones.

Every database has a weekly maintenance schedule (Sunday 03:00 UTC, 4 hours, made when first read); the seeded
``app`` also has a required one-time schedule for a pending Vitess version. A schedule's windows are its last
occurrences on the emulator clock (a window still in progress has no ``finished_at``).

Ids are digests of the database and the number (or name), drawn from no generator, so reading these never changes
the ids the world gives anything else. Mixed into state.World: every public method runs under its lock.
"""

import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from .models import Actor, Record
from .records import DatabaseRecord, OrgRecord, Paging, Window, invalid_params, locked, not_found, stamp
from .records import unprocessable, window

REASON_LIMIT = 500
CLOSED = ("applied", "dismissed", "stale")
RECOMMENDATION_TYPES = ("unused_table", "unused_index", "duplicate_index", "sequence_overflow",
                        "sequence_overflow_foreign_key", "new_index", "encoding_upgrade", "bloated_table",
                        "bloated_index")
WINDOWS_KEPT = 3  # the windows a schedule lists: its last occurrences


class DeployRequestRef(BaseModel):
    id: str
    branch_id: str
    number: int


class SchemaRecommendation(Record):
    record_type: ClassVar[str] = "SchemaRecommendation"

    id: str
    html_url: str
    title: str
    table_name: str
    keyspace: str
    ddl_statement: str
    number: int
    state: Literal["open", "applied", "dismissed", "stale"]
    recommendation_type: Literal[RECOMMENDATION_TYPES]
    created_at: str
    updated_at: str
    applied_at: str | None = None
    dismissed_at: str | None = None
    closed_by_deploy_request: DeployRequestRef | None = None
    dismissed_by: Actor | None = None


class MaintenanceSchedule(Record):
    record_type: ClassVar[str] = "MaintenanceSchedule"

    id: str
    name: str
    created_at: str
    updated_at: str
    last_window_datetime: str
    next_window_datetime: str
    duration: int
    day: int
    hour: int
    week: int
    frequency_value: int
    frequency_unit: Literal["day", "week", "month", "once"]
    enabled: bool
    expires_at: str | None = None
    deadline_at: str | None = None
    required: bool
    pending_vitess_version_update: bool = False
    pending_vitess_version: str | None = None
    pending_mysql_version_update: bool = False
    pending_mysql_version: str | None = None


class MaintenanceWindow(Record):
    record_type: ClassVar[str] = "MaintenanceWindow"

    id: str
    created_at: str
    updated_at: str
    started_at: str | None
    finished_at: str | None


class DismissBody(BaseModel):
    model_config = ConfigDict(extra="ignore")

    reason: str | None = None


class RecommendationAdd(BaseModel):
    """A recommendation added through the control API (as the platform's analysis would)."""

    model_config = ConfigDict(extra="forbid")

    recommendation_type: Literal[RECOMMENDATION_TYPES] = "new_index"
    table_name: str = "users"
    ddl_statement: str = "ALTER TABLE `users` ADD INDEX `index_users_on_created_at` (`created_at`)"
    title: str | None = None
    keyspace: str | None = None
    state: Literal["open", "applied", "dismissed", "stale"] = "open"


class ScheduleAdd(BaseModel):
    """A maintenance schedule added through the control API."""

    model_config = ConfigDict(extra="forbid")

    name: str
    day: int = Field(0, ge=0, le=7)
    hour: int = Field(3, ge=0, le=23)
    week: int = Field(0, ge=0, le=3)
    duration: int = Field(4, ge=1, le=24)
    frequency_unit: Literal["day", "week", "month", "once"] = "week"
    frequency_value: int = Field(1, ge=1)
    enabled: bool = True
    required: bool = False
    pending_vitess_version: str | None = None
    pending_mysql_version: str | None = None


@dataclass
class Dismissal:
    reason: str | None
    who: str


@dataclass
class ScheduleRecord:
    model: MaintenanceSchedule
    start: datetime  # the first window (a one-time schedule's only one)


@dataclass
class UpkeepRecord:
    recommendations: dict[int, SchemaRecommendation] = field(default_factory=dict)
    dismissals: dict[int, Dismissal] = field(default_factory=dict)
    derived: dict[tuple[str, str], int] = field(default_factory=dict)  # (table, index) -> its duplicate_index
    schedules: dict[str, ScheduleRecord] | None = None  # None: not made yet


def digest(*parts: object) -> str:
    return hashlib.sha256("/".join(str(part) for part in parts).encode()).hexdigest()[:12]


def redundant_indexes(description: dict) -> list[tuple[str, str, str]]:
    """(table, index, the index that covers it) of every index whose columns lead another index of its table."""
    found = []
    for table, shape in sorted(description.items()):
        indexes = shape.get("indexes", [])
        for index in indexes:
            if index["name"] == "PRIMARY" or index["unique"]:
                continue
            columns = [tuple(column) for column in index["columns"]]
            for other in indexes:
                theirs = [tuple(column) for column in other["columns"]]
                if other is index or theirs[:len(columns)] != columns:
                    continue
                if len(theirs) == len(columns) and not other["unique"] and other["name"] > index["name"]:
                    continue  # two equal indexes: the later name is the redundant one
                found.append((table, index["name"], other["name"]))
                break
    return found


def _occurrences(model: MaintenanceSchedule, start: datetime, now: datetime) -> tuple[list[datetime], datetime]:
    """The windows begun by now (the last WINDOWS_KEPT, oldest first) and the next one."""
    if model.frequency_unit == "once":
        return ([start] if start <= now else []), start
    step = {"day": timedelta(days=1), "week": timedelta(weeks=1), "month": timedelta(weeks=4)}[model.frequency_unit]
    step *= model.frequency_value
    begun = max(0, int((now - start) / step) + 1) if now >= start else 0
    past = [start + step * n for n in range(max(0, begun - WINDOWS_KEPT), begun)]
    return past, start + step * begun


class Upkeep:
    """World methods of schema recommendations and maintenance schedules (self.lock, self.now(), ...)."""

    def _upkeep(self, db: DatabaseRecord) -> UpkeepRecord:
        table = self.__dict__.setdefault("_upkeep_records", {})
        return table.setdefault(db.model.id, UpkeepRecord())

    # ------------------------------------------------------------ schema recommendations

    def _html_url(self, org: OrgRecord, db: DatabaseRecord, number: int) -> str:
        return f"https://app.planetscale.com/{org.ref.name}/{db.model.name}/insights/recommendations/{number}"

    @locked
    def add_recommendation(self, org: OrgRecord, db: DatabaseRecord, body: RecommendationAdd,
                           at: datetime | None = None) -> SchemaRecommendation:
        upkeep = self._upkeep(db)
        number = max(upkeep.recommendations, default=0) + 1
        when = stamp(at or self.now())
        title = body.title or {
            "new_index": f"Add an index to table {body.table_name}",
            "duplicate_index": f"Drop a redundant index of table {body.table_name}",
        }.get(body.recommendation_type, f"{body.recommendation_type.replace('_', ' ').capitalize()}: "
                                        f"{body.table_name}")
        model = SchemaRecommendation(
            id=digest(db.model.id, "recommendation", number), html_url=self._html_url(org, db, number), title=title,
            table_name=body.table_name, keyspace=body.keyspace or db.model.name, ddl_statement=body.ddl_statement,
            number=number, state=body.state, recommendation_type=body.recommendation_type, created_at=when,
            updated_at=when, applied_at=when if body.state == "applied" else None,
            dismissed_at=when if body.state == "dismissed" else None)
        if body.state == "dismissed" and self.default_user is not None:
            user = self.default_user
            model.dismissed_by = Actor(id=user.id, display_name=user.display_name, avatar_url=user.avatar_url)
        upkeep.recommendations[number] = model
        return model

    def _derive(self, org: OrgRecord, db: DatabaseRecord) -> UpkeepRecord:
        """Recommendations from the production branches' tables as the server holds them now."""
        upkeep = self._upkeep(db)
        if db.model.kind == "postgresql":
            return upkeep
        present = set()
        for branch in db.branches.values():
            if not branch.model.production:
                continue
            for table, index, cover in redundant_indexes(self.describe_branch(branch)):
                present.add((table, index))
                if (table, index) in upkeep.derived:
                    continue
                upkeep.derived[(table, index)] = self.add_recommendation(org, db, RecommendationAdd(
                    recommendation_type="duplicate_index", table_name=table,
                    ddl_statement=f"ALTER TABLE `{table}` DROP INDEX `{index}`",
                    title=f"Drop index {index} of table {table}: index {cover} covers its columns")).number
        now = stamp(self.now())
        for key, number in upkeep.derived.items():
            model = upkeep.recommendations[number]
            if model.state == "open" and key not in present:  # dropped since: applied
                model.state, model.applied_at, model.updated_at = "applied", now, now
        return upkeep

    def _recommendation(self, org: OrgRecord, database: str, number: int) -> SchemaRecommendation:
        db = self.find_database(org, database)
        found = self._derive(org, db).recommendations.get(number)
        if found is None:
            raise not_found("Schema recommendation")
        return found

    @locked
    def schema_recommendations(self, org: OrgRecord, database: str, paging: Paging,
                               state: str | None = None) -> Window[SchemaRecommendation]:
        db = self.find_database(org, database)
        found = [model for _, model in sorted(self._derive(org, db).recommendations.items())
                 if state is None or (model.state == "open") == (state == "open")]
        return window(found, paging)

    @locked
    def schema_recommendation(self, org: OrgRecord, database: str, number: int) -> SchemaRecommendation:
        return self._recommendation(org, database, number)

    @locked
    def dismiss_recommendation(self, org: OrgRecord, database: str, number: int, body: DismissBody,
                               who) -> SchemaRecommendation:
        if body.reason is not None and len(body.reason) > REASON_LIMIT:
            raise invalid_params(f"reason: at most {REASON_LIMIT} characters, not {len(body.reason)}")
        model = self._recommendation(org, database, number)
        if model.state != "open":
            raise unprocessable(f"Schema recommendation #{number} is {model.state}: only an open recommendation can "
                                "be dismissed")
        now = stamp(self.now())
        model.state, model.dismissed_at, model.updated_at = "dismissed", now, now
        model.dismissed_by = Actor(id=who.user.id, display_name=who.user.display_name, avatar_url=who.user.avatar_url)
        self._upkeep(self.find_database(org, database)).dismissals[number] = Dismissal(body.reason, who.user.id)
        return model

    @locked
    def dismissal(self, organization: str, database: str, number: int) -> dict | None:
        """The reason and who gave it (the control API: the answer does not carry the reason)."""
        org = self.orgs.get(organization)
        if org is None:
            raise not_found("Organization")
        found = self._upkeep(self.find_database(org, database)).dismissals.get(number)
        return None if found is None else {"reason": found.reason, "user": found.who}

    # ------------------------------------------------------------ maintenance schedules

    @locked
    def add_schedule(self, db: DatabaseRecord, body: ScheduleAdd, start: datetime | None = None) -> ScheduleRecord:
        schedules = self._schedules(db)
        created = datetime.fromisoformat(db.model.created_at.replace("Z", "+00:00"))
        if start is None:
            start = created.replace(hour=body.hour, minute=0, second=0, microsecond=0)
            if body.frequency_unit == "once":
                start = self.now().replace(minute=0, second=0, microsecond=0) + timedelta(days=7)
            else:
                start += timedelta(days=(body.day - start.isoweekday() % 7) % 7 if body.day < 7 else 0)
        once = body.frequency_unit == "once"
        model = MaintenanceSchedule(
            id=digest(db.model.id, "schedule", body.name), name=body.name, created_at=db.model.created_at,
            updated_at=db.model.created_at, last_window_datetime="", next_window_datetime="",
            duration=body.duration, day=body.day, hour=body.hour, week=body.week,
            frequency_value=body.frequency_value, frequency_unit=body.frequency_unit, enabled=body.enabled,
            expires_at=stamp(start + timedelta(hours=body.duration)) if once else None,
            deadline_at=stamp(start) if body.required else None, required=body.required,
            pending_vitess_version_update=body.pending_vitess_version is not None,
            pending_vitess_version=body.pending_vitess_version,
            pending_mysql_version_update=body.pending_mysql_version is not None,
            pending_mysql_version=body.pending_mysql_version)
        schedules[model.id] = ScheduleRecord(model, start)
        return schedules[model.id]

    def _schedules(self, db: DatabaseRecord) -> dict[str, ScheduleRecord]:
        upkeep = self._upkeep(db)
        if upkeep.schedules is None:
            upkeep.schedules = {}
            self.add_schedule(db, ScheduleAdd(name="Weekly maintenance"))
        return upkeep.schedules

    def _settle_schedule(self, record: ScheduleRecord) -> MaintenanceSchedule:
        past, upcoming = _occurrences(record.model, record.start, self.now())
        record.model.last_window_datetime = stamp(past[-1] if past else record.start)
        record.model.next_window_datetime = stamp(upcoming)
        return record.model

    def _schedule(self, org: OrgRecord, database: str, schedule_id: str) -> ScheduleRecord:
        found = self._schedules(self.find_database(org, database)).get(schedule_id)
        if found is None:
            raise not_found("Maintenance schedule")
        return found

    @locked
    def maintenance_schedules(self, org: OrgRecord, database: str, paging: Paging) -> Window[MaintenanceSchedule]:
        records = list(self._schedules(self.find_database(org, database)).values())
        return window([self._settle_schedule(record) for record in records], paging)

    @locked
    def maintenance_schedule(self, org: OrgRecord, database: str, schedule_id: str) -> MaintenanceSchedule:
        return self._settle_schedule(self._schedule(org, database, schedule_id))

    @locked
    def maintenance_windows(self, org: OrgRecord, database: str, schedule_id: str,
                            paging: Paging) -> Window[MaintenanceWindow]:
        """The schedule's last windows, newest first."""
        record = self._schedule(org, database, schedule_id)
        now = self.now()
        past, _ = _occurrences(record.model, record.start, now)
        found = []
        for begun in reversed(past):
            end = begun + timedelta(hours=record.model.duration)
            finished = stamp(end) if end <= now else None
            found.append(MaintenanceWindow(id=digest(record.model.id, stamp(begun)), created_at=stamp(begun),
                                           updated_at=finished or stamp(begun), started_at=stamp(begun),
                                           finished_at=finished))
        return window(found, paging)


def seed_upkeep(world, org: OrgRecord, databases: dict[str, str]) -> dict:
    """The seeded recommendations and schedules; databases: {"mysql": name, "postgresql": name}. Answers what the
    world's description tells of them."""
    app = org.databases[databases["mysql"]]
    created = world.now() - timedelta(days=2)
    world.add_recommendation(org, app, RecommendationAdd(), at=created)  # 1: open, new_index
    world.add_recommendation(org, app, RecommendationAdd(
        recommendation_type="unused_table", table_name="legacy_sessions", ddl_statement="DROP TABLE `legacy_sessions`",
        title="Drop table legacy_sessions: no query has read it in 30 days", state="applied"), at=created)
    pg = org.databases[databases["postgresql"]]
    world.add_recommendation(org, pg, RecommendationAdd(
        recommendation_type="bloated_table", table_name="events", ddl_statement='VACUUM (FULL) "events"',
        keyspace="postgres", title="Table events is bloated: reclaim its space"), at=created)
    required = world.add_schedule(app, ScheduleAdd(name="Vitess upgrade", frequency_unit="once", required=True,
                                                   pending_vitess_version="v22.0.1"))
    return {"schema_recommendations": {app.model.name: {"open": [1], "applied": [2]}, pg.model.name: {"open": [1]}},
            "maintenance_schedules": {app.model.name: [digest(app.model.id, "schedule", "Weekly maintenance"),
                                                       required.model.id]}}
