"""Database Traffic Control (issue 34): a PostgreSQL branch's traffic budgets and their rules, the list by query
fingerprint and the query insights operation.

Every answer is validated against the published OpenAPI after the test (conftest.openapi_check)."""

import json

from .conftest import MAIN, emulator_operations
from .openapi_check import reference_files

PG = "/v1/organizations/acme/databases/pgapp/branches/main"
BUDGETS = f"{PG}/traffic/budgets"
FINGERPRINT = "a1b2c3d4e5f60718"


def ok(response, status=200):
    assert response.status_code == status, response.text
    return response.json() if status != 204 else None


def refused(response, status=422):
    assert response.status_code == status, response.text
    body = response.json()
    assert body["message"], body
    return body["message"]


def budget(api, **body):
    return ok(api.post(BUDGETS, json=dict(dict(name="reports"), **body)), 201)


def rule(api, budget_id, status=201, **body):
    return ok(api.post(f"{BUDGETS}/{budget_id}/rules", json=body), status)


def test_a_budget_is_created_read_updated_and_deleted(api):
    created = budget(api, mode="enforce", capacity=600, rate=20, burst=120, concurrency=10, warning_threshold=80)
    assert (created["name"], created["mode"], created["capacity"], created["rate"]) == ("reports", "enforce", 600, 20)
    assert (created["burst"], created["concurrency"], created["warning_threshold"]) == (120, 10, 80)
    assert created["rules"] == [] and created["actor"]["id"] == api.world["user"]["id"]
    assert ok(api.get(f"{BUDGETS}/{created['id']}")) == created
    updated = ok(api.patch(f"{BUDGETS}/{created['id']}", json=dict(mode="warn", rate=30)))
    assert (updated["mode"], updated["rate"], updated["capacity"]) == ("warn", 30, 600)
    listed = ok(api.get(BUDGETS))
    assert [b["id"] for b in listed["data"]] == [created["id"]] and listed["total_count"] == 1
    ok(api.delete(f"{BUDGETS}/{created['id']}"), 204)
    refused(api.get(f"{BUDGETS}/{created['id']}"), 404)
    refused(api.delete(f"{BUDGETS}/{created['id']}"), 404)


def test_a_new_budget_warns_and_is_unlimited_unless_told(api):
    created = budget(api)
    assert created["mode"] == "warn"
    assert [created[k] for k in ("capacity", "rate", "burst", "concurrency", "warning_threshold")] == [None] * 5


def test_a_budget_name_is_unique_in_its_branch_and_limits_are_checked(api):
    budget(api)
    assert "already exists" in refused(api.post(BUDGETS, json=dict(name="reports")))
    refused(api.post(BUDGETS, json=dict(name=" ")))
    refused(api.post(BUDGETS, json=dict(name="x", rate=101)))
    refused(api.post(BUDGETS, json=dict(name="x", capacity=6001)))
    refused(api.post(BUDGETS, json=dict(name="x", mode="block")))
    refused(api.post(BUDGETS, json=dict(name="x", rate="5")))
    assert ok(api.get(BUDGETS))["total_count"] == 1


def test_rules_are_added_and_removed_one_by_one(api):
    created = budget(api)
    by_pattern = rule(api, created["id"], kind="match", fingerprint=FINGERPRINT, keyspace="pgapp")
    assert (by_pattern["kind"], by_pattern["fingerprint"], by_pattern["keyspace"]) == ("match", FINGERPRINT, "pgapp")
    assert by_pattern["tags"] == [] and FINGERPRINT in by_pattern["syntax_highlighted_sql"]
    by_tags = rule(api, created["id"], kind="each", tags=["route=/export", "application_name"])
    assert [(t["key"], t["value"], t["source"]) for t in by_tags["tags"]] == [
        ("route", "/export", "sql"), ("application_name", "", "system")]
    assert by_tags["fingerprint"] is None and by_tags["keyspace"] is None
    assert [r["id"] for r in ok(api.get(f"{BUDGETS}/{created['id']}"))["rules"]] == [by_pattern["id"], by_tags["id"]]
    ok(api.delete(f"{BUDGETS}/{created['id']}/rules/{by_pattern['id']}"), 204)
    refused(api.delete(f"{BUDGETS}/{created['id']}/rules/{by_pattern['id']}"), 404)
    assert [r["id"] for r in ok(api.get(f"{BUDGETS}/{created['id']}"))["rules"]] == [by_tags["id"]]


def test_a_rule_must_match_something_and_once(api):
    created = budget(api)
    refused(api.post(f"{BUDGETS}/{created['id']}/rules", json=dict(kind="match")))
    refused(api.post(f"{BUDGETS}/{created['id']}/rules", json=dict(kind="match", keyspace="pgapp")))
    refused(api.post(f"{BUDGETS}/{created['id']}/rules", json=dict(kind="match", tags=["=x"])))
    rule(api, created["id"], tags=["app=web", "route=a"])
    assert "already has a rule" in refused(api.post(f"{BUDGETS}/{created['id']}/rules",
                                                    json=dict(tags=["route=a", "app=web"])))
    refused(api.post(f"{BUDGETS}/nope/rules", json=dict(tags=["app=web"])), 404)


def test_budgets_are_found_by_fingerprint_and_through_query_insights(api):
    first, second = budget(api, name="one"), budget(api, name="two")
    rule(api, first["id"], fingerprint=FINGERPRINT, keyspace="pgapp")
    rule(api, second["id"], tags=["app=web"])
    assert [b["id"] for b in ok(api.get(BUDGETS, params=dict(fingerprint=FINGERPRINT)))["data"]] == [first["id"]]
    insights = f"{PG}/insights/{FINGERPRINT}/traffic/budgets"
    assert [b["id"] for b in ok(api.get(insights))["data"]] == [first["id"]]
    assert ok(api.get(insights, params=dict(keyspace="other")))["data"] == []
    assert ok(api.get(f"{PG}/insights/ffff/traffic/budgets"))["total_count"] == 0


def test_the_list_is_paged(api):
    for number in range(3):
        budget(api, name=f"b{number}")
    page = ok(api.get(BUDGETS, params=dict(per_page=2)))
    assert len(page["data"]) == 2 and page["next_page"] == 2
    assert [b["name"] for b in ok(api.get(BUDGETS, params=dict(per_page=2, page=2)))["data"]] == ["b2"]


def test_traffic_control_is_for_postgresql_branches_of_existing_databases(api):
    assert "PostgreSQL" in refused(api.get(f"{MAIN}/traffic/budgets"))
    refused(api.get("/v1/organizations/acme/databases/pgapp/branches/nope/traffic/budgets"), 404)
    refused(api.get("/v1/organizations/acme/databases/nope/branches/main/traffic/budgets"), 404)


def test_a_branch_made_again_has_no_budgets(api):
    branches = "/v1/organizations/acme/databases/pgapp/branches"
    ok(api.post(branches, json=dict(name="dev", parent_branch="main")), 201)
    dev = f"{branches}/dev/traffic/budgets"
    ok(api.post(dev, json=dict(name="reports")), 201)
    ok(api.delete(f"{branches}/dev"), 204)
    ok(api.post(branches, json=dict(name="dev", parent_branch="main")), 201)
    assert ok(api.get(dev))["data"] == []


def test_every_operation_of_the_traffic_control_group_is_served(published):
    declared = set()
    for path in reference_files():
        for template, item in json.loads(path.read_text()).get("paths", {}).items():
            declared |= {f"{method.upper()} {template}" for method, operation in item.items()
                         if isinstance(operation, dict) and operation.get("x-ops-scope-group") == "traffic_control"}
    assert len(declared) == 8
    assert declared - set(emulator_operations().values()) == set()
