# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import json

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure, TaskContext
from ansible_collections.planetscale.cloud.plugins.modules.database import Database

URL = "/v1/organizations/acme/databases"
NOT_FOUND = (404, {"code": "not_found", "message": "Not Found"})
REQUEST = dict(id="dr1", state="pending", actor=dict(id="u1", display_name="Jane Doe"))
WARNING = ("Database 'shop' was not deleted: organization 'acme' requires several administrators to delete a "
           "database, so the platform %s deletion request dr1 by Jane Doe. The database stays until another "
           "administrator of the organization also requests its deletion (or the request is withdrawn in the "
           "platform's UI).")


MODULE = Database  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", name="shop", service_token_id="svc", service_token="s3cret")


def database(state="ready", **fields):
    return dict(dict(id="d1", name="shop", state=state, ready=state == "ready", kind="mysql", default_branch="main",
                     region=dict(slug="us-east"), deletion_protected=False, require_approval_for_deploy=False,
                     foreign_keys_enabled=False, automatic_migrations=False, migration_framework=None,
                     multiple_admins_required_for_deletion=False, deletion_request=None), **fields)


def methods(server):
    return [r["method"] for r in server.requests]


def body(server, index):
    return json.loads(server.requests[index]["body"])


# ---------------------------------------------------------------- create, settings, wait


def test_create_sends_the_create_fields_then_the_settings_in_one_patch_and_waits(server, run, sleeps):
    patched = database("pending", deletion_protected=True, foreign_keys_enabled=True)
    server.script = [NOT_FOUND, (201, database("pending")), (200, patched), (200, database("pending")),
                     (200, database(deletion_protected=True, foreign_keys_enabled=True))]
    result = run(cluster_size="PS_10", region="eu-west", kind="mysql", replicas=2,
                 deletion_protected=True, allow_foreign_key_constraints=True)
    assert result["changed"] is True and result["database"]["ready"] is True
    assert methods(server) == ["GET", "POST", "PATCH", "GET", "GET"]
    assert body(server, 1) == dict(name="shop", cluster_size="PS_10", region="eu-west", kind="mysql", replicas=2)
    assert body(server, 2) == dict(deletion_protected=True, allow_foreign_key_constraints=True)
    assert sleeps == [1.0, 1.5]


def test_a_second_run_reads_once_and_writes_nothing(server, run):
    server.script = [(200, database(deletion_protected=True, foreign_keys_enabled=True))]
    result = run(cluster_size="PS_10", region="us-east", kind="mysql", deletion_protected=True,
                 allow_foreign_key_constraints=True)
    assert result["changed"] is False and methods(server) == ["GET", "GET"]  # the second GET: the cluster size


def test_settings_that_differ_go_in_one_patch_and_diff_shows_them(server, run):
    server.script = [(200, database()), (200, database(require_approval_for_deploy=True, automatic_migrations=True,
                                                       migration_framework="rails"))]
    result = run(diff=True, require_approval_for_deploy=True, automatic_migrations=True,
                 migration_framework="rails", deletion_protected=False)
    assert result["changed"] is True and methods(server) == ["GET", "PATCH"]
    assert body(server, 1) == dict(require_approval_for_deploy=True, automatic_migrations=True,
                                   migration_framework="rails")
    assert result["diff"]["before"]["require_approval_for_deploy"] is False
    assert result["diff"]["after"]["require_approval_for_deploy"] is True
    assert result["diff"]["after"]["migration_framework"] == "rails"
    assert "migration_framework" not in result["diff"]["before"]


def test_check_mode_update_predicts_and_writes_nothing(server, run):
    server.script = [(200, database())]
    result = run(check_mode=True, diff=True, allow_foreign_key_constraints=True)
    assert result["changed"] is True and methods(server) == ["GET"]
    assert result["database"]["foreign_keys_enabled"] is True
    assert (result["diff"]["before"]["allow_foreign_key_constraints"],
            result["diff"]["after"]["allow_foreign_key_constraints"]) == (False, True)


def test_check_mode_create_writes_nothing(server, run):
    server.script = [NOT_FOUND]
    result = run(check_mode=True, diff=True, cluster_size="PS_10", region="eu-west", deletion_protected=True)
    assert result["changed"] is True and methods(server) == ["GET"]
    assert result["database"] == dict(name="shop", state="pending", ready=False, region=dict(slug="eu-west"),
                                      deletion_protected=True)
    assert result["diff"] == dict(before={}, after=dict(name="shop", region="eu-west", deletion_protected=True))


def test_cluster_size_is_required_to_create(server, run):
    server.script = [NOT_FOUND]
    with pytest.raises(ModuleFailure) as caught:
        run(region="eu-west")
    assert caught.value.msg == "cluster_size is required to create database 'shop', which does not exist."
    assert methods(server) == ["GET"]


@pytest.mark.parametrize("field, value, have", [("region", "eu-west", "'us-east'"), ("kind", "postgresql", "'mysql'")])
def test_a_create_only_field_that_differs_fails_naming_it(server, run, field, value, have):
    server.script = [(200, database())]
    with pytest.raises(ModuleFailure) as caught:
        run(**{field: value})
    assert caught.value.msg == ("Database 'shop' has %s %s, not %r: %s can only be set when the database is created; "
                                "delete it first to create it again." % (field, have, value, field))
    assert methods(server) == ["GET"]


def test_an_existing_database_of_another_cluster_size_is_left_with_a_warning(server, run):
    server.script = [(200, database()), (200, dict(name="main", cluster_name="PS_20"))]
    ctx = TaskContext()
    assert run(ctx=ctx, cluster_size="PS_10")["changed"] is False
    assert ctx.warnings == ["Database 'shop' has cluster size PS_20 on its default branch, not PS_10: cluster_size "
                            "only shapes a new database, so it is left as it is."]
    assert server.requests[1]["path"] == URL + "/shop/branches/main"


def test_a_create_whose_answer_was_lost_is_not_repeated(server, run, sleeps):
    server.script = [NOT_FOUND, (502, {"code": "bad_gateway"}), (200, database("pending")), (200, database())]
    result = run(cluster_size="PS_10")
    assert result["changed"] is True and result["database"]["ready"] is True
    assert methods(server) == ["GET", "POST", "GET", "GET"]


def test_a_timeout_fails_with_the_last_state(server, run, sleeps):
    server.script = [NOT_FOUND, (201, database("pending"))]
    server.default = (200, database("pending"))
    with pytest.raises(ModuleFailure) as caught:
        run(cluster_size="PS_10", wait_timeout=10)
    assert caught.value.msg == ("Database 'shop' was not ready after 10 seconds (state 'pending'); raise wait_timeout "
                                "or set wait to false.")
    assert caught.value.result["changed"] is True and caught.value.result["database"]["state"] == "pending"


# A database as the platform's recorded answers give it (its official Go client's tests): state ready, and neither
# a ready nor a kind field.
RECORDED = dict(id="shop", type="database", name="shop", notes="", state="ready", html_url="https://app.example/shop",
                region=dict(slug="us-east", display_name="US East"), created_at="2021-01-14T10:19:23.000Z",
                updated_at="2021-01-14T10:19:23.000Z")


def test_a_recorded_database_in_state_ready_is_ready_when_created(server, run, sleeps):
    server.script = [NOT_FOUND, (201, dict(RECORDED, state="pending")), (200, RECORDED)]
    server.default = (200, dict(RECORDED, state="pending"))
    result = run(cluster_size="PS_10", kind="mysql", wait_timeout=5)
    assert result["changed"] is True and result["database"] == RECORDED
    assert methods(server) == ["GET", "POST", "GET"]


def test_a_recorded_database_in_state_ready_is_not_waited_for_on_a_rerun_or_an_update(server, run, sleeps):
    server.script = [(200, RECORDED)]
    server.default = (200, dict(RECORDED, state="pending"))
    assert run(kind="mysql", region="us-east", wait_timeout=5)["changed"] is False
    assert methods(server) == ["GET"] and sleeps == []
    server.requests.clear()
    server.script = [(200, RECORDED), (200, dict(RECORDED, deletion_protected=True))]
    result = run(kind="mysql", deletion_protected=True, wait_timeout=5)
    assert result["changed"] is True and result["database"]["deletion_protected"] is True
    assert methods(server) == ["GET", "PATCH"] and sleeps == []


@pytest.mark.parametrize("record", [dict(RECORDED, ready=False), dict(RECORDED, state="pending")])
def test_ready_false_or_a_state_other_than_ready_is_waited_for(server, run, sleeps, record):
    server.script = [(200, record)]
    server.default = (200, record)
    with pytest.raises(ModuleFailure) as caught:
        run(wait_timeout=3)
    assert caught.value.msg.startswith("Database 'shop' was not ready after 3 seconds")


def test_a_database_whose_record_has_no_kind_is_not_refused_for_kind(server, run):
    server.script = [(200, RECORDED)]
    result = run(kind="mysql", region="us-east")
    assert result["changed"] is False and methods(server) == ["GET"]
    server.requests.clear()
    server.script = [(200, RECORDED)]
    with pytest.raises(ModuleFailure) as caught:
        run(kind="postgresql", region="eu-west")
    assert caught.value.msg.startswith("Database 'shop' has region 'us-east', not 'eu-west'")


def test_without_wait_the_new_database_is_returned_at_once(server, run, sleeps):
    server.script = [NOT_FOUND, (201, database("pending"))]
    assert run(cluster_size="PS_10", wait=False)["database"]["state"] == "pending"
    assert sleeps == []


def test_rename_patches_new_name_and_a_renamed_database_is_no_change(server, run):
    server.script = [(200, database()), (200, database(name="store"))]
    result = run(new_name="store", diff=True)
    assert result["changed"] is True and body(server, 1) == dict(new_name="store")
    assert (result["diff"]["before"]["name"], result["diff"]["after"]["name"]) == ("shop", "store")
    server.requests.clear()
    server.script = [NOT_FOUND, (200, database(name="store"))]
    assert run(new_name="store")["changed"] is False
    assert [r["path"] for r in server.requests] == [URL + "/shop", URL + "/store"]


# ---------------------------------------------------------------- delete


def test_absent_deletes_and_again_is_no_change(server, run):
    server.script = [(200, database()), (204, b""), NOT_FOUND]
    result = run(state="absent", diff=True)
    assert result["changed"] is True and "database" not in result and result["diff"]["after"] == {}
    assert run(state="absent")["changed"] is False
    assert methods(server) == ["GET", "DELETE", "GET"]


@pytest.mark.parametrize("check_mode", [True, False], ids=["check", "run"])
def test_a_protected_database_is_not_deleted(server, run, check_mode):
    server.script = [(200, database(deletion_protected=True))]
    with pytest.raises(ModuleFailure) as caught:
        run(check_mode=check_mode, state="absent")
    assert caught.value.msg == ("Database 'shop' is deletion protected, so the platform does not delete it: set "
                                "deletion_protected to false (with state present) first, then delete it.")
    assert methods(server) == ["GET"]


def test_a_deletion_request_is_reported_as_what_it_is(server, run):
    server.script = [(200, database(multiple_admins_required_for_deletion=True)), (202, REQUEST)]
    ctx = TaskContext(diff=True)
    result = run(ctx=ctx, state="absent")
    assert result["changed"] is True and result["deletion_request"] == REQUEST
    assert result["database"]["name"] == "shop"
    assert result["diff"]["before"] == result["diff"]["after"]
    assert ctx.warnings == [WARNING % "opened"]
    assert "deleted" not in json.dumps(dict(result, diff=None)).replace("was not deleted", "")


def test_a_pending_deletion_request_sends_no_second_delete(server, run):
    server.script = [(200, database(multiple_admins_required_for_deletion=True, deletion_request=REQUEST))]
    ctx = TaskContext()
    result = run(ctx=ctx, state="absent")
    assert result["changed"] is False and result["deletion_request"] == REQUEST
    assert methods(server) == ["GET"] and ctx.warnings == [WARNING % "already has"]


def test_check_mode_predicts_a_deletion_request(server, run):
    server.script = [(200, database(multiple_admins_required_for_deletion=True))]
    ctx = TaskContext(check_mode=True)
    result = run(ctx=ctx, state="absent")
    assert result["changed"] is True and result["database"]["name"] == "shop" and methods(server) == ["GET"]
    assert "would open a deletion request" in ctx.warnings[0]


def test_a_lost_delete_answer_is_read_back(server, run, sleeps):
    server.script = [(200, database(multiple_admins_required_for_deletion=True)), (502, {"code": "bad_gateway"}),
                     (200, database(multiple_admins_required_for_deletion=True, deletion_request=REQUEST))]
    ctx = TaskContext()
    result = run(ctx=ctx, state="absent")
    assert result["changed"] is True and result["deletion_request"] == REQUEST
    assert methods(server) == ["GET", "DELETE", "GET"] and ctx.warnings == [WARNING % "opened"]


def test_a_lost_delete_answer_of_a_deleted_database(server, run, sleeps):
    server.script = [(200, database()), (502, {"code": "bad_gateway"}), NOT_FOUND]
    assert run(state="absent")["changed"] is True
    assert methods(server) == ["GET", "DELETE", "GET"]


def test_a_refused_delete_of_a_database_protected_meanwhile_says_so(server, run):
    server.script = [(200, database()), (422, {"code": "unprocessable", "message": "protected"}),
                     (200, database(deletion_protected=True))]
    with pytest.raises(ModuleFailure) as caught:
        run(state="absent")
    assert caught.value.msg.startswith("Database 'shop' is deletion protected") and caught.value.result["status"] == 422


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("args, message", [
    (dict(name="Shop"), "name must be a database name the platform accepts"),
    (dict(new_name="a b"), "new_name must be a database name the platform accepts"),
    (dict(new_name="x", state="absent"), "new_name renames a database that is kept"),
    (dict(cluster_size="PS 10"), "cluster_size must be a cluster size name such as PS_10"),
    (dict(replicas=1), "replicas must be 0 (no high availability) or 2 or more, not 1."),
    (dict(replicas=-2), "replicas must be 0"),
    (dict(kind="postgresql", allow_data_branching=True), "allow_data_branching only apply to MySQL"),
    (dict(major_version="17"), "major_version is only for kind postgresql."),
    (dict(storage=dict(minimum_storage_bytes=10, maximum_storage_bytes=5)),
     "storage.minimum_storage_bytes must be no more than storage.maximum_storage_bytes, not 10 above 5."),
    (dict(wait_timeout=-1), "wait_timeout must be 0 or more seconds"),
    (dict(migration_framework=" "), "migration_framework must not be empty."),
    (dict(default_branch=".."), "default_branch must be a name"),
])
def test_bad_input_fails_before_any_request(server, run, args, message):
    with pytest.raises(ModuleFailure) as caught:
        run(check_mode=True, **args)
    assert caught.value.msg.startswith(message)
    assert server.requests == []


def test_any_name_can_be_deleted(server, run):
    server.script = [(200, database(name="Old.DB")), (204, b"")]
    assert run(name="Old.DB", state="absent")["changed"] is True
