"""PostgreSQL databases: branches of kind postgresql (major_version, restore_point) and their roles (list, create,
get, default role, reset-default, rename, delete with a successor, reassign, renew, reset, expiry on the clock),
and logins with a role's secret (a real psycopg client, sslmode=verify-full against the world's CA).

Every answer is validated against the published OpenAPI after the test (conftest.openapi_check)."""

import psycopg
import pytest

DATABASES = "/v1/organizations/acme/databases"
PG = f"{DATABASES}/pgapp"
ROLES = f"{PG}/branches/main/roles"


def ok(response, status=200):
    assert response.status_code == status, response.text
    return response.json() if status != 204 else None


def error_of(response, status=422, code="unprocessable"):
    assert response.status_code == status, response.text
    body = response.json()
    assert body["code"] == code and body["message"], body
    return body["message"]


def create(api, **body):
    return ok(api.post(ROLES, json=body))


def login(api, role, password=None):
    """A real connection with the role's connection details (its host:port, sslmode=verify-full with the world's
    CA), as an application opens it."""
    host, port = role["access_host_url"].rsplit(":", 1)
    return psycopg.connect(host=host, port=int(port), user=role["username"], password=password or role["password"],
                           dbname=role.get("database_name") or "pgapp__main", sslmode="verify-full",
                           sslrootcert=api.world["ca_file"], connect_timeout=10, autocommit=True)


def logs_in(api, role, password=None):
    """True when the server lets the role in as itself, False when it refuses the login."""
    try:
        with login(api, role, password) as connection:
            return connection.execute("SELECT current_user").fetchone()[0] == role["username"]
    except psycopg.OperationalError:
        return False


def owner_of(api, role, table):
    with login(api, role) as connection:
        return connection.execute("SELECT tableowner FROM pg_tables WHERE tablename = %s", [table]).fetchone()[0]


# ---------------------------------------------------------------- the seeded database and its branches


def test_the_seeded_postgres_database_has_a_ready_main_branch_and_its_default_role(api):
    seeded = api.world["postgres"]
    assert seeded["database"] == "pgapp" and seeded["branch"] == "main"
    assert ok(api.get(PG))["kind"] == "postgresql"
    main = ok(api.get(f"{PG}/branches/main"))
    assert main["kind"] == "postgresql" and main["ready"] and main["major_version"] == "17"
    default = ok(api.get(f"{ROLES}/default"))
    assert default["default"] and default["id"] == seeded["default_role"]["id"] and default["password"] == ""
    assert default["username"] == seeded["default_role"]["username"]
    assert logs_in(api, seeded["default_role"])
    # the existing keys of the world stay what they were
    assert api.world["database"] == "app" and api.world["branch"] == "main"
    assert "major_version" not in ok(api.get(f"{DATABASES}/app/branches/main"))


def test_a_branch_of_a_postgres_database_is_postgresql_with_the_major_version_asked_or_its_parents(api):
    inherited = ok(api.post(f"{PG}/branches", json={"name": "dev", "parent_branch": "main"}), 201)
    assert inherited["kind"] == "postgresql" and inherited["major_version"] == "17"
    newer = ok(api.post(f"{PG}/branches", json={"name": "next", "parent_branch": "main", "major_version": "18"}),
               201)
    assert newer["major_version"] == "18"
    assert ok(api.post(f"{PG}/branches", json={"name": "child", "parent_branch": "next"}), 201)["major_version"] == "18"
    assert "9" in error_of(api.post(f"{PG}/branches", json={"name": "old", "parent_branch": "main",
                                                            "major_version": "9"}))
    message = error_of(api.post(f"{DATABASES}/app/branches", json={"name": "x", "parent_branch": "main",
                                                                   "major_version": "17"}))
    assert "PostgreSQL" in message
    created = ok(api.post(DATABASES, json={"name": "pg2", "cluster_size": "PS_10_AWS_X86", "kind": "postgresql",
                                           "major_version": "16"}), 201)
    assert created["kind"] == "postgresql"
    assert ok(api.get(f"{DATABASES}/pg2/branches/main"))["major_version"] == "16"
    assert "major_version" in error_of(api.post(DATABASES, json={"name": "pg3", "cluster_size": "PS_10_AWS_X86",
                                                                 "kind": "postgresql", "major_version": "8"}))
    assert "pg3" not in [db["name"] for db in ok(api.get(DATABASES))["data"]]


def test_restore_point_makes_a_branch_restored_from_its_parent_only_on_postgres(api):
    main = ok(api.get(f"{PG}/branches/main"))
    clock = ok(api.control("GET", "/clock"))["now"]
    restored = ok(api.post(f"{PG}/branches", json={"name": "pitr", "parent_branch": "main",
                                                   "restore_point": clock}), 201)
    assert restored["restored_from_branch"]["id"] == main["id"] and restored["kind"] == "postgresql"
    assert "future" in error_of(api.post(f"{PG}/branches", json={"name": "later", "parent_branch": "main",
                                                                 "restore_point": "2999-01-01T00:00:00Z"}))
    assert "before" in error_of(api.post(f"{PG}/branches", json={"name": "early", "parent_branch": "main",
                                                                 "restore_point": "2001-01-01T00:00:00Z"}))
    message = error_of(api.post(f"{DATABASES}/app/branches", json={"name": "pitr", "parent_branch": "main",
                                                                   "restore_point": clock}))
    assert "PostgreSQL" in message


# ---------------------------------------------------------------- roles


def test_create_answers_200_with_the_secret_once_and_the_role_opens_a_connection(api):
    role = create(api, name="app", ttl=3600, inherited_roles=["pg_read_all_data", "pg_write_all_data"])
    assert role["password"].startswith("pscale_pw_") and role["name"] == "app" and not role["default"]
    assert role["username"] == f"{role['base_username']}.{role['branch']['id']}" and role["ttl"] == 3600
    assert role["expires_at"] and role["expired"] is False and role["ready"] is True
    # the connection details lead to the data plane: the server (host:port) and the branch's database
    assert role["access_host_url"].startswith("127.0.0.1:") and role["database_name"] == "pgapp__main"
    assert role["inherited_roles"] == ["pg_read_all_data", "pg_write_all_data"]
    read = ok(api.get(f"{ROLES}/{role['id']}"))
    assert read["password"] == "" and read["name"] == "app"
    assert all(item["password"] == "" for item in ok(api.get(ROLES))["data"])
    assert logs_in(api, role)
    assert not logs_in(api, role, "wrong")
    plain = create(api)
    assert plain["name"] == plain["base_username"] and plain["ttl"] == 0 and plain["expires_at"] is None


@pytest.mark.parametrize("body, needle", [
    ({"inherited_roles": ["superuser"]}, "inherited_roles"),
    ({"ttl": -1}, "ttl"),
    ({"ttl": "60"}, "ttl"),
    ({"name": ""}, "name"),
    ({"require_where_on_delete": "always"}, "require_where_on_delete"),
    ({"require_where_on_delete": True}, "require_where_on_delete"),
    ({"require_where_on_update": False}, "require_where_on_update"),
])
def test_create_refuses_what_the_platform_does_not_have(api, body, needle):
    assert needle in error_of(api.post(ROLES, json=body), 422, "invalid_params")
    assert ok(api.get(ROLES))["total_count"] == 1  # the default role only


def test_roles_are_for_postgres_branches_only(api):
    message = error_of(api.get(f"{DATABASES}/app/branches/main/roles"))
    assert "MySQL" in message and "passwords" in message
    error_of(api.post(f"{DATABASES}/app/branches/main/roles", json={}))
    error_of(api.get(f"{PG}/branches/nope/roles"), 404, "not_found")
    error_of(api.get(f"{ROLES}/nope"), 404, "not_found")


def test_the_list_pages_searches_and_filters_by_status(api):
    for n in range(30):
        create(api, name=f"worker-{n}", ttl=60 if n % 2 else 0)
    first = ok(api.get(ROLES))
    assert (first["total_count"], first["next_page"], len(first["data"])) == (31, 2, 25)
    second = ok(api.get(ROLES, params={"page": 2}))
    assert len({r["id"] for r in first["data"] + second["data"]}) == 31 and second["next_page"] is None
    assert [r["name"] for r in ok(api.get(ROLES, params={"q": "worker-29"}))["data"]] == ["worker-29"]
    api.advance(61)
    expired = ok(api.get(ROLES, params={"status": "expired", "per_page": 100}))["data"]
    assert len(expired) == 15 and all(r["expired"] for r in expired)
    assert ok(api.get(ROLES, params={"status": "active"}))["total_count"] == 16
    error_of(api.get(ROLES, params={"status": "sleeping"}), 422, "invalid_params")


def test_expiry_follows_the_clock_and_renew_extends_it_keeping_the_secret(api):
    role = create(api, name="temp", ttl=100)
    api.advance(101)
    assert ok(api.get(f"{ROLES}/{role['id']}"))["expired"] is True
    assert not logs_in(api, role)
    renewed = ok(api.post(f"{ROLES}/{role['id']}/renew"))
    assert renewed["expired"] is False and renewed["expires_at"] > role["expires_at"]
    assert renewed["password"] == role["password"]
    assert logs_in(api, role)
    forever = create(api, name="forever")
    assert "ttl" in error_of(api.post(f"{ROLES}/{forever['id']}/renew"))


def test_reset_gives_a_new_secret_and_the_old_one_stops_working(api):
    role = create(api, name="app")
    reset = ok(api.post(f"{ROLES}/{role['id']}/reset"))
    assert reset["password"] and reset["password"] != role["password"] and reset["id"] == role["id"]
    assert not logs_in(api, role)
    assert logs_in(api, reset)
    assert ok(api.get(f"{ROLES}/{role['id']}"))["password"] == ""


def test_reset_default_gives_the_default_role_a_new_secret(api):
    seeded = api.world["postgres"]["default_role"]
    answer = ok(api.post(f"{ROLES}/reset-default"))
    assert set(answer) == {"username", "password", "access_host_url"}
    assert answer["username"] == seeded["username"] and answer["password"] != seeded["password"]
    assert not logs_in(api, seeded)
    assert logs_in(api, answer)


def test_patch_renames_and_sets_query_safety_but_not_the_default_role(api):
    role = create(api, name="before")
    changed = ok(api.patch(f"{ROLES}/{role['id']}", json={"name": "after", "require_where_on_delete": "warn"}))
    assert changed["name"] == "after" and changed["query_safety_settings"]["require_where_on_delete"] == "warn"
    error_of(api.patch(f"{ROLES}/{role['id']}", json={"require_where_on_update": "true"}), 422, "invalid_params")
    assert changed["password"] == "" and changed["username"] == role["username"]
    default = ok(api.get(f"{ROLES}/default"))
    assert "default" in error_of(api.patch(f"{ROLES}/{default['id']}", json={"name": "mine"}))


@pytest.mark.parametrize("value", ["off", "warn", "on"])
def test_query_safety_takes_and_serves_off_warn_and_on(api, value):
    role = create(api, name="safe", require_where_on_delete=value, require_where_on_update=value)
    assert role["query_safety_settings"] == {"require_where_on_delete": value, "require_where_on_update": value}
    read = ok(api.get(f"{ROLES}/{role['id']}"))
    assert read["query_safety_settings"] == role["query_safety_settings"]
    other = "off" if value != "off" else "on"
    changed = ok(api.patch(f"{ROLES}/{role['id']}", json={"require_where_on_update": other}))
    assert changed["query_safety_settings"] == {"require_where_on_delete": value, "require_where_on_update": other}
    listed = [r for r in ok(api.get(ROLES))["data"] if r["id"] == role["id"]]
    assert listed[0]["query_safety_settings"] == changed["query_safety_settings"]


def test_delete_with_a_successor_hands_the_objects_over(api):
    old, heir = create(api, name="old", inherited_roles=["postgres"]), create(api, name="heir")
    with login(api, old) as connection:  # an object the role makes through its own connection
        connection.execute("CREATE TABLE made_by_old (id bigint PRIMARY KEY)")
    suffixless = heir["username"].split(".")[0]
    ok(api.delete(f"{ROLES}/{old['id']}", params={"successor": suffixless}), 204)
    error_of(api.get(f"{ROLES}/{old['id']}"), 404, "not_found")
    assert owner_of(api, heir, "made_by_old") == heir["username"]
    assert not logs_in(api, old)
    other = create(api, name="other")
    assert "successor" in error_of(api.delete(f"{ROLES}/{other['id']}", params={"successor": "nobody"})).lower()
    assert "own successor" in error_of(api.delete(f"{ROLES}/{other['id']}", params={"successor": other["id"]}))
    ok(api.get(f"{ROLES}/{other['id']}"))  # a refused delete deletes nothing
    ok(api.delete(f"{ROLES}/{other['id']}"), 204)
    default = ok(api.get(f"{ROLES}/default"))
    assert "default" in error_of(api.delete(f"{ROLES}/{default['id']}"))


def test_reassign_hands_the_objects_over_and_keeps_the_role(api):
    owner, heir = create(api, name="owner", inherited_roles=["postgres"]), create(api, name="heir")
    with login(api, owner) as connection:
        connection.execute("CREATE TABLE made_by_owner (id bigint PRIMARY KEY)")
    ok(api.post(f"{ROLES}/{owner['id']}/reassign", json={"successor": heir["id"]}), 204)
    assert owner_of(api, heir, "made_by_owner") == heir["username"]
    assert logs_in(api, owner)  # the role stays
    assert ok(api.get(f"{ROLES}/{owner['id']}"))["name"] == "owner"
    error_of(api.post(f"{ROLES}/{owner['id']}/reassign", json={}), 422, "invalid_params")


def test_a_new_postgres_branch_has_its_own_default_role_and_roles(api):
    ok(api.post(f"{PG}/branches", json={"name": "dev", "parent_branch": "main"}), 201)
    dev = f"{PG}/branches/dev/roles"
    assert ok(api.get(f"{dev}/default"))["id"] != ok(api.get(f"{ROLES}/default"))["id"]
    role = ok(api.post(dev, json={"name": "app"}))
    assert role["ready"] is False  # the branch is not ready yet
    assert ok(api.get(ROLES))["total_count"] == 1


def test_the_roles_fixture_fills_pages_on_a_postgres_branch_only(api):
    created = ok(api.control("POST", "/seed", json={"roles": {"count": 120}}))["roles"]
    assert len(created) == 120
    listed = ok(api.get(ROLES, params={"per_page": 100}))
    assert listed["total_count"] == 121 and listed["data"][1]["name"] == "role-1"
    assert api.control("POST", "/seed", json={"roles": {"database": "app", "count": 1}}).status_code == 422
