"""Backups (pending -> running -> success on the emulator clock, or failed/canceled through backup_fail_state;
protected through PATCH; delete), the list filters, backup policies (the required one cannot be deleted), and
restores (a new branch from backup_id or seed_data).

Every answer is validated against the published OpenAPI after the test (conftest.openapi_check)."""

import pytest

from .conftest import DB, MAIN

BACKUPS = f"{MAIN}/backups"
POLICIES = f"{DB}/backup-policies"
ADD_TABLE = "CREATE TABLE `posts` (`id` bigint NOT NULL AUTO_INCREMENT, PRIMARY KEY (`id`))"


def error_of(response, status, code="unprocessable"):
    assert response.status_code == status, response.text
    body = response.json()
    assert body["code"] == code and body["message"], body
    return body["message"]


def ok(response, status=200):
    assert response.status_code == status, response.text
    return response.json()


def settings(api, **values):
    return ok(api.control("POST", "/settings", json=values))


def backup(api, path=BACKUPS, **body):
    return ok(api.post(path, json=body), 201)


def state_of(api, backup_id, path=BACKUPS):
    return ok(api.get(f"{path}/{backup_id}"))["state"]


def new_branch(api, name, **body):
    ok(api.post(f"{DB}/branches", json={"name": name, "parent_branch": "main", **body}), 201)
    api.advance(settings(api)["ready_delay"])


# ---------------------------------------------------------------- the state machine


def test_a_backup_goes_pending_running_success_on_the_clock(api):
    settings(api, backup_step_delay=10)
    created = backup(api, name="nightly", retention_unit="day", retention_value=3)
    assert (created["state"], created["name"], created["protected"], created["required"]) == ("pending", "nightly",
                                                                                              False, False)
    assert created["started_at"] is None and created["expires_at"] is not None and created["backup_policy"] is None
    assert created["database_branch"]["name"] == "main" and created["actor"]["id"] == api.world["user"]["id"]
    api.advance(9)
    assert state_of(api, created["id"]) == "pending"
    api.advance(1)
    running = ok(api.get(f"{BACKUPS}/{created['id']}"))
    assert running["state"] == "running" and running["started_at"] and running["completed_at"] is None
    api.advance(10)
    done = ok(api.get(f"{BACKUPS}/{created['id']}"))
    assert done["state"] == "success" and done["completed_at"] and done["size"] > 0


@pytest.mark.parametrize("end", ["failed", "canceled"])
def test_backup_fail_state_ends_backups_created_while_set(api, end):
    settings(api, backup_fail_state=end)
    failing = backup(api)["id"]
    settings(api, backup_fail_state=None)
    fine = backup(api)["id"]
    api.advance(1)
    assert state_of(api, failing) == "running"
    api.advance(1)
    assert (state_of(api, failing), state_of(api, fine)) == (end, "success")


def test_a_backup_without_a_name_or_retention(api):
    created = backup(api)
    assert created["name"].startswith("main-") and created["expires_at"] is None


@pytest.mark.parametrize(
    ("body", "code", "needle"),
    [
        ({"emergency": True}, "unprocessable", "PostgreSQL"),
        ({"retention_unit": "day"}, "invalid_params", "retention_value"),
        ({"retention_unit": "day", "retention_value": 0}, "invalid_params", "retention_value"),
        ({"retention_unit": "day", "retention_value": 1001}, "invalid_params", "retention_value"),
        ({"retention_unit": "fortnight", "retention_value": 1}, "invalid_params", "retention_unit"),
        ({"name": ""}, "invalid_params", "name"),
    ],
)
def test_create_errors(api, body, code, needle):
    assert needle in error_of(api.post(BACKUPS, json=body), 422, code)


def test_a_branch_that_is_not_ready_is_not_backed_up(api):
    settings(api, ready_delay=30)
    ok(api.post(f"{DB}/branches", json={"name": "dev", "parent_branch": "main"}), 201)
    assert "not ready" in error_of(api.post(f"{DB}/branches/dev/backups", json={}), 422)
    error_of(api.post(f"{DB}/branches/ghost/backups", json={}), 404, "not_found")


# ---------------------------------------------------------------- protected, delete


def test_protected_is_set_through_patch_and_blocks_delete(api):
    created = backup(api)
    protected = ok(api.patch(f"{BACKUPS}/{created['id']}", json={"protected": True, "name": "ignored"}))
    assert protected["protected"] is True and protected["name"] == created["name"]
    assert "protected" in error_of(api.delete(f"{BACKUPS}/{created['id']}"), 422)
    assert ok(api.patch(f"{BACKUPS}/{created['id']}", json={}))["protected"] is True
    ok(api.patch(f"{BACKUPS}/{created['id']}", json={"protected": False}))
    response = api.delete(f"{BACKUPS}/{created['id']}")
    assert response.status_code == 204 and response.content == b""
    error_of(api.get(f"{BACKUPS}/{created['id']}"), 404, "not_found")
    error_of(api.delete(f"{BACKUPS}/{created['id']}"), 404, "not_found")
    error_of(api.patch(f"{BACKUPS}/{created['id']}", json={"protected": True}), 404, "not_found")
    listed = ok(api.get(BACKUPS, params={"all": "true"}))["data"]
    assert next(b for b in listed if b["id"] == created["id"])["deleted_at"] is not None
    assert created["id"] not in [b["id"] for b in ok(api.get(BACKUPS))["data"]]
    error_of(api.patch(f"{BACKUPS}/{created['id']}x", json={"protected": "yes"}), 422, "invalid_params")


def test_a_backup_of_a_required_policy_cannot_be_deleted(api):
    seeded = api.world["backups"]["main"][0]
    assert ok(api.get(f"{BACKUPS}/{seeded}"))["required"] is True
    assert "required" in error_of(api.delete(f"{BACKUPS}/{seeded}"), 422)


# ---------------------------------------------------------------- the list


def test_the_list_is_newest_first_with_the_seeded_backups_of_the_required_policy(api):
    listed = ok(api.get(BACKUPS))["data"]
    assert [b["id"] for b in listed] == list(reversed(api.world["backups"]["main"]))
    assert all(b["state"] == "success" and b["backup_policy"]["required"] for b in listed)


def test_list_filters(api):
    seeded = api.world["backups"]["main"]
    before = ok(api.control("GET", "/clock"))["now"]
    manual = backup(api)["id"]
    ids = lambda **query: [b["id"] for b in ok(api.get(BACKUPS, params=query))["data"]]  # noqa: E731
    assert ids(state="pending") == [manual] and ids(state="failed") == []
    assert ids(policy=api.world["backups"]["policy"]) == list(reversed(seeded))
    assert ids(production="true")[-1] == seeded[0] and ids(production="false") == []
    assert ids(**{"from": before}) == [manual]
    assert ids(to=before) == list(reversed(seeded))
    now = ok(api.control("GET", "/clock"))["now"]
    assert ids(running_at=f"{now}..{now}") == []
    api.advance(1)
    later = ok(api.control("GET", "/clock"))["now"]
    assert ids(running_at=f"{later}..{later}") == [manual]
    assert "from" in error_of(api.get(BACKUPS, params={"from": "yesterday"}), 422, "invalid_params")
    assert "running_at" in error_of(api.get(BACKUPS, params={"running_at": now}), 422, "invalid_params")
    error_of(api.get(BACKUPS, params={"state": "done"}), 422, "invalid_params")


# ---------------------------------------------------------------- policies


def test_every_database_has_the_required_policy_and_it_cannot_be_deleted(api):
    policies = ok(api.get(POLICIES))["data"]
    assert [(p["name"], p["required"], p["frequency_value"], p["frequency_unit"]) for p in policies] == [
        ("default", True, 12, "hour")]
    required = policies[0]
    assert required["last_ran_at"] is not None and required["next_run_at"] > required["last_ran_at"]
    assert "cannot be deleted" in error_of(api.delete(f"{POLICIES}/{required['id']}"), 422)
    assert "renamed" in error_of(api.patch(f"{POLICIES}/{required['id']}", json={"name": "mine"}), 422)
    changed = ok(api.patch(f"{POLICIES}/{required['id']}", json={"retention_value": 3}))
    assert changed["retention_value"] == 3 and changed["required"] is True


def test_a_policy_is_created_read_updated_and_deleted(api):
    body = {"name": "weekly", "target": "development", "retention_value": 4, "retention_unit": "week",
            "frequency_value": 1, "frequency_unit": "week", "schedule_time": "03:30", "schedule_day": 0}
    created = ok(api.post(POLICIES, json=body), 201)
    assert {key: created[key] for key in body} == body
    assert created["required"] is False and created["last_ran_at"] is None and created["display_name"] == "weekly"
    assert created["next_run_at"].endswith("03:30:00.000Z")
    assert ok(api.get(f"{POLICIES}/{created['id']}")) == created
    updated = ok(api.patch(f"{POLICIES}/{created['id']}", json={"name": "weekly-2", "schedule_week": 1}))
    assert (updated["name"], updated["display_name"], updated["schedule_week"]) == ("weekly-2", "weekly-2", 1)
    assert len(ok(api.get(POLICIES))["data"]) == 2
    assert api.delete(f"{POLICIES}/{created['id']}").status_code == 204
    error_of(api.get(f"{POLICIES}/{created['id']}"), 404, "not_found")
    error_of(api.delete(f"{POLICIES}/{created['id']}"), 404, "not_found")


def test_monthly_and_daily_policies_get_their_next_run(api):
    monthly = ok(api.post(POLICIES, json={"name": "monthly", "retention_value": 1, "retention_unit": "year",
                                          "frequency_value": 1, "frequency_unit": "month", "schedule_week": 2,
                                          "schedule_day": 3}), 201)
    daily = ok(api.post(POLICIES, json={"name": "daily", "retention_value": 7, "retention_unit": "day",
                                        "frequency_value": 1, "frequency_unit": "day"}), 201)
    now = ok(api.control("GET", "/clock"))["now"]
    assert monthly["next_run_at"] > now and daily["next_run_at"] > now
    assert daily["schedule_time"] == "00:00" and daily["target"] == "production"


@pytest.mark.parametrize(
    ("body", "code", "needle"),
    [
        ({"name": "x"}, "invalid_params", "retention_value"),
        ({"name": "x", "retention_value": 1, "retention_unit": "day", "frequency_value": 1,
          "frequency_unit": "year"}, "invalid_params", "frequency_unit"),
        ({"name": "x", "retention_value": 1, "retention_unit": "day", "frequency_value": 1,
          "frequency_unit": "day", "schedule_time": "25:00"}, "invalid_params", "schedule_time"),
        ({"name": "x", "retention_value": 1, "retention_unit": "day", "frequency_value": 1,
          "frequency_unit": "week", "schedule_day": 7}, "invalid_params", "schedule_day"),
        ({"name": "default", "retention_value": 1, "retention_unit": "day", "frequency_value": 1,
          "frequency_unit": "day"}, "unprocessable", "taken"),
    ],
)
def test_policy_errors(api, body, code, needle):
    assert needle in error_of(api.post(POLICIES, json=body), 422, code)


def test_policy_of_another_database_is_not_found(api):
    error_of(api.get(f"{POLICIES}/nope"), 404, "not_found")
    error_of(api.patch(f"{POLICIES}/nope", json={}), 404, "not_found")
    error_of(api.get("/v1/organizations/acme/databases/ghost/backup-policies"), 404, "not_found")


# ---------------------------------------------------------------- restores


def test_a_restore_is_a_new_branch_with_the_schema_the_backup_holds(api):
    taken = backup(api, name="before-posts")["id"]
    api.advance(2)
    new_branch(api, "dev")
    ok(api.control("POST", "/branches/acme/app/dev/ddl", json={"statements": [ADD_TABLE]}))
    dev_backup = backup(api, f"{DB}/branches/dev/backups")["id"]
    api.advance(2)
    restored = ok(api.post(f"{DB}/branches", json={"name": "drill", "parent_branch": "main", "backup_id": taken,
                                                    "cluster_size": "PS_10"}), 201)
    assert restored["restored_from_branch"]["name"] == "main"
    from_dev = ok(api.post(f"{DB}/branches", json={"name": "drill-dev", "parent_branch": "main",
                                                    "backup_id": dev_backup, "cluster_size": "PS_10"}), 201)
    assert from_dev["restored_from_branch"]["name"] == "dev"
    tables = lambda branch: [t["name"] for t in ok(api.get(f"{DB}/branches/{branch}/schema"))["data"]]  # noqa: E731
    assert tables("drill") == ["users"] and tables("drill-dev") == ["posts", "users"]
    assert [b["name"] for b in ok(api.get(f"{BACKUPS}/{taken}"))["restored_branches"]] == ["drill"]


def test_only_a_successful_backup_of_the_database_is_restored(api):
    pending = backup(api)["id"]
    body = {"name": "drill", "parent_branch": "main", "cluster_size": "PS_10"}
    assert "pending" in error_of(api.post(f"{DB}/branches", json={**body, "backup_id": pending}), 422)
    assert "does not exist" in error_of(api.post(f"{DB}/branches", json={**body, "backup_id": "nope"}), 422)
    settings(api, backup_fail_state="failed")
    failed = backup(api)["id"]
    api.advance(2)
    assert "failed" in error_of(api.post(f"{DB}/branches", json={**body, "backup_id": failed}), 422)


def test_seed_data_restores_the_parents_newest_successful_backup(api):
    seeded = ok(api.post(f"{DB}/branches", json={"name": "seeded", "parent_branch": "main",
                                                  "seed_data": "last_successful_backup"}), 201)
    assert seeded["restored_from_branch"]["name"] == "main"
    newest = api.world["backups"]["main"][-1]
    assert [b["name"] for b in ok(api.get(f"{BACKUPS}/{newest}"))["restored_branches"]] == ["seeded"]
    new_branch(api, "dev")
    message = error_of(api.post(f"{DB}/branches", json={"name": "x", "parent_branch": "dev",
                                                         "seed_data": "last_successful_backup"}), 422)
    assert "no successful backup" in message


def test_backup_records_carry_their_type_with_type_keys(api):
    settings(api, type_keys=True)
    assert backup(api)["type"] == "Backup"
    assert ok(api.get(POLICIES))["data"][0]["type"] == "BackupPolicy"
