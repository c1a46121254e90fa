# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import json

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure, TaskContext
from ansible_collections.planetscale.cloud.plugins.modules.branch import Branch

URL = "/v1/organizations/acme/databases/shop/branches"
NOT_FOUND = (404, {"code": "not_found", "message": "Not Found"})


MODULE = Branch  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="shop", name="dev", service_token_id="svc", service_token="s3cret")


def branch(state="ready", **fields):
    return dict(dict(id="b1", name="dev", parent_branch="main", state=state, ready=state == "ready",
                     region=dict(slug="us-east")), **fields)


def methods(server):
    return [r["method"] for r in server.requests]


def test_create_sends_the_options_given_and_waits_until_ready(server, run, sleeps):
    server.script = [NOT_FOUND, (201, branch("pending")), (200, branch("pending")), (200, branch("pending")),
                     (200, branch())]
    result = run(parent_branch="main", region="us-east", seed_data="last_successful_backup")
    assert result["changed"] is True
    assert result["branch"]["state"] == "ready"
    assert json.loads(server.requests[1]["body"]) == dict(name="dev", parent_branch="main", region="us-east",
                                                          seed_data="last_successful_backup")
    assert methods(server) == ["GET", "POST", "GET", "GET", "GET"]
    assert sleeps == [1.0, 1.5, 2.25]  # growing intervals, no fixed sleep


def test_without_wait_the_new_branch_is_returned_at_once(server, run, sleeps):
    server.script = [NOT_FOUND, (201, branch("pending"))]
    result = run(parent_branch="main", wait=False)
    assert result["branch"]["state"] == "pending"
    assert sleeps == []


def test_a_timeout_fails_with_the_last_state_after_wait_timeout(server, run, sleeps):
    server.script = [NOT_FOUND, (201, branch("pending"))]
    server.default = (200, branch("pending"))
    with pytest.raises(ModuleFailure) as caught:
        run(parent_branch="main", wait_timeout=20)
    assert caught.value.msg == ("Branch 'dev' of database 'shop' was not ready after 20 seconds (state 'pending'); "
                                "raise wait_timeout or set wait to false.")
    assert caught.value.result["branch"]["state"] == "pending"
    assert caught.value.result["changed"] is True
    assert 18 < sum(sleeps) <= 20  # the requests themselves take the rest


def test_an_existing_branch_that_is_not_ready_is_waited_for(server, run, sleeps):
    server.script = [(200, branch("pending")), (200, branch())]
    result = run(parent_branch="main")
    assert result == dict(changed=False, branch=branch())
    assert methods(server) == ["GET", "GET"]


def test_a_branch_that_falls_asleep_is_not_waited_for(server, run, sleeps):
    ctx_warnings = []
    server.script = [(200, branch("pending")), (200, branch("sleeping"))]
    validation = run.validate(parent_branch="main")
    module = Branch(validation.validated_parameters, TaskContext(warn=ctx_warnings.append))
    assert module.execute()["branch"]["state"] == "sleeping"
    assert ctx_warnings == ["Branch 'dev' of database 'shop' is sleeping, so it is not ready to serve queries."]
    assert sleeps == [1.0]


def test_a_branch_deleted_while_waiting_fails(server, run, sleeps):
    server.script = [NOT_FOUND, (201, branch("pending")), NOT_FOUND]
    with pytest.raises(ModuleFailure, match="^Branch 'dev' of database 'shop' was deleted while waiting"):
        run(parent_branch="main")


def test_an_existing_ready_branch_costs_one_read(server, run):
    server.script = [(200, branch())]
    assert run(parent_branch="main", region="us-east")["changed"] is False
    assert len(server.requests) == 1


@pytest.mark.parametrize("field, value, have", [("parent_branch", "staging", "'main'"),
                                                ("region", "eu-west", "'us-east'")])
def test_a_create_only_field_that_differs_fails_naming_it(server, run, field, value, have):
    server.script = [(200, branch())]
    with pytest.raises(ModuleFailure) as caught:
        run(**{field: value})
    assert caught.value.msg.startswith("Branch 'dev' of database 'shop' has %s %s, not %r: %s can only be set"
                                       % (field, have, value, field))
    assert methods(server) == ["GET"]


def test_inputs_the_api_never_returns_are_not_compared(server, run):
    """backup_id and restore_point are not compared; cluster_size (required with backup_id) is, since issue 33: a
    record that does not state its size is left as it is, and the organization's sizes are read only to resize
    (issue 43)."""
    server.script = [(200, branch(kind="mysql")), (200, dict(data=[]))]
    result = run(parent_branch="main", backup_id="bk1", cluster_size="PS_10",
                 restore_point="2026-01-31T12:00:00Z")
    assert result["changed"] is False
    assert methods(server) == ["GET", "GET"]


@pytest.mark.parametrize("have, resized", [
    (dict(cluster_name="PS_10"), False), (dict(cluster_name="PS_20"), True),
    (dict(cluster_rate_name="PS_20"), True), (dict(cluster_rate_name="PS_10"), False),
    (dict(cluster_name="PS_20", cluster_rate_name="PS_10"), True),
], ids=["same", "other", "rate-name-other", "rate-name-same", "both"])
def test_an_existing_branch_of_another_cluster_size_is_resized(server, run, have, resized):
    """Real records often carry cluster_rate_name where the OpenAPI says cluster_name; cluster_name wins. (Before
    issue 33, cluster_size only shaped a new branch and another size was left with a warning.)"""
    def answer(request):
        if request["path"].endswith("/cluster-size-skus"):
            return 200, [dict(name="PS_10"), dict(name="PS_20")]
        if request["path"] == URL + "/dev/changes":
            return 200, dict(data=[])
        return (204, b"") if request["method"] == "PATCH" else (200, branch(kind="mysql", **have))
    server.default = answer
    ctx = TaskContext()
    result = run(ctx=ctx, parent_branch="main", cluster_size="SIZE_10")
    assert result["changed"] is resized and ctx.warnings == []
    assert [(r["method"], r["body"]) for r in server.requests if r["method"] != "GET"] == (
        [("PATCH", '{"cluster_size": "PS_10"}')] if resized else [])
    assert result["branch"]["cluster_name"] == (have.get("cluster_name") or have.get("cluster_rate_name"))


def test_a_new_branch_is_not_warned_about_its_cluster_size(server, run):
    server.script = [NOT_FOUND, (201, branch(cluster_name="PS_20"))]
    ctx = TaskContext()
    assert run(ctx=ctx, parent_branch="main", cluster_size="SIZE_10")["changed"] is True
    assert ctx.warnings == []


def test_parent_branch_is_required_to_create(server, run):
    server.script = [NOT_FOUND]
    with pytest.raises(ModuleFailure) as caught:
        run()
    assert caught.value.msg == "parent_branch is required to create branch 'dev' of database 'shop', which does not exist."
    assert methods(server) == ["GET"]


def test_check_mode_create_checks_the_parent_and_writes_nothing(server, run):
    server.script = [NOT_FOUND, (200, branch(name="main"))]
    result = run(check_mode=True, diff=True, parent_branch="main", region="eu-west")
    assert result["changed"] is True
    assert result["branch"] == dict(name="dev", parent_branch="main", region=dict(slug="eu-west"), state="pending",
                                    ready=False)
    assert result["diff"] == dict(before={}, after=dict(name="dev", parent_branch="main", region="eu-west"))
    assert methods(server) == ["GET", "GET"]
    assert server.requests[1]["path"] == URL + "/main"


def test_check_mode_create_in_an_unknown_database_fails_as_creating_would(server, run):
    server.script = [(404, {"code": "not_found", "message": "Database not found"})] * 2
    with pytest.raises(ModuleFailure) as caught:
        run(check_mode=True, parent_branch="main")
    assert "Database not found" in caught.value.msg
    assert caught.value.result["status"] == 404


def test_absent_deletes_and_again_is_no_change(server, run):
    server.script = [(200, branch()), (204, b""), NOT_FOUND]
    assert run(state="absent")["changed"] is True
    assert run(state="absent")["changed"] is False
    assert methods(server) == ["GET", "DELETE", "GET"]
    assert server.requests[1]["path"] == URL + "/dev"


def test_a_create_whose_answer_was_lost_is_not_repeated(server, run, sleeps):
    server.script = [NOT_FOUND, (502, {"code": "bad_gateway"}), (200, branch("pending")), (200, branch())]
    result = run(parent_branch="main")
    assert result["changed"] is True and result["branch"]["ready"] is True
    assert methods(server) == ["GET", "POST", "GET", "GET"]


def test_a_production_branch_is_not_deleted_and_check_mode_says_so_too(server, run):
    """The platform refuses (422) to delete a production branch: the module refuses first, in both modes alike."""
    messages = []
    for check_mode in (True, False):
        server.script = [(200, branch(name="dev", production=True))]
        with pytest.raises(ModuleFailure) as caught:
            run(check_mode=check_mode, state="absent")
        messages.append(caught.value.msg)
    assert messages == ["Branch 'dev' of database 'shop' is a production branch, which the platform does not delete: "
                        "demote it first (a task with production: false), then delete it."] * 2
    assert methods(server) == ["GET", "GET"]


def test_a_refused_delete_of_a_branch_that_became_production_says_to_demote(server, run):
    server.script = [(200, branch()), (422, {"code": "unprocessable", "message": "cannot delete"}),
                     (200, branch(production=True))]
    with pytest.raises(ModuleFailure) as caught:
        run(state="absent")
    assert caught.value.msg.endswith("demote it first (a task with production: false), then delete it.")
    assert caught.value.result["status"] == 422


@pytest.mark.parametrize("name", ["Dev", "-dev", "_dev", "dev.1", "dev 1", "dév", "a" * 64])
@pytest.mark.parametrize("check_mode", [True, False], ids=["check", "run"])
def test_a_name_the_platform_refuses_for_a_new_branch_fails_before_any_request(server, run, name, check_mode):
    with pytest.raises(ModuleFailure) as caught:
        run(check_mode=check_mode, name=name, parent_branch="main")
    assert caught.value.msg == ("name must be a branch name the platform accepts: 1 to 63 characters, lower-case "
                                "letters, digits, '-' and '_', starting with a letter or digit; not %r." % name)
    assert server.requests == []


@pytest.mark.parametrize("name", ["a", "0", "dev_1-x", "a" * 63])
def test_every_name_the_platform_accepts_passes(server, run, name):
    server.script = [(200, branch(name=name))]
    assert run(name=name, parent_branch="main")["changed"] is False


@pytest.mark.parametrize("args", [dict(name="Old.Branch", state="absent"), dict(parent_branch="Main")],
                         ids=["absent", "parent_branch"])
def test_the_rule_holds_for_every_option_naming_a_branch_in_every_state(server, run, args):
    """The platform gives no branch a name the rule refuses, so a name that breaks it names no branch: it fails
    before any request, for state=absent and for parent_branch too (issue 30: one rule for every option)."""
    with pytest.raises(ModuleFailure) as caught:
        run(**args)
    option, value = next((key, args[key]) for key in ("name", "parent_branch") if key in args)
    assert caught.value.msg == ("%s must be a branch name the platform accepts: 1 to 63 characters, lower-case "
                                "letters, digits, '-' and '_', starting with a letter or digit; not %r." % (option, value))
    assert server.requests == []


def test_a_parent_branch_that_does_not_exist_fails_as_creating_from_it_would(server, run):
    """A parent that does not exist fails as creating from it would, in check mode too (the parent is read)."""
    server.script = [NOT_FOUND, (404, {"code": "not_found", "message": "Branch not found"})]
    with pytest.raises(ModuleFailure) as caught:
        run(check_mode=True, parent_branch="gone")
    assert "Branch not found" in caught.value.msg and methods(server) == ["GET", "GET"]


@pytest.mark.parametrize("args, message", [
    (dict(cluster_size="PS 10"), "cluster_size must be a cluster size name such as PS_10 or PS_10_AWS_ARM (see "
                                 "planetscale.cloud.cluster_size_info), not 'PS 10'."),
    (dict(cluster_size="PS_10\n"), "cluster_size must be a cluster size name such as PS_10 or PS_10_AWS_ARM"),
    (dict(cluster_size="../PS_10"), "cluster_size must be a cluster size name"),
    (dict(cluster_size=""), "cluster_size must be a cluster size name"),
    (dict(restore_point="yesterday"), "restore_point must be an ISO 8601 timestamp"),
    (dict(wait_timeout=-1), "wait_timeout must be 0 or more seconds, not -1."),
    (dict(name=".."), "name must be a name, not '..'."),
    (dict(database=" "), "database must be a name, not ' '."),
    (dict(parent_branch="."), "parent_branch must be a name, not '.'."),
])
def test_bad_input_fails_before_any_request(server, run, args, message):
    args.setdefault("parent_branch", "main")
    with pytest.raises(ModuleFailure) as caught:
        run(check_mode=True, **args)
    assert caught.value.msg.startswith(message)
    assert server.requests == []


def test_backup_id_needs_cluster_size(run):
    validation = run.validate(parent_branch="main", backup_id="bk1")
    assert "cluster_size" in validation.errors.msg
