"""PgBouncers of PostgreSQL branches and their resize requests (the postgres_network group of the OpenAPI).

A bouncer is named within its branch: POST .../bouncers makes it at once (target, bouncer_size, replicas_per_cell;
its parameters start at their defaults), DELETE removes it. Everything else changes through a resize request on the
emulator clock, with the capacity settings (capacity.py):

    PATCH .../bouncers/{bouncer}/resizes
        -> pending --change_step_delay--> resizing --change_step_delay--> completed (the bouncer takes its values)
                   \\-> canceled (change_fail_state; DELETE .../resizes while pending)

A PATCH while one is pending updates that one (same id); while one is resizing: 422; asking for what the bouncer
has: 422 ("no changes"). On the data plane (dataplane/pgbouncer.py) a bouncer is a real PgBouncer in front of the
branch's database when Debian's pgbouncer is installed.

Mixed into state.World: every public method runs under its lock.
"""

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, Field, StrictBool, StrictFloat, StrictInt, StrictStr

from .capacity import CATALOGUE, CATALOGUE_TIME, DOCS, check_value
from .models import Actor, Body, Record, ResourceRef, User
from .records import BranchRecord, OrgRecord, Paging, Window, invalid_params, locked, not_found, stamp
from .records import unprocessable, window

TARGETS = ("primary", "replica", "replica_az_affinity")
GIB = 1024**3
# name -> (display name, cpu, ram): the platform's PgBouncer sizes
SIZES = {
    "PGB_5": ("PGB-5", "1/16", GIB // 8),
    "PGB_10": ("PGB-10", "1/8", GIB // 4),
    "PGB_20": ("PGB-20", "1/4", GIB // 2),
    "PGB_40": ("PGB-40", "1/2", GIB),
    "PGB_80": ("PGB-80", "1", 2 * GIB),
    "PGB_160": ("PGB-160", "2", 4 * GIB),
}
BOUNCER_PARAMETERS = [spec for key, spec in CATALOGUE.items() if key[0] == "pgbouncer"]
RUNNING = ("pending", "resizing")
Value = StrictStr | StrictInt | StrictFloat | StrictBool


# ---------------------------------------------------------------- records


class Sku(BaseModel):
    name: str
    display_name: str
    cpu: str
    ram: int
    sort_order: int


class BouncerParameter(Record):
    record_type: ClassVar[str] = "ClusterParameter"

    id: str
    namespace: Literal["pgbouncer"] = "pgbouncer"
    name: str
    display_name: str
    category: str
    description: str
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


class Bouncer(Record):
    record_type: ClassVar[str] = "PostgresBouncer"

    id: str
    name: str
    sku: Sku
    target: Literal["primary", "replica", "replica_az_affinity"]
    replicas_per_cell: int
    created_at: str
    updated_at: str
    deleted_at: str | None = None
    actor: Actor
    branch: ResourceRef
    parameters: list[BouncerParameter]


class BouncerResize(Record):
    record_type: ClassVar[str] = "PostgresBouncerResizeRequest"

    id: str
    state: Literal["pending", "resizing", "canceled", "completed"]
    replicas_per_cell: int
    target: str
    parameters: dict[str, Any]
    previous_replicas_per_cell: int
    previous_target: str
    previous_parameters: dict[str, Any]
    started_at: str | None = None
    completed_at: str | None = None
    created_at: str
    updated_at: str
    actor: Actor
    bouncer: ResourceRef
    sku: Sku
    previous_sku: Sku


# ---------------------------------------------------------------- request bodies

Name = Annotated[StrictStr, Field(min_length=1, max_length=63, pattern=r"^[a-z0-9][a-z0-9-]*$")]


class BouncerCreate(Body):
    name: Name
    target: StrictStr | None = None
    bouncer_size: StrictStr | None = None
    replicas_per_cell: Annotated[StrictInt, Field(ge=1, le=16)] | None = None


class BouncerResizeBody(Body):
    bouncer_size: StrictStr | None = None
    replicas_per_cell: Annotated[StrictInt, Field(ge=1, le=16)] | None = None
    target: StrictStr | None = None
    parameters: dict[StrictStr, dict[StrictStr, Value]] | None = None


# ---------------------------------------------------------------- the state


@dataclass
class Shape:
    """What a bouncer has, or a resize asks for."""

    size: str
    target: str
    replicas: int
    parameters: dict[str, str] = field(default_factory=dict)  # name -> value, only those away from the default

    def copy(self) -> "Shape":
        return Shape(self.size, self.target, self.replicas, dict(self.parameters))


@dataclass
class BouncerState:
    id: str
    name: str
    branch: BranchRecord
    actor: Actor
    created: datetime
    updated: datetime
    shape: Shape


@dataclass
class ResizeState:
    id: str
    bouncer: BouncerState
    actor: Actor
    created: datetime
    step: float
    before: Shape
    after: Shape
    end_state: str = "completed"
    canceled_at: datetime | None = None
    applied: bool = False
    updated: datetime | None = None

    def state(self, now: datetime) -> tuple[str, datetime | None, datetime | None]:
        """(state, started, ended) on the clock."""
        started = self.created + timedelta(seconds=self.step)
        finished = started + timedelta(seconds=self.step)
        if self.canceled_at is not None and now >= self.canceled_at:
            return "canceled", None, self.canceled_at
        if self.end_state == "canceled" and now >= started:
            return "canceled", None, started
        if now < started:
            return "pending", None, None
        if now < finished:
            return "resizing", started, None
        return "completed", started, finished


def _sku(name: str) -> Sku:
    display, cpu, ram = SIZES[name]
    return Sku(name=name, display_name=display, cpu=cpu, ram=ram, sort_order=list(SIZES).index(name) + 1)


def _check_size(size: str) -> None:
    if size not in SIZES:
        raise unprocessable(f"Bouncer size {size!r} does not exist: one of {', '.join(SIZES)}")


def _check_target(target: str) -> None:
    if target not in TARGETS:
        raise invalid_params(f"target: {target!r} is not one of {', '.join(TARGETS)}")


class Bouncers:
    """World methods of PgBouncers and their resize requests."""

    def _bouncer_state(self) -> dict:
        if not hasattr(self, "bouncer_state"):
            self.bouncer_state = {"bouncers": {}, "resizes": {}}  # branch id -> {name: BouncerState}; -> [ResizeState]
        return self.bouncer_state

    def _branch_bouncers(self, branch: BranchRecord) -> dict[str, BouncerState]:
        return self._bouncer_state()["bouncers"].setdefault(branch.model.id, {})

    def _branch_resizes(self, branch: BranchRecord) -> list[ResizeState]:
        return self._bouncer_state()["resizes"].setdefault(branch.model.id, [])

    def _bouncer_branch(self, org: OrgRecord, database: str, name: str) -> BranchRecord:
        branch = self.find_branch(org, database, name)
        if branch.model.kind != "postgresql":
            raise unprocessable(f"PgBouncers are for PostgreSQL branches: {name!r} is a MySQL branch")
        self._settle_bouncers(branch)
        return branch

    def _find_bouncer(self, branch: BranchRecord, name: str) -> BouncerState:
        found = self._branch_bouncers(branch).get(name)
        if found is None:
            raise not_found("Bouncer")
        return found

    def _settle_bouncers(self, branch: BranchRecord) -> None:
        """The resizes that completed by now reach their bouncers (oldest first)."""
        now = self.now()
        for resize in reversed(self._branch_resizes(branch)):
            state, _, ended = resize.state(now)
            if state == "completed" and not resize.applied:
                resize.applied = True
                resize.bouncer.shape = resize.after.copy()
                resize.bouncer.updated = max(resize.bouncer.updated, ended)
                self.data_bouncer_changed(resize.bouncer)

    # ------------------------------------------------------------ rendering

    def _parameters(self, bouncer: BouncerState) -> list[BouncerParameter]:
        return [BouncerParameter(
            id=f"{bouncer.id}-{spec.name}", name=spec.name, display_name=spec.name, category=spec.category,
            description=spec.description, immutable=spec.immutable,
            parameter_type=spec.parameter_type if spec.parameter_type in ("integer", "select") else "string",
            default_value=spec.default, value=bouncer.shape.parameters.get(spec.name, spec.default),
            created_at=CATALOGUE_TIME, updated_at=stamp(bouncer.updated), restart=self.restarts(spec), max=spec.max,
            min=spec.min, url=f"{DOCS}#{spec.name}", options=list(spec.options), actor=bouncer.actor)
            for spec in BOUNCER_PARAMETERS]

    def _render_bouncer(self, bouncer: BouncerState) -> Bouncer:
        m = bouncer.branch.model
        return Bouncer(id=bouncer.id, name=bouncer.name, sku=_sku(bouncer.shape.size), target=bouncer.shape.target,
                       replicas_per_cell=bouncer.shape.replicas, created_at=stamp(bouncer.created),
                       updated_at=stamp(bouncer.updated), actor=bouncer.actor,
                       branch=ResourceRef(id=m.id, name=m.name, created_at=m.created_at, updated_at=m.updated_at),
                       parameters=self._parameters(bouncer))

    def _render_resize(self, resize: ResizeState) -> BouncerResize:
        state, started, ended = resize.state(self.now())
        changed = max(x for x in (resize.created, resize.updated, started, ended) if x is not None)
        b = resize.bouncer
        asked = {name: value for name, value in resize.after.parameters.items()
                 if resize.before.parameters.get(name) != value}
        previous = {name: resize.before.parameters.get(name, CATALOGUE[("pgbouncer", name)].default)
                    for name in asked}
        return BouncerResize(
            id=resize.id, state=state, replicas_per_cell=resize.after.replicas, target=resize.after.target,
            parameters={"pgbouncer": asked} if asked else {},
            previous_replicas_per_cell=resize.before.replicas, previous_target=resize.before.target,
            previous_parameters={"pgbouncer": previous} if previous else {},
            started_at=stamp(started) if started else None, completed_at=stamp(ended) if ended else None,
            created_at=stamp(resize.created), updated_at=stamp(changed), actor=resize.actor,
            bouncer=ResourceRef(id=b.id, name=b.name, created_at=stamp(b.created), updated_at=stamp(b.updated)),
            sku=_sku(resize.after.size), previous_sku=_sku(resize.before.size))

    # ------------------------------------------------------------ bouncers

    @locked
    def bouncers(self, org: OrgRecord, database: str, branch: str, paging: Paging) -> Window[Bouncer]:
        found = self._bouncer_branch(org, database, branch)
        return window([self._render_bouncer(b) for b in self._branch_bouncers(found).values()], paging)

    @locked
    def bouncer(self, org: OrgRecord, database: str, branch: str, name: str) -> Bouncer:
        return self._render_bouncer(self._find_bouncer(self._bouncer_branch(org, database, branch), name))

    @locked
    def create_bouncer(self, org: OrgRecord, database: str, branch: str, body: BouncerCreate, user: User) -> Bouncer:
        found = self._bouncer_branch(org, database, branch)
        self._ready_branch(org, database, branch, "take a bouncer")
        bouncers = self._branch_bouncers(found)
        if body.name in bouncers:
            raise unprocessable(f"Branch {branch!r} already has a bouncer named {body.name!r}")
        shape = Shape(body.bouncer_size or "PGB_5", body.target or "primary", body.replicas_per_cell or 1)
        _check_size(shape.size)
        _check_target(shape.target)
        now = self.now()
        made = BouncerState(self.new_id(), body.name, found, user.actor(), now, now, shape)
        bouncers[body.name] = made
        self.data_bouncer_changed(made)
        return self._render_bouncer(made)

    @locked
    def delete_bouncer(self, org: OrgRecord, database: str, branch: str, name: str) -> None:
        found = self._bouncer_branch(org, database, branch)
        bouncer = self._find_bouncer(found, name)
        now = self.now()
        for resize in self._branch_resizes(found):
            if resize.bouncer is bouncer and resize.state(now)[0] in RUNNING:
                resize.canceled_at = now
        del self._branch_bouncers(found)[name]
        self.data_bouncer_removed(bouncer)

    # ------------------------------------------------------------ resizes

    def _running_resize(self, branch: BranchRecord, bouncer: BouncerState) -> ResizeState | None:
        now = self.now()
        return next((r for r in self._branch_resizes(branch)
                     if r.bouncer is bouncer and r.state(now)[0] in RUNNING), None)

    @locked
    def resize_bouncer(self, org: OrgRecord, database: str, branch: str, name: str, body: BouncerResizeBody,
                       user: User, end_state: str | None = None) -> BouncerResize:
        found = self._bouncer_branch(org, database, branch)
        bouncer = self._find_bouncer(found, name)
        running = self._running_resize(found, bouncer)
        if running is not None and running.state(self.now())[0] == "resizing":
            raise unprocessable(f"Bouncer {name!r} has a resize request resizing ({running.id}): wait for it to "
                                f"complete before asking for another")
        after = (running.after if running is not None else bouncer.shape).copy()
        if body.bouncer_size is not None:
            _check_size(body.bouncer_size)
            after.size = body.bouncer_size
        if body.target is not None:
            _check_target(body.target)
            after.target = body.target
        if body.replicas_per_cell is not None:
            after.replicas = body.replicas_per_cell
        for namespace, values in (body.parameters or {}).items():
            if namespace != "pgbouncer":
                raise invalid_params(f"parameters.{namespace}: only parameters of the namespace pgbouncer can be "
                                     f"updated")
            for parameter, value in values.items():
                spec = CATALOGUE.get(("pgbouncer", parameter))
                if spec is None:
                    raise invalid_params(f"parameters.pgbouncer.{parameter}: no such parameter")
                text = check_value(spec, value)
                if text == spec.default:
                    after.parameters.pop(parameter, None)
                else:
                    after.parameters[parameter] = text
        now = self.now()
        if running is not None:
            running.after, running.updated = after, now
            return self._render_resize(running)
        if after == bouncer.shape:
            raise unprocessable(f"Bouncer {name!r} already has these values: no changes to apply")
        s = self.settings
        resize = ResizeState(self.new_id(), bouncer, user.actor(), now, s.change_step_delay, bouncer.shape.copy(),
                             after, end_state=end_state or s.change_fail_state or "completed")
        self._branch_resizes(found).insert(0, resize)  # newest first
        return self._render_resize(resize)

    @locked
    def cancel_bouncer_resize(self, org: OrgRecord, database: str, branch: str, name: str) -> None:
        found = self._bouncer_branch(org, database, branch)
        bouncer = self._find_bouncer(found, name)
        running = self._running_resize(found, bouncer)
        if running is None or running.state(self.now())[0] != "pending":
            what = "is resizing: a resize cannot be canceled once started" if running else "has no pending resize"
            raise unprocessable(f"Bouncer {name!r} {what}")
        running.canceled_at = self.now()

    @locked
    def bouncer_resizes(self, org: OrgRecord, database: str, branch: str, paging: Paging,
                        name: str | None = None) -> Window[BouncerResize]:
        found = self._bouncer_branch(org, database, branch)
        bouncer = self._find_bouncer(found, name) if name is not None else None
        return window([self._render_resize(r) for r in self._branch_resizes(found)
                       if bouncer is None or r.bouncer is bouncer], paging)

    # ------------------------------------------------------------ the data plane (dataplane/pgbouncer.py)

    def data_bouncer_changed(self, bouncer: BouncerState) -> None:
        """A bouncer made or resized: the data plane's PgBouncer in front of the branch's database follows (none
        without a data plane, or without Debian's pgbouncer)."""
        name = self.data_names.get(bouncer.branch.model.id) if self.data is not None else None
        if name is None or not self._data_go_live():
            return
        from ..dataplane import pgbouncer

        if pgbouncer.binary() is None:
            return
        self._data_database(name)
        settings = {spec.name: bouncer.shape.parameters.get(spec.name, spec.default) for spec in BOUNCER_PARAMETERS}
        pgbouncer.ensure(self.data, bouncer.id, name, settings, owner=self)

    def data_bouncer_removed(self, bouncer: BouncerState) -> None:
        """A bouncer deleted: its PgBouncer stops."""
        if self.data is not None:
            from ..dataplane import pgbouncer

            pgbouncer.stop(bouncer.id)

    @locked
    def data_bouncer_addresses(self) -> dict[str, str]:
        """organization/database/branch/bouncer -> the address of its PgBouncer on the data plane."""
        from ..dataplane import pgbouncer

        running = pgbouncer.addresses()
        found = {}
        for org in self.orgs.values():
            for db in org.databases.values():
                for branch in db.branches.values():
                    for bouncer in self._bouncer_state()["bouncers"].get(branch.model.id, {}).values():
                        if bouncer.id in running:
                            found[f"{org.ref.name}/{db.model.name}/{branch.model.name}/{bouncer.name}"] = \
                                running[bouncer.id]
        return found
