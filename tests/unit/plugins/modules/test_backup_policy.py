# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import json

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.backup_policy import BackupPolicy

URL = "/v1/organizations/acme/databases/shop/backup-policies"
WEEKLY = dict(target="production", frequency_value=1, frequency_unit="week", retention_value=3, retention_unit="month",
              schedule_time="03:30", schedule_day=0)


MODULE = BackupPolicy  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="shop", name="weekly", service_token_id="svc", service_token="s3cret")


def policy(**fields):
    return dict(dict(id="p1", name="weekly", required=False, schedule_week=None, **WEEKLY), **fields)


def page(*items):
    return (200, dict(type="list", next_page=None, data=list(items)))


def methods(server):
    return [r["method"] for r in server.requests]


def test_create_sends_the_fields_given(server, run):
    server.script = [page(policy(id="p0", name="default", required=True)), (201, policy())]
    result = run(**WEEKLY)
    assert result["changed"] is True and result["backup_policy"]["id"] == "p1"
    assert methods(server) == ["GET", "POST"]
    assert json.loads(server.requests[1]["body"]) == dict(name="weekly", **WEEKLY)


def test_a_second_run_reads_once_and_writes_nothing(server, run):
    server.script = [page(policy())]
    assert run(**WEEKLY)["changed"] is False and methods(server) == ["GET"]


def test_what_differs_goes_in_one_patch_with_a_diff(server, run):
    server.script = [page(policy()), (200, policy(retention_value=6, schedule_time="04:00"))]
    changed = dict(WEEKLY)
    changed.update(retention_value=6, schedule_time="04:00")
    result = run(diff=True, **changed)
    assert result["changed"] is True and methods(server) == ["GET", "PATCH"]
    assert server.requests[1]["path"] == URL + "/p1"
    assert json.loads(server.requests[1]["body"]) == dict(retention_value=6, schedule_time="04:00")
    assert (result["diff"]["before"]["retention_value"], result["diff"]["after"]["retention_value"]) == (3, 6)


def test_check_mode_writes_nothing(server, run):
    server.script = [page(policy())]
    result = run(check_mode=True, diff=True, retention_value=6)
    assert result["changed"] is True and result["backup_policy"]["retention_value"] == 6
    assert methods(server) == ["GET"] and result["diff"]["after"]["retention_value"] == 6
    server.requests.clear()
    server.script = [page()]
    result = run(check_mode=True, diff=True, **WEEKLY)
    assert result["changed"] is True and methods(server) == ["GET"]
    assert result["diff"] == dict(before={}, after=dict(name="weekly", **WEEKLY))


def test_the_schedule_is_required_to_create(server, run):
    server.script = [page()]
    with pytest.raises(ModuleFailure) as caught:
        run(retention_value=3)
    assert caught.value.msg == ("frequency_value and frequency_unit and retention_unit are required to create backup "
                                "policy 'weekly' of database 'shop', which does not exist.")
    assert methods(server) == ["GET"]


def test_absent_deletes_and_again_is_no_change(server, run):
    server.script = [page(policy()), (204, b""), page()]
    assert run(state="absent")["changed"] is True
    assert run(state="absent")["changed"] is False
    assert methods(server) == ["GET", "DELETE", "GET"] and server.requests[1]["path"] == URL + "/p1"


@pytest.mark.parametrize("check_mode", [True, False], ids=["check", "run"])
def test_a_required_policy_is_not_deleted(server, run, check_mode):
    server.script = [page(policy(name="default", required=True))]
    with pytest.raises(ModuleFailure) as caught:
        run(check_mode=check_mode, name="default", state="absent")
    assert caught.value.msg == ("Backup policy 'default' of database 'shop' is required by the platform, which does not "
                                "delete it; change its frequency, retention or schedule instead (state present).")
    assert methods(server) == ["GET"]


def test_a_required_policy_can_change(server, run):
    server.script = [page(policy(name="default", required=True)), (200, policy(name="default", retention_value=5))]
    assert run(name="default", retention_value=5)["changed"] is True


@pytest.mark.parametrize("args, message", [
    (dict(schedule_time="25:00"), "schedule_time must be a time of day HH:MM (UTC, 00:00 to 23:59), not '25:00'."),
    (dict(schedule_time="3:30"), "schedule_time must be a time of day HH:MM"),
    (dict(schedule_day=7), "schedule_day must be a day of the week, 0 (Sunday) to 6 (Saturday), not 7."),
    (dict(schedule_week=-1), "schedule_week must be a week of the month, 0 (the first) to 3 (the fourth), not -1."),
    (dict(retention_value=0), "retention_value must be from 1 to 1000"),
    (dict(frequency_value=0), "frequency_value must be 1 or more (in frequency_unit), not 0."),
    (dict(name=" "), "name must not be empty."),
    (dict(database=".."), "database must be a name, not '..'."),
])
def test_bad_input_fails_before_any_request(server, run, args, message):
    with pytest.raises(ModuleFailure) as caught:
        run(check_mode=True, **args)
    assert caught.value.msg.startswith(message) and server.requests == []


def test_a_lost_update_answer_is_read_back_by_id_and_not_sent_twice(server, run, sleeps):
    server.script = [page(policy(id="p0", name="default", required=True), policy()), "drop",
                     (200, policy(retention_value=6))]
    result = run(retention_value=6)
    assert result["changed"] is True and result["backup_policy"]["retention_value"] == 6
    assert [(r["method"], r["path"]) for r in server.requests] == [("GET", URL), ("PATCH", URL + "/p1"),
                                                                   ("GET", URL + "/p1")]


def test_a_lost_delete_answer_is_read_back_by_id(server, run):
    server.script = [page(policy()), "drop", (404, dict(code="not_found", message="Not Found"))]
    assert run(state="absent")["changed"] is True
    assert [(r["method"], r["path"]) for r in server.requests] == [("GET", URL), ("DELETE", URL + "/p1"),
                                                                   ("GET", URL + "/p1")]
