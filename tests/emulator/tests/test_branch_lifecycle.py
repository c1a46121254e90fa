"""Branch lifecycle and schema: PATCH (rename, deletion protection), promote and demote, safe migrations,
the schema of a branch (inherited from its parent) and its lint, and DDL through the control API.

Every answer is validated against the published OpenAPI after the test (conftest.openapi_check)."""

import pytest

from .conftest import DB, MAIN

KEYLESS = "CREATE TABLE `events` (`name` varchar(64), `at` datetime)"


def error_of(response, status, code="unprocessable"):
    assert response.status_code == status, response.text
    body = response.json()
    assert body["code"] == code and body["message"], body
    return body["message"]


def ddl(api, branch, *statements, status=200):
    response = api.control("POST", f"/branches/acme/app/{branch}/ddl", json={"statements": list(statements)})
    assert response.status_code == status, response.text
    return response.json()


def new_branch(api, name, parent="main", ready=True):
    response = api.post(f"{DB}/branches", json={"name": name, "parent_branch": parent})
    assert response.status_code == 201, response.text
    if ready:
        api.advance(api.control("GET", "/settings").json()["ready_delay"])
    return response.json()


def tables(api, branch):
    response = api.get(f"{DB}/branches/{branch}/schema")
    assert response.status_code == 200, response.text
    return {table["name"]: table["raw"] for table in response.json()["data"]}


# ---------------------------------------------------------------- PATCH: rename and deletion protection


def test_rename_moves_the_branch_and_its_urls(api):
    new_branch(api, "feature")
    renamed = api.patch(f"{DB}/branches/feature", json={"new_name": "feature-2"})
    assert renamed.status_code == 200, renamed.text
    body = renamed.json()
    assert body["name"] == "feature-2" and body["url"].endswith("/branches/feature-2")
    assert api.get(f"{DB}/branches/feature").status_code == 404
    assert api.get(f"{DB}/branches/feature-2").json()["id"] == body["id"]


def test_rename_to_a_taken_or_invalid_name_is_refused(api):
    new_branch(api, "feature")
    assert "already been taken" in error_of(api.patch(f"{DB}/branches/feature", json={"new_name": "main"}), 422)
    error_of(api.patch(f"{DB}/branches/feature", json={"new_name": "Bad Name"}), 422, "invalid_params")
    error_of(api.patch(f"{DB}/branches/feature", json={"deletion_protected": "yes"}), 422, "invalid_params")


def test_a_protected_branch_cannot_be_deleted_until_unprotected(api):
    new_branch(api, "keep")
    protected = api.patch(f"{DB}/branches/keep", json={"deletion_protected": True})
    assert protected.status_code == 200 and protected.json()["deletion_protected"] is True
    assert "deletion protected" in error_of(api.delete(f"{DB}/branches/keep"), 422)
    assert api.get(f"{DB}/branches/keep").status_code == 200
    assert api.patch(f"{DB}/branches/keep", json={"deletion_protected": False}).json()["deletion_protected"] is False
    assert api.delete(f"{DB}/branches/keep").status_code == 204


def test_patch_of_an_unknown_branch_is_not_found(api):
    error_of(api.patch(f"{DB}/branches/nope", json={"deletion_protected": True}), 404, "not_found")


# ---------------------------------------------------------------- promote and demote


def test_promote_and_demote(api):
    new_branch(api, "staging")
    promoted = api.post(f"{DB}/branches/staging/promote")
    assert promoted.status_code == 200, promoted.text
    assert promoted.json()["production"] is True
    assert api.post(f"{DB}/branches/staging/promote").json()["production"] is True  # again: the same
    listed = api.get(f"{DB}/branches", params={"production": "true"}).json()["data"]
    assert {b["name"] for b in listed} == {"main", "staging"}
    demoted = api.post(f"{DB}/branches/staging/demote")
    assert demoted.status_code == 200 and demoted.json()["production"] is False
    assert demoted.json()["safe_migrations"] is False


def test_a_branch_that_is_not_ready_cannot_be_promoted(api):
    new_branch(api, "slow", ready=False)
    assert "not ready" in error_of(api.post(f"{DB}/branches/slow/promote"), 422)


def test_the_default_branch_cannot_be_demoted(api):
    assert "default branch" in error_of(api.post(f"{MAIN}/demote"), 422)
    assert api.get(MAIN).json()["production"] is True


def test_a_promoted_branch_cannot_be_deleted(api):
    new_branch(api, "staging")
    api.post(f"{DB}/branches/staging/promote")
    assert "production branch" in error_of(api.delete(f"{DB}/branches/staging"), 422)


# ---------------------------------------------------------------- safe migrations


def test_safe_migrations_on_off_with_post_put_delete(api):
    new_branch(api, "dev")
    assert api.get(f"{DB}/branches/dev").json()["safe_migrations"] is False
    enabled = api.post(f"{DB}/branches/dev/safe-migrations")
    assert enabled.status_code == 200 and enabled.json()["safe_migrations"] is True
    put = api.call("PUT", f"{DB}/branches/dev/safe-migrations", json={"safe_migrations": False})
    assert put.status_code == 200 and put.json()["safe_migrations"] is False
    api.call("PUT", f"{DB}/branches/dev/safe-migrations", json={"safe_migrations": True})
    disabled = api.delete(f"{DB}/branches/dev/safe-migrations")
    assert disabled.status_code == 200 and disabled.json()["safe_migrations"] is False
    error_of(api.call("PUT", f"{DB}/branches/dev/safe-migrations", json={}), 422, "invalid_params")


def test_safe_migrations_are_refused_while_the_schema_has_lint_errors(api):
    new_branch(api, "dev")
    ddl(api, "dev", KEYLESS)
    message = error_of(api.post(f"{DB}/branches/dev/safe-migrations"), 422)
    assert "`events`" in message and "NO_UNIQUE_KEY" in message and "https://" in message
    put = api.call("PUT", f"{DB}/branches/dev/safe-migrations", json={"safe_migrations": True})
    assert "NO_UNIQUE_KEY" in error_of(put, 422)
    assert api.get(f"{DB}/branches/dev").json()["safe_migrations"] is False


def test_direct_ddl_is_refused_on_a_branch_with_safe_migrations(api):
    message = ddl(api, "main", "CREATE TABLE t (id int PRIMARY KEY)", status=422)["message"]
    assert "safe migrations" in message
    assert "t" not in tables(api, "main")


# ---------------------------------------------------------------- schema, inheritance, lint


def test_the_seeded_production_schema(api):
    schema = tables(api, "main")
    assert list(schema) == ["users"]
    # as MariaDB's SHOW CREATE TABLE writes it
    assert schema["users"].startswith("CREATE TABLE `users` (\n  `id` bigint(20) unsigned NOT NULL AUTO_INCREMENT,")
    assert "PRIMARY KEY (`id`)" in schema["users"]
    body = api.get(f"{MAIN}/schema").json()["data"][0]
    assert body["html"].startswith("<pre") and "CREATE TABLE" in body["html"]


def test_a_new_branch_starts_with_its_parents_schema(api):
    new_branch(api, "dev")
    ddl(api, "dev", "CREATE TABLE `posts` (`id` bigint NOT NULL, PRIMARY KEY (`id`))")
    new_branch(api, "child", parent="dev")
    new_branch(api, "sibling")
    assert tables(api, "child") == tables(api, "dev")
    assert set(tables(api, "child")) == {"posts", "users"}
    assert set(tables(api, "sibling")) == {"users"}  # branched from main: without posts
    ddl(api, "child", "DROP TABLE posts")
    assert "posts" in tables(api, "dev")  # a copy, not shared


def test_schema_by_keyspace(api):
    assert api.get(f"{MAIN}/schema", params={"keyspace": "app"}).json()["data"][0]["name"] == "users"
    error_of(api.get(f"{MAIN}/schema", params={"keyspace": "nope"}), 404, "not_found")


def test_lint_lists_tables_without_a_unique_key_page_by_page(api):
    new_branch(api, "dev")
    assert api.get(f"{DB}/branches/dev/schema/lint").json()["data"] == []
    ddl(api, "dev", KEYLESS, "CREATE TABLE `logs` (`line` text)",
        "CREATE TABLE `ok` (`id` int NOT NULL, UNIQUE KEY (`id`))",
        "CREATE TABLE `nullable` (`id` int, UNIQUE KEY (`id`))")  # a unique key over a nullable column is none
    first = api.get(f"{DB}/branches/dev/schema/lint", params={"per_page": 1}).json()
    assert first["next_page"] == 2 and len(first["data"]) == 1
    every = api.get(f"{DB}/branches/dev/schema/lint").json()["data"]
    assert [(e["table_name"], e["lint_error"], e["subject_type"]) for e in every] == [
        ("events", "NO_UNIQUE_KEY", "table"), ("logs", "NO_UNIQUE_KEY", "table"),
        ("nullable", "NO_UNIQUE_KEY", "table")]
    assert all(e["keyspace_name"] == "app" and e["docs_url"].startswith("https://") and e["error_description"]
               for e in every)


# ---------------------------------------------------------------- DDL


def test_ddl_creates_alters_and_drops_tables(api):
    new_branch(api, "dev")
    answer = ddl(api, "dev",
                 "CREATE TABLE IF NOT EXISTS posts (id bigint unsigned NOT NULL AUTO_INCREMENT PRIMARY KEY, "
                 "title varchar(255) NOT NULL DEFAULT '', body TEXT, KEY idx_title (title));",
                 "ALTER TABLE posts ADD COLUMN slug varchar(64) AFTER title, DROP COLUMN body",
                 "ALTER TABLE `users` ADD UNIQUE KEY `by_created` (`created_at`, `id`)",
                 "CREATE INDEX idx_slug ON posts (slug)")
    assert answer == {"branch": "dev", "tables": ["posts", "users"], "lint_errors": 0}
    posts = tables(api, "dev")["posts"]
    assert posts == ("CREATE TABLE `posts` (\n"  # as MariaDB's SHOW CREATE TABLE writes it
                     "  `id` bigint(20) unsigned NOT NULL AUTO_INCREMENT,\n"
                     "  `title` varchar(255) NOT NULL DEFAULT '',\n"
                     "  `slug` varchar(64) DEFAULT NULL,\n"
                     "  PRIMARY KEY (`id`),\n"
                     "  KEY `idx_title` (`title`),\n"
                     "  KEY `idx_slug` (`slug`)\n"
                     ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci")
    ddl(api, "dev", "DROP TABLE posts")
    assert list(tables(api, "dev")) == ["users"]


@pytest.mark.parametrize("statement, says", [  # the server's (MariaDB's) messages
    ("CREATE TABLE broken (id)", "error in your SQL syntax"),
    ("CREATE TABLE broken (id integer NOT NULL", "error in your SQL syntax"),
    ("CREATE TABLE broken (id wibble)", "Unknown data type"),
    ("CREATE TABLE users (id int)", "already exists"),
    ("ALTER TABLE nope ADD COLUMN a int", "doesn't exist"),
    ("ALTER TABLE users ADD COLUMN email text", "Duplicate column"),
    ("ALTER TABLE users DROP COLUMN nope", "Can't DROP"),
    ("ALTER TABLE users FROBNICATE", "error in your SQL syntax"),
    ("DROP TABLE nope", "Unknown table"),
    ("CREATE TABLE t (id int, PRIMARY KEY (nope))", "doesn't exist in table"),
    ("", "Query was empty"),
])
def test_ddl_the_server_refuses_is_422_and_stops_the_batch(api, statement, says):
    new_branch(api, "dev")
    before = tables(api, "dev")
    body = ddl(api, "dev", "CREATE TABLE fine (id int PRIMARY KEY)", statement,
               "CREATE TABLE later (id int PRIMARY KEY)", status=422)
    assert body["code"] == "unprocessable"
    assert says in body["message"] and "statement 2" in body["message"]
    # as on a connection: the statement before the refused one ran, none after it
    assert sorted(tables(api, "dev")) == sorted([*before, "fine"])


def test_ddl_needs_statements_and_a_known_branch(api):
    assert api.control("POST", "/branches/acme/app/dev/ddl", json={"statements": []}).status_code == 422
    assert api.control("POST", "/branches/acme/app/nope/ddl", json={"statements": ["DROP TABLE x"]}).status_code == 404
    assert api.control("POST", "/branches/nope/app/main/ddl", json={"statements": ["DROP TABLE x"]}).status_code == 404


def test_ddl_is_not_in_the_request_log(api):
    new_branch(api, "dev")
    api.control("DELETE", "/requests")
    ddl(api, "dev", "DROP TABLE users")
    assert api.control("GET", "/requests").json() == []
