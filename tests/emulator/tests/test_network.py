"""Who may connect to a PostgreSQL database and a database's throttler (world/network.py): the IP restrictions of
``.../databases/{database}/cidrs`` (list, create, get, update, delete; IPv4 only; PostgreSQL databases only),
enforced by the real PostgreSQL server (pg_hba.conf rewritten and reloaded: a login from 127.0.0.1 refused while
no entry admits it, admitted once one does), and ``.../databases/{database}/throttler`` (GET, PATCH).

Every answer is validated against the published OpenAPI after the test (conftest.openapi_check)."""

import json

import psycopg

from .conftest import emulator_operations
from .openapi_check import reference_files

DATABASES = "/v1/organizations/acme/databases"
CIDRS = f"{DATABASES}/pgapp/cidrs"
ROLES = f"{DATABASES}/pgapp/branches/main/roles"


def ok(response, status=200):
    assert response.status_code == status, response.text
    return response.json() if status != 204 else None


def error_of(response, status=422, code="unprocessable"):
    assert response.status_code == status, response.text
    body = response.json()
    assert body["code"] == code and body["message"], body
    return body["message"]


def logs_in(api, role):
    """True when the server lets the role in from 127.0.0.1 (TLS, its secret), False when it refuses the login."""
    host, port = role["access_host_url"].rsplit(":", 1)
    try:
        with psycopg.connect(host=host, port=int(port), user=role["username"], password=role["password"],
                             dbname=role["database_name"], sslmode="verify-full", sslrootcert=api.world["ca_file"],
                             connect_timeout=10, autocommit=True) as connection:
            return connection.execute("SELECT current_user").fetchone()[0] == role["username"]
    except psycopg.OperationalError:
        return False


def default_role(api):
    seeded = dict(api.world["postgres"]["default_role"])
    seeded.setdefault("database_name", "pgapp__main")
    return seeded


# ---------------------------------------------------------------- the API


def test_an_ip_restriction_is_created_read_listed_updated_and_deleted(api):
    assert ok(api.get(CIDRS))["data"] == []
    made = ok(api.post(CIDRS, json={"cidrs": ["10.0.0.0/8", "192.168.1.1"], "role": "app"}), 201)
    assert (made["schema"], made["role"], made["cidrs"], made["description"]) == ("", "app", ["10.0.0.0/8",
                                                                                           "192.168.1.1"], None)
    assert made["actor"]["id"] == api.world["user"]["id"] and made["deleted_at"] is None
    assert ok(api.get(f"{CIDRS}/{made['id']}")) == made
    assert [entry["id"] for entry in ok(api.get(CIDRS))["data"]] == [made["id"]]
    changed = ok(api.patch(f"{CIDRS}/{made['id']}", json={"description": "office", "schema": "public"}))
    assert (changed["description"], changed["schema"], changed["cidrs"]) == ("office", "public", made["cidrs"])
    assert ok(api.patch(f"{CIDRS}/{made['id']}", json={"description": ""}))["description"] is None
    ok(api.delete(f"{CIDRS}/{made['id']}"), 204)
    error_of(api.get(f"{CIDRS}/{made['id']}"), 404, "not_found")
    error_of(api.delete(f"{CIDRS}/{made['id']}"), 404, "not_found")


def test_ipv6_malformed_and_missing_networks_are_refused_and_nothing_is_recorded(api):
    assert "IPv6" in error_of(api.post(CIDRS, json={"cidrs": ["2001:db8::/32"]}), code="invalid_params")
    assert "'10.0.0.300'" in error_of(api.post(CIDRS, json={"cidrs": ["10.0.0.300"]}), code="invalid_params")
    error_of(api.post(CIDRS, json={"cidrs": []}), code="invalid_params")
    error_of(api.post(CIDRS, json={"role": "app"}), code="invalid_params")
    assert ok(api.get(CIDRS))["data"] == []
    made = ok(api.post(CIDRS, json={"cidrs": ["10.0.0.0/8"]}), 201)
    error_of(api.patch(f"{CIDRS}/{made['id']}", json={"cidrs": ["::1"]}), code="invalid_params")
    assert ok(api.get(f"{CIDRS}/{made['id']}"))["cidrs"] == ["10.0.0.0/8"]


def test_a_mysql_database_has_no_ip_restrictions(api):
    assert "passwords" in error_of(api.get(f"{DATABASES}/app/cidrs"))
    error_of(api.post(f"{DATABASES}/app/cidrs", json={"cidrs": ["10.0.0.0/8"]}))
    error_of(api.get(f"{DATABASES}/nope/cidrs"), 404, "not_found")


# ---------------------------------------------------------------- enforced by the PostgreSQL server


def test_a_login_is_refused_from_an_address_no_entry_admits_and_accepted_once_one_does(api):
    role = default_role(api)
    assert logs_in(api, role)
    made = ok(api.post(CIDRS, json={"cidrs": ["10.0.0.0/8", "192.168.0.0/16"]}), 201)
    assert not logs_in(api, role)  # 127.0.0.1 is in no entry
    ok(api.patch(f"{CIDRS}/{made['id']}", json={"cidrs": ["10.0.0.0/8", "127.0.0.0/8"]}))
    assert logs_in(api, role)
    ok(api.patch(f"{CIDRS}/{made['id']}", json={"cidrs": ["10.0.0.0/8"]}))
    assert not logs_in(api, role)
    ok(api.delete(f"{CIDRS}/{made['id']}"), 204)
    assert logs_in(api, role)  # no entry left: no restriction


def test_an_entry_with_a_role_admits_that_role_only_and_a_reset_world_has_no_restriction(api):
    role = default_role(api)
    other = ok(api.post(ROLES, json={"name": "reporting"}))
    ok(api.post(CIDRS, json={"cidrs": ["127.0.0.1/32"], "role": "reporting"}), 201)
    assert logs_in(api, other) and not logs_in(api, role)
    later = ok(api.post(ROLES, json={"name": "reporting"}))  # a role made later with that name is admitted too
    assert logs_in(api, later)
    ok(api.post(CIDRS, json={"cidrs": ["127.0.0.0/8"], "description": "everyone from here"}), 201)
    assert logs_in(api, role)
    ok(api.post(CIDRS, json={"cidrs": ["10.0.0.0/8"]}), 201)
    api.client.post("/_emulator/reset")
    assert logs_in(api, default_role(api))


def test_a_new_branch_of_a_restricted_database_is_restricted(api):
    ok(api.post(CIDRS, json={"cidrs": ["10.0.0.0/8"]}), 201)
    ok(api.post(f"{DATABASES}/pgapp/branches", json={"name": "dev", "parent_branch": "main"}), 201)
    api.advance(60)
    role = ok(api.post(f"{DATABASES}/pgapp/branches/dev/roles", json={}))
    assert not logs_in(api, role)


# ---------------------------------------------------------------- the throttler of a database


def test_the_throttler_of_a_database_is_read_and_set_by_ratio_or_by_keyspace(api):
    path = f"{DATABASES}/app/throttler"
    first = ok(api.get(path))
    assert first["keyspaces"] == ["app"] and first["configurations"] == []
    assert first["configurable"]["name"] == "app"
    assert ok(api.patch(path, json={"ratio": 20}))["configurations"] == [{"keyspace_name": "app", "ratio": 20}]
    by_keyspace = ok(api.patch(path, json={"configurations": [{"keyspace_name": "app", "ratio": 35}]}))
    assert by_keyspace["configurations"] == [{"keyspace_name": "app", "ratio": 35}]
    assert ok(api.get(path))["configurations"] == by_keyspace["configurations"]
    assert "'other'" in error_of(api.patch(path, json={"configurations": [{"keyspace_name": "other", "ratio": 5}]}))
    error_of(api.patch(path, json={"ratio": 96}), code="invalid_params")
    assert ok(api.get(path))["configurations"] == by_keyspace["configurations"]
    assert "PostgreSQL" in error_of(api.get(f"{DATABASES}/pgapp/throttler"))


def test_every_cidrs_and_throttler_operation_of_the_published_api_is_served(published):
    """The throttler group, and the IP restrictions of the postgres_network group (its bouncers are served beside
    them), of platform-openapi-ops.json: the emulator answers each operation."""
    declared = set()
    for path in reference_files():
        for template, item in json.loads(path.read_text()).get("paths", {}).items():
            declared |= {f"{method.upper()} {template}" for method, operation in item.items()
                         if isinstance(operation, dict) and (operation.get("x-ops-scope-group") == "throttler" or (
                             operation.get("x-ops-scope-group") == "postgres_network" and "/cidrs" in template))}
    assert len(declared) == 7
    assert declared - set(emulator_operations().values()) == set()
