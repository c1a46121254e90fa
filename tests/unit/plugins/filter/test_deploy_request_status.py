# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""deploy_request_status: the 20 deployment states, deployable and lint errors collapse into what a person acts on."""

from __future__ import annotations

import json
import os

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.planetscale.cloud.plugins.filter.deploy_request_status import (
    FilterModule, deploy_request_status)
from ansible_collections.planetscale.cloud.plugins.module_utils.deploy_requests import DEPLOYMENT_STATES, STATUSES

WORDS = {
    "pending": "pending", "ready": "deployable", "no_changes": "no_changes", "queued": "deploying",
    "submitting": "deploying", "in_progress": "deploying", "pending_cutover": "awaiting_cutover",
    "in_progress_vschema": "deploying", "in_progress_cancel": "cancelled", "in_progress_cutover": "deploying",
    "complete": "complete", "complete_cancel": "cancelled", "complete_error": "failed",
    "complete_pending_revert": "revertable", "in_progress_revert": "deploying", "in_progress_revert_vschema": "deploying",
    "complete_revert": "cancelled", "complete_revert_error": "failed", "cancelled": "cancelled", "error": "blocked",
}


def request(state, open_=True, **deployment):
    return dict(number=1, state="open" if open_ else "closed", deployment_state=state,
                deployment=dict(dict(state=state, deployable=state == "ready", lint_errors=[]), **deployment))


@pytest.mark.parametrize("state", DEPLOYMENT_STATES)
def test_each_deployment_state_has_its_word(state):
    assert deploy_request_status(request(state)) == WORDS[state]


def _published_spec():
    """shared/reference/platform-openapi-next.json beside the project: beside an ancestor of this file, wherever
    the test runs (the working tree, or a copy of it under build/ that ansible-test runs in)."""
    directory = os.path.dirname(os.path.abspath(__file__))
    while os.path.dirname(directory) != directory:
        directory = os.path.dirname(directory)
        spec = os.path.join(directory, "shared", "reference", "platform-openapi-next.json")
        if os.path.exists(spec):
            return spec
    return None


def test_the_states_are_the_published_twenty():
    spec = _published_spec()
    if spec is None:
        pytest.skip("../shared/reference is not beside the project")
    with open(spec) as handle:
        operation = json.load(handle)["paths"]["/organizations/{organization}/databases/{database}/deploy-requests"]
    schema = operation["post"]["responses"]["201"]["content"]["application/json"]["schema"]
    assert tuple(schema["properties"]["deployment_state"]["enum"]) == DEPLOYMENT_STATES
    assert set(WORDS.values()) <= set(STATUSES) and len(STATUSES) == 10


@pytest.mark.parametrize("deployment", [dict(deployable=False), dict(lint_errors=[dict(table_name="logs")])])
def test_ready_but_not_deployable_or_with_lint_errors_is_blocked(deployment):
    assert deploy_request_status(request("ready", **deployment)) == "blocked"


def test_an_error_after_the_deploy_was_queued_is_a_failure_not_a_block():
    assert deploy_request_status(request("error", queued_at="2026-01-10T10:00:00Z")) == "failed"


@pytest.mark.parametrize("state, word", [("ready", "cancelled"), ("pending", "cancelled"), ("error", "cancelled"),
                                         ("complete", "complete"), ("complete_revert", "cancelled")])
def test_a_request_closed_without_a_deploy_is_cancelled(state, word):
    assert deploy_request_status(request(state, open_=False)) == word


def test_the_top_level_deployment_state_wins_and_the_deployment_alone_is_taken():
    assert deploy_request_status(dict(state="open", deployment_state="queued", deployment=dict(state="ready"))) == \
        "deploying"
    assert deploy_request_status(dict(state="open", deployment=dict(state="pending_cutover"))) == "awaiting_cutover"
    assert deploy_request_status(dict(state="ready", deployable=False)) == "blocked"
    assert deploy_request_status(dict(state="ready", deployable=True, lint_errors=[])) == "deployable"


@pytest.mark.parametrize("value, message", [
    ("ready", "deploy_request_status expects a deploy request (a dict, such as the deploy_request that "
              "planetscale.cloud.deploy_request returns), not str."),
    (None, "not NoneType."),
    (dict(deployment_state="exploded"), "deploy_request_status: the deployment state 'exploded' is not a deployment "
                                        "state it knows; give it a deploy request with its deployment_state."),
    (dict(number=1), "a record without a state is not a deployment state it knows"),
])
def test_anything_else_is_a_sentence(value, message):
    with pytest.raises(AnsibleFilterError) as caught:
        deploy_request_status(value)
    assert message in str(caught.value)


def test_the_filter_is_registered():
    assert FilterModule().filters() == dict(deploy_request_status=deploy_request_status)
