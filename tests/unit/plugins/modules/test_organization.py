# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import json

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.organization import Organization

ORG = "/v1/organizations/acme"

MODULE = Organization  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", service_token_id="svc", service_token="s3cret")


def org(**changes):
    return dict(dict(id="o1", name="acme", billing_email="billing@acme.test", idp_managed_roles=False,
                     invoice_budget_amount="0", plan="scaler_pro"), **changes)


def test_only_the_given_fields_that_differ_are_sent_in_one_patch(server, run):
    server.script = [(200, org()), (200, org(billing_email="finance@acme.test", invoice_budget_amount="5000"))]
    result = run(billing_email="finance@acme.test", invoice_budget_amount=5000, idp_managed_roles=False, diff=True)
    assert result["changed"] is True and result["organization"]["invoice_budget_amount"] == "5000"
    assert [(r["method"], r["path"]) for r in server.requests] == [("GET", ORG), ("PATCH", ORG)]
    assert json.loads(server.requests[1]["body"]) == dict(billing_email="finance@acme.test", invoice_budget_amount=5000)
    assert result["diff"] == dict(
        before=dict(billing_email="billing@acme.test", idp_managed_roles=False, invoice_budget_amount=0),
        after=dict(billing_email="finance@acme.test", idp_managed_roles=False, invoice_budget_amount=5000))


def test_the_budget_the_api_answers_as_a_string_is_compared_as_a_number(server, run):
    server.script = [(200, org(invoice_budget_amount="5000.0"))]
    result = run(invoice_budget_amount=5000)
    assert result["changed"] is False and [r["method"] for r in server.requests] == ["GET"]


@pytest.mark.parametrize("answered", ["9007199254740993", "9007199254740993.0", " 9007199254740993 "])
def test_a_budget_beyond_the_precision_of_a_float_is_compared_exactly(server, run, answered):
    server.script = [(200, org(invoice_budget_amount=answered))]
    assert run(invoice_budget_amount=9007199254740993)["changed"] is False
    assert [r["method"] for r in server.requests] == ["GET"]


@pytest.mark.parametrize("answered", ["9007199254740992", "9007199254740993.5", "NaN", "Infinity", "1e999999999"])
def test_a_budget_that_is_not_the_same_whole_number_differs(server, run, answered):
    server.script = [(200, org(invoice_budget_amount=answered)), (200, org(invoice_budget_amount="9007199254740993"))]
    assert run(invoice_budget_amount=9007199254740993)["changed"] is True
    assert json.loads(server.requests[1]["body"]) == dict(invoice_budget_amount=9007199254740993)


def test_spaces_around_the_billing_email_are_removed_before_comparing_and_sending(server, run):
    server.script = [(200, org()), (200, org(billing_email="finance@acme.test"))]
    result = run(billing_email="  finance@acme.test\t", diff=True)
    assert json.loads(server.requests[1]["body"]) == dict(billing_email="finance@acme.test")
    assert result["diff"]["after"]["billing_email"] == "finance@acme.test"
    server.script = [(200, org(billing_email="finance@acme.test"))]
    assert run(billing_email=" finance@acme.test ")["changed"] is False and len(server.requests) == 3


def test_nothing_given_changes_nothing(server, run):
    server.script = [(200, org())]
    assert run() == dict(changed=False, organization=org())


def test_check_mode_predicts_and_sends_no_write(server, run):
    server.script = [(200, org())]
    result = run(check_mode=True, idp_managed_roles=True, invoice_budget_amount=10)
    assert result["changed"] is True
    assert result["organization"]["idp_managed_roles"] is True and result["organization"]["invoice_budget_amount"] == "10"
    assert [r["method"] for r in server.requests] == ["GET"]


def test_a_lost_answer_is_read_back_and_not_sent_again(server, run, sleeps):
    server.script = [(200, org()), (502, {"code": "bad_gateway"}), (200, org(idp_managed_roles=True))]
    result = run(idp_managed_roles=True)
    assert result["changed"] is True and result["organization"]["idp_managed_roles"] is True
    assert [r["method"] for r in server.requests] == ["GET", "PATCH", "GET"]


def test_a_missing_organization_fails_and_is_never_created(server, run):
    server.script = [(404, dict(code="not_found", message="Not Found"))]
    with pytest.raises(ModuleFailure) as caught:
        run(billing_email="finance@acme.test")
    assert "Check that organization 'acme'" in caught.value.msg
    assert [r["method"] for r in server.requests] == ["GET"]


def test_state_absent_is_not_a_choice():
    assert Organization.spec()["argument_spec"]["state"]["choices"] == ["present"]


@pytest.mark.parametrize("args, message", [
    (dict(billing_email="finance"), "billing_email must be an email address, not 'finance'."),
    (dict(billing_email=" "), "billing_email must not be empty."),
    (dict(billing_email=" fin ance@acme.test "), "billing_email must be an email address, not ' fin ance@acme.test '."),
    (dict(invoice_budget_amount=-1), "invoice_budget_amount must be 0 or more, not -1."),
])
def test_bad_input_is_refused_before_any_request(server, run, args, message):
    with pytest.raises(ModuleFailure) as caught:
        run(**args)
    assert caught.value.msg == message and server.requests == []
