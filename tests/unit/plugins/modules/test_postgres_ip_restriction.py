# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import json

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure, TaskContext
from ansible_collections.planetscale.cloud.plugins.modules.postgres_ip_restriction import PostgresIpRestriction

URL = "/v1/organizations/acme/databases/pgapp/cidrs"

MODULE = PostgresIpRestriction  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="pgapp", service_token_id="svc", service_token="s3cret")


def entry(**fields):
    return dict(dict(id="c1", role="", schema="", cidrs=["10.0.0.0/8"], description=None), **fields)


def page(*items):
    return (200, dict(type="list", next_page=None, data=list(items)))


def methods(server):
    return [r["method"] for r in server.requests]


def body(server, index):
    return json.loads(server.requests[index]["body"])


def test_create_sends_the_role_schema_and_normalized_networks(server, run):
    made = entry(role="app", cidrs=["10.0.0.0/8", "192.0.2.7/32"], description="office")
    server.script = [page(entry(id="c0", role="other")), (201, made)]
    result = run(role="app", cidrs=["192.0.2.7", "10.0.0.0/255.0.0.0"], description="office")
    assert result["changed"] is True and result["ip_restriction"]["id"] == "c1"
    assert methods(server) == ["GET", "POST"] and server.requests[1]["path"] == URL
    assert body(server, 1) == dict(role="app", schema="", cidrs=["10.0.0.0/8", "192.0.2.7/32"], description="office")


def test_the_same_networks_in_another_order_or_spelling_write_nothing(server, run):
    server.script = [page(entry(cidrs=["192.0.2.7", "10.9.9.9/8"], description="office"))]  # as another tool sent them
    result = run(cidrs=["10.0.0.0/8", "192.0.2.7/32"], description="office")
    assert result["changed"] is False and methods(server) == ["GET"]


def test_a_changed_network_goes_in_one_patch_with_a_diff(server, run):
    server.script = [page(entry()), (200, entry(cidrs=["127.0.0.0/8"]))]
    result = run(diff=True, cidrs=["127.0.0.0/8"])
    assert result["changed"] is True and methods(server) == ["GET", "PATCH"]
    assert server.requests[1]["path"] == URL + "/c1" and body(server, 1) == dict(cidrs=["127.0.0.0/8"])
    assert result["diff"]["before"]["cidrs"] == ["10.0.0.0/8"] and result["diff"]["after"]["cidrs"] == ["127.0.0.0/8"]


@pytest.mark.parametrize("check_mode", [False, True])
def test_networks_taken_out_are_named_in_a_warning_in_check_mode_too(server, run, check_mode):
    server.script = [page(entry(role="app", cidrs=["10.0.0.0/8", "198.51.100.0/24", "192.0.2.7/32", "203.0.113.8"])),
                     (200, entry(role="app", cidrs=["10.0.0.0/8"]))]
    ctx = TaskContext(check_mode=check_mode)
    run(ctx=ctx, role="app", cidrs=["10.0.0.0/8", "192.0.2.0/24"])  # 192.0.2.7 stays admitted: no caution for it
    assert ctx.warnings == [
        "This change takes 198.51.100.0/24, 203.0.113.8/32 out of the IP restriction of role 'app' and every schema of "
        "database 'pgapp': a login from there is refused once it is applied, this machine's too if it connects from "
        "there. Keep in cidrs every network your clients connect from."]
    assert methods(server) == (["GET"] if check_mode else ["GET", "PATCH"])


def test_networks_added_or_widened_draw_no_caution(server, run):
    server.script = [page(entry(cidrs=["10.1.0.0/16"])), (200, entry(cidrs=["10.0.0.0/8", "192.0.2.0/24"]))]
    ctx = TaskContext()
    assert run(ctx=ctx, cidrs=["10.0.0.0/8", "192.0.2.0/24"])["changed"] is True and ctx.warnings == []


def test_an_empty_description_is_no_description(server, run):
    server.script = [page(entry())]
    assert run(description="")["changed"] is False
    server.script = [page(entry(description="old")), (200, entry())]
    assert run(description="")["changed"] is True and body(server, 2) == dict(description="")


def test_the_restriction_is_named_by_role_and_schema(server, run):
    server.script = [page(entry(id="c1"), entry(id="c2", role="app"), entry(id="c3", role="app", schema="s"))]
    result = run(role="app", cidrs=["10.0.0.0/8"])
    assert result["changed"] is False and result["ip_restriction"]["id"] == "c2"


def test_check_mode_writes_nothing_and_predicts(server, run):
    server.script = [page()]
    result = run(check_mode=True, diff=True, role="app", cidrs=["10.0.0.0/8"])
    assert result["changed"] is True and methods(server) == ["GET"]
    assert result["ip_restriction"] == dict(role="app", schema="", description=None, cidrs=["10.0.0.0/8"])
    assert result["diff"] == dict(before={}, after=dict(cidrs=["10.0.0.0/8"], description=""))
    server.script = [page(entry())]
    result = run(check_mode=True, cidrs=["192.168.0.0/16"])
    assert result["changed"] is True and result["ip_restriction"]["cidrs"] == ["192.168.0.0/16"]
    assert methods(server) == ["GET", "GET"]


def test_absent_deletes_and_again_is_no_change(server, run):
    server.script = [page(entry()), (204, b"")]
    assert run(state="absent")["changed"] is True
    assert methods(server) == ["GET", "DELETE"] and server.requests[1]["path"] == URL + "/c1"
    server.script = [page()]
    assert run(state="absent")["changed"] is False and methods(server) == ["GET", "DELETE", "GET"]


@pytest.mark.parametrize("cidrs, message", [
    (["2001:db8::/32"], "cidrs: 2001:db8::/32 is IPv6: the platform restricts PostgreSQL logins to IPv4 networks "
                        "only."),
    (["10.0.0.0/8", "::1", "fe80::/10"], "cidrs: ::1/128, fe80::/10 are IPv6"),
    (["10.0.0.300"], "cidrs: '10.0.0.300' is not an IP address or CIDR range."),
    (["10.0.0.0/8", "203.0.113.7/0"], "cidrs: '203.0.113.7/0' has host bits set, so it would mean 0.0.0.0/0 "
                                      "(every IPv4 address): write 203.0.113.7/32 for that address alone, or "
                                      "0.0.0.0/0 for the whole range."),
    (["2001:db8::1/64"], "cidrs: 2001:db8::/64 is IPv6"),  # IPv6 is the first thing to fix, host bits or not
    ([], "cidrs must list at least one IPv4 network or address; to lift the restriction, use state: absent."),
])
def test_ipv6_malformed_host_bits_and_no_networks_fail_before_any_request(server, run, cidrs, message):
    with pytest.raises(ModuleFailure) as caught:
        run(cidrs=cidrs)
    assert caught.value.msg.startswith(message) and server.requests == []


def test_cidrs_are_required_to_create(server, run):
    server.script = [page()]
    with pytest.raises(ModuleFailure) as caught:
        run(role="app", description="x")
    assert caught.value.msg == ("cidrs is required to create the IP restriction of role 'app' and every schema of "
                                "database 'pgapp', which does not exist.")
    assert methods(server) == ["GET"]


def test_two_restrictions_of_one_role_and_schema_fail_naming_them(server, run):
    server.script = [page(entry(id="c1"), entry(id="c2"))]
    with pytest.raises(ModuleFailure) as caught:
        run(cidrs=["10.0.0.0/8"])
    assert "is not one restriction but 2 (IDs c1, c2)" in caught.value.msg and methods(server) == ["GET"]


def test_a_mysql_database_is_told_to_use_passwords(server, run):
    server.script = [(422, dict(code="unprocessable", message="not a PostgreSQL database")),
                     (200, dict(id="d1", name="app", kind="mysql"))]
    with pytest.raises(ModuleFailure) as caught:
        run(database="app", cidrs=["10.0.0.0/8"])
    assert caught.value.msg == ("Database 'app' is a MySQL database: IP restrictions are for PostgreSQL databases; "
                                "restrict where a password logs in from with the cidrs of planetscale.cloud.password.")


def test_a_database_record_without_kind_is_told_by_its_default_branch(server, run):
    server.script = [(422, dict(code="unprocessable", message="not a PostgreSQL database")),
                     (200, dict(id="d1", name="app", default_branch="main")), (200, dict(name="main", kind="mysql"))]
    with pytest.raises(ModuleFailure) as caught:
        run(database="app", cidrs=["10.0.0.0/8"])
    assert caught.value.msg.startswith("Database 'app' is a MySQL database: IP restrictions are for PostgreSQL")
    assert server.requests[2]["path"] == "/v1/organizations/acme/databases/app/branches/main"


def test_a_create_whose_answer_was_lost_is_read_back_not_sent_twice(server, run, sleeps):
    server.script = [page(), (502, dict(code="bad_gateway")), page(entry())]
    result = run(cidrs=["10.0.0.0/8"])
    assert result["changed"] is True and result["ip_restriction"]["id"] == "c1"
    assert methods(server) == ["GET", "POST", "GET"]


def test_a_lost_update_answer_is_read_back_by_id_and_not_sent_twice(server, run, sleeps):
    server.script = [page(entry(id="c0", role="app"), entry()), "drop", (200, entry(cidrs=["10.1.0.0/16"]))]
    result = run(cidrs=["10.1.0.0/16"])
    assert result["changed"] is True and result["ip_restriction"]["cidrs"] == ["10.1.0.0/16"]
    assert [(r["method"], r["path"]) for r in server.requests] == [("GET", URL), ("PATCH", URL + "/c1"),
                                                                   ("GET", URL + "/c1")]


def test_a_lost_delete_answer_is_read_back_by_id(server, run):
    server.script = [page(entry()), "drop", (404, dict(code="not_found", message="Not Found"))]
    assert run(state="absent")["changed"] is True
    assert [(r["method"], r["path"]) for r in server.requests] == [("GET", URL), ("DELETE", URL + "/c1"),
                                                                   ("GET", URL + "/c1")]
