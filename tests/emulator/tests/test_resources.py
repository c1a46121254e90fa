"""The resource API: every endpoint, its success code, its rules and its errors."""

import gzip
import re

import pytest

from .conftest import DB, MAIN

TEAMS = "/v1/organizations/acme/teams"
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
ID = re.compile(r"^[a-z0-9]{12}$")


def error_of(response, status, code):
    assert response.status_code == status, response.text
    body = response.json()
    assert body["code"] == code and body["message"], body
    return body["message"]


# ---------------------------------------------------------------- user, regions, database, members


def test_current_user_is_the_service_token_owner(api):
    user = api.get("/v1/user").json()
    assert user["id"] == api.world["user"]["id"]
    assert user["email"] == api.world["user"]["email"]
    assert TIMESTAMP.match(user["created_at"]) and ID.match(user["id"])
    assert user["default_organization"]["name"] == "acme"


def test_regions_of_organization_and_database(api):
    org_regions = api.get("/v1/organizations/acme/regions").json()
    assert org_regions["total_count"] == len(api.world["regions"])
    db_regions = api.get(f"{DB}/regions", params={"per_page": 2}).json()
    assert [r["slug"] for r in db_regions["data"]] == ["us-east", "us-west"]
    assert db_regions["next_page"] == 2
    assert all(r["enabled"] for r in db_regions["data"])
    assert [r["current_default"] for r in org_regions["data"]].count(True) == 1


def test_database(api):
    database = api.get(DB).json()
    assert database["name"] == "app" and database["default_branch"] == "main"
    assert database["url"] == "http://testserver/v1/organizations/acme/databases/app"
    assert database["branches_count"] == 1


def test_organization_members_resolve_emails(api):
    found = {}
    page = 1
    while page:
        body = api.get("/v1/organizations/acme/members", params={"page": page, "per_page": 100}).json()
        found.update({m["user"]["email"]: m["user"]["id"] for m in body["data"]})
        page = body["next_page"]
    assert all(found[u["email"]] == u["id"] for u in api.world["users"])
    assert body["data"][0].keys() >= {"id", "user", "role", "created_at", "updated_at"}


@pytest.mark.parametrize(
    "path",
    [
        "/v1/organizations/nope/regions",
        "/v1/organizations/acme/databases/nope",
        f"{DB}/branches/nope",
        f"{MAIN}/passwords/nope",
        f"{MAIN}/query-patterns/nope",
        f"{TEAMS}/nope",
        f"{TEAMS}/engineering/members/nope",
        "/v1/organizations/acme/oauth-applications/nope/tokens",
    ],
)
def test_unknown_resources_are_not_found(api, path):
    error_of(api.get(path), 404, "not_found")


def test_unknown_route_is_not_found_with_error_body(api):
    error_of(api.get("/v1/organizations/acme/nothing-here"), 404, "not_found")
    error_of(api.client.get("/nothing"), 404, "not_found")


# ---------------------------------------------------------------- pagination


@pytest.mark.parametrize("query", ["per_page=0", "per_page=101", "page=0", "page=-1", "page=abc", "per_page=1.5"])
def test_page_parameters_out_of_range(api, query):
    error_of(api.get(f"{TEAMS}?{query}"), 422, "invalid_params")


def test_page_envelope_walks_every_page(api):
    large = api.world["teams"]["large"]
    path = f"{TEAMS}/{large}/members"
    first = api.get(path, params={"per_page": 100}).json()
    assert first["type"] == "list" and first["per_page"] == 100 and first["total_count"] == 260
    assert first["current_page"] == 1 and first["prev_page"] is None and first["prev_page_url"] is None
    assert first["next_page"] == 2
    assert first["next_page_url"].startswith(f"http://testserver{path}?") and "page=2" in first["next_page_url"]
    last = api.client.get(first["next_page_url"].replace("page=2", "page=3"), headers=api.auth).json()
    assert len(last["data"]) == 60 and last["next_page"] is None and last["next_page_url"] is None
    assert last["prev_page"] == 2 and "page=2" in last["prev_page_url"]


# ---------------------------------------------------------------- branches


def test_create_branch_becomes_ready_after_the_delay(api):
    created = api.post(f"{DB}/branches", json={"name": "feature-1", "parent_branch": "main"})
    assert created.status_code == 201, created.text
    branch = created.json()
    assert (branch["state"], branch["ready"], branch["production"]) == ("pending", False, False)
    assert branch["parent_branch"] == "main" and branch["region"]["slug"] == "us-east"
    assert branch["url"] == f"http://testserver{DB}/branches/feature-1"
    assert branch["html_url"] == "http://testserver/acme/app/feature-1"
    api.advance(2.0)
    again = api.get(f"{DB}/branches/feature-1").json()
    assert (again["state"], again["ready"]) == ("ready", True)


def test_ready_delay_setting_applies_to_new_branches(api):
    api.control("POST", "/settings", json={"ready_delay": 0})
    branch = api.post(f"{DB}/branches", json={"name": "instant", "parent_branch": "main"}).json()
    assert branch["state"] == "ready"


def test_create_branch_in_a_region_and_from_a_backup(api):
    body = {
        "name": "restored",
        "parent_branch": "main",
        "region": "eu-west",
        "backup_id": api.world["backups"]["main"][-1],
        "cluster_size": "PS_20",
    }
    branch = api.post(f"{DB}/branches", json=body).json()
    assert branch["region"]["slug"] == "eu-west" and branch["cluster_name"] == "PS_20"
    assert branch["restored_from_branch"]["name"] == "main"


@pytest.mark.parametrize(
    ("body", "code", "needle"),
    [
        ({"parent_branch": "main"}, "invalid_params", "name"),
        ({"name": "x"}, "invalid_params", "parent_branch"),
        ({"name": 5, "parent_branch": "main"}, "invalid_params", "name"),
        ({"name": "x", "parent_branch": "main", "backup_id": "b"}, "invalid_params", "cluster_size"),
        ({"name": "x", "parent_branch": "ghost"}, "unprocessable", "ghost"),
        ({"name": "x", "parent_branch": "main", "region": "mars-1"}, "unprocessable", "mars-1"),
        ({"name": "x", "parent_branch": "main", "region": "gcp-us-central1"}, "unprocessable", "gcp-us-central1"),
        ({"name": "x", "parent_branch": "main", "seed_data": "everything"}, "invalid_params", "seed_data"),
        ({"name": "x", "parent_branch": "main", "restore_point": "yesterday"}, "invalid_params", "restore_point"),
        (
            {"name": "x", "parent_branch": "main", "restore_point": "2026-01-01T00:00:00Z"},
            "unprocessable",
            "PostgreSQL",
        ),
        ({"name": "main", "parent_branch": "main"}, "unprocessable", "taken"),
    ],
)
def test_create_branch_errors(api, body, code, needle):
    assert needle in error_of(api.post(f"{DB}/branches", json=body), 422, code)


def test_invalid_json_body(api):
    response = api.post(f"{DB}/branches", content=b"{not json", headers={"Content-Type": "application/json"})
    error_of(response, 422, "invalid_params")
    error_of(api.post(f"{DB}/branches", json=["a", "list"]), 422, "invalid_params")


def test_list_branches_filters(api):
    for name in ("alpha", "beta", "alphabet"):
        api.post(f"{DB}/branches", json={"name": name, "parent_branch": "main"})
    names = [b["name"] for b in api.get(f"{DB}/branches", params={"q": "alpha"}).json()["data"]]
    assert names == ["alpha", "alphabet"]
    production = api.get(f"{DB}/branches", params={"production": "true"}).json()["data"]
    assert [b["name"] for b in production] == ["main"]
    assert len(api.get(f"{DB}/branches", params={"production": "false"}).json()["data"]) == 3


def test_delete_branch(api):
    api.post(f"{DB}/branches", json={"name": "gone", "parent_branch": "main"})
    response = api.delete(f"{DB}/branches/gone")
    assert response.status_code == 204 and response.content == b""
    error_of(api.get(f"{DB}/branches/gone"), 404, "not_found")
    error_of(api.delete(f"{DB}/branches/gone"), 404, "not_found")
    assert "production" in error_of(api.delete(f"{DB}/branches/main"), 422, "unprocessable")


# ---------------------------------------------------------------- passwords


def test_password_lifecycle(api):
    body = {"name": "app", "role": "reader", "replica": True, "ttl": 3600, "cidrs": ["10.0.0.0/8", "192.0.2.7"]}
    created = api.post(f"{MAIN}/passwords", json=body)
    assert created.status_code == 201, created.text
    password = created.json()
    assert password["plain_text"] and password["username"]
    assert (password["role"], password["replica"], password["ttl_seconds"]) == ("reader", True, 3600)
    assert password["cidrs"] == ["10.0.0.0/8", "192.0.2.7"] and password["renewable"] is True
    assert TIMESTAMP.match(password["expires_at"]) and password["expired"] is False
    assert password["database_branch"]["name"] == "main"
    path = f"{MAIN}/passwords/{password['id']}"

    shown = api.get(path).json()
    assert shown["plain_text"] is None and shown["name"] == "app"  # null but for create and renew
    listed = api.get(f"{MAIN}/passwords").json()["data"]
    assert [p["id"] for p in listed] == [password["id"]] and listed[0]["plain_text"] is None

    patched = api.patch(path, json={"name": "renamed", "cidrs": ["203.0.113.0/24"], "role": "admin"})
    assert patched.status_code == 200
    assert (patched.json()["name"], patched.json()["cidrs"], patched.json()["role"]) == (
        "renamed",
        ["203.0.113.0/24"],
        "reader",
    )

    api.advance(3600)
    assert api.get(path).json()["expired"] is True
    renewed = api.post(f"{path}/renew")
    assert renewed.status_code == 200
    assert renewed.json()["plain_text"] not in (None, password["plain_text"])
    assert renewed.json()["expires_at"] > password["expires_at"] and renewed.json()["expired"] is False

    assert api.delete(path).status_code == 204
    error_of(api.get(path), 404, "not_found")


def test_password_defaults_never_expire_and_names_repeat(api):
    first = api.post(f"{MAIN}/passwords", json={"name": "same"}).json()
    second = api.post(f"{MAIN}/passwords", json={"name": "same"}).json()
    assert first["id"] != second["id"]
    assert (first["role"], first["expires_at"], first["ttl_seconds"], first["renewable"]) == (
        "admin",
        None,
        None,
        False,
    )
    assert api.post(f"{MAIN}/passwords").status_code == 201  # no body at all
    error_of(api.post(f"{MAIN}/passwords/{first['id']}/renew"), 422, "unprocessable")


@pytest.mark.parametrize(
    "body",
    [
        {"role": "owner"},
        {"ttl": -1},
        {"ttl": "60"},
        {"ttl": 1.5},
        {"replica": "yes"},
        {"cidrs": ["10.0.0.0/33"]},
        {"cidrs": ["not-an-ip"]},
        {"cidrs": "10.0.0.0/8"},
        {"name": 7},
    ],
)
def test_create_password_invalid_params(api, body):
    error_of(api.post(f"{MAIN}/passwords", json=body), 422, "invalid_params")


def test_password_query_filter_and_pages(api):
    api.control("POST", "/seed", json={"passwords": {"count": 30, "prefix": "audit"}})
    api.post(f"{MAIN}/passwords", json={"name": "other"})
    audit = api.get(f"{MAIN}/passwords", params={"q": "audit", "per_page": 25}).json()
    assert audit["total_count"] == 30 and audit["next_page"] == 2
    everything = api.get(f"{MAIN}/passwords", params={"page": 2}).json()
    assert everything["total_count"] == 31 and len(everything["data"]) == 6


# ---------------------------------------------------------------- query-pattern reports


def test_report_lifecycle_and_download(api):
    created = api.post(f"{MAIN}/query-patterns")
    assert created.status_code == 201
    report = created.json()
    assert report["state"] == "pending" and report["finished_at"] is None
    path = f"{MAIN}/query-patterns/{report['id']}"
    assert report["url"] == f"http://testserver{path}" and report["download_url"] == f"http://testserver{path}/download"
    error_of(api.get(f"{path}/download"), 422, "unprocessable")

    api.advance(1.0)
    done = api.get(path).json()
    assert done["state"] == "completed" and TIMESTAMP.match(done["finished_at"])
    download = api.get(f"{path}/download", follow_redirects=False)
    assert download.status_code == 302
    location = download.headers["location"]
    assert location.startswith(f"http://localhost/_emulator/signed/{report['id']}?")

    signed = api.client.get(location.replace("http://localhost", ""))
    assert signed.status_code == 200 and signed.headers["content-type"] == "application/gzip"
    assert gzip.decompress(signed.content).decode().splitlines()[1].startswith(f"{report['id']},acme,app,main,")
    tampered = api.client.get(location.replace("http://localhost", "").replace("signature=", "signature=0"))
    error_of(tampered, 403, "forbidden")

    assert api.delete(path).status_code == 204
    error_of(api.get(path), 404, "not_found")


def test_report_cursor_pages(api):
    ids = api.control("POST", "/seed", json={"reports": {"count": 60}}).json()["reports"]
    newest_first = list(reversed(ids))
    first = api.get(f"{MAIN}/query-patterns").json()
    assert first["type"] == "list" and len(first["data"]) == 25
    assert (first["has_prev"], first["has_next"]) == (False, True)
    assert [r["id"] for r in first["data"]] == newest_first[:25]
    assert (first["cursor_start"], first["cursor_end"]) == (newest_first[0], newest_first[24])

    second = api.get(f"{MAIN}/query-patterns", params={"starting_after": first["cursor_end"], "limit": 30}).json()
    assert [r["id"] for r in second["data"]] == newest_first[25:55]
    assert (second["has_prev"], second["has_next"]) == (True, True)

    back = api.get(f"{MAIN}/query-patterns", params={"ending_before": second["cursor_start"]}).json()
    assert [r["id"] for r in back["data"]] == newest_first[:25] and back["has_prev"] is False

    last = api.get(f"{MAIN}/query-patterns", params={"starting_after": second["cursor_end"], "limit": 100}).json()
    assert len(last["data"]) == 5 and last["has_next"] is False


@pytest.mark.parametrize("query", ["limit=0", "limit=101", "limit=x", "starting_after=unknown"])
def test_report_cursor_errors(api, query):
    error_of(api.get(f"{MAIN}/query-patterns?{query}"), 422, "invalid_params")


# ---------------------------------------------------------------- teams and members


def test_team_lifecycle(api):
    created = api.post(TEAMS, json={"name": "Data Platform", "description": "pipelines"})
    assert created.status_code == 200, created.text
    team = created.json()
    assert (team["slug"], team["name"], team["display_name"], team["managed"]) == (
        "data-platform",
        "Data Platform",
        "Data Platform",
        False,
    )
    path = f"{TEAMS}/data-platform"
    updated = api.patch(path, json={"name": "Data Infrastructure", "description": "new"})
    assert updated.status_code == 200
    assert (updated.json()["name"], updated.json()["description"], updated.json()["slug"]) == (
        "Data Infrastructure",
        "new",
        "data-platform",
    )
    assert api.get(path).json()["name"] == "Data Infrastructure"
    assert [t["slug"] for t in api.get(TEAMS, params={"q": "infra"}).json()["data"]] == ["data-platform"]
    assert api.delete(path).status_code == 204
    error_of(api.get(path), 404, "not_found")


def test_team_errors(api):
    error_of(api.post(TEAMS, json={"description": "no name"}), 422, "invalid_params")
    error_of(api.post(TEAMS, json={"name": "engineering"}), 422, "unprocessable")
    api.post(TEAMS, json={"name": "Second"})
    error_of(api.patch(f"{TEAMS}/second", json={"name": "Engineering"}), 422, "unprocessable")
    error_of(api.patch(f"{TEAMS}/second", json={"name": 3}), 422, "invalid_params")


def test_sso_managed_team_cannot_change(api):
    sso = f"{TEAMS}/{api.world['teams']['sso_managed']}"
    members = api.get(f"{sso}/members").json()["data"]
    assert "single sign-on" in error_of(api.patch(sso, json={"description": "x"}), 422, "unprocessable")
    error_of(api.delete(sso), 422, "unprocessable")
    error_of(api.post(f"{sso}/members", json={"user_id": api.world["users"][0]["id"]}), 422, "unprocessable")
    error_of(api.delete(f"{sso}/members/{members[0]['id']}"), 422, "unprocessable")
    assert api.get(sso).json()["managed"] is True


def test_team_members(api):
    path = f"{TEAMS}/{api.world['teams']['regular']}/members"
    user = api.world["users"][0]
    added = api.post(path, json={"user_id": user["id"]})
    assert added.status_code == 200, added.text
    member = added.json()
    assert member["user"]["email"] == user["email"] and member["passwords"] == []
    assert api.get(f"{path}/{member['id']}").json()["user"]["id"] == user["id"]
    assert api.get(f"{path}/{user['id']}").json()["id"] == member["id"]  # by user id too
    assert user["id"] in [m["user"]["id"] for m in api.get(path).json()["data"]]
    assert user["id"] in [u["id"] for u in api.get(path.removesuffix("/members")).json()["members"]]
    error_of(api.post(path, json={"user_id": user["id"]}), 422, "unprocessable")
    error_of(api.post(path, json={"user_id": "nobody"}), 422, "unprocessable")
    error_of(api.post(path, json={}), 422, "invalid_params")
    assert api.delete(f"{path}/{member['id']}").status_code == 204
    error_of(api.get(f"{path}/{member['id']}"), 404, "not_found")
