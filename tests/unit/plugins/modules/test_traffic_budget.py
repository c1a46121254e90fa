# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import json

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.traffic_budget import TrafficBudget

URL = "/v1/organizations/acme/databases/pgapp/branches/main/traffic/budgets"
FP = "7a3d2c1b0e9f8a76"

MODULE = TrafficBudget  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="pgapp", branch="main", name="reports", service_token_id="svc",
            service_token="s3cret")


def tag(text):
    key, value = text.partition("=")[::2]
    return dict(key_id="k-" + key, key=key, value=value, source="sql")


def api_rule(rid, kind="match", fingerprint=None, keyspace=None, tags=()):
    return dict(id=rid, kind=kind, fingerprint=fingerprint, keyspace=keyspace, tags=[tag(t) for t in tags],
                actor=dict(id="u1", display_name="U", avatar_url=""), syntax_highlighted_sql="",
                created_at="2026-01-01T00:00:00.000Z", updated_at="2026-01-01T00:00:00.000Z")


def budget(rules=(), **fields):
    base = dict(id="b1", name="reports", mode="warn", capacity=None, rate=20, burst=None, concurrency=None,
                warning_threshold=None, rules=list(rules))
    return dict(base, **fields)


def page(*items):
    return (200, dict(type="list", next_page=None, data=list(items)))


def calls(server):
    return [(r["method"], r["path"][len(URL):]) for r in server.requests]


def body(server, index):
    return json.loads(server.requests[index]["body"])


BY_TAG = dict(tags=["route=/reports"])
BY_PATTERN = dict(fingerprint=FP, keyspace="pgapp")


def test_create_sends_the_fields_in_one_request_then_one_per_rule(server, run):
    server.script = [page(budget(name="other", id="b0")), (201, budget()),
                     (201, api_rule("r1", tags=["route=/reports"])), (201, api_rule("r2", fingerprint=FP,
                                                                                    keyspace="pgapp"))]
    result = run(mode="warn", rate=20, rules=[BY_TAG, BY_PATTERN])
    assert result["changed"] is True
    assert calls(server) == [("GET", ""), ("POST", ""), ("POST", "/b1/rules"), ("POST", "/b1/rules")]
    assert body(server, 1) == dict(name="reports", mode="warn", rate=20)
    assert sorted([body(server, 2), body(server, 3)], key=len) == [
        dict(kind="match", tags=["route=/reports"]), dict(kind="match", fingerprint=FP, keyspace="pgapp")]
    assert sorted(r["id"] for r in result["traffic_budget"]["rules"]) == ["r1", "r2"]


def test_a_second_run_reads_once_and_writes_nothing(server, run):
    server.script = [page(budget([api_rule("r1", tags=["route=/reports"]),
                                  api_rule("r2", fingerprint=FP, keyspace="pgapp")]))]
    result = run(mode="warn", rate=20, rules=[BY_PATTERN, dict(tags=[" route = /reports ", "route=/reports"])])
    assert result["changed"] is False and calls(server) == [("GET", "")]


def test_a_changed_field_is_one_patch_and_the_rules_are_left_alone(server, run):
    server.script = [page(budget([api_rule("r1", tags=["a=b"])])), (200, budget([api_rule("r1", tags=["a=b"])],
                                                                                mode="enforce"))]
    result = run(diff=True, mode="enforce", rate=20)
    assert result["changed"] is True and calls(server) == [("GET", ""), ("PATCH", "/b1")]
    assert body(server, 1) == dict(mode="enforce")
    assert (result["diff"]["before"]["mode"], result["diff"]["after"]["mode"]) == ("warn", "enforce")


def test_rules_converge_to_the_declared_set(server, run):
    stale = api_rule("r9", kind="each", tags=["job"])
    server.script = [page(budget([api_rule("r1", tags=["route=/reports"]), stale])),
                     (201, api_rule("r2", fingerprint=FP, keyspace="pgapp")), (204, b"")]
    result = run(diff=True, rules=[BY_TAG, BY_PATTERN])
    assert result["changed"] is True
    assert calls(server) == [("GET", ""), ("POST", "/b1/rules"), ("DELETE", "/b1/rules/r9")]
    assert sorted(r["id"] for r in result["traffic_budget"]["rules"]) == ["r1", "r2"]
    assert dict(kind="each", tags=["job"]) in result["diff"]["before"]["rules"]
    assert dict(kind="each", tags=["job"]) not in result["diff"]["after"]["rules"]


def test_without_purge_rules_a_rule_not_declared_stays(server, run):
    server.script = [page(budget([api_rule("r9", kind="each", tags=["job"])])),
                     (201, api_rule("r1", tags=["route=/reports"]))]
    result = run(rules=[BY_TAG], purge_rules=False)
    assert result["changed"] is True and calls(server) == [("GET", ""), ("POST", "/b1/rules")]
    server.requests.clear()
    server.script = [page(budget([api_rule("r9", kind="each", tags=["job"]), api_rule("r1", tags=["route=/reports"])]))]
    assert run(rules=[BY_TAG], purge_rules=False)["changed"] is False and calls(server) == [("GET", "")]


def test_an_empty_rules_list_removes_every_rule_and_no_rules_option_removes_none(server, run):
    server.script = [page(budget([api_rule("r1", tags=["a=b"])])), (204, b"")]
    assert run(rules=[])["changed"] is True
    assert calls(server) == [("GET", ""), ("DELETE", "/b1/rules/r1")]
    server.requests.clear()
    server.script = [page(budget([api_rule("r1", tags=["a=b"])]))]
    assert run()["changed"] is False and calls(server) == [("GET", "")]


def test_check_mode_writes_nothing_and_predicts(server, run):
    server.script = [page()]
    result = run(check_mode=True, diff=True, mode="enforce", rules=[BY_TAG])
    assert result["changed"] is True and calls(server) == [("GET", "")]
    assert result["traffic_budget"]["mode"] == "enforce"
    assert result["diff"]["after"] == dict(mode="enforce", rules=[dict(kind="match", tags=["route=/reports"])])
    server.requests.clear()
    server.script = [page(budget([api_rule("r9", tags=["a=b"])]))]
    result = run(check_mode=True, rules=[BY_TAG])
    assert result["changed"] is True and calls(server) == [("GET", "")]


def test_a_lost_create_answer_finds_the_budget_by_name(server, run, sleeps):
    server.script = [page(), "drop", page(budget()), (201, api_rule("r1", tags=["route=/reports"]))]
    result = run(rate=20, rules=[BY_TAG])
    assert result["changed"] is True and result["traffic_budget"]["id"] == "b1"
    assert calls(server) == [("GET", ""), ("POST", ""), ("GET", ""), ("POST", "/b1/rules")]


def test_a_lost_rule_create_answer_is_read_back_and_not_sent_again(server, run, sleeps):
    server.script = [page(budget()), "drop", (200, budget([api_rule("r1", tags=["route=/reports"])]))]
    result = run(rules=[BY_TAG])
    assert result["changed"] is True and [r["id"] for r in result["traffic_budget"]["rules"]] == ["r1"]
    assert calls(server) == [("GET", ""), ("POST", "/b1/rules"), ("GET", "/b1")]


def test_a_rule_the_budget_already_has_is_not_an_error(server, run):
    refusal = (422, dict(code="unprocessable", message="The traffic budget already has a rule"))
    server.script = [page(budget()), refusal, (200, budget([api_rule("r1", tags=["route=/reports"])]))]
    result = run(rules=[BY_TAG])
    assert [r["id"] for r in result["traffic_budget"]["rules"]] == ["r1"]
    assert calls(server) == [("GET", ""), ("POST", "/b1/rules"), ("GET", "/b1")]


def test_absent_deletes_and_again_is_no_change(server, run):
    server.script = [page(budget()), (204, b"")]
    assert run(state="absent")["changed"] is True and calls(server) == [("GET", ""), ("DELETE", "/b1")]
    server.requests.clear()
    server.script = [page()]
    assert run(state="absent")["changed"] is False and calls(server) == [("GET", "")]


def test_two_budgets_of_one_name_fail_naming_them(server, run):
    server.script = [page(budget(), budget(id="b2"))]
    with pytest.raises(ModuleFailure) as caught:
        run(rate=5)
    assert caught.value.msg == ("2 traffic budgets of branch 'main' are named 'reports' (IDs b1, b2); delete all but "
                                "one.")


def test_unlimited_sends_null_once_and_a_budget_without_the_limit_is_no_change(server, run):
    server.script = [page(budget(capacity=90, burst=30)), (200, budget(capacity=None, rate=None, burst=30))]
    result = run(diff=True, unlimited=["capacity", "rate"])
    assert calls(server) == [("GET", ""), ("PATCH", "/b1")] and result["changed"] is True
    assert body(server, 1) == dict(capacity=None, rate=None)  # rate 20 in the read: both set back
    assert result["diff"]["before"]["capacity"] == 90 and "capacity" not in result["diff"]["after"]
    server.requests.clear()
    server.script = [page(budget(capacity=None, rate=None, burst=30))]
    assert run(unlimited=["capacity", "rate"])["changed"] is False and calls(server) == [("GET", "")]


def test_a_new_budget_is_created_without_the_unlimited_limits(server, run):
    server.script = [page(), (201, budget(rate=None))]
    run(mode="warn", unlimited=["rate"])
    assert body(server, 1) == dict(name="reports", mode="warn")


def test_a_limit_the_platform_keeps_fails_with_what_to_do(server, run):
    server.script = [page(budget(capacity=90)), (200, budget(capacity=90))]
    with pytest.raises(ModuleFailure) as caught:
        run(unlimited=["capacity"])
    assert caught.value.msg == ("The platform kept capacity 90 of traffic budget 'reports' of branch 'main' of database "
                                "'pgapp' when asked to make it unlimited; delete the budget (state: absent) and create "
                                "it again without it.")


@pytest.mark.parametrize("state", ["present", "absent"])
def test_a_mysql_branch_is_a_sentence_not_the_platforms_422(server, run, state):
    server.script = [(422, dict(code="unprocessable", message="Traffic control is for PostgreSQL branches")),
                     (200, dict(id="br1", name="main", kind="mysql"))]
    with pytest.raises(ModuleFailure) as caught:
        run(database="app", state=state)
    assert caught.value.msg == ("Branch 'main' of database 'app' is a MySQL (Vitess) branch: only PostgreSQL branches "
                                "have traffic budgets.")
    assert caught.value.result["status"] == 422 and server.requests[1]["path"].endswith("/databases/app/branches/main")


def test_a_422_of_a_postgresql_branch_stays_the_platforms(server, run):
    server.script = [page(), (422, dict(code="unprocessable", message="Rate is out of range")),
                     page(), (200, dict(id="br1", name="main", kind="postgresql"))]
    with pytest.raises(ModuleFailure) as caught:
        run(rate=20)
    assert "Rate is out of range" in caught.value.msg


@pytest.mark.parametrize("args, message", [
    (dict(capacity=90, unlimited=["capacity"]),
     "capacity is given 90 and listed in unlimited; give it a value or list it in unlimited, not both."),
    (dict(rate=101), "rate must be from 0 to 100, not 101."),
    (dict(capacity=-1), "capacity must be from 0 to 6000, not -1."),
    (dict(burst=6001), "burst must be from 0 to 6000, not 6001."),
    (dict(warning_threshold=120), "warning_threshold must be from 0 to 100, not 120."),
    (dict(rules=[dict(kind="each")]), "rules[0] matches nothing: give its fingerprint, its tags, or both."),
    (dict(rules=[BY_TAG, dict(keyspace="pgapp", tags=["a=b"])]),
     "rules[1]: keyspace narrows a fingerprint; give the fingerprint too."),
    (dict(rules=[dict(tags=["=x"])]), "rules[0]: the tag '=x' is not key=value (or key alone)."),
    (dict(rules=[dict(fingerprint=" ")]), "rules[0]: fingerprint must not be empty."),
    (dict(name=" "), "name must not be empty."),
    (dict(branch="Main"), "branch must be a branch name the platform accepts"),
])
def test_bad_input_fails_before_any_request(server, run, args, message):
    with pytest.raises(ModuleFailure) as caught:
        run(check_mode=True, **args)
    assert caught.value.msg.startswith(message) and server.requests == []
