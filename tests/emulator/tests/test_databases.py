"""Databases: the list (pages, q), create (pending until ready_delay), settings (PATCH), rename, delete
(deletion protection, and the deletion requests of an organization that requires several administrators),
cluster sizes, and the seeded databases fixture.

Every answer is validated against the published OpenAPI after the test (conftest.openapi_check)."""

import pytest

from .conftest import DB

DATABASES = "/v1/organizations/acme/databases"
SKUS = "/v1/organizations/acme/cluster-size-skus"


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


def create(api, name="shop", **body):
    return ok(api.post(DATABASES, json={"name": name, "cluster_size": "PS_10", **body}), 201)


# ---------------------------------------------------------------- list and get


def test_the_list_has_the_seeded_database_and_filters_by_name(api):
    page = ok(api.get(DATABASES))
    assert [db["name"] for db in page["data"]] == ["app", "pgapp"] and page["total_count"] == 2
    create(api, "shop")
    assert [db["name"] for db in ok(api.get(DATABASES, params={"q": "sho"}))["data"]] == ["shop"]
    assert ok(api.get(DATABASES, params={"q": "nothing"}))["data"] == []


def test_seeded_databases_fill_several_pages_each_with_branches(api):
    created = ok(api.control("POST", "/seed", json={"databases": {"count": 120, "prefix": "db", "branches": 3}}))
    assert created["databases"][:2] == ["db-1", "db-2"] and len(created["databases"]) == 120
    first = ok(api.get(DATABASES, params={"per_page": 100}))
    assert (first["total_count"], first["total_pages"], first["next_page"]) == (122, 2, 2)
    second = ok(api.get(DATABASES, params={"per_page": 100, "page": 2}))
    names = [db["name"] for db in first["data"] + second["data"]]
    assert len(set(names)) == 122 and second["next_page"] is None
    seeded = [db for db in first["data"] + second["data"] if db["name"].startswith("db-")]
    assert all(db["ready"] and db["branches_count"] == 3 and db["production_branches_count"] == 1 for db in seeded)
    assert {db["kind"] for db in seeded} == {"mysql", "postgresql"} and len({db["region"]["slug"] for db in seeded}) > 1
    branches = ok(api.get(f"{DATABASES}/db-7/branches"))["data"]
    assert sorted(b["name"] for b in branches) == ["dev-1", "dev-2", "main"] and all(b["ready"] for b in branches)


# ---------------------------------------------------------------- create


def test_a_new_database_is_pending_until_ready_delay(api):
    settings(api, ready_delay=60)  # real time passes too: making the branch's schema on the data plane takes some
    db = create(api, "shop", region="eu-west", replicas=2)
    assert (db["state"], db["ready"], db["kind"], db["region"]["slug"]) == ("pending", False, "mysql", "eu-west")
    assert db["default_branch"] == "main" and db["deletion_protected"] is False
    assert db["deletion_request"] is None and db["multiple_admins_required_for_deletion"] is False
    main = ok(api.get(f"{DATABASES}/shop/branches/main"))
    assert (main["production"], main["cluster_name"], main["has_replicas"], main["ready"]) == (True, "PS_10", True,
                                                                                               False)
    api.advance(50)
    assert ok(api.get(f"{DATABASES}/shop"))["state"] == "pending"
    api.advance(10)
    ready = ok(api.get(f"{DATABASES}/shop"))
    assert (ready["state"], ready["ready"], ready["branches_count"]) == ("ready", True, 1)
    assert ok(api.get(f"{DATABASES}/shop/branches/main"))["ready"] is True
    policies = ok(api.get(f"{DATABASES}/shop/backup-policies"))["data"]
    assert [(p["name"], p["required"]) for p in policies] == [("default", True)]


def test_a_postgresql_database_in_the_default_region(api):
    db = create(api, "pg", kind="postgresql", cluster_size="PS_5_AWS_X86", major_version="17", replicas=0)
    assert (db["kind"], db["region"]["slug"]) == ("postgresql", "us-east")
    assert ok(api.get(f"{DATABASES}/pg/branches/main"))["has_replicas"] is False


@pytest.mark.parametrize(
    ("body", "code", "needle"),
    [
        ({"cluster_size": "PS_10"}, "invalid_params", "name"),
        ({"name": "shop"}, "invalid_params", "cluster_size"),
        ({"name": "Shop!", "cluster_size": "PS_10"}, "invalid_params", "name"),
        ({"name": "shop", "cluster_size": "PS_10", "kind": "oracle"}, "invalid_params", "kind"),
        ({"name": "shop", "cluster_size": "PS_10", "replicas": 1}, "invalid_params", "replicas"),
        ({"name": "shop", "cluster_size": "PS_10", "replicas": "2"}, "invalid_params", "replicas"),
        ({"name": "shop", "cluster_size": "PS_10", "major_version": "17"}, "invalid_params", "major_version"),
        ({"name": "app", "cluster_size": "PS_10"}, "unprocessable", "taken"),
        ({"name": "shop", "cluster_size": "huge"}, "unprocessable", "PS_10"),
        ({"name": "shop", "cluster_size": "PS_640"}, "unprocessable", "PS_640"),
        ({"name": "shop", "cluster_size": "PS_5_AWS_X86"}, "unprocessable", "mysql"),
        ({"name": "shop", "cluster_size": "PS_10", "region": "mars-1"}, "unprocessable", "mars-1"),
        ({"name": "shop", "cluster_size": "PS_10", "region": "gcp-us-central1"}, "unprocessable", "gcp-us-central1"),
    ],
)
def test_create_errors(api, body, code, needle):
    assert needle in error_of(api.post(DATABASES, json=body), 422, code)
    assert [db["name"] for db in ok(api.get(DATABASES))["data"]] == ["app", "pgapp"]


# ---------------------------------------------------------------- cluster sizes


def test_cluster_sizes_per_engine_with_and_without_rates(api):
    mysql = ok(api.get(SKUS))
    names = [sku["name"] for sku in mysql]
    assert "PS_10" in names and "PS_5_AWS_X86" not in names
    assert next(sku for sku in mysql if sku["name"] == "PS_640")["enabled"] is False
    assert all(sku["rate"] is None and sku["default_vtgate_rate"] is None for sku in mysql)
    priced = ok(api.get(SKUS, params={"engine": "postgresql", "rates": "true", "region": "eu-west",
                                      "database": "app"}))
    assert "PS_5_AWS_X86" in [sku["name"] for sku in priced] and all(sku["rate"] is not None for sku in priced)


def test_cluster_size_errors(api):
    error_of(api.get(SKUS, params={"engine": "oracle"}), 422, "invalid_params")
    assert "mars-1" in error_of(api.get(SKUS, params={"region": "mars-1"}), 422, "invalid_params")
    error_of(api.get(SKUS, params={"database": "ghost"}), 404, "not_found")


# ---------------------------------------------------------------- settings


def test_settings_change_in_one_patch(api):
    body = {"require_approval_for_deploy": True, "restrict_branch_region": True, "allow_data_branching": False,
            "allow_foreign_key_constraints": True, "insights_raw_queries": True, "deletion_protected": True,
            "production_branch_web_console": True, "automatic_migrations": True, "migration_framework": "rails",
            "migration_table_name": "schema_migrations"}
    db = ok(api.patch(DB, json=body))
    expected = {**body, "foreign_keys_enabled": True}
    del expected["allow_foreign_key_constraints"]
    assert {key: db[key] for key in expected} == expected
    assert ok(api.get(DB))["foreign_keys_enabled"] is True
    assert ok(api.patch(DB, json={}))["require_approval_for_deploy"] is True


def test_the_default_branch_must_exist(api):
    assert "ghost" in error_of(api.patch(DB, json={"default_branch": "ghost"}), 422)
    ok(api.post(f"{DB}/branches", json={"name": "dev", "parent_branch": "main"}), 201)
    assert ok(api.patch(DB, json={"default_branch": "dev"}))["default_branch"] == "dev"


def test_automatic_migrations_need_a_framework(api):
    assert "migration_framework" in error_of(api.patch(DB, json={"automatic_migrations": True}), 422)
    assert ok(api.patch(DB, json={"automatic_migrations": False}))["automatic_migrations"] is False


def test_vitess_settings_are_refused_on_postgresql(api):
    create(api, "pg", kind="postgresql", cluster_size="PS_5_AWS_X86")
    message = error_of(api.patch(f"{DATABASES}/pg", json={"allow_data_branching": True}), 422)
    assert "allow_data_branching" in message and "PostgreSQL" in message
    assert ok(api.patch(f"{DATABASES}/pg", json={"insights_raw_queries": True}))["insights_raw_queries"] is True


def test_setting_errors(api):
    error_of(api.patch(DB, json={"deletion_protected": "yes"}), 422, "invalid_params")
    error_of(api.patch(DB, json={"new_name": "Bad Name"}), 422, "invalid_params")
    error_of(api.patch(f"{DATABASES}/ghost", json={}), 404, "not_found")


def test_rename_moves_the_database_its_branches_and_team_references(api):
    renamed = ok(api.patch(DB, json={"new_name": "store"}))
    assert renamed["name"] == "store" and renamed["url"].endswith("/databases/store")
    assert renamed["branches_url"].endswith("/databases/store/branches")
    error_of(api.get(DB), 404, "not_found")
    main = ok(api.get(f"{DATABASES}/store/branches/main"))
    assert main["url"].endswith("/databases/store/branches/main")
    team = ok(api.get(f"/v1/organizations/acme/teams/{api.world['teams']['regular']}"))
    assert [db["name"] for db in team["databases"]] == ["store"]
    create(api, "shop")
    assert "taken" in error_of(api.patch(f"{DATABASES}/store", json={"new_name": "shop"}), 422)


# ---------------------------------------------------------------- delete


def test_delete_answers_204_and_the_database_is_gone(api):
    create(api, "shop")
    response = api.delete(f"{DATABASES}/shop")
    assert response.status_code == 204 and response.content == b""
    error_of(api.get(f"{DATABASES}/shop"), 404, "not_found")
    error_of(api.delete(f"{DATABASES}/shop"), 404, "not_found")


def test_a_protected_database_cannot_be_deleted_until_unprotected(api):
    ok(api.patch(DB, json={"deletion_protected": True}))
    assert "deletion protected" in error_of(api.delete(DB), 422)
    assert ok(api.get(DB))["name"] == "app"
    ok(api.patch(DB, json={"deletion_protected": False}))
    assert api.delete(DB).status_code == 204
    team = ok(api.get(f"/v1/organizations/acme/teams/{api.world['teams']['regular']}"))
    assert team["databases"] == []


def test_several_administrators_a_delete_opens_a_deletion_request(api):
    settings(api, multiple_admins_required_for_deletion=True)
    assert ok(api.get(DB))["multiple_admins_required_for_deletion"] is True
    request = ok(api.delete(DB), 202)
    assert request["state"] == "pending" and request["database"]["name"] == "app"
    assert request["actor"]["id"] == api.world["user"]["id"] and request["approvals_required"] == 2
    db = ok(api.get(DB))
    assert db["deletion_request"]["id"] == request["id"]
    again = ok(api.delete(DB), 202)
    assert again["id"] == request["id"] and again["created_at"] == request["created_at"]
    assert ok(api.control("POST", "/databases/acme/app/deletion-approval")) == {"deleted": "app"}
    error_of(api.get(DB), 404, "not_found")


def test_approval_needs_a_pending_request_and_protection_wins(api):
    assert "no pending deletion request" in error_of(api.control("POST", "/databases/acme/app/deletion-approval"), 422)
    settings(api, multiple_admins_required_for_deletion=True)
    ok(api.patch(DB, json={"deletion_protected": True}))
    assert "deletion protected" in error_of(api.delete(DB), 422)
    assert ok(api.get(DB))["deletion_request"] is None
    error_of(api.control("POST", "/databases/acme/ghost/deletion-approval"), 404, "not_found")


def test_records_carry_their_type_with_type_keys(api):
    settings(api, type_keys=True, multiple_admins_required_for_deletion=True)
    assert ok(api.get(DB))["type"] == "Database"
    assert ok(api.delete(DB), 202)["type"] == "DatabaseDeletionRequest"
