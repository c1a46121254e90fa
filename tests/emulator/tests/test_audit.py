"""The organization's audit log (the writes the emulator serves, recorded: who, what, which action, when; newest
first, cursor-paged) and its settings (GET /organizations, GET/PATCH /organizations/{organization}).

Every answer is validated against the published OpenAPI after the test (conftest.openapi_check)."""

from .conftest import DB, MAIN

ORG = "/v1/organizations/acme"
LOG = f"{ORG}/audit-log"


def ok(response, status=200):
    assert response.status_code == status, response.text
    return response.json() if status not in (204, 503) else None


def events(api, **query):
    return ok(api.get(LOG, params=query))


def test_a_fresh_world_has_an_empty_log_and_reads_answer_no_event(api):
    ok(api.get(f"{MAIN}/passwords"))
    page = events(api)
    assert page == {"type": "list", "has_next": False, "has_prev": False, "cursor_start": None, "cursor_end": None,
                    "data": []}


def test_credential_writes_are_recorded_with_actor_target_and_action_never_a_secret(api):
    created = ok(api.post(f"{MAIN}/passwords", json={"name": "ci", "role": "reader", "ttl": 3600}), 201)
    ok(api.patch(f"{MAIN}/passwords/{created['id']}", json={"name": "ci-2"}))
    ok(api.post(f"{MAIN}/passwords/{created['id']}/renew"), 200)
    ok(api.delete(f"{MAIN}/passwords/{created['id']}"), 204)
    token = ok(api.post(f"{ORG}/service-tokens", json={"name": "deployer"}))
    ok(api.delete(f"{ORG}/service-tokens/{token['id']}"), 204)
    log = events(api)["data"]
    assert [e["audit_action"] for e in log] == [
        "service_token.deleted", "service_token.created", "database_branch_password.deleted",
        "database_branch_password.renewed", "database_branch_password.updated", "database_branch_password.created"]
    assert [e["action"] for e in log] == ["deleted", "created", "deleted", "renewed", "updated", "created"]
    seeded = api.world["service_token"]
    for event in log:
        assert (event["actor_type"], event["actor_id"], event["actor_display_name"]) == (
            "ServiceToken", seeded["id"], "emulator-admin")
        assert event["created_at"] and event["remote_ip"]
    password_events = log[2:]
    assert {e["target_id"] for e in password_events} == {created["id"]}
    assert [e["target_display_name"] for e in password_events] == ["ci-2", "ci-2", "ci-2", "ci"]  # renamed
    assert {(e["target_type"], e["auditable_type"], e["auditable_display_name"]) for e in password_events} == {
        ("DatabaseBranchPassword", "Database", "app")}
    assert password_events[0]["metadata"] == {"database": "app", "branch": "main"}
    assert (log[1]["target_type"], log[1]["target_id"], log[1]["target_display_name"]) == (
        "ServiceToken", token["id"], "deployer")
    assert (log[1]["auditable_type"], log[1]["auditable_display_name"]) == ("Organization", "acme")
    text = str(log)
    assert created["plain_text"] not in text and token["token"] not in text


def test_member_team_database_and_branch_writes_are_recorded(api):
    member = api.world["users"][0]
    ok(api.patch(f"{ORG}/members/{member['id']}", json={"role": "admin"}))
    ok(api.delete(f"{ORG}/members/{member['id']}"), 204)
    team = ok(api.post(f"{ORG}/teams", json={"name": "Auditors"}))
    ok(api.post(f"{ORG}/teams/{team['slug']}/members", json={"user_id": api.world["users"][1]["id"]}))
    ok(api.delete(f"{ORG}/teams/{team['slug']}"), 204)
    ok(api.post(f"{DB}/branches", json={"name": "dev", "parent_branch": "main"}), 201)
    ok(api.delete(f"{DB}/branches/dev"), 204)
    log = events(api)["data"]
    assert [(e["audit_action"], e["target_display_name"]) for e in log] == [
        ("branch.deleted", "dev"), ("branch.created", "dev"), ("team.deleted", "Auditors"),
        ("team_membership.created", api.world["users"][1]["email"]), ("team.created", "Auditors"),
        ("organization_membership.deleted", member["email"]), ("organization_membership.updated", member["email"])]
    assert log[-1]["target_id"] == member["id"]


def test_refused_and_unauthenticated_writes_are_not_recorded(api):
    ok(api.patch(f"{ORG}/members/nobody", json={"role": "admin"}), 404)
    ok(api.post(f"{MAIN}/passwords", json={"name": "x"}, headers={"Authorization": "bad:token"}), 401)
    assert events(api)["data"] == []


def test_the_log_is_newest_first_and_cursor_paged_both_ways(api):
    for n in range(5):
        ok(api.post(f"{ORG}/teams", json={"name": f"Team {n}"}))
    everything = events(api)["data"]
    assert [e["target_display_name"] for e in everything] == [f"Team {n}" for n in (4, 3, 2, 1, 0)]
    first = events(api, limit=2)
    assert (first["has_next"], first["has_prev"]) == (True, False)
    assert first["cursor_start"] == everything[0]["id"] and first["cursor_end"] == everything[1]["id"]
    second = events(api, limit=2, starting_after=first["cursor_end"])
    assert [e["id"] for e in second["data"]] == [e["id"] for e in everything[2:4]]
    assert (second["has_next"], second["has_prev"]) == (True, True)
    back = events(api, limit=2, ending_before=second["cursor_start"])
    assert [e["id"] for e in back["data"]] == [e["id"] for e in everything[:2]]
    assert ok(api.get(LOG, params={"starting_after": "nope"}), 422)["code"] == "invalid_params"
    assert ok(api.get(LOG, params={"limit": 101}), 422)["code"] == "invalid_params"


def test_filters_keep_the_named_actions_cursor_paged_as_the_platform_filters(api):
    """filters[]=audit_action:<action>, repeatable, as the platform's Go client sends it (pscale audit-log list
    --action); the published OpenAPI does not declare it."""
    for n in range(3):
        team = ok(api.post(f"{ORG}/teams", json={"name": f"Team {n}"}))
        ok(api.patch(f"{ORG}/teams/{team['slug']}", json={"name": f"Team {n}b"}))
    everything = events(api)["data"]
    created = [e["id"] for e in everything if e["audit_action"] == "team.created"]
    page = ok(api.get(LOG, params={"filters[]": "audit_action:team.created", "limit": 2}))
    assert [e["id"] for e in page["data"]] == created[:2] and (page["has_next"], page["has_prev"]) == (True, False)
    rest = ok(api.get(LOG, params={"filters[]": "audit_action:team.created", "starting_after": page["cursor_end"]}))
    assert [e["id"] for e in rest["data"]] == created[2:] and (rest["has_next"], rest["has_prev"]) == (False, True)
    back = ok(api.get(LOG, params={"filters[]": "audit_action:team.created", "ending_before": rest["cursor_start"]}))
    assert [e["id"] for e in back["data"]] == created[:2] and (back["has_next"], back["has_prev"]) == (True, False)
    both = ok(api.get(LOG, params=[("filters[]", "audit_action:team.created"), ("filters[]", "audit_action:team.updated")]))
    assert [e["id"] for e in both["data"]] == [e["id"] for e in everything]
    assert ok(api.get(LOG, params={"filters[]": "audit_action:nothing.done"}))["data"] == []
    assert ok(api.get(LOG, params={"filters[]": "actor:someone"}), 422)["code"] == "invalid_params"


def test_a_write_whose_answer_a_fault_replaced_after_commit_is_recorded(api):
    rule = {"method": "POST", "path": "/teams$", "status": 503, "after_commit": True, "times": 1}
    assert api.control("POST", "/faults", json={"rules": [rule]}).status_code == 200
    ok(api.post(f"{ORG}/teams", json={"name": "Lost"}), 503)
    assert [e["audit_action"] for e in events(api)["data"]] == ["team.created"]


def test_the_audit_log_needs_access_to_the_organization(api):
    forbidden = api.world["forbidden_service_token"]
    ok(api.get(LOG, headers={"Authorization": f"{forbidden['id']}:{forbidden['token']}"}), 403)


def test_organization_settings_are_read_listed_and_changed(api):
    org = ok(api.get(ORG))
    assert (org["name"], org["billing_email"], org["idp_managed_roles"], org["invoice_budget_amount"]) == (
        "acme", "billing@acme.test", False, "0")
    assert org["database_count"] == 2
    listed = ok(api.get("/v1/organizations"))
    assert [o["name"] for o in listed["data"]] == ["acme"] and listed["data"][0] == org
    changed = ok(api.patch(ORG, json={"billing_email": "finance@acme.test", "idp_managed_roles": True,
                                      "invoice_budget_amount": 5000}))
    assert (changed["billing_email"], changed["idp_managed_roles"], changed["invoice_budget_amount"]) == (
        "finance@acme.test", True, "5000")
    assert ok(api.get(ORG)) == changed
    assert [(e["audit_action"], e["target_display_name"]) for e in events(api)["data"]] == [
        ("organization.updated", "acme")]
    assert ok(api.patch(ORG, json={"billing_email": "not an email"}), 422)["code"] == "unprocessable"
    assert ok(api.patch(ORG, json={"invoice_budget_amount": -1}), 422)["code"] == "invalid_params"
    assert ok(api.patch(ORG, json={"idp_managed_roles": "yes"}), 422)["code"] == "invalid_params"
    forbidden = api.world["forbidden_service_token"]
    outsider = {"Authorization": f"{forbidden['id']}:{forbidden['token']}"}
    assert ok(api.get("/v1/organizations", headers=outsider))["data"] == []
    ok(api.get(ORG, headers=outsider), 403)


def test_the_control_api_adds_events_in_the_order_of_time(api):
    ok(api.post(f"{ORG}/teams", json={"name": "Real"}))
    answer = api.control("POST", "/audit-log/acme", json={"count": 3, "audit_action": "team.updated", "hours_ago": 48})
    assert ok(answer) == {"events": 4}
    log = events(api)["data"]
    assert [e["audit_action"] for e in log] == ["team.created"] + ["team.updated"] * 3
    assert log[0]["created_at"] > log[-1]["created_at"]
    assert api.control("POST", "/audit-log/nope", json={"count": 1}).status_code == 404
    assert api.control("POST", "/audit-log/acme", json={"count": 0}).status_code == 422


def test_a_service_token_that_deletes_itself_is_the_actor_of_its_deletion(api):
    token = ok(api.post(f"{ORG}/service-tokens", json={"name": "short-lived"}))
    own = {"Authorization": f"{token['id']}:{token['token']}"}
    ok(api.delete(f"{ORG}/service-tokens/{token['id']}", headers=own), 204)
    deleted = events(api)["data"][0]
    assert deleted["audit_action"] == "service_token.deleted"
    assert (deleted["actor_type"], deleted["actor_id"], deleted["actor_display_name"]) == (
        "ServiceToken", token["id"], "short-lived")
    assert (deleted["target_id"], deleted["target_display_name"]) == (token["id"], "short-lived")


def test_an_oauth_token_acts_as_its_user(api):
    bearer = {"Authorization": "Bearer " + api.login()["access_token"]}
    ok(api.post(f"{ORG}/teams", json={"name": "By OAuth"}, headers=bearer))
    created = events(api)["data"][0]
    assert (created["actor_type"], created["actor_id"]) == ("User", api.world["user"]["id"])
