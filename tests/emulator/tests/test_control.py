"""The control API: world, reset, request log, faults, settings, rate limit, clock, seed."""

import shlex
import time

import pytest

from .conftest import DB, MAIN

WORLD_KEYS = {
    "organization",
    "database",
    "branch",
    "service_token",
    "forbidden_service_token",
    "oauth_application",
    "teams",
    "user",
    "users",
    "api_url",
    "auth_url",
}


def test_health(api):
    assert api.control("GET", "/health").status_code == 200


def test_world_describes_the_seed(api):
    world = api.world
    assert world.keys() >= WORLD_KEYS
    assert (world["organization"], world["database"], world["branch"]) == ("acme", "app", "main")
    assert world["service_token"].keys() == {"id", "token"} == world["forbidden_service_token"].keys()
    assert world["oauth_application"].keys() >= {"id", "organization", "client_id", "client_secret", "redirect_uri"}
    assert world["teams"].keys() == {"regular", "sso_managed", "large"}
    assert world["api_url"] == "http://testserver/v1" and world["auth_url"] == "http://testserver"
    assert len(world["users"]) == 10
    regular = api.get(f"/v1/organizations/acme/teams/{world['teams']['regular']}/members").json()["data"]
    assert not {m["user"]["id"] for m in regular} & {u["id"] for u in world["users"]}
    large = api.get(f"/v1/organizations/acme/teams/{world['teams']['large']}/members").json()
    assert large["total_count"] >= 250


def test_env_is_one_shell_line_that_exports_every_variable(api):
    answer = api.control("GET", "/env")
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/plain")
    world = api.world
    assert answer.text.count("\n") == 1 and answer.text.startswith("export ")
    assert dict(word.split("=", 1) for word in shlex.split(answer.text)[1:]) == dict(
        PLANETSCALE_API_URL=world["api_url"], PLANETSCALE_AUTH_URL=world["auth_url"],
        PLANETSCALE_ORG=world["organization"], PLANETSCALE_SERVICE_TOKEN_ID=world["service_token"]["id"],
        PLANETSCALE_SERVICE_TOKEN=world["service_token"]["token"],
        PLANETSCALE_CLIENT_ID=world["oauth_application"]["client_id"],
        PLANETSCALE_CLIENT_SECRET=world["oauth_application"]["client_secret"])


def test_reset_restores_the_seeded_world(api):
    api.post(f"{DB}/branches", json={"name": "temp", "parent_branch": "main"})
    api.control("POST", "/faults", json={"rules": [{"path": "/nothing", "status": 500}]})
    api.control("POST", "/settings", json={"ready_delay": 9})
    api.advance(100)
    assert api.control("POST", "/reset").status_code == 200
    assert [b["name"] for b in api.get(f"{DB}/branches").json()["data"]] == ["main"]
    assert api.control("GET", "/faults").json() == {"rules": []}
    assert api.control("GET", "/settings").json()["ready_delay"] == 2.0
    assert api.control("GET", "/clock").json()["offset_seconds"] == 0
    assert len(api.control("GET", "/requests").json()) == 1  # only the branch listing since the reset


def test_request_log(api):
    api.get(f"{DB}/branches", params={"q": "ma", "page": 1})
    api.client.get("/v1/user")
    api.client.get("/v1/user", headers={"Authorization": "Bearer nope"})
    api.login()
    log = api.control("GET", "/requests").json()
    assert [(e["method"], e["path"], e["status"], e["credential"]) for e in log] == [
        ("GET", f"{DB}/branches", 200, "service_token"),
        ("GET", "/v1/user", 401, "none"),
        ("GET", "/v1/user", 401, "invalid"),
        ("POST", "/oauth/token", 200, "none"),
    ]
    assert log[0]["query"] == {"q": "ma", "page": "1"}
    assert api.world["service_token"]["token"] not in str(log)
    api.client.get("/v1/user", headers={"Authorization": f"Bearer {api.login()['access_token']}"})
    assert api.control("GET", "/requests").json()[-1]["credential"] == "bearer"
    assert api.control("DELETE", "/requests").status_code == 204
    assert api.control("GET", "/requests").json() == []


def test_fault_times_and_listing(api):
    rule = {"method": "POST", "path": "/branches$", "status": 503, "times": 2, "retry_after": 7}
    assert api.control("POST", "/faults", json={"rules": [rule]}).status_code == 200
    body = {"name": "flaky", "parent_branch": "main"}
    for _ in range(2):
        failed = api.post(f"{DB}/branches", json=body)
        assert failed.status_code == 503 and failed.headers["retry-after"] == "7"
        assert "text/html" in failed.headers["content-type"]
    assert api.get(f"{DB}/branches/flaky").status_code == 404  # faults before commit apply nothing
    assert api.control("GET", "/faults").json()["rules"][0]["remaining"] == 0
    assert api.post(f"{DB}/branches", json=body).status_code == 201
    log = api.control("GET", "/requests").json()
    assert [e["status"] for e in log if e["method"] == "POST"] == [503, 503, 201]
    assert api.control("DELETE", "/faults").status_code == 204
    assert api.control("GET", "/faults").json() == {"rules": []}


def test_fault_method_filter_and_429(api):
    api.control(
        "POST",
        "/faults",
        json={"rules": [{"method": "GET", "path": "/user$", "status": 429, "times": 1, "retry_after": 3}]},
    )
    assert api.post(f"{MAIN}/query-patterns").status_code == 201  # other method and path
    limited = api.get("/v1/user")
    assert limited.status_code == 429 and limited.headers["retry-after"] == "3"
    assert limited.json()["code"] == "rate_limited"
    assert api.get("/v1/user").status_code == 200


def test_fault_after_commit_applies_the_request(api):
    api.control(
        "POST",
        "/faults",
        json={"rules": [{"method": "POST", "path": "/branches$", "status": 502, "times": 1, "after_commit": True}]},
    )
    failed = api.post(f"{DB}/branches", json={"name": "committed", "parent_branch": "main"})
    assert failed.status_code == 502
    assert api.get(f"{DB}/branches/committed").status_code == 200
    retried = api.post(f"{DB}/branches", json={"name": "committed", "parent_branch": "main"})
    assert retried.status_code == 422


def _outcomes(api, seed):
    api.control("DELETE", "/faults")
    api.control(
        "POST", "/faults", json={"rules": [{"path": "/user$", "status": 500, "probability": 0.5, "seed": seed}]}
    )
    return [api.get("/v1/user").status_code for _ in range(40)]


def test_fault_probability_is_repeatable_with_a_seed(api):
    first = _outcomes(api, seed=11)
    assert first == _outcomes(api, seed=11)
    assert 5 < first.count(500) < 35 and set(first) == {200, 500}
    assert first != _outcomes(api, seed=12)


def test_fault_delay_then_normal_answer(api):
    api.control("POST", "/faults", json={"rules": [{"path": "/user$", "delay": 0.2, "times": 1}]})
    started = time.monotonic()
    assert api.get("/v1/user").status_code == 200
    assert time.monotonic() - started >= 0.2


def test_faults_spare_the_control_api(api):
    api.control("POST", "/faults", json={"rules": [{"path": "", "status": 500}]})
    assert api.get("/v1/user").status_code == 500
    assert api.control("GET", "/world").status_code == 200
    assert api.control("DELETE", "/faults").status_code == 204


@pytest.mark.parametrize(
    "rule",
    [
        {"path": "x"},
        {"path": "(", "status": 500},
        {"path": "x", "status": 418},
        {"path": "x", "status": 500, "drop": True},
        {"path": "x", "delay": 1, "after_commit": True},
        {"path": "x", "status": 500, "probability": 2},
        {"path": "x", "status": 500, "times": 0},
        {"path": "x", "status": 500, "colour": "red"},
    ],
)
def test_invalid_fault_rules(api, rule):
    response = api.control("POST", "/faults", json={"rules": [rule]})
    assert response.status_code == 422 and response.json()["code"] == "invalid_params"


def test_settings(api):
    assert api.control("GET", "/settings").json() == {
        "ready_delay": 2.0,
        "report_delay": 1.0,
        "webhook_timeout": 2.0,
        "rate_limit": None,
        "token_ttl": 3600,
        "max_per_page": 100,
        "list_envelope": "full",
        "cluster_rate_name": False,
        "type_keys": False,
        "lean_write_answers": False,
        "zero_times": False,
        "recorded_databases": False,
        "recorded_capacity": False,
        "recorded_vitess": False,
        "recorded_billing_oauth": False,
        "recorded_regions_reports": False,
        "recorded_insights": False,
        "recorded_metrics": False,
        "insights_slow_query_ms": 1000.0,
        "deploy_check_delay": 1.0,
        "deploy_step_delay": 1.0,
        "revert_window": 1800.0,
        "deploy_fail_state": None,
        "cutover_blocked": False,
        "deploy_storage_remaining": 99 * 2**30,
        "backup_step_delay": 1.0,
        "backup_fail_state": None,
        "multiple_admins_required_for_deletion": False,
        "webhook_public_https_only": False,
        "change_step_delay": 1.0,
        "change_initial_state": "pending",
        "change_fail_state": None,
        "workflow_copy_delay": 1.0,
        "workflow_step_delay": 1.0,
        "workflow_fail_state": None,
        "workflow_verify_stale_after": 86400.0,
    }
    changed = api.control("POST", "/settings", json={"ready_delay": 0.5, "token_ttl": 120})
    assert changed.json()["ready_delay"] == 0.5 and changed.json()["token_ttl"] == 120
    for bad in ({"ready_delay": -1}, {"rate_limit": 0}, {"token_ttl": "x"}, {"unknown": 1},
                {"deploy_step_delay": -1}, {"deploy_fail_state": "broken"}, {"backup_fail_state": "success"},
                {"backup_step_delay": -1}, {"multiple_admins_required_for_deletion": "maybe"},
                {"workflow_step_delay": -1}, {"workflow_fail_state": "cancelled"}):
        response = api.control("POST", "/settings", json=bad)
        assert response.status_code == 422 and response.json()["code"] == "invalid_params"


def test_rate_limit_per_credential(api):
    api.control("POST", "/settings", json={"rate_limit": 3})
    assert [api.get("/v1/user").status_code for _ in range(3)] == [200, 200, 200]
    limited = api.get("/v1/user")
    assert limited.status_code == 429 and limited.json()["code"] == "rate_limited"
    assert 1 <= int(limited.headers["retry-after"]) <= 60
    bearer = {"Authorization": f"Bearer {api.login()['access_token']}"}
    assert api.client.get("/v1/user", headers=bearer).status_code == 200  # another credential
    api.advance(61)
    assert api.get("/v1/user").status_code == 200
    api.control("POST", "/settings", json={"rate_limit": None})
    assert all(api.get("/v1/user").status_code == 200 for _ in range(5))


def test_clock(api):
    before = api.control("GET", "/clock").json()
    moved = api.control("POST", "/clock", json={"advance_seconds": 86400}).json()
    assert moved["offset_seconds"] == 86400 and moved["now"] > before["now"]
    assert api.control("POST", "/clock", json={"advance_seconds": -5}).status_code == 422


def test_authorization_code_errors(api):
    app = api.world["oauth_application"]
    for body in (
        {"client_id": "nope", "redirect_uri": app["redirect_uri"]},
        {"client_id": app["client_id"], "redirect_uri": "http://elsewhere.test/cb"},
        {"client_id": app["client_id"], "redirect_uri": app["redirect_uri"], "user_id": "ghost"},
    ):
        assert api.control("POST", "/oauth/authorization-codes", json=body).status_code == 422


def test_seed_fixtures(api):
    large = api.world["teams"]["large"]
    body = {
        "teams": {"count": 40, "prefix": "bench"},
        "passwords": {"branch": "main", "count": 120, "prefix": "audit", "role": "reader"},
        "team_members": {"team": large, "count": 50},
        "reports": {"branch": "main", "count": 15},
        "branches": {"count": 30, "prefix": "load"},
    }
    created = api.control("POST", "/seed", json=body).json()
    assert {k: len(v) for k, v in created.items()} == {
        "teams": 40,
        "passwords": 120,
        "team_members": 50,
        "reports": 15,
        "branches": 30,
    }
    assert created["teams"][0] == "bench-1"
    assert api.get("/v1/organizations/acme/teams").json()["total_count"] == 43
    passwords = api.get(f"{MAIN}/passwords", params={"per_page": 100}).json()
    assert passwords["total_count"] == 120 and passwords["data"][0]["role"] == "reader"
    assert api.get(f"/v1/organizations/acme/teams/{large}/members").json()["total_count"] == 310
    assert api.get(f"{DB}/branches/load-30").json()["ready"] is True
    assert api.control("POST", "/seed", json={"teams": {"count": 2, "prefix": "bench"}}).json()["teams"] == [
        "bench-41",
        "bench-42",
    ]
    assert api.control("POST", "/seed", json={"team_members": {"team": "ghost", "count": 1}}).status_code == 404
    assert api.control("POST", "/seed", json={"teams": {"count": 0}}).status_code == 422


def test_the_connect_endpoint_is_gone_tests_log_in_with_real_clients(api):
    """No simulated login: the emulator logs in for no one (tests use PyMySQL or psycopg, tests/emulator/README.md)."""
    assert api.control("POST", "/connect", json={"username": "u", "password": "p"}).status_code in (404, 405)
