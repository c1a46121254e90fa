"""A database's upkeep (issue 35): schema recommendations (seeded, added through the control API, and derived from
the production branch's tables as MariaDB's catalogs describe them), their dismissal, and maintenance schedules with
their windows on the emulator clock.

Every answer is validated against the published OpenAPI after the test (conftest.openapi_check)."""

from .conftest import DB

RECOMMENDATIONS = f"{DB}/schema-recommendations"
PG_RECOMMENDATIONS = "/v1/organizations/acme/databases/pgapp/schema-recommendations"
SCHEDULES = f"{DB}/maintenance-schedules"


def ok(response, status=200):
    assert response.status_code == status, response.text
    return response.json()


def error_of(response, status=422):
    assert response.status_code == status, response.text
    return response.json()["message"]


def ddl(api, *statements):
    ok(api.delete(f"{DB}/branches/main/safe-migrations"))  # production takes direct DDL without them
    ok(api.control("POST", "/branches/acme/app/main/ddl", json={"statements": list(statements)}))


def numbers(page):
    return [item["number"] for item in page["data"]]


def test_the_seeded_recommendations_are_listed_and_filtered_by_state(api):
    assert api.world["schema_recommendations"] == {"app": {"open": [1], "applied": [2]}, "pgapp": {"open": [1]}}
    listed = ok(api.get(RECOMMENDATIONS))
    assert numbers(listed) == [1, 2] and listed["total_count"] == 2
    first = listed["data"][0]
    assert (first["state"], first["recommendation_type"], first["table_name"], first["keyspace"]) == (
        "open", "new_index", "users", "app")
    assert first["dismissed_by"] is None and first["applied_at"] is None
    assert numbers(ok(api.get(RECOMMENDATIONS, params={"state": "open"}))) == [1]
    assert numbers(ok(api.get(RECOMMENDATIONS, params={"state": "closed"}))) == [2]
    assert numbers(ok(api.get(PG_RECOMMENDATIONS))) == [1]
    assert ok(api.get(f"{RECOMMENDATIONS}/2"))["state"] == "applied"
    assert error_of(api.get(RECOMMENDATIONS, params={"state": "dismissed"}))


def test_pages_of_recommendations(api):
    for n in range(3):
        ok(api.control("POST", "/schema-recommendations/acme/app", json={"table_name": f"t{n}"}))
    first = ok(api.get(RECOMMENDATIONS, params={"per_page": 2}))
    second = ok(api.get(RECOMMENDATIONS, params={"per_page": 2, "page": 2}))
    third = ok(api.get(RECOMMENDATIONS, params={"per_page": 2, "page": 3}))
    assert (numbers(first), numbers(second), numbers(third)) == ([1, 2], [3, 4], [5])
    assert first["next_page"] == 2 and third["next_page"] is None


def test_a_dismissal_is_recorded_with_its_reason_and_the_caller(api):
    dismissed = ok(api.post(f"{RECOMMENDATIONS}/1/dismiss", json={"reason": "We query by id only"}))
    assert dismissed["state"] == "dismissed" and dismissed["dismissed_at"]
    assert dismissed["dismissed_by"]["id"] == api.world["user"]["id"]
    assert ok(api.get(f"{RECOMMENDATIONS}/1")) == dismissed
    assert ok(api.control("GET", "/schema-recommendations/acme/app/1/dismissal")) == {
        "reason": "We query by id only", "user": api.world["user"]["id"]}
    assert numbers(ok(api.get(RECOMMENDATIONS, params={"state": "closed"}))) == [1, 2]


def test_a_dismissal_without_a_body_is_one(api):
    assert ok(api.post(f"{RECOMMENDATIONS}/1/dismiss"))["state"] == "dismissed"
    assert ok(api.control("GET", "/schema-recommendations/acme/app/1/dismissal"))["reason"] is None


def test_what_is_not_open_cannot_be_dismissed(api):
    assert "is applied" in error_of(api.post(f"{RECOMMENDATIONS}/2/dismiss", json={}))
    ok(api.post(f"{RECOMMENDATIONS}/1/dismiss", json={}))
    assert "is dismissed" in error_of(api.post(f"{RECOMMENDATIONS}/1/dismiss", json={}))


def test_a_reason_over_500_characters_is_refused_and_nothing_changes(api):
    assert "500" in error_of(api.post(f"{RECOMMENDATIONS}/1/dismiss", json={"reason": "x" * 501}))
    assert ok(api.get(f"{RECOMMENDATIONS}/1"))["state"] == "open"
    assert ok(api.post(f"{RECOMMENDATIONS}/1/dismiss", json={"reason": "x" * 500}))["state"] == "dismissed"


def test_missing_recommendations_and_databases_are_404(api):
    assert error_of(api.get(f"{RECOMMENDATIONS}/99"), 404)
    assert error_of(api.post(f"{RECOMMENDATIONS}/99/dismiss", json={}), 404)
    assert error_of(api.get("/v1/organizations/acme/databases/nope/schema-recommendations"), 404)


def test_a_redundant_index_on_the_server_is_recommended_and_dropping_it_applies_it(api):
    """Derived from MariaDB's catalogs: index_users_on_created_at leads index_users_on_created_at_email."""
    ddl(api, "CREATE INDEX index_users_on_created_at ON users (created_at)",
        "CREATE INDEX index_users_on_created_at_email ON users (created_at, email)")
    found = ok(api.get(RECOMMENDATIONS, params={"state": "open"}))["data"]
    derived = [r for r in found if r["recommendation_type"] == "duplicate_index"]
    assert [(r["number"], r["table_name"], r["ddl_statement"]) for r in derived] == [
        (3, "users", "ALTER TABLE `users` DROP INDEX `index_users_on_created_at`")]
    assert numbers(ok(api.get(RECOMMENDATIONS))) == [1, 2, 3]  # found once, not at every read
    ddl(api, "DROP INDEX index_users_on_created_at ON users")
    applied = ok(api.get(f"{RECOMMENDATIONS}/3"))
    assert applied["state"] == "applied" and applied["applied_at"]


def test_the_control_api_adds_a_recommendation(api):
    added = ok(api.control("POST", "/schema-recommendations/acme/app", json={
        "recommendation_type": "unused_index", "table_name": "users", "state": "stale",
        "ddl_statement": "ALTER TABLE `users` DROP INDEX `index_users_on_email`"}))
    assert added["number"] == 3 and added["state"] == "stale"
    assert ok(api.get(f"{RECOMMENDATIONS}/3"))["ddl_statement"].endswith("`index_users_on_email`")
    assert api.control("POST", "/schema-recommendations/acme/nope", json={}).status_code == 404


def test_the_schedules_of_a_database_and_their_windows(api):
    weekly, upgrade = api.world["maintenance_schedules"]["app"]
    listed = ok(api.get(SCHEDULES))["data"]
    assert [s["id"] for s in listed] == [weekly, upgrade]
    first = ok(api.get(f"{SCHEDULES}/{weekly}"))
    assert (first["frequency_unit"], first["day"], first["hour"], first["duration"], first["required"]) == (
        "week", 0, 3, 4, False)
    assert first["last_window_datetime"] < first["next_window_datetime"]
    windows = ok(api.get(f"{SCHEDULES}/{weekly}/windows"))["data"]
    assert len(windows) == 3 and all(w["started_at"] for w in windows)
    assert [w["started_at"] for w in windows] == sorted((w["started_at"] for w in windows), reverse=True)
    required = ok(api.get(f"{SCHEDULES}/{upgrade}"))
    assert required["required"] and required["pending_vitess_version"] == "v22.0.1" and required["deadline_at"]
    assert ok(api.get(f"{SCHEDULES}/{upgrade}/windows"))["data"] == []


def test_a_one_time_window_runs_on_the_clock(api):
    upgrade = api.world["maintenance_schedules"]["app"][1]
    api.advance(7 * 86400 + 3600)  # an hour into the window
    (window,) = ok(api.get(f"{SCHEDULES}/{upgrade}/windows"))["data"]
    assert window["started_at"] and window["finished_at"] is None
    api.advance(4 * 3600)
    (window,) = ok(api.get(f"{SCHEDULES}/{upgrade}/windows"))["data"]
    assert window["finished_at"]


def test_every_database_has_a_weekly_schedule_and_missing_ones_are_404(api):
    (pg,) = ok(api.get("/v1/organizations/acme/databases/pgapp/maintenance-schedules"))["data"]
    assert pg["name"] == "Weekly maintenance" and pg["enabled"]
    assert error_of(api.get(f"{SCHEDULES}/nope"), 404)
    assert error_of(api.get(f"{SCHEDULES}/nope/windows"), 404)
    added = ok(api.control("POST", "/maintenance-schedules/acme/app", json={"name": "Daily", "frequency_unit": "day"}))
    assert added["frequency_unit"] == "day" and len(ok(api.get(SCHEDULES))["data"]) == 3
