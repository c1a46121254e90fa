# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.maintenance_schedule_info import MaintenanceScheduleInfo

MODULE = MaintenanceScheduleInfo  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="shop", service_token_id="svc", service_token="s3cret")
LIST = "/v1/organizations/acme/databases/shop/maintenance-schedules"
NOT_FOUND = (404, dict(code="not_found", message="Not Found"))


def schedule(sid):
    return dict(id=sid, name="Weekly %s" % sid, day=0, hour=3, duration=4, frequency_unit="week", required=False)


def window(wid):
    return dict(id=wid, started_at="2026-11-22T03:00:00.000Z", finished_at=None)


def page(items, next_page=None):
    return (200, dict(type="list", next_page=next_page, data=items))


def test_every_schedule_comes_with_every_page_of_its_windows(server, run):
    server.script = [page([schedule("s1"), schedule("s2")]),
                     page([window("w%d" % n) for n in range(100)], next_page=2), page([window("last")]),
                     page([])]
    result = run(check_mode=True)
    assert result["changed"] is False
    (first, second) = result["maintenance_schedules"]
    assert (len(first["windows"]), first["windows"][-1]["id"], second["windows"]) == (101, "last", [])
    assert [(r["path"], r["query"]["page"]) for r in server.requests] == [
        (LIST, ["1"]), (LIST + "/s1/windows", ["1"]), (LIST + "/s1/windows", ["2"]), (LIST + "/s2/windows", ["1"])]


def test_every_page_of_schedules_is_read(server, run):
    server.script = [page([schedule("s%d" % n) for n in range(100)], next_page=2), page([schedule("last")])]
    server.default = page([])
    assert len(run()["maintenance_schedules"]) == 101


def test_id_reads_one_with_its_windows_and_a_missing_one_is_an_empty_list(server, run):
    server.script = [(200, schedule("s1")), page([window("w1")])]
    (found,) = run(id="s1")["maintenance_schedules"]
    assert found["id"] == "s1" and [w["id"] for w in found["windows"]] == ["w1"]
    assert [r["path"] for r in server.requests] == [LIST + "/s1", LIST + "/s1/windows"]
    server.requests.clear()
    server.script = [NOT_FOUND, page([])]
    assert run(id="gone") == dict(changed=False, maintenance_schedules=[])
    assert [r["path"] for r in server.requests] == [LIST + "/gone", LIST]


def test_a_schedule_id_from_the_api_is_escaped_in_the_windows_path(server, run):
    server.script = [page([schedule("a b")]), page([])]
    run()
    assert server.requests[1]["path"] == LIST + "/a%20b/windows"


def test_a_missing_database_is_a_sentence(server, run):
    server.script = [NOT_FOUND]
    with pytest.raises(ModuleFailure) as caught:
        run()
    assert caught.value.msg.endswith("Check that organization 'acme' and database 'shop' exist and that the "
                                     "credentials can see them.")


def test_an_id_that_is_not_a_name_is_refused_before_any_request(server, run):
    with pytest.raises(ModuleFailure) as caught:
        run(id="../x")
    assert caught.value.msg == "id must be a name, not '../x'." and server.requests == []


@pytest.mark.parametrize("the_id, found", [(KeyError, "it has no id key"), (None, "its id is null"),
                                           ("", 'its id is ""'), (["s2"], "its id is a list")])
def test_a_schedule_without_an_id_is_a_wrong_answer_and_no_windows_are_asked_for(server, run, the_id, found):
    second = dict((key, value) for key, value in schedule(the_id).items() if the_id is not KeyError or key != "id")
    server.script = [page([schedule("s1"), second])]
    server.default = page([])  # windows for whoever asks
    with pytest.raises(ModuleFailure) as caught:
        run()
    assert caught.value.msg == ("GET %s failed with HTTP 200: a maintenance schedule of the answer has no id to read it "
                                "by (%s); the collection cannot use it." % (LIST[len("/v1"):], found))
    assert [r["path"] for r in server.requests] == [LIST]
