"""The endpoints of spec section 4 and the reads the collection uses besides them.

Which fields each answer carries, and their types, is the published OpenAPI's business: every
response these tests (and all the others) get is validated against it after the test
(conftest.openapi_check; openapi_check.py). These tests make the calls and hold what the
OpenAPI cannot say: timestamps as the platform writes them, what a record refers to, which
secrets appear where. The OAuth server (/oauth/...) is not in the published OpenAPI: its
answers are held to RFC 6749 and RFC 7662 here.
"""

import re

import pytest

from .conftest import DB, MAIN

# the validating tests of this file skip, saying why, without the published OpenAPI files
pytestmark = pytest.mark.usefixtures("published")

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
TOKEN_RESPONSE = {"access_token", "token_type", "expires_in", "refresh_token", "scope"}  # RFC 6749 5.1
INTROSPECTION = {"active", "scope", "client_id", "token_type", "exp", "iat", "sub"}  # RFC 7662 2.2


def timestamps(value, where="") -> list[str]:
    """Every non-null "*_at" value inside a JSON value that is not 2026-01-02T03:04:05.678Z."""
    wrong = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key.endswith("_at") and item is not None and not (isinstance(item, str) and TIMESTAMP.match(item)):
                wrong.append(f"{where}/{key}: {item!r}")
            wrong += timestamps(item, f"{where}/{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            wrong += timestamps(item, f"{where}/{index}")
    return wrong


def ok(response, status=200):
    assert response.status_code == status, response.text
    body = response.json()
    assert not timestamps(body), timestamps(body)
    return body


def test_4_1_token_endpoint(api):
    app = api.world["oauth_application"]
    token = api.login()
    assert token.keys() >= TOKEN_RESPONSE and token["token_type"] == "Bearer"
    form = {
        "grant_type": "refresh_token",
        "refresh_token": token["refresh_token"],
        "client_id": app["client_id"],
        "client_secret": app["client_secret"],
    }
    refreshed = ok(api.token(**form))
    assert refreshed.keys() >= TOKEN_RESPONSE and refreshed["refresh_token"] != token["refresh_token"]


def test_4_2_token_info(api):
    token = api.login()
    info = ok(api.client.get("/oauth/token/info", headers={"Authorization": f"Bearer {token['access_token']}"}))
    assert info.keys() >= INTROSPECTION and info["active"] is True


def test_4_3_application_token(api):
    app = api.world["oauth_application"]
    body = {
        "client_id": app["client_id"],
        "client_secret": app["client_secret"],
        "grant_type": "authorization_code",
        "code": api.authorization_code(scope="read_user read_organization database:read_branches branch:read_branch"),
        "redirect_uri": app["redirect_uri"],
    }
    record = ok(api.post(f"/v1/organizations/acme/oauth-applications/{app['id']}/token", json=body))
    assert record["token"] and record["plain_text_refresh_token"]  # shown once, in this answer
    assert record["service_token_accesses"]
    by_resource = record["oauth_accesses_by_resource"]
    lists = {"database": "databases", "organization": "organizations", "branch": "branches", "user": "users"}
    assert all(by_resource[key][name] and by_resource[key]["accesses"] for key, name in lists.items())


def test_4_4_update_team(api):
    team = ok(api.patch(f"/v1/organizations/acme/teams/{api.world['teams']['regular']}", json={"description": "d"}))
    assert team["description"] == "d"
    assert team["members"] and team["databases"]
    assert [database["name"] for database in team["databases"]] == ["app"]


def test_4_5_team_members(api):
    page = ok(api.get(f"/v1/organizations/acme/teams/{api.world['teams']['regular']}/members"))
    assert page["data"] and all(member["user"]["email"] for member in page["data"])


def test_4_6_create_branch(api):
    body = {"name": "contract", "parent_branch": "main", "backup_id": api.world["backups"]["main"][-1],
            "cluster_size": "PS_10"}
    branch = ok(api.post(f"{DB}/branches", json=body), 201)
    assert (branch["name"], branch["parent_branch"], branch["cluster_name"]) == ("contract", "main", "PS_10")
    assert branch["restored_from_branch"]["name"] == "main"
    assert branch["region"]["slug"] == "us-east"


def test_4_7_create_password(api):
    body = {"name": "c", "role": "writer", "replica": False, "ttl": 60, "cidrs": ["0.0.0.0/0"]}
    password = ok(api.post(f"{MAIN}/passwords", json=body), 201)
    assert password["plain_text"] and password["database_branch"]["name"] == "main"
    assert password["region"]["slug"] == "us-east"


def test_4_8_current_user(api):
    user = ok(api.get("/v1/user"))
    assert user["default_organization"]["name"] == "acme"


def test_4_9_database_regions(api):
    page = ok(api.get(f"{DB}/regions"))
    assert page["data"] and all(region["enabled"] for region in page["data"])


def test_4_10_query_pattern_reports(api):
    created = ok(api.post(f"{MAIN}/query-patterns"), 201)
    page = ok(api.get(f"{MAIN}/query-patterns"))
    assert [report["id"] for report in page["data"]] == [created["id"]]


def test_other_reads_carry_the_same_records(api):
    """The lists and single reads the collection uses besides section 4 give the same records."""
    created = ok(api.post(f"{MAIN}/passwords", json={"ttl": 60}), 201)
    shown = ok(api.get(f"{MAIN}/passwords/{created['id']}"))
    listed = ok(api.get(f"{MAIN}/passwords"))["data"][0]
    assert shown["plain_text"] is None and listed["plain_text"] is None  # the secret only at creation
    assert {**shown, "plain_text": "-"} == {**created, "plain_text": "-"}
    assert ok(api.get(f"{DB}/branches/main")) == ok(api.get(f"{DB}/branches"))["data"][0]
    assert ok(api.get("/v1/organizations/acme/teams"))["data"][0]["slug"] == "engineering"
    api.login()
    app_id = api.world["oauth_application"]["id"]
    listed = ok(api.get(f"/v1/organizations/acme/oauth-applications/{app_id}/tokens"))["data"][0]
    assert "token" not in listed and "plain_text_refresh_token" not in listed
    assert ok(api.get(f"/v1/organizations/acme/oauth-applications/{app_id}/tokens/{listed['id']}")) == listed
