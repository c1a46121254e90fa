"""Credentials on the resource API, the OAuth server and the application token endpoints."""

import re

import pytest

from .conftest import DB

APPS = "/v1/organizations/acme/oauth-applications"


def oauth_error(response, status, error):
    assert response.status_code == status, response.text
    assert response.json()["error"] == error and response.json()["error_description"]


def bearer(token):
    return {"Authorization": f"Bearer {token}"}


# ---------------------------------------------------------------- credentials


@pytest.mark.parametrize(
    "header",
    [None, "", "nonsense", "abc:def", "Bearer", "Bearer not-a-token", "Basic dXNlcjpwYXNz"],
)
def test_bad_credentials_are_unauthorized_and_touch_nothing(api, header):
    headers = {"Authorization": header} if header is not None else {}
    for method, path, body in [
        ("GET", "/v1/user", None),
        ("POST", f"{DB}/branches", {"name": "sneaky", "parent_branch": "main"}),
        ("POST", f"{DB}/branches", None),
    ]:
        response = api.client.request(method, path, headers=headers, json=body)
        assert response.status_code == 401
        assert response.json()["code"] == "unauthorized"
    names = [b["name"] for b in api.get(f"{DB}/branches").json()["data"]]
    assert names == ["main"]


def test_wrong_secret_of_a_real_token_id(api):
    token_id = api.world["service_token"]["id"]
    response = api.client.get("/v1/user", headers={"Authorization": f"{token_id}:wrong"})
    assert response.status_code == 401


def test_forbidden_service_token(api):
    forbidden = api.world["forbidden_service_token"]
    headers = {"Authorization": f"{forbidden['id']}:{forbidden['token']}"}
    assert api.client.get("/v1/user", headers=headers).status_code == 200
    for path in ("/v1/organizations/acme/regions", DB, f"{DB}/branches", "/v1/organizations/acme/teams"):
        response = api.client.get(path, headers=headers)
        assert response.status_code == 403 and response.json()["code"] == "forbidden"
    response = api.client.post(f"{DB}/branches", headers=headers, json={"name": "nope", "parent_branch": "main"})
    assert response.status_code == 403


def test_bearer_token_works_on_resource_endpoints(api):
    token = api.login()
    assert api.client.get("/v1/user", headers=bearer(token["access_token"])).json()["id"] == api.world["user"]["id"]
    created = api.client.post(
        f"{DB}/branches", headers=bearer(token["access_token"]), json={"name": "oauth", "parent_branch": "main"}
    )
    assert created.status_code == 201


# ---------------------------------------------------------------- token endpoint


def test_authorization_code_grant(api):
    token = api.login()
    assert token["token_type"] == "Bearer" and token["expires_in"] == 3600
    assert token["access_token"] and token["refresh_token"]
    assert token["scope"] == api.world["oauth_application"]["scope"]


def test_code_is_single_use(api):
    app = api.world["oauth_application"]
    code = api.authorization_code(scope="read_user")
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": app["redirect_uri"],
        "client_id": app["client_id"],
        "client_secret": app["client_secret"],
    }
    first = api.token(**form)
    assert first.status_code == 200 and first.json()["scope"] == "read_user"
    oauth_error(api.token(**form), 400, "invalid_grant")


def test_code_rules(api):
    app = api.world["oauth_application"]
    base = {"grant_type": "authorization_code", "client_id": app["client_id"], "client_secret": app["client_secret"]}
    code = api.authorization_code()
    oauth_error(api.token(**base, code=code, redirect_uri="http://evil.test/cb"), 400, "invalid_grant")
    oauth_error(api.token(**base, code="unknown", redirect_uri=app["redirect_uri"]), 400, "invalid_grant")
    api.advance(601)
    oauth_error(api.token(**base, code=code, redirect_uri=app["redirect_uri"]), 400, "invalid_grant")


def test_client_and_request_errors(api):
    app = api.world["oauth_application"]
    code = api.authorization_code()
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": app["redirect_uri"],
        "client_id": app["client_id"],
    }
    oauth_error(api.token(**form, client_secret="wrong"), 401, "invalid_client")
    oauth_error(api.token(**{**form, "client_id": "other"}, client_secret=app["client_secret"]), 401, "invalid_client")
    oauth_error(api.token(**form), 400, "invalid_request")
    oauth_error(
        api.token(**{**form, "grant_type": "password"}, client_secret=app["client_secret"]),
        400,
        "unsupported_grant_type",
    )
    oauth_error(api.token(code=code), 400, "invalid_request")
    oauth_error(
        api.client.post("/oauth/token", json={**form, "client_secret": app["client_secret"]}), 400, "invalid_request"
    )
    assert api.token(**form, client_secret=app["client_secret"]).status_code == 200  # errors did not use the code


def test_refresh_tokens_rotate(api):
    app = api.world["oauth_application"]
    first = api.login()
    form = {"grant_type": "refresh_token", "client_id": app["client_id"], "client_secret": app["client_secret"]}
    second = api.token(**form, refresh_token=first["refresh_token"])
    assert second.status_code == 200
    second = second.json()
    assert second["access_token"] != first["access_token"] and second["refresh_token"] != first["refresh_token"]
    oauth_error(api.token(**form, refresh_token=first["refresh_token"]), 400, "invalid_grant")
    # the previous access token is revoked by the refresh
    assert api.client.get("/v1/user", headers=bearer(first["access_token"])).status_code == 401
    assert api.client.get("/v1/user", headers=bearer(second["access_token"])).status_code == 200
    oauth_error(
        api.token(**{**form, "client_secret": "x"}, refresh_token=second["refresh_token"]), 401, "invalid_client"
    )
    assert api.token(**form, refresh_token=second["refresh_token"]).status_code == 200


def test_token_info(api):
    token = api.login()
    info = api.client.get("/oauth/token/info", headers=bearer(token["access_token"]))
    assert info.status_code == 200
    body = info.json()
    assert body["active"] is True and body["token_type"] == "Bearer"
    assert body["client_id"] == api.world["oauth_application"]["client_id"]
    assert body["sub"] == api.world["user"]["id"] and body["scope"] == token["scope"]
    assert body["exp"] - body["iat"] == 3600
    assert api.client.get("/oauth/token/info", headers=bearer("unknown")).json() == {"active": False}
    oauth_error(api.client.get("/oauth/token/info"), 401, "invalid_request")


def test_expired_token_after_clock_advance(api):
    api.control("POST", "/settings", json={"token_ttl": 60})
    token = api.login()
    assert token["expires_in"] == 60
    api.advance(61)
    info = api.client.get("/oauth/token/info", headers=bearer(token["access_token"]))
    assert info.status_code == 200 and info.json() == {"active": False}
    assert api.client.get("/v1/user", headers=bearer(token["access_token"])).status_code == 401


# ---------------------------------------------------------------- application tokens


def test_application_tokens_list_get_and_revoke(api):
    app_id = api.world["oauth_application"]["id"]
    token = api.login()
    api.login()
    listed = api.get(f"{APPS}/{app_id}/tokens").json()
    assert listed["total_count"] == 2
    record = listed["data"][0]
    assert "token" not in record and "plain_text_refresh_token" not in record
    assert record["actor_id"] == api.world["user"]["id"]
    path = f"{APPS}/{app_id}/tokens/{record['id']}"
    assert api.get(path).json()["id"] == record["id"]
    assert api.delete(path).status_code == 204
    assert api.get(path).status_code == 404
    assert api.client.get("/oauth/token/info", headers=bearer(token["access_token"])).json() == {"active": False}
    assert api.client.get("/v1/user", headers=bearer(token["access_token"])).status_code == 401


def test_deprecated_application_token_endpoint(api):
    app = api.world["oauth_application"]
    path = f"{APPS}/{app['id']}/token"
    body = {
        "client_id": app["client_id"],
        "client_secret": app["client_secret"],
        "grant_type": "authorization_code",
        "code": api.authorization_code(),
        "redirect_uri": app["redirect_uri"],
    }
    assert api.client.post(path, json=body).status_code == 401  # resource endpoint: needs Authorization
    created = api.post(path, json=body)
    assert created.status_code == 200, created.text
    record = created.json()
    assert record["token"] and record["plain_text_refresh_token"]
    assert api.client.get("/v1/user", headers=bearer(record["token"])).status_code == 200
    assert api.post(path, json=body).json()["code"] == "unprocessable"  # code reused

    refresh = {"client_id": app["client_id"], "client_secret": app["client_secret"], "grant_type": "refresh_token"}
    renewed = api.post(path, json={**refresh, "refresh_token": record["plain_text_refresh_token"]})
    assert renewed.status_code == 200 and renewed.json()["id"] == record["id"]
    assert renewed.json()["token"] != record["token"]
    assert api.post(path, json={**refresh, "refresh_token": record["plain_text_refresh_token"]}).status_code == 422

    assert api.post(path, json={**refresh, "client_secret": "bad", "refresh_token": "x"}).json()["code"] == "forbidden"
    assert api.post(path, json={**refresh}).json()["code"] == "invalid_params"
    assert api.post(path, json={**refresh, "grant_type": "password"}).status_code == 422
    assert api.post(f"{APPS}/unknown/token", json={**refresh, "refresh_token": "x"}).status_code == 404


# ---------------------------------------------------------------- OAuth applications


def test_applications_listed_and_read_without_their_client_secret(api):
    app = api.world["oauth_application"]
    api.login()
    listed = api.get(APPS).json()
    assert listed["total_count"] == 1 and "mcp_tool_groups" not in listed["data"][0]
    record = listed["data"][0]
    assert (record["id"], record["name"], record["client_id"], record["tokens"]) == (app["id"], app["name"],
                                                                                      app["client_id"], 1)
    assert record["scopes"] == app["scope"] and record["domain"] == "127.0.0.1"
    assert [entry["scope"] for entry in record["scopes_by_resource"]["organization"]] == [
        "read_organization", "write_organization", "read_databases", "write_databases"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", record["created_at"])
    assert app["client_secret"] not in str(listed)
    assert api.get(f"{APPS}/{app['id']}").json() == record
    assert api.get(f"{APPS}/unknown").status_code == 404


def test_recorded_shapes_of_applications_and_tokens_carry_the_tokens_secrets(api):
    app_id = api.world["oauth_application"]["id"]
    token = api.login()
    assert api.control("POST", "/settings", json={"recorded_billing_oauth": True}).status_code == 200
    listed = api.get(APPS).json()
    assert listed.keys() == {"data"} and listed["data"][0]["mcp_tool_groups"] is None
    assert listed["data"][0]["created_at"].endswith("Z") and "." not in listed["data"][0]["created_at"]
    assert api.get(f"{APPS}/{app_id}").json() == listed["data"][0]
    tokens = api.get(f"{APPS}/{app_id}/tokens").json()
    assert tokens.keys() == {"data"}
    record = tokens["data"][0]
    assert (record["token"], record["plain_text_refresh_token"]) == (token["access_token"], token["refresh_token"])
    assert [record[key] for key in ("name", "expires_at", "actor_id", "service_token_accesses")] == [None] * 4
    assert record["oauth_accesses_by_resource"] == {"database": {}} and "." not in record["created_at"]
    path = f"{APPS}/{app_id}/tokens/{record['id']}"
    assert api.get(path).json() == record
    assert api.delete(path).status_code == 204 and api.get(path).status_code == 404
