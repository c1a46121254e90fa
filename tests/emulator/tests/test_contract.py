"""Every response of the endpoints of spec section 4 carries every field the spec lists for it.

The field lists are written out from the spec (sections 2 and 4), not taken from the code.
"""

import re

from .conftest import DB, MAIN

ACTOR = {"id", "display_name", "avatar_url"}
REGION = {"id", "provider", "enabled", "public_ip_addresses", "display_name", "location", "slug", "current_default"}
ORGANIZATION_REF = {"id", "name", "created_at", "updated_at", "deleted_at"}
USER = {
    "id",
    "display_name",
    "name",
    "email",
    "avatar_url",
    "created_at",
    "updated_at",
    "two_factor_auth_configured",
    "default_organization",
    "sso",
    "managed",
    "directory_managed",
    "email_verified",
}
TEAM = {
    "id",
    "display_name",
    "creator",
    "members",
    "databases",
    "name",
    "slug",
    "created_at",
    "updated_at",
    "description",
    "managed",
}
TEAM_DATABASE = {"id", "name", "url", "branches_url"}
TEAM_MEMBER = {"id", "user", "actor", "created_at", "updated_at", "passwords"}
PASSWORD = {
    "id",
    "name",
    "role",
    "cidrs",
    "created_at",
    "deleted_at",
    "expires_at",
    "last_used_at",
    "expired",
    "ttl_seconds",
    "access_host_url",
    "access_host_regional_url",
    "access_host_regional_urls",
    "actor",
    "region",
    "username",
    "plain_text",
    "replica",
    "renewable",
    "database_branch",
}
PASSWORD_BRANCH = {"name", "id", "production", "mysql_edge_address", "private_edge_connectivity"}
BRANCH = {
    "id",
    "name",
    "created_at",
    "updated_at",
    "deleted_at",
    "restore_checklist_completed_at",
    "schema_last_updated_at",
    "kind",
    "mysql_address",
    "mysql_edge_address",
    "state",
    "vtgate_size",
    "vtgate_count",
    "cluster_name",
    "cluster_iops",
    "ready",
    "schema_ready",
    "metal",
    "production",
    "safe_migrations",
    "sharded",
    "shard_count",
    "stale_schema",
    "actor",
    "restored_from_branch",
    "private_edge_connectivity",
    "has_replicas",
    "has_read_only_replicas",
    "html_url",
    "url",
    "region",
    "parent_branch",
}
RESTORED_FROM = {"id", "name", "created_at", "updated_at", "deleted_at"}
OAUTH_TOKEN = {
    "id",
    "name",
    "display_name",
    "token",
    "plain_text_refresh_token",
    "avatar_url",
    "created_at",
    "updated_at",
    "expires_at",
    "last_used_at",
    "actor_id",
    "actor_display_name",
    "actor_type",
    "service_token_accesses",
    "oauth_accesses_by_resource",
}
SERVICE_TOKEN_ACCESS = {"id", "access", "description", "resource_name", "resource_id", "resource_type", "resource"}
ACCESSES_BY_RESOURCE = {
    "database": ("databases", {"name", "id", "organization", "url"}),
    "organization": ("organizations", {"name", "id", "url"}),
    "branch": ("branches", {"name", "id", "database", "organization", "url"}),
    "user": ("users", {"name", "id"}),
}
ACCESS = {"name", "description"}
INTROSPECTION = {"active", "scope", "client_id", "token_type", "exp", "iat", "sub"}
REPORT = {"id", "state", "created_at", "finished_at", "url", "download_url", "actor"}
PAGE = {"current_page", "next_page", "next_page_url", "prev_page", "prev_page_url", "data"}
CURSOR_PAGE = {"has_next", "has_prev", "cursor_start", "cursor_end", "data"}
TOKEN_RESPONSE = {"access_token", "token_type", "expires_in", "refresh_token", "scope"}

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def has(record, fields):
    missing = fields - record.keys()
    assert not missing, f"missing {sorted(missing)} in {record}"
    for name in fields:
        if name.endswith("_at") and record[name] is not None:
            assert TIMESTAMP.match(record[name]), (name, record[name])


def ok(response, status=200):
    assert response.status_code == status, response.text
    return response.json()


def check_user(user):
    has(user, USER)
    has(user["default_organization"], ORGANIZATION_REF)


def check_password(password, fields=PASSWORD):
    has(password, fields)
    has(password["actor"], ACTOR)
    has(password["region"], REGION)
    has(password["database_branch"], PASSWORD_BRANCH)


def check_token_record(record, fields=OAUTH_TOKEN):
    has(record, fields)
    assert record["service_token_accesses"]
    for access in record["service_token_accesses"]:
        has(access, SERVICE_TOKEN_ACCESS)
        has(access["resource"], ORGANIZATION_REF)
    by_resource = record["oauth_accesses_by_resource"]
    for key, (list_name, item_fields) in ACCESSES_BY_RESOURCE.items():
        has(by_resource[key], {list_name, "accesses"})
        for item in by_resource[key][list_name]:
            has(item, item_fields)
        for access in by_resource[key]["accesses"]:
            has(access, ACCESS)


def test_4_1_token_endpoint(api):
    app = api.world["oauth_application"]
    token = api.login()
    has(token, TOKEN_RESPONSE)
    form = {
        "grant_type": "refresh_token",
        "refresh_token": token["refresh_token"],
        "client_id": app["client_id"],
        "client_secret": app["client_secret"],
    }
    has(ok(api.token(**form)), TOKEN_RESPONSE)


def test_4_2_token_info(api):
    token = api.login()
    has(
        ok(api.client.get("/oauth/token/info", headers={"Authorization": f"Bearer {token['access_token']}"})),
        INTROSPECTION,
    )


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
    check_token_record(record)
    by_resource = record["oauth_accesses_by_resource"]
    assert all(
        by_resource[key][name] and by_resource[key]["accesses"] for key, (name, _) in ACCESSES_BY_RESOURCE.items()
    )


def test_4_4_update_team(api):
    team = ok(api.patch(f"/v1/organizations/acme/teams/{api.world['teams']['regular']}", json={"description": "d"}))
    has(team, TEAM)
    has(team["creator"], ACTOR)
    assert team["members"] and team["databases"]
    for user in team["members"]:
        check_user(user)
    for database in team["databases"]:
        has(database, TEAM_DATABASE)


def test_4_5_team_members(api):
    page = ok(api.get(f"/v1/organizations/acme/teams/{api.world['teams']['regular']}/members"))
    has(page, PAGE)
    assert page["data"]
    for member in page["data"]:
        has(member, TEAM_MEMBER)
        check_user(member["user"])
        has(member["actor"], ACTOR)


def test_4_6_create_branch(api):
    body = {"name": "contract", "parent_branch": "main", "backup_id": "b1", "cluster_size": "PS_10"}
    branch = ok(api.post(f"{DB}/branches", json=body), 201)
    has(branch, BRANCH)
    has(branch["actor"], ACTOR)
    has(branch["region"], REGION)
    has(branch["restored_from_branch"], RESTORED_FROM)


def test_4_7_create_password(api):
    body = {"name": "c", "role": "writer", "replica": False, "ttl": 60, "cidrs": ["0.0.0.0/0"]}
    check_password(ok(api.post(f"{MAIN}/passwords", json=body), 201))


def test_4_8_current_user(api):
    check_user(ok(api.get("/v1/user")))


def test_4_9_database_regions(api):
    page = ok(api.get(f"{DB}/regions"))
    has(page, PAGE)
    for region in page["data"]:
        has(region, REGION)


def test_4_10_query_pattern_reports(api):
    ok(api.post(f"{MAIN}/query-patterns"), 201)
    page = ok(api.get(f"{MAIN}/query-patterns"))
    has(page, CURSOR_PAGE)
    for report in page["data"]:
        has(report, REPORT)
        has(report["actor"], ACTOR)


def test_other_reads_carry_the_same_records(api):
    """The lists and single reads the collection uses besides section 4 give the same records."""
    created = ok(api.post(f"{MAIN}/passwords", json={"ttl": 60}), 201)
    without_secret = PASSWORD - {"plain_text"}
    check_password(ok(api.get(f"{MAIN}/passwords/{created['id']}")), without_secret)
    check_password(ok(api.get(f"{MAIN}/passwords"))["data"][0], without_secret)
    has(ok(api.get(f"{DB}/branches/main")), BRANCH)
    has(ok(api.get(f"{DB}/branches"))["data"][0], BRANCH)
    has(ok(api.get("/v1/organizations/acme/teams"))["data"][0], TEAM)
    api.login()
    app_id = api.world["oauth_application"]["id"]
    listed = ok(api.get(f"/v1/organizations/acme/oauth-applications/{app_id}/tokens"))["data"][0]
    check_token_record(listed, OAUTH_TOKEN - {"token", "plain_text_refresh_token"})
