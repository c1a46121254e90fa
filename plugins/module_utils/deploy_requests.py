# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the deploy_request module, the deploy_request_info module and the deploy_request_status filter share: a
deploy request's states and the status a person acts on; where the modules read a deploy request.

A deploy request has a state (open or closed) and a deployment state, one of the 20 in DEPLOYMENT_STATES.
status() collapses those, the deployment's deployable flag and its lint errors into one of STATUSES, the
words the filter planetscale.cloud.deploy_request_status returns and the module deploy_request reports.
"""

from __future__ import annotations

DEPLOYMENT_STATES = (
    "pending", "ready", "no_changes", "queued", "submitting", "in_progress", "pending_cutover", "in_progress_vschema",
    "in_progress_cancel", "in_progress_cutover", "complete", "complete_cancel", "complete_error",
    "complete_pending_revert", "in_progress_revert", "in_progress_revert_vschema", "complete_revert",
    "complete_revert_error", "cancelled", "error")
STATUSES = ("pending", "deployable", "blocked", "no_changes", "deploying", "awaiting_cutover", "revertable", "complete",
            "failed", "cancelled")

DEPLOYING = frozenset(("queued", "submitting", "in_progress", "in_progress_vschema", "in_progress_cutover"))
REVERTING = frozenset(("in_progress_revert", "in_progress_revert_vschema"))
CANCELLED = frozenset(("in_progress_cancel", "complete_cancel", "cancelled"))
COLLAPSE = dict(
    [(state, "deploying") for state in DEPLOYING | REVERTING] + [(state, "cancelled") for state in CANCELLED],
    pending="pending", ready="deployable", no_changes="no_changes", pending_cutover="awaiting_cutover",
    complete_pending_revert="revertable", complete="complete", complete_revert="cancelled", complete_error="failed",
    complete_revert_error="failed", error="blocked")
NOT_DEPLOYED = frozenset(("pending", "ready", "no_changes", "error"))  # a closed request in these was withdrawn


def deployment_state(request):
    """The deployment state of a deploy request record, or None when it has none."""
    if not isinstance(request, dict):
        return None
    deployment = request.get("deployment") if isinstance(request.get("deployment"), dict) else {}
    return request.get("deployment_state") or deployment.get("state")


def lint_errors(request):
    """The lint errors of a deploy request's deployment (a list, maybe empty)."""
    deployment = request.get("deployment") if isinstance(request.get("deployment"), dict) else {}
    return [error for error in deployment.get("lint_errors") or [] if isinstance(error, dict)]


def status(request):
    """The one word a person acts on (one of STATUSES) for a deploy request record, or None for an unknown state.

    A deployment record (the request's deployment, which has deployable) is taken as well.
    """
    state = deployment_state(request)
    word = COLLAPSE.get(state)
    if word is None:
        return None
    deployment = request.get("deployment") if isinstance(request.get("deployment"), dict) else request
    if request.get("state") == "closed" and state in NOT_DEPLOYED:
        return "cancelled"  # closed without being deployed
    if state == "ready" and (lint_errors(request) or lint_errors(dict(deployment=deployment))
                             or deployment.get("deployable") is False):
        return "blocked"
    if state == "error" and (deployment.get("queued_at") or deployment.get("started_at")):
        return "failed"  # the deploy ran and failed, rather than the deploy check
    return word


def deploy_request_path(module, *segments):
    """The path of the deploy requests of a module's database (its database option), or of what follows it: a
    request's number, and below that its deployment, its operations."""
    return module.org_path("databases", module.params["database"], "deploy-requests", *segments)


def read_deploy_request(module, number):
    """The deploy request numbered number of a module's database, or None when there is none; the database is read
    then, so that a missing database or organization fails (with its 404) rather than pass for a missing request."""
    request = module.client.get(deploy_request_path(module, number), missing_ok=True)
    if request is None:
        module.client.get(module.org_path("databases", module.params["database"]))
    return request
