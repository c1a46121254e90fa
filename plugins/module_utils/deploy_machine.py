# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The deploy request's state machine, as the deploy_request module drives it: the request opened and its settings
(and throttler) applied, its deploy check waited for, the storage check read, the deploy queued and cut over (forced
where the task says so), an errored deploy completed where the task says so, its revert window kept, skipped or
reverted; or its deploy cancelled.

Each write is settled (an answer lost is read back, never sent twice) and each step waited for with one Waiter. A
state from which the request can no longer be deployed ends the task at once, in a sentence that names the state, what
happened and what to do.
"""

from __future__ import annotations

import time

from ansible_collections.planetscale.cloud.plugins.module_utils import schemas
from ansible_collections.planetscale.cloud.plugins.module_utils.base import Module, ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError
from ansible_collections.planetscale.cloud.plugins.module_utils.deploy_requests import (
    CANCELLED, DEPLOYING, DEPLOYMENT_STATES, NOT_DEPLOYED, REVERTING, deploy_request_path, deployment_state,
    lint_errors, status)
from ansible_collections.planetscale.cloud.plugins.module_utils.resource import capital
from ansible_collections.planetscale.cloud.plugins.module_utils.settle import Waiter, write_and_settle

CHECKING = frozenset(("pending",))  # the deploy check has not finished

DEPLOYED = frozenset(("complete_pending_revert", "complete"))  # the schema change is live on the branch deployed into

PENDING_CUTOVER = frozenset(("pending_cutover",))  # a gated deploy waits here for its cutover
CUTTING_OVER = frozenset(("in_progress_cutover",))  # a lock held by a long transaction can keep a cutover here
CANCELLABLE = frozenset(("queued", "submitting", "in_progress", "in_progress_vschema", "pending_cutover"))
# A cancel is over: the deploy stopped, or (as the platform's answer to a cancel shows) checked again from pending.
CANCEL_OVER = CANCELLED - frozenset(("in_progress_cancel",)) | NOT_DEPLOYED
CANCEL_TOO_LATE = DEPLOYED | CUTTING_OVER  # a cancel fails at once here: the change is live, or going live
REDEPLOYABLE = frozenset(("cancelled", "complete_cancel"))  # a task that finds its deploy cancelled queues it again

# From these a deploy request can never be deployed: waiting for it ends at once with a sentence. (A deploy cancelled
# before the task began is queued again: REDEPLOYABLE.)
FAIL_FAST = frozenset(("error", "complete_error", "complete_revert_error", "complete_revert")) | CANCELLED
# States in which the deploy was queued at least once: a deploy whose answer was lost was applied.
QUEUED = DEPLOYING | DEPLOYED | REVERTING | CANCELLED | frozenset((
    "pending_cutover", "complete_error", "complete_revert", "complete_revert_error"))

WHAT_HAPPENED = dict(
    error="its deploy check failed", complete_error="the deploy failed", complete_revert_error="the revert failed",
    complete_revert="it was reverted", in_progress_cancel="its deploy is being cancelled",
    complete_cancel="its deploy was cancelled", cancelled="its deploy was cancelled",
    in_progress_cutover="it is cutting over, too late to cancel its deploy",
    complete_pending_revert="it is deployed, too late to cancel its deploy",
    complete="it is deployed and its revert window has ended, too late to cancel its deploy")
REMEDY = dict(
    error="Fix the schema of branch %(branch)r; the deploy request is checked again when the branch changes.",
    complete_error="Fix the cause and open a new deploy request, or complete the deploy where the platform allows it "
                   "(complete_errored: true).",
    in_progress_cutover="Once it is live, revert it within its revert window (state: deployed, revert_window: "
                        "revert).",
    complete_pending_revert="Revert it within its revert window instead (state: deployed, revert_window: revert).",
    complete="Open a deploy request that undoes the change instead.",
    in_progress_cancel="Run the task again once the cancel is over to queue its deploy again.",
    cancelled="Run the task again to queue its deploy again.",
    complete_cancel="Run the task again to queue its deploy again.",
    complete_revert_error="The schema of %(into_branch)r may be partly reverted: look at the deploy request in the "
                          "platform's web application.",
    complete_revert="Open a new deploy request to deploy the change again.")


def lint_sentence(errors):
    """The lint errors of a schema, each named: 'N lint errors: table 'a': ...; table 'b': ...'."""
    return "%d lint error%s: %s" % (len(errors), "" if len(errors) == 1 else "s", schemas.lint_sentence(errors))


def failure_sentence(label, request):
    """Why a deploy request in a state of FAIL_FAST cannot be deployed: the state, what happened, the lint errors or
    the deploy errors, what to do."""
    state = deployment_state(request)
    deployment = request.get("deployment") or {}
    details = []
    if lint_errors(request):
        details.append(lint_sentence(lint_errors(request)))
    if deployment.get("deploy_check_errors") and not lint_errors(request):  # they repeat the lint errors
        details.append("the deploy check says: %s" % str(deployment["deploy_check_errors"]).rstrip("."))
    for operation in deployment.get("deploy_operations") or []:
        if isinstance(operation, dict) and operation.get("deploy_errors"):
            details.append("table %r: %s" % (operation.get("table_name"), str(operation["deploy_errors"]).rstrip(".")))
    sentence = "%s is in state %r: %s" % (capital(label), state, WHAT_HAPPENED.get(state, "it cannot be deployed"))
    sentence += (", with %s." % "; ".join(details)) if details else "."
    remedy = REMEDY["error"] if lint_errors(request) else REMEDY.get(state, "Open a new deploy request to deploy "
                                                                            "the change.")
    return "%s %s" % (sentence, remedy % dict(branch=request.get("branch"), into_branch=request.get("into_branch")))


def unknown_state_sentence(label, request):
    """Why a wait ends on a deployment state this collection does not know (one not in DEPLOYMENT_STATES)."""
    return ("%s is in state %r, which this collection does not know (it knows %s), so it cannot tell whether the "
            "deploy request is deployed: look at it in the platform's web application, and update the collection." % (
                capital(label), deployment_state(request), ", ".join(DEPLOYMENT_STATES)))


def storage_sentence(label, request, storage):
    """Why a deploy is not queued: the platform's storage check says the branch deployed into would run out."""
    short = []
    for keyspace, shards in sorted((storage.get("storage_report") or {}).items()):
        for shard, report in sorted((shards if isinstance(shards, dict) else {}).items()):
            if isinstance(report, dict) and report.get("has_enough") is False:
                short.append("shard %r of keyspace %r has %s left of %s and needs %s" % (
                    shard, keyspace, size(report.get("remaining")), size(report.get("capacity")),
                    size(report.get("storage_needed"))))
    into = request.get("into_branch")
    sentence = "%s needs %s more storage than branch %r has left, so its deploy was not queued%s." % (
        capital(label), size(storage.get("storage_bytes_needed")), into, (": " + "; ".join(short)) if short else "")
    if storage.get("upgradeable"):
        return sentence + (" The cluster of %r can be upgraded for more storage: give it a larger cluster_size "
                           "(planetscale.cloud.branch), then run the task again." % into)
    return sentence + (" The cluster of %r cannot be upgraded for more storage: free storage on it, then run the task "
                       "again." % into)


def size(count):
    """A number of bytes as a person reads it: '1.5 GiB (1610612736 bytes)'."""
    if not isinstance(count, (int, float)) or isinstance(count, bool):
        return "an unknown amount"
    for power, unit in ((4, "TiB"), (3, "GiB"), (2, "MiB"), (1, "KiB")):
        if abs(count) >= 1024 ** power:
            return "%.1f %s (%d bytes)" % (count / 1024.0 ** power, unit, count)
    return "%d bytes" % count


def uniform_ratio(throttler):
    """The one ratio a deploy request's throttler has in every keyspace, or None (none, or several)."""
    configurations = (throttler or {}).get("configurations") if isinstance(throttler, dict) else None
    ratios = set(item.get("ratio") for item in configurations or [] if isinstance(item, dict))
    return ratios.pop() if len(ratios) == 1 else None


def forced(request):
    """Whether a force cutover was asked for the request's deploy."""
    return bool((request.get("deployment") or {}).get("force_cutover_requested_at"))


def last_state(request):
    state = deployment_state(request)
    if state in CUTTING_OVER and not forced(request):
        return ("its last state was %r (a long transaction holding a lock on a changed table keeps a cutover there: "
                "force_cutover: true forces it, ending such transactions)" % state)
    return "its last state was %r" % state if state is not None else "its last answer showed no deployment state"


def waiter(label, goal, done, wait_timeout, fail=FAIL_FAST):
    """The Waiter for a deploy request (label) until done(deployment state), e.g. goal "to be deployed".

    A state in fail ends the wait at once with failure_sentence(), and so does a state the collection does not know
    (unknown_state_sentence()); a request deleted meanwhile ends it too. A record without a deployment state (a
    lean answer, a read that lags behind a write) is never done: the wait goes on.
    """
    def failed(request):
        if request is None:
            return "%s was deleted while waiting for it %s." % (capital(label), goal)
        state = deployment_state(request)
        if state is not None and state not in DEPLOYMENT_STATES:
            return unknown_state_sentence(label, request)
        return failure_sentence(label, request) if state in fail else None

    return Waiter(
        "%s %s" % (label, goal), state=deployment_state, failed=failed, key="deploy_request",
        done=lambda request: deployment_state(request) in DEPLOYMENT_STATES and done(deployment_state(request)),
        timed_out=lambda request, timeout: "Waited %s seconds (wait_timeout) for %s %s; %s. Raise wait_timeout, or "
                                           "set wait to false and run the task again later." % (
                                               wait_timeout, label, goal, last_state(request)))


def complete(answer):
    """Whether the answer to a write is the whole deploy request: the platform answers some writes (close, deploy)
    with a lean record that lacks the request's state and deployment state, which a read then gives."""
    return isinstance(answer, dict) and answer.get("number") is not None and answer.get("state") is not None and (
        answer.get("deployment_state") is not None)


def advanced(request, state, **deployment):
    """A copy of a deploy request in another deployment state: what check mode predicts."""
    predicted = dict(request, deployment_state=state)
    predicted["deployment"] = dict(request.get("deployment") or {}, state=state, **deployment)
    return predicted


class DeployMachine(Module):
    """A deploy request driven to the state a task asks for (the module gives the options and finds the request):
    opened, its settings applied, closed, or deployed through its cutover and revert window."""

    SETTINGS = dict(auto_cutover="auto-apply", auto_delete_branch="auto-delete-branch")

    def __init__(self, params, ctx=None):
        super().__init__(params, ctx)
        self.deadline = None
        self.writes = []
        self.message = None
        self.storage = None
        self.into = params.get("into_branch")

    # Reading ------------------------------------------------------------------------------------

    def url(self, *segments):
        return deploy_request_path(self, *segments)

    def label(self, request=None):
        request = request or {}
        number = request.get("number", self.params["number"])
        branch, into = request.get("branch", self.params["branch"]), request.get("into_branch", self.into)
        return "deploy request %s%s of database %r" % (
            "#%s" % number if number else "", " (%s into %s)" % (branch, into) if branch and into else
            " from %r" % branch if branch else "", self.params["database"])

    def read(self, number):
        return self.client.get(self.url(number), missing_ok=True)

    def into_branch(self):
        """into_branch, or the database's default branch (main where the credentials cannot read the database)."""
        if self.into is None:
            try:
                database = self.client.get(self.org_path("databases", self.params["database"]))
            except ApiError as error:
                if error.status != 403:
                    raise
                database = {}
            self.into = (database or {}).get("default_branch") or "main"
        return self.into

    def listed(self):
        """Every deploy request from branch into into_branch, newest first."""
        branch, into = self.params["branch"], self.into_branch()
        found = self.client.paginate(self.url(), params=dict(branch=branch, into_branch=into))
        return sorted((request for request in found if request.get("branch") == branch and
                       request.get("into_branch") == into), key=lambda request: -int(request.get("number") or 0))

    def open_request(self):
        """The open deploy request from branch into into_branch, or None."""
        return next((request for request in self.listed() if request.get("state") == "open"), None)

    # Writes and waits ---------------------------------------------------------------------------

    def is_changed(self):
        """Whether a write took effect. Opening a request is one, also when it turns out to have no changes: others
        see the open request, and webhooks announce it."""
        return bool(self.writes)

    def write(self, name, send, applied, predicted):
        """Send a write (check mode: predicted is its outcome). After a lost answer the request is read back, and
        applied(request) says whether the write took effect; the same for a write refused as a conflict, which
        another run may have made. The request after the write."""
        if self.ctx.check_mode:
            self.writes.append(name)
            return predicted
        number = predicted["number"]

        def read_back(error, by_this_run=True):  # pylint: disable=unused-argument
            found = self.read(number)
            return (found, by_this_run) if found is not None and applied(found) else None
        answer, by_this_run = write_and_settle(send, read_back=read_back,
                                               on_conflict=lambda error: read_back(error, False))
        if by_this_run:
            self.writes.append(name)
        return answer if complete(answer) else self.read(number)

    def close(self, request):
        if request is None or request.get("state") == "closed":
            return request
        return self.write("close", lambda: self.client.patch(self.url(request["number"]), json=dict(state="closed")),
                          lambda found: found.get("state") == "closed", dict(request, state="closed"))

    def ensure(self, request):
        """The open deploy request: created when there is none; its notes compared and its settings applied."""
        if request is None:
            return self.throttle(self.create())
        label = capital(self.label(request))
        if request.get("state") == "closed" and deployment_state(request) in NOT_DEPLOYED:
            raise ModuleFailure("%s is closed without having been deployed, and a closed deploy request cannot be "
                                "opened again: give branch instead of number to open a new one." % label)
        if self.params["notes"] is not None and (request.get("notes") or "") != self.params["notes"]:
            raise ModuleFailure("%s has other notes than the task gives: notes can only be set when the deploy request "
                                "is created. Leave notes out, or close it and open a new one." % label)
        for name, endpoint in self.SETTINGS.items():
            want, deployment = self.params[name], request.get("deployment") or {}
            if want is None or deployment.get(name) == want or not self.settable(request):
                continue
            request = self.write(name, lambda endpoint=endpoint, want=want: self.client.request(
                "PUT", self.url(request["number"], endpoint), json=dict(enable=want)),
                lambda found, name=name, want=want: (found.get("deployment") or {}).get(name) == want,
                advanced(request, deployment_state(request), **{name: want}))
        return self.throttle(request)

    @staticmethod
    def settable(request):
        """Whether the settings of a request can still change: it is open, and its deploy not yet live."""
        return request.get("state") == "open" and deployment_state(request) in (
            NOT_DEPLOYED | DEPLOYING | PENDING_CUTOVER)

    def throttled(self, request):
        """The request with its throttler (read once), when the task gives throttle_ratio and the throttler can still
        change: what the diff shows before, and what throttle() compares."""
        if self.params.get("throttle_ratio") is None or request is None or request.get("number") is None or (
                "throttler" in request or not self.settable(request)):
            return request
        return dict(request, throttler=self.client.get(self.url(request["number"], "throttler")))

    def throttle(self, request):
        """throttle_ratio: the deploy's throttler at that ratio in each keyspace (GET and PATCH .../throttler). The
        request carries its throttler as read (in check mode, as predicted; for a request to open, the body sent)."""
        want = self.params.get("throttle_ratio")
        if want is None or not self.settable(request):
            return request
        if request.get("number") is None:  # check mode: the request the task would open
            return dict(request, throttler=dict(ratio=want))
        url = self.url(request["number"], "throttler")
        current = self.throttled(request)["throttler"]
        if uniform_ratio(current) == want:
            return request
        if self.ctx.check_mode:
            self.writes.append("throttle_ratio")
            names = list((current or {}).get("keyspaces") or []) or [
                item.get("keyspace_name") for item in (current or {}).get("configurations") or []]
            return dict(request, throttler=dict(current or {}, configurations=[
                dict(keyspace_name=name, ratio=want) for name in names]))

        def read_back(error, by_this_run=True):  # pylint: disable=unused-argument
            found = self.client.get(url)
            return (found, by_this_run) if uniform_ratio(found) == want else None
        answer, by_this_run = write_and_settle(lambda: self.client.patch(url, json=dict(ratio=want)),
                                               read_back=read_back, on_conflict=lambda error: read_back(error, False))
        if by_this_run:
            self.writes.append("throttle_ratio")
        return dict(request, throttler=answer if uniform_ratio(answer) is not None else self.client.get(url))

    def create(self):
        body = dict(branch=self.params["branch"], into_branch=self.into_branch())
        body.update((name, self.params[name]) for name in ("notes", "auto_cutover", "auto_delete_branch")
                    if self.params[name] is not None)
        if self.ctx.check_mode:
            self.writes.append("create")
            settings = dict((name, body[name]) for name in self.SETTINGS if name in body)
            return dict(number=None, branch=body["branch"], into_branch=body["into_branch"], notes=body.get("notes"),
                        state="open", deployment_state="pending", approved=False,
                        deployment=dict(state="pending", deployable=False, lint_errors=[], **settings))

        def opened(error, by_this_run=True):  # pylint: disable=unused-argument
            found = self.open_request()
            return None if found is None else (found, by_this_run)
        request, by_this_run = write_and_settle(lambda: self.client.post(self.url(), json=body), read_back=opened,
                                                on_conflict=lambda error: opened(error, False))
        if by_this_run:
            self.writes.append("create")
        return request

    def wait_for(self, request, goal, done, fail, always=False):
        """With wait (or always), wait until done(deployment state); a state in fail ends it at once, as it ends
        a run without wait or in check mode, which only judge the request as it is."""
        label = self.label(request)
        if self.ctx.check_mode or not (self.params["wait"] or always):
            if deployment_state(request) in fail:
                raise ModuleFailure(failure_sentence(label, request), changed=self.is_changed(),
                                    deploy_request=request, status=status(request))
            return request
        left = max(0.0, self.deadline - time.monotonic())
        try:
            return waiter(label, goal, done, self.params["wait_timeout"], fail).wait(
                lambda: self.read(request["number"]), left, current=request, changed=self.is_changed())
        except ModuleFailure as failure:
            last = failure.result.get("deploy_request")
            raise ModuleFailure(failure.msg, **dict(failure.result, status=status(last) if last else None))

    def check(self, request):
        """state=open: with wait, until the deploy check has finished."""
        request = self.wait_for(request, "to be checked", lambda state: state not in CHECKING, FAIL_FAST)
        self.no_changes(request)
        return request

    def no_changes(self, request):
        if deployment_state(request) == "no_changes":
            self.message = ("%s has no schema changes to deploy: the schema of %r is already that of %r, so nothing "
                            "was deployed." % (capital(self.label(request)), request.get("branch"),
                                               request.get("into_branch")))
            if "create" in self.writes and request.get("state", "open") == "open":
                self.message += " The task opened it, and it stays open (close it with state: closed)."
        return request

    def deploy(self, request):
        """state=deployed: after the deploy check, queue the deploy, cut over, then keep, skip or revert the window."""
        reverting = self.params["revert_window"] == "revert"
        fail = FAIL_FAST - frozenset(("complete_revert",)) if reverting else FAIL_FAST
        fail = fail - frozenset(("complete_error",)) if self.params["complete_errored"] else fail
        # Where a deploy ends for the task: live, or gated before its cutover (and reverted, when it asks for that).
        # Any other state (a read that lags behind the deploy still says ready) keeps the wait going.
        live = DEPLOYED | (REVERTING | frozenset(("complete_revert",)) if reverting else frozenset())
        request = self.wait_for(request, "to be checked", lambda state: state not in CHECKING, fail - REDEPLOYABLE,
                                always=True)
        if deployment_state(request) == "no_changes":
            return self.no_changes(request)
        if deployment_state(request) in REDEPLOYABLE | frozenset(("ready",)) or (
                self.ctx.check_mode and deployment_state(request) == "pending"):
            request = self.queue(request)
        request = self.until_live(request, live | PENDING_CUTOVER, fail)
        if deployment_state(request) == "pending_cutover":
            if not self.params["cutover"]:
                self.message = ("%s is deployed up to its cutover and waits for it: run the task with cutover: true to "
                                "apply the change." % capital(self.label(request)))
                return request
            request = self.write("cutover", lambda: self.client.post(self.url(request["number"], "apply-deploy")),
                                 lambda found: deployment_state(found) != "pending_cutover",
                                 advanced(request, "complete_pending_revert"))
            request = self.until_live(request, live, fail)
        return self.revert_window(request, fail)

    def until_live(self, request, goal, fail):
        """Wait until a state of goal. On the way, with force_cutover, a cutover is forced (once); with
        complete_errored, a deploy that ended in complete_error is completed."""
        force, complete_errored = self.params["force_cutover"], self.params["complete_errored"]
        stops = (CUTTING_OVER if force and not forced(request) else frozenset()) | (
            frozenset(("complete_error",)) if complete_errored else frozenset())
        request = self.wait_for(request, "to be deployed", lambda state: state in goal | stops, fail)
        state = deployment_state(request)
        number = request.get("number")
        if state in CUTTING_OVER and force and not forced(request):
            request = self.write("force_cutover", lambda: self.client.post(self.url(number, "force-cutover")),
                                 lambda found: forced(found) or deployment_state(found) not in CUTTING_OVER,
                                 advanced(request, "complete_pending_revert"))
        elif state == "complete_error" and complete_errored:
            request = self.write("complete_deploy", lambda: self.client.post(self.url(number, "complete-deploy")),
                                 lambda found: deployment_state(found) != "complete_error",
                                 advanced(request, "complete"))
        else:
            return request
        return self.wait_for(request, "to be deployed", lambda state: state in goal, fail)

    def queue(self, request):
        if lint_errors(request):
            raise ModuleFailure(failure_sentence(self.label(request), request), deploy_request=request,
                                status=status(request), changed=self.is_changed())
        if request.get("number") is not None:  # not a request check mode would open
            self.storage = self.client.get(self.url(request["number"], "storage-check"), missing_ok=True)
            if isinstance(self.storage, dict) and self.storage.get("enough_storage") is False:
                raise ModuleFailure(storage_sentence(self.label(request), request, self.storage),
                                    deploy_request=request, status=status(request), changed=self.is_changed(),
                                    storage_check=self.storage)
        body = dict(instant_ddl=self.params["instant_ddl"]) if self.params["instant_ddl"] is not None else None
        again, queued_at = deployment_state(request) in REDEPLOYABLE, (request.get("deployment") or {}).get("queued_at")

        def applied(found):
            """Queued; for a deploy queued again after a cancel, a read still showing that cancelled deploy is not."""
            state = deployment_state(found)
            return state in QUEUED and not (again and state in REDEPLOYABLE and (found.get("deployment") or {}).get(
                "queued_at") == queued_at)
        gated = (request.get("deployment") or {}).get("auto_cutover", self.params["auto_cutover"]) is False
        try:
            return self.write("deploy", lambda: self.client.post(self.url(request["number"], "deploy"), json=body),
                              applied,
                              advanced(request, "pending_cutover" if gated else "complete_pending_revert"))
        except ApiError as error:
            if error.outcome_unknown or error.status not in (400, 403, 409, 422) or request.get("approved") is not False:
                raise
            raise ModuleFailure("%s %s is not approved: where the database requires an approved review before a "
                                "deploy, approve it (planetscale.cloud.deploy_request_review) and run the task again."
                                % (self.explain(error), capital(self.label(request))),
                                status=error.status, error=error.as_dict(), deploy_request=request)

    def revert_window(self, request, fail):
        choice, state = self.params["revert_window"], deployment_state(request)
        if choice == "keep":
            return request
        label = capital(self.label(request))
        if choice == "revert" and state == "complete":
            raise ModuleFailure("%s can no longer be reverted: its revert window has ended (state 'complete')." % label,
                                deploy_request=request, status=status(request), changed=self.is_changed())
        if state == "complete_pending_revert":
            endpoint, after = ("skip-revert", "complete") if choice == "skip" else ("revert", "complete_revert")
            request = self.write(choice, lambda: self.client.post(self.url(request["number"], endpoint)),
                                 lambda found: deployment_state(found) != "complete_pending_revert",
                                 advanced(request, after))
        goal, target = ("to end its revert window", "complete") if choice == "skip" else (
            "to be reverted", "complete_revert")
        if deployment_state(request) in DEPLOYED | REVERTING:
            request = self.wait_for(request, goal, lambda state: state == target, fail)
        if deployment_state(request) != target:
            self.ctx.warn("revert_window=%s was not applied: %s is in state %r, not yet in its revert window. Run the "
                          "task again with wait: true to apply it." % (choice, self.label(request),
                                                                       deployment_state(request)))
        return request

    def cancel(self, request):
        """state=cancelled: a queued or running deploy cancelled (POST .../cancel); with wait, until it has stopped. A
        request with nothing to cancel is left as it is, and msg says so."""
        state = deployment_state(request)
        if request is None:
            return None
        if state in CANCELLABLE:
            request = self.write("cancel", lambda: self.client.post(self.url(request["number"], "cancel")),
                                 lambda found: deployment_state(found) in CANCELLED | NOT_DEPLOYED,
                                 advanced(request, "cancelled" if state == "queued" else "complete_cancel"))
        elif state not in CANCELLED | CANCEL_TOO_LATE:
            self.message = "%s has no deploy queued or running (state %r): there is nothing to cancel." % (
                capital(self.label(request)), state)
            return request
        return self.wait_for(request, "to be cancelled", lambda found: found in CANCEL_OVER, CANCEL_TOO_LATE)
