"""Deploy requests: a development branch's schema into a production branch, on the emulator clock.

The state machine (timings are settings, records.Settings)::

    create -> pending --deploy_check_delay--> ready | no_changes | error (lint errors)
    deploy -> queued --step--> in_progress --step--> complete_pending_revert --revert_window--> complete
                                           \\-> (auto_cutover false) pending_cutover
                                                   --apply-deploy / auto-apply--> in_progress_cutover --step-->
                                                   complete_pending_revert
                                           \\-> (cutover_blocked) in_progress_cutover, until force-cutover
                                           \\-> (instant_ddl) complete (no revert window)
                                           \\-> (deploy_fail_state set when queued) that state
    skip-revert: complete_pending_revert -> complete
    revert: complete_pending_revert -> in_progress_revert --step--> complete_revert (or complete_revert_error)
    cancel: queued -> cancelled; in_progress, pending_cutover -> in_progress_cancel --step--> complete_cancel
    force-cutover (in_progress, pending_cutover, in_progress_cutover): a cutover the cutover_blocked setting holds
        in in_progress_cutover goes on --step--> complete_pending_revert
    complete-deploy: complete_error -> complete

The schema goes live on the production branch on entering complete_pending_revert (the request is then
closed and deployed): real statements on its MariaDB schema (dataplane/schema.py: CREATE TABLE ... LIKE the branch's, a
shadow table swapped in for a change, the replaced table kept for the revert window); a revert puts the tables
back as they were, keeping the rows written since where their columns still exist. ``step`` is
deploy_step_delay.
Transitions happen when anything in the database is read ("settled"), at the time they were due.
"""

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from html import escape

from .models import (
    Actor,
    DeployBody,
    DeployOperation,
    DeployOperationSummary,
    DeployRequest,
    DeployRequestCreate,
    DeployRequestUpdate,
    Deployment,
    DeployReview,
    LintError,
    ResourceRef,
    ReviewCreate,
    ShardOperation,
    StorageCheck,
    Throttler,
    ThrottlerConfiguration,
    ThrottlerUpdate,
)
from .records import DatabaseRecord, OrgRecord, Paging, Principal, Window, invalid_params, locked, not_found, stamp
from .records import unprocessable, window
from ..dataplane.schema import Change, deploy_change, forget_kept, highlight, lint, merge, revert_change

CHECKED = ("pending", "ready", "no_changes", "error")  # before any deploy: a schema change re-checks them
DEPLOYING = ("queued", "submitting", "in_progress", "pending_cutover", "in_progress_vschema", "in_progress_cutover",
             "in_progress_cancel", "in_progress_revert", "in_progress_revert_vschema")
REDEPLOYABLE = ("ready", "cancelled", "complete_cancel")
LIST_STATES = ("open", "closed", "deployed")
OPERATION_NAMES = {"CREATE": "CREATE", "ALTER": "ALTER", "DROP": "DROP"}


@dataclass
class OperationRecord:
    model: DeployOperation
    change: Change


@dataclass
class DeployRecord:
    """A deploy request, its deployment, and what drives its state."""

    model: DeployRequest
    operations: list[OperationRecord] = field(default_factory=list)
    reviews: list[DeployReview] = field(default_factory=list)
    next_at: datetime | None = None  # when the current state ends by itself (None: it waits for a call)
    fail_state: str | None = None  # where the running deploy ends (deploy_fail_state when it was queued)
    revert_fails: bool = False
    instant: bool = False
    throttle_ratio: float = 0.0
    base_before: dict | None = None  # the source branch's base entries of the tables it deployed (for a revert)

    @property
    def state(self) -> str:
        return self.model.deployment.state

    def render(self) -> DeployRequest:
        deployment = self.model.deployment
        deployment.deploy_operations = [op.model for op in self.operations]
        deployment.deploy_operation_summaries = [summary(op.model) for op in self.operations]
        self.model.deployment_state = deployment.state
        self.model.approved = any(review.state == "approved" for review in self.reviews)
        self.model.num_comments = len(self.reviews)
        return self.model


def summary(op: DeployOperation) -> DeployOperationSummary:
    state = "pending" if op.state == "queued" else op.state
    progress = op.progress_percentage or 0.0
    eta = int(op.eta_seconds or 0)
    return DeployOperationSummary(
        id=op.id,
        created_at=op.created_at,
        deploy_errors=op.deploy_errors or "",
        ddl_statement=op.ddl_statement,
        eta_seconds=eta,
        keyspace_name=op.keyspace_name,
        operation_name=op.operation_name,
        progress_percentage=progress,
        state=state,
        syntax_highlighted_ddl=op.syntax_highlighted_ddl,
        table_name=op.table_name,
        can_drop_data=op.can_drop_data,
        operations=[ShardOperation(id=op.id, shard="-", state=op.state, progress_percentage=progress,
                                   eta_seconds=eta)],
    )


class DeployRequests:
    """World methods of deploy requests (mixed into state.World: self.lock, self.now(), find_branch...)."""

    # ------------------------------------------------------------ the clock

    def settle_deploys(self, db: DatabaseRecord) -> None:
        """Run every transition of the database's deploy requests that is due by now, at the time it was due."""
        now = self.now()
        for record in list(db.deploy_requests.values()):
            if record.state == "in_progress_cutover" and record.next_at is None and not self._held(record):
                record.next_at = self._step(now)  # the lock that held the cutover is gone
            while record.next_at is not None and record.next_at <= now:
                at, record.next_at = record.next_at, None
                self._advance(db, record, at)

    def _advance(self, db: DatabaseRecord, record: DeployRecord, at: datetime) -> None:
        state = record.state
        if state == "pending":
            self._check(db, record, at)
        elif state == "queued":
            self._enter(db, record, "in_progress", at)
        elif state == "in_progress":
            if record.fail_state:
                self._enter(db, record, record.fail_state, at)
            elif record.instant:
                self._enter(db, record, "complete", at)
            elif record.model.deployment.auto_cutover and self._held(record):
                self._enter(db, record, "in_progress_cutover", at)
            elif record.model.deployment.auto_cutover:
                self._enter(db, record, "complete_pending_revert", at)
            else:
                self._enter(db, record, "pending_cutover", at)
        elif state == "in_progress_cutover":
            self._enter(db, record, "complete_pending_revert", at)
        elif state == "complete_pending_revert":
            self._enter(db, record, "complete", at)
        elif state == "in_progress_revert":
            self._enter(db, record, "complete_revert_error" if record.revert_fails else "complete_revert", at)
        elif state == "in_progress_cancel":
            self._enter(db, record, "complete_cancel", at)

    def _held(self, record: DeployRecord) -> bool:
        """Whether a lock holds the request's cutover (the cutover_blocked setting) and no force was asked."""
        return self.settings.cutover_blocked and record.model.deployment.force_cutover_requested_at is None

    def _step(self, at: datetime) -> datetime:
        return at + timedelta(seconds=self.settings.deploy_step_delay)

    def _merge(self, db: DatabaseRecord, dr: DeployRequest) -> tuple[list[Change], str | None, dict]:
        """The three-way merge over the server's descriptions: the source branch's changes since its base,
        applied to the target as it is now; the sentence naming the tables both changed differently since the
        base (None: no conflict); and the source's description. A branch with no base (one the world was seeded
        with) is compared with the target (its base is the target)."""
        source = db.branches.get(dr.branch)
        target = db.branches.get(dr.into_branch)
        if source is None or target is None:
            return [], None, {}
        mine, now = self.describe_branch(source), self.describe_branch(target)
        base = source.base if source.base is not None else now
        changes, conflicts = merge(base, mine, now)
        for change in changes:
            if change.before is None:
                change.create_sql = self.create_sql(source, change.table_name)
        if not conflicts:
            return changes, None, mine
        tables = ", ".join(f"`{name}`" for name in conflicts)
        return changes, (f"Schema conflict: {'tables' if len(conflicts) > 1 else 'table'} {tables} changed both on "
                         f"branch {dr.branch!r} and, differently, on {dr.into_branch!r} since {dr.branch!r} was "
                         f"made from it, so the changes cannot be merged"), mine

    def _check(self, db: DatabaseRecord, record: DeployRecord, at: datetime) -> None:
        """The deploy check: the three-way merge into the production branch, and the lint of what it touches."""
        dr = record.model
        record.fail_state = None
        changes, conflict, mine = self._merge(db, dr)
        record.operations = [self._operation(db, change, at) for change in changes]
        touched = [c.table_name for c in changes if c.after is not None]
        errors = lint(mine, db.model.name, touched)
        deployment = dr.deployment
        deployment.lint_errors = [LintError(**error) for error in errors]
        deployment.instant_ddl_eligible = bool(changes) and all(c.instant_eligible for c in changes)
        if conflict:
            deployment.deploy_check_errors = conflict
            self._enter(db, record, "error", at)
        elif not changes:
            deployment.deploy_check_errors = None
            self._enter(db, record, "no_changes", at)
        elif errors:
            deployment.deploy_check_errors = "; ".join(
                f"{e['table_name']}: {e['lint_error']}: {e['error_description']}" for e in errors)
            self._enter(db, record, "error", at)
        else:
            deployment.deploy_check_errors = None
            self._enter(db, record, "ready", at)

    def _operation(self, db: DatabaseRecord, change: Change, at: datetime) -> OperationRecord:
        ddl = change.ddl()
        model = DeployOperation(
            id=self.new_id(),
            keyspace_name=db.model.name,
            table_name=change.table_name,
            operation_name=OPERATION_NAMES[change.operation],
            ddl_statement=ddl,
            syntax_highlighted_ddl=highlight(ddl),
            created_at=stamp(at),
            updated_at=stamp(at),
            can_drop_data=change.can_drop_data,
            progress_percentage=0.0,
            eta_seconds=None,
        )
        return OperationRecord(model, change)

    def _operations_to(self, record: DeployRecord, state: str, at: datetime, progress: float | None = None,
                       error: str | None = None) -> None:
        for op in record.operations:
            op.model.state = state
            op.model.updated_at = stamp(at)
            if progress is not None:
                op.model.progress_percentage = progress
                op.model.eta_seconds = 0.0 if progress >= 100 else self.settings.deploy_step_delay
            op.model.deploy_errors = error

    def _enter(self, db: DatabaseRecord, record: DeployRecord, state: str, at: datetime,
               who: Actor | None = None) -> None:
        """Move the deployment to ``state`` at time ``at``: its effects, and when it ends by itself."""
        dr, deployment = record.model, record.model.deployment
        when = stamp(at)
        deployment.state = state
        deployment.updated_at = dr.updated_at = when
        record.next_at = None
        if state in ("complete_error", "error") and record.fail_state:
            deployment.finished_at = when
            deployment.deployable = False
            self._operations_to(record, "error", at, None,
                                f"The deploy failed ({state}): emulated by deploy_fail_state")
        elif state in ("ready", "no_changes", "error"):
            deployment.deployable = state == "ready"
        elif state == "queued":
            deployment.queued_at = deployment.submitted_at = when
            deployment.started_at = deployment.finished_at = deployment.cutover_at = None
            deployment.ready_to_cutover_at = deployment.force_cutover_requested_at = None
            deployment.actor = who
            deployment.cancelled_actor = deployment.cutover_actor = None
            self._operations_to(record, "queued", at, 0.0)
            record.next_at = self._step(at)
        elif state == "in_progress":
            deployment.started_at = when
            self._operations_to(record, "in_progress", at, 50.0)
            record.next_at = self._step(at)
        elif state == "pending_cutover":
            deployment.ready_to_cutover_at = when
            self._operations_to(record, "complete", at, 100.0)
        elif state == "in_progress_cutover":
            deployment.cutover_actor = deployment.cutover_actor or who
            deployment.cutover_at = deployment.cutover_at or when
            record.next_at = None if self._held(record) else self._step(at)
        elif state in ("complete_pending_revert", "complete") and dr.deployed_at is None:
            self._go_live(db, record, at)
            if state == "complete_pending_revert":
                record.next_at = at + timedelta(seconds=self.settings.revert_window)
            else:
                self._finish(db, record)
        elif state == "complete":
            self._finish(db, record)
        elif state == "cancelled":
            deployment.finished_at = when
            deployment.cancelled_actor = who
            self._operations_to(record, "cancelled", at)
        elif state == "in_progress_cancel":
            deployment.cancelled_actor = who
            record.next_at = self._step(at)
        elif state == "complete_cancel":
            deployment.finished_at = when
            self._operations_to(record, "cancelled", at)
        elif state == "in_progress_revert":
            deployment.deployment_revert_request = {"id": self.new_id(), "state": "in_progress",
                                                    "created_at": when, "actor": who.model_dump() if who else None}
            record.next_at = self._step(at)
        elif state in ("complete_revert", "complete_revert_error"):
            if state == "complete_revert":
                self._put_back(db, record, at)
            if deployment.deployment_revert_request is not None:
                deployment.deployment_revert_request["state"] = "complete" if state == "complete_revert" else "error"

    def _go_live(self, db: DatabaseRecord, record: DeployRecord, at: datetime) -> None:
        """The schema change reaches the production branch; the request is deployed and closed."""
        dr, deployment = record.model, record.model.deployment
        when = stamp(at)
        target = db.branches.get(dr.into_branch)
        source = db.branches.get(dr.branch)
        failed = {}  # operation id -> the server's refusal (shown in its deploy_errors)
        if target is not None:
            if self.data is not None and target.model.kind != "postgresql":
                schema = self.made_schema(target)
                mine = self._schema_source(source) if source is not None and source.model.id == dr.branch_id \
                    else None
                for op in record.operations:
                    if mine is not None or op.change.after is None:
                        try:
                            deploy_change(self.data, schema, mine, op.change, op.model.id)
                        except Exception as error:  # pylint: disable=broad-except
                            failed[op.model.id] = str(error)
            target.model.schema_last_updated_at = when
        if source is not None and source.model.id == dr.branch_id and source.base is not None:
            # the deployed tables are now the branch's base: a later request carries only what changes after
            record.base_before = {op.change.table_name: source.base.get(op.change.table_name)
                                  for op in record.operations}
            for op in record.operations:
                if op.change.after is None:
                    source.base.pop(op.change.table_name, None)
                else:
                    source.base[op.change.table_name] = op.change.after
        self._operations_to(record, "complete", at, 100.0)
        for op in record.operations:
            op.model.deploy_errors = failed.get(op.model.id)
        deployment.cutover_at = deployment.finished_at = when
        deployment.schema_last_updated_at = when
        dr.deployed_at = when
        if dr.state == "open":
            dr.state, dr.closed_at = "closed", when
            dr.closed_by = deployment.actor

    def _finish(self, db: DatabaseRecord, record: DeployRecord) -> None:
        """The revert window is over: the kept tables go; delete the branch when auto_delete_branch asks."""
        dr = record.model
        if self.data is not None and self.data_live and self.data.owner is self:
            for op in record.operations:
                forget_kept(self.data, op.model.id)
        if dr.deployment.auto_delete_branch and not dr.branch_deleted:
            branch = db.branches.get(dr.branch)
            if branch is not None and branch.model.id == dr.branch_id and not branch.model.production \
                    and not branch.model.deletion_protected:
                self.remove_branch(db, dr.branch, dr.deployment.actor or dr.actor, dr.deployment.updated_at)

    def _put_back(self, db: DatabaseRecord, record: DeployRecord, at: datetime) -> None:
        target = db.branches.get(record.model.into_branch)
        if target is None:
            return
        if self.data is not None and target.model.kind != "postgresql":
            schema = self.made_schema(target)
            for op in reversed(record.operations):
                revert_change(self.data, schema, op.change, op.model.id)
        target.model.schema_last_updated_at = stamp(at)
        source = db.branches.get(record.model.branch)
        if record.base_before is not None and source is not None and source.model.id == record.model.branch_id \
                and source.base is not None:
            for name, table in record.base_before.items():
                if table is None:
                    source.base.pop(name, None)
                else:
                    source.base[name] = table
            record.base_before = None

    def recheck(self, db: DatabaseRecord, branch_name: str) -> None:
        """The branch's schema changed: its open requests that were not deployed are checked again."""
        now = self.now()
        for record in db.deploy_requests.values():
            dr = record.model
            if dr.branch == branch_name and dr.state == "open" and record.state in CHECKED:
                record.operations = []
                dr.deployment.lint_errors = []
                dr.deployment.deployable = False
                dr.deployment.deploy_check_errors = None
                dr.deployment.state = "pending"
                dr.deployment.updated_at = dr.updated_at = stamp(now)
                record.next_at = now + timedelta(seconds=self.settings.deploy_check_delay)

    def branch_deleted(self, db: DatabaseRecord, branch_id: str, who: Actor, when: str) -> None:
        """Requests from a deleted branch say so; those not deployed yet are closed."""
        for record in db.deploy_requests.values():
            dr = record.model
            if dr.branch_id != branch_id:
                continue
            dr.branch_deleted, dr.branch_deleted_at, dr.branch_deleted_by = True, when, who
            if dr.state == "open" and record.state not in DEPLOYING:
                dr.state, dr.closed_at, dr.closed_by = "closed", when, who
                dr.updated_at = when

    def branch_renamed(self, db: DatabaseRecord, old: str, new: str) -> None:
        for record in db.deploy_requests.values():
            dr = record.model
            if dr.branch == old:
                dr.branch = new
            if dr.into_branch == old:
                dr.into_branch = dr.deployment.into_branch = new

    # ------------------------------------------------------------ reads

    def _deploy_request(self, org: OrgRecord, database: str, number: int) -> tuple[DatabaseRecord, DeployRecord]:
        db = self.find_database(org, database)
        record = db.deploy_requests.get(number)
        if record is None:
            raise not_found("Deploy request")
        return db, record

    @locked
    def deploy_requests(self, org: OrgRecord, database: str, paging: Paging, state: str | None,
                        branch: str | None, into_branch: str | None) -> Window[DeployRequest]:
        if state is not None and state not in LIST_STATES:
            raise invalid_params(f"state: must be one of {', '.join(LIST_STATES)}")
        db = self.find_database(org, database)
        found = []
        for record in reversed(db.deploy_requests.values()):  # newest first
            dr = record.model
            if state == "deployed" and dr.deployed_at is None or state in ("open", "closed") and dr.state != state:
                continue
            if branch is not None and dr.branch != branch or into_branch is not None and dr.into_branch != into_branch:
                continue
            found.append(record)
        page = window(found, paging)
        return Window([record.render() for record in page.items], page.total)

    @locked
    def deploy_request(self, org: OrgRecord, database: str, number: int) -> DeployRequest:
        return self._deploy_request(org, database, number)[1].render()

    @locked
    def deployment(self, org: OrgRecord, database: str, number: int) -> Deployment:
        return self._deploy_request(org, database, number)[1].render().deployment

    @locked
    def deploy_operations(self, org: OrgRecord, database: str, number: int, paging: Paging) -> Window[DeployOperation]:
        record = self._deploy_request(org, database, number)[1]
        return window([op.model for op in record.operations], paging)

    @locked
    def deploy_queue(self, org: OrgRecord, database: str, paging: Paging) -> Window[Deployment]:
        db = self.find_database(org, database)
        queued = [r for r in db.deploy_requests.values() if r.state in DEPLOYING and r.state != "in_progress_revert"]
        queued.sort(key=lambda r: (r.model.deployment.queued_at or "", r.model.number))
        page = window(queued, paging)
        return Window([record.render().deployment for record in page.items], page.total)

    @locked
    def reviews(self, org: OrgRecord, database: str, number: int, paging: Paging) -> Window[DeployReview]:
        return window(self._deploy_request(org, database, number)[1].reviews, paging)

    @locked
    def throttler(self, org: OrgRecord, database: str, number: int) -> Throttler:
        db, record = self._deploy_request(org, database, number)
        dr = record.model
        return Throttler(
            keyspaces=[db.model.name],
            configurable=ResourceRef(id=dr.id, name=str(dr.number), created_at=dr.created_at,
                                     updated_at=dr.updated_at),
            configurations=[ThrottlerConfiguration(keyspace_name=db.model.name, ratio=record.throttle_ratio)],
        )

    @locked
    def storage_check(self, org: OrgRecord, database: str, number: int) -> StorageCheck:
        """1 GiB used and deploy_storage_remaining left on the one shard; 1 MiB needed for each table changed."""
        db, record = self._deploy_request(org, database, number)
        used, remaining = 2**30, self.settings.deploy_storage_remaining
        capacity = used + remaining
        needed = 2**20 * sum(op.change.after is not None for op in record.operations)
        enough = remaining >= needed
        shard = {"used": used, "capacity": capacity, "remaining": remaining,
                 "percentage_used": round(100 * used / capacity, 2), "storage_needed": needed, "has_enough": enough}
        return StorageCheck(enough_storage=enough, upgradeable=True, storage_bytes_needed=needed,
                            storage_report={db.model.name: {"-": shard}})

    # ------------------------------------------------------------ writes

    @locked
    def create_deploy_request(self, org: OrgRecord, database: str, body: DeployRequestCreate,
                              who: Principal) -> DeployRequest:
        db = self.find_database(org, database)
        source = db.branches.get(body.branch)
        if source is None:
            raise unprocessable(f"Branch {body.branch!r} does not exist")
        target = db.branches.get(body.into_branch)
        if target is None:
            raise unprocessable(f"Branch {body.into_branch!r} does not exist")
        if body.branch == body.into_branch:
            raise unprocessable("A deploy request needs two different branches")
        if not target.model.production:
            raise unprocessable(f"Deploy requests can only be created into a production branch: "
                                f"{body.into_branch!r} is not a production branch")
        if source.model.production:
            raise unprocessable(f"Branch {body.branch!r} is a production branch: deploy requests come from "
                                "development branches")
        now = self.now()
        if not source.settle(now).ready:
            raise unprocessable(f"Branch {body.branch!r} is not ready yet")
        for record in db.deploy_requests.values():
            if record.model.branch == body.branch and record.model.state == "open":
                raise unprocessable(f"An open deploy request already exists for branch {body.branch!r}: "
                                    f"#{record.model.number}")
        number = max(db.deploy_requests, default=0) + 1
        when = stamp(now)
        deployment = Deployment(
            id=self.new_id(),
            auto_cutover=body.auto_cutover,
            auto_delete_branch=body.auto_delete_branch,
            created_at=when,
            updated_at=when,
            into_branch=body.into_branch,
            deploy_request_number=number,
        )
        model = DeployRequest(
            id=self.new_id(),
            number=number,
            actor=who.user.actor(),
            branch=body.branch,
            branch_id=source.model.id,
            into_branch=body.into_branch,
            deployment=deployment,
            html_url=f"{db.model.html_url}/deploy-requests/{number}",
            notes=body.notes,
            html_body=f"<p>{escape(body.notes)}</p>" if body.notes else "",
            created_at=when,
            updated_at=when,
        )
        record = DeployRecord(model, next_at=now + timedelta(seconds=self.settings.deploy_check_delay))
        db.deploy_requests[number] = record
        self.settle_deploys(db)
        return record.render()

    def _refuse(self, record: DeployRecord, action: str) -> None:
        raise unprocessable(f"Deploy request #{record.model.number} cannot {action} while its deployment is "
                            f"{record.state}")

    @locked
    def close_deploy_request(self, org: OrgRecord, database: str, number: int, body: DeployRequestUpdate,
                             who: Principal) -> DeployRequest:
        db, record = self._deploy_request(org, database, number)
        dr = record.model
        if body.state == "closed" and dr.state == "open":
            if record.state in DEPLOYING:
                raise unprocessable(f"Deploy request #{number} is deploying ({record.state}): cancel the deploy "
                                    "before closing it")
            when = stamp(self.now())
            dr.state, dr.closed_at, dr.closed_by, dr.updated_at = "closed", when, who.user.actor(), when
        return record.render()

    @locked
    def deploy(self, org: OrgRecord, database: str, number: int, body: DeployBody, who: Principal) -> DeployRequest:
        db, record = self._deploy_request(org, database, number)
        dr = record.model
        if dr.state != "open":
            raise unprocessable(f"Deploy request #{number} is closed")
        if record.state == "pending":
            raise unprocessable(f"Deploy request #{number} is still being checked (pending): deploy it once it "
                                "is ready")
        if record.state == "no_changes":
            raise unprocessable(f"Deploy request #{number} has no schema changes to deploy")
        if record.state == "error":
            raise unprocessable(f"Deploy request #{number} is not deployable: {dr.deployment.deploy_check_errors}")
        if record.state not in REDEPLOYABLE:
            self._refuse(record, "be deployed")
        target = db.branches.get(dr.into_branch)
        if target is None or not target.model.production:
            raise unprocessable(f"Deploy request #{number} cannot be deployed: {dr.into_branch!r} is not a "
                                "production branch")
        if db.model.require_approval_for_deploy and not record.render().approved:
            raise unprocessable(f"Deploy request #{number} must be approved before it can be deployed: the "
                                "database requires approval for deploys")
        if body.instant_ddl and not dr.deployment.instant_ddl_eligible:
            raise unprocessable(f"Deploy request #{number} is not eligible for instant DDL")
        changes, conflict, _ = self._merge(db, dr)  # production may have moved on since the check
        if conflict:
            raise unprocessable(f"Deploy request #{number} is not deployable: {conflict}")
        if not changes:
            raise unprocessable(f"Deploy request #{number} has no schema changes to deploy")
        if [c.ddl() for c in changes] != [op.change.ddl() for op in record.operations]:
            record.operations = [self._operation(db, change, self.now()) for change in changes]
        fail = self.settings.deploy_fail_state
        record.fail_state = fail if fail != "complete_revert_error" else None
        record.instant = dr.deployment.instant_ddl = body.instant_ddl
        self._enter(db, record, "queued", self.now(), who.user.actor())
        return record.render()

    @locked
    def apply_deploy(self, org: OrgRecord, database: str, number: int, who: Principal) -> DeployRequest:
        db, record = self._deploy_request(org, database, number)
        if record.state != "pending_cutover":
            self._refuse(record, "apply its deploy (cut over)")
        self._enter(db, record, "in_progress_cutover", self.now(), who.user.actor())
        return record.render()

    @locked
    def force_cutover(self, org: OrgRecord, database: str, number: int) -> DeployRequest:
        record = self._deploy_request(org, database, number)[1]
        if record.state not in ("in_progress", "pending_cutover", "in_progress_cutover"):
            self._refuse(record, "force a cutover")
        deployment = record.model.deployment
        deployment.force_cutover_requested_at = deployment.force_cutover_requested_at or stamp(self.now())
        if record.state == "in_progress_cutover" and record.next_at is None:
            record.next_at = self._step(self.now())  # the transactions that held the lock are ended
        return record.render()

    @locked
    def cancel_deploy(self, org: OrgRecord, database: str, number: int, who: Principal) -> DeployRequest:
        db, record = self._deploy_request(org, database, number)
        if record.state == "queued":
            self._enter(db, record, "cancelled", self.now(), who.user.actor())
        elif record.state in ("submitting", "in_progress", "pending_cutover"):
            self._enter(db, record, "in_progress_cancel", self.now(), who.user.actor())
        else:
            self._refuse(record, "be cancelled")
        return record.render()

    @locked
    def skip_revert(self, org: OrgRecord, database: str, number: int) -> DeployRequest:
        db, record = self._deploy_request(org, database, number)
        if record.state != "complete_pending_revert":
            self._refuse(record, "skip its revert period")
        self._enter(db, record, "complete", self.now())
        return record.render()

    @locked
    def revert(self, org: OrgRecord, database: str, number: int, who: Principal) -> DeployRequest:
        db, record = self._deploy_request(org, database, number)
        if record.state != "complete_pending_revert":
            self._refuse(record, "be reverted")
        record.revert_fails = self.settings.deploy_fail_state == "complete_revert_error"
        self._enter(db, record, "in_progress_revert", self.now(), who.user.actor())
        return record.render()

    @locked
    def complete_errored_deploy(self, org: OrgRecord, database: str, number: int) -> DeployRequest:
        db, record = self._deploy_request(org, database, number)
        if record.state != "complete_error":
            self._refuse(record, "complete an errored deploy")
        record.fail_state = None
        self._enter(db, record, "complete", self.now())
        return record.render()

    @locked
    def auto_apply(self, org: OrgRecord, database: str, number: int, enable: bool, who: Principal) -> DeployRequest:
        db, record = self._deploy_request(org, database, number)
        record.model.deployment.auto_cutover = enable
        if enable and record.state == "pending_cutover":
            self._enter(db, record, "in_progress_cutover", self.now(), who.user.actor())
        return record.render()

    @locked
    def auto_delete_branch(self, org: OrgRecord, database: str, number: int, enable: bool) -> DeployRequest:
        record = self._deploy_request(org, database, number)[1]
        record.model.deployment.auto_delete_branch = enable
        return record.render()

    @locked
    def review(self, org: OrgRecord, database: str, number: int, body: ReviewCreate, who: Principal) -> DeployReview:
        record = self._deploy_request(org, database, number)[1]
        when = stamp(self.now())
        review = DeployReview(
            id=self.new_id(),
            body=body.body,
            html_body=f"<p>{escape(body.body)}</p>" if body.body else "",
            state=body.state,
            created_at=when,
            updated_at=when,
            actor=who.user.actor(),
        )
        record.reviews.append(review)
        record.model.updated_at = when
        return review

    @locked
    def update_throttler(self, org: OrgRecord, database: str, number: int, body: ThrottlerUpdate) -> Throttler:
        db, record = self._deploy_request(org, database, number)
        if body.ratio is not None:
            record.throttle_ratio = float(body.ratio)
        for configuration in body.configurations or []:
            if configuration.keyspace_name != db.model.name:
                raise unprocessable(f"Keyspace {configuration.keyspace_name!r} is not part of this deploy request")
            record.throttle_ratio = configuration.ratio
        return self.throttler(org, database, number)


