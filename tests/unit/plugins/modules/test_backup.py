# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import json

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure, TaskContext
from ansible_collections.planetscale.cloud.plugins.modules.backup import Backup

URL = "/v1/organizations/acme/databases/shop/branches/main/backups"
NOT_FOUND = (404, {"code": "not_found", "message": "Not Found"})
LABEL = "Backup 'nightly' of branch 'main' of database 'shop'"


MODULE = Backup  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="shop", branch="main", service_token_id="svc", service_token="s3cret")


def backup(state="success", **fields):
    return dict(dict(id="bk1", name="nightly", state=state, protected=False, required=False,
                     created_at="2026-01-01T00:00:00.000Z"), **fields)


def page(*items):
    return (200, dict(type="list", next_page=None, data=list(items)))


def methods(server):
    return [r["method"] for r in server.requests]


def test_create_sends_the_create_fields_and_waits_until_success(server, run, sleeps):
    server.script = [page(), (201, backup("pending")), (200, backup("running")), (200, backup())]
    result = run(name="nightly", retention_unit="day", retention_value=3)
    assert result["changed"] is True and result["backup"]["state"] == "success"
    assert methods(server) == ["GET", "POST", "GET", "GET"]
    assert json.loads(server.requests[1]["body"]) == dict(name="nightly", retention_unit="day", retention_value=3)
    assert [r["path"] for r in server.requests[2:]] == [URL + "/bk1"] * 2
    assert sleeps == [1.0, 1.5]


@pytest.mark.parametrize("end", ["failed", "canceled"])
def test_a_backup_that_fails_ends_the_wait_at_once_with_a_sentence(server, run, sleeps, end):
    server.script = [page(), (201, backup("pending")), (200, backup(end))]
    with pytest.raises(ModuleFailure) as caught:
        run(name="nightly")
    assert caught.value.msg == ("%s ended %s: the platform did not take it. Take another one (state absent, then "
                                "present, or another name)." % (LABEL, end))
    assert caught.value.result["changed"] is True and caught.value.result["backup"]["state"] == end
    assert sleeps == [1.0]  # one poll


def test_protected_on_create_is_a_patch_and_a_second_run_writes_nothing(server, run, sleeps):
    server.script = [page(), (201, backup()), (200, backup(protected=True))]
    result = run(name="nightly", protected=True)
    assert result["changed"] is True and methods(server) == ["GET", "POST", "PATCH"]
    assert json.loads(server.requests[2]["body"]) == dict(protected=True)
    server.requests.clear()
    server.script = [page(backup(protected=True))]
    assert run(name="nightly", protected=True)["changed"] is False
    assert methods(server) == ["GET"]


def test_protected_changes_in_check_mode_with_a_diff_and_no_write(server, run):
    server.script = [page(backup())]
    result = run(check_mode=True, diff=True, name="nightly", protected=True)
    assert result["changed"] is True and result["backup"]["protected"] is True and methods(server) == ["GET"]
    assert result["diff"] == dict(before=dict(name="nightly", protected=False), after=dict(name="nightly",
                                                                                           protected=True))


def test_check_mode_create_writes_nothing(server, run):
    server.script = [page()]
    result = run(check_mode=True, diff=True, name="nightly")
    assert result == dict(changed=True, backup=dict(name="nightly", state="pending", protected=False),
                          diff=dict(before={}, after=dict(name="nightly", protected=False)))


def test_of_several_backups_of_a_name_the_newest_is_managed_with_a_warning(server, run):
    older, newer = backup(id="bk0", created_at="2025-12-31T00:00:00Z"), backup(id="bk2", protected=True)
    server.script = [page(newer, older, backup(id="x", name="other"))]
    ctx = TaskContext()
    result = run(ctx=ctx, name="nightly", protected=True)
    assert result["changed"] is False and result["backup"]["id"] == "bk2"
    assert ctx.warnings == ["2 backups of branch 'main' are named 'nightly' (IDs bk2, bk0); the newest is the one "
                            "managed. Give id to name another one."]


def test_id_names_the_backup_and_a_missing_one_is_a_sentence(server, run):
    server.script = [(200, backup(name="something-else"))]
    assert run(id="bk1", name="nightly")["changed"] is False  # name is not compared with id
    server.script = [NOT_FOUND]
    with pytest.raises(ModuleFailure) as caught:
        run(id="bk9")
    assert caught.value.msg == ("Backup 'bk9' of branch 'main' of database 'shop' does not exist (no backup of the "
                                "branch has id 'bk9'); leave id out and give name to take a new backup.")
    server.script = [NOT_FOUND]
    assert run(id="bk9", state="absent")["changed"] is False


def test_a_create_whose_answer_was_lost_is_not_repeated(server, run, sleeps):
    server.script = [page(), (502, {"code": "bad_gateway"}), page(backup("pending")), (200, backup())]
    result = run(name="nightly")
    assert result["changed"] is True and result["backup"]["state"] == "success"
    assert methods(server) == ["GET", "POST", "GET", "GET"]


def test_without_wait_the_backup_is_returned_as_it_is(server, run, sleeps):
    server.script = [page(), (201, backup("pending"))]
    assert run(name="nightly", wait=False)["backup"]["state"] == "pending" and sleeps == []


def test_a_timeout_fails_with_the_last_state(server, run, sleeps):
    server.script = [page(), (201, backup("pending"))]
    server.default = (200, backup("running"))
    with pytest.raises(ModuleFailure) as caught:
        run(name="nightly", wait_timeout=5)
    assert caught.value.msg.startswith("Waited 5 seconds for backup 'nightly' of branch 'main' of database 'shop' to "
                                       "succeed; the last state was 'running'.")


def test_absent_deletes_and_again_is_no_change(server, run):
    server.script = [page(backup()), (204, b""), page()]
    result = run(name="nightly", state="absent", diff=True)
    assert result["changed"] is True and result["diff"]["after"] == {}
    assert run(name="nightly", state="absent")["changed"] is False
    assert methods(server) == ["GET", "DELETE", "GET"] and server.requests[1]["path"] == URL + "/bk1"


@pytest.mark.parametrize("fields, message", [
    (dict(protected=True), "%s is protected, so the platform does not delete it: set protected to false (with state "
                           "present) first, then delete it." % LABEL),
    (dict(required=True), "%s was made by a required backup policy, so the platform does not delete it; it expires "
                          "by itself." % LABEL),
])
@pytest.mark.parametrize("check_mode", [True, False], ids=["check", "run"])
def test_a_backup_the_platform_does_not_delete_is_refused_before_any_write(server, run, fields, message, check_mode):
    server.script = [page(backup(**fields))]
    with pytest.raises(ModuleFailure) as caught:
        run(check_mode=check_mode, name="nightly", state="absent")
    assert caught.value.msg == message and methods(server) == ["GET"]


@pytest.mark.parametrize("args, message", [
    (dict(name="nightly", retention_unit="day", retention_value=0), "retention_value must be from 1 to 1000"),
    (dict(name="nightly", retention_unit="day", retention_value=1001), "retention_value must be from 1 to 1000"),
    (dict(name=" "), "name must not be empty."),
    (dict(id="../x"), "id must be a name, not '../x'."),
    (dict(name="nightly", wait_timeout=-1), "wait_timeout must be 0 or more seconds"),
])
def test_bad_input_fails_before_any_request(server, run, args, message):
    with pytest.raises(ModuleFailure) as caught:
        run(check_mode=True, **args)
    assert caught.value.msg.startswith(message) and server.requests == []


@pytest.mark.parametrize("args, needle", [(dict(), "one of the following is required: id, name"),
                                          (dict(name="x", retention_unit="day"), "retention_unit, retention_value")])
def test_the_argument_spec_refuses(run, args, needle):
    assert needle in run.validate(**args).errors.msg
