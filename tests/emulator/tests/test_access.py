"""Service tokens (the secret once, expiry, authentication, accesses and grants) and organization members
(roles, the credential's own user, identity-provider-managed users, the last administrator, removal), with the
seeding of more than one page of each. Every answer is validated against the published OpenAPI after the test
(conftest.openapi_check); the access and grants endpoints are the reference's x-not-in-published-spec ones."""

from datetime import datetime, timedelta

ORG = "/v1/organizations/acme"
TOKENS = f"{ORG}/service-tokens"
MEMBERS = f"{ORG}/members"


def error_of(response, status, code="unprocessable"):
    assert response.status_code == status, response.text
    body = response.json()
    assert body["code"] == code and body["message"], body
    return body["message"]


def when(stamp):
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def create_token(api, **body):
    response = api.post(TOKENS, json=body)
    assert response.status_code == 200, response.text  # 200, not 201, as the platform answers
    return response.json()


def auth_of(token):
    return {"Authorization": f"{token['id']}:{token['token']}"}


def accesses(api, token_id, method="POST", status=200, **body):
    response = api.call(method, f"{TOKENS}/{token_id}/access", json=body)
    assert response.status_code == status, response.text
    return response.json() if status == 200 else None


# ---------------------------------------------------------------- service tokens


def test_the_token_is_in_the_create_answer_only(api):
    token = create_token(api, name="ci")
    assert token["token"].startswith("pscale_tkn_") and token["name"] == "ci"
    assert token["expires_at"] is None and token["service_token_accesses"] == []
    again = api.get(f"{TOKENS}/{token['id']}").json()
    assert "token" not in again and again["id"] == token["id"]
    listed = api.get(TOKENS).json()["data"]
    assert [t["id"] for t in listed if t["id"] == token["id"]] == [token["id"]]
    assert all("token" not in t for t in listed)
    assert token["token"] not in api.get(TOKENS).text + api.get(f"{TOKENS}/{token['id']}").text


def test_ttl_sets_the_expiry_and_an_expired_token_stops_working(api):
    token = create_token(api, name="short", ttl=600)
    assert when(token["expires_at"]) - when(token["created_at"]) == timedelta(seconds=600)
    assert api.client.get("/v1/user", headers=auth_of(token)).status_code == 200
    api.advance(601)
    assert api.client.get("/v1/user", headers=auth_of(token)).status_code == 401


def test_a_created_token_authenticates_until_it_is_deleted(api):
    token = create_token(api, name="deployer")
    listed = api.client.get(f"{ORG}/databases", headers=auth_of(token))
    assert listed.status_code == 200 and listed.json()["data"][0]["name"] == "app"
    assert api.get(f"{TOKENS}/{token['id']}").json()["last_used_at"] is not None
    wrong = {"Authorization": f"{token['id']}:{token['token']}x"}
    assert api.client.get("/v1/user", headers=wrong).status_code == 401
    assert api.delete(f"{TOKENS}/{token['id']}").status_code == 204
    assert api.client.get("/v1/user", headers=auth_of(token)).status_code == 401
    error_of(api.get(f"{TOKENS}/{token['id']}"), 404, "not_found")
    error_of(api.delete(f"{TOKENS}/{token['id']}"), 404, "not_found")


def test_bad_token_input_is_refused(api):
    before = api.get(TOKENS).json()["total_count"]
    for body in ({"ttl": -1}, {"ttl": "1h"}, {"name": 5}, {"name": "x" * 256}):
        assert api.post(TOKENS, json=body).json()["code"] == "invalid_params", body
    assert api.get(TOKENS).json()["total_count"] == before
    assert create_token(api, ttl=0)["expires_at"] is None
    assert create_token(api)["name"] is None  # the platform's name is optional (nullable)


def test_the_seeded_token_is_listed_and_the_forbidden_one_is_not(api):
    ids = [t["id"] for t in api.get(TOKENS).json()["data"]]
    assert api.world["service_token"]["id"] in ids
    assert api.world["forbidden_service_token"]["id"] not in ids
    error_of(api.get(f"{TOKENS}/{api.world['forbidden_service_token']['id']}"), 404, "not_found")


def test_accesses_on_a_database_and_on_the_organization(api):
    token = create_token(api, name="ci")
    added = accesses(api, token["id"], database="app", access=["read_branch", "create_branch"])["data"]
    assert [(a["access"], a["resource_type"], a["resource_name"]) for a in added] == [
        ("read_branch", "Database", "app"), ("create_branch", "Database", "app")]
    assert added[0]["resource"]["type"] == "Database" and added[0]["description"]
    org_wide = accesses(api, token["id"], access=["create_databases"])["data"]
    assert [(a["access"], a["resource_type"], a["resource_name"]) for a in org_wide] == [
        ("create_databases", "Organization", "acme")]
    record = api.get(f"{TOKENS}/{token['id']}").json()
    assert sorted(a["access"] for a in record["service_token_accesses"]) == [
        "create_branch", "create_databases", "read_branch"]
    assert api.get(f"{TOKENS}/{token['id']}/access").json()["data"] == record["service_token_accesses"]
    grants = api.get(f"{TOKENS}/{token['id']}/grants").json()["data"]
    assert [(g["resource_type"], g["resource_name"], [a["access"] for a in g["accesses"]]) for g in grants] == [
        ("Organization", "acme", ["create_databases"]), ("Database", "app", ["read_branch", "create_branch"])]


def test_adding_an_access_the_token_has_changes_nothing(api):
    token = create_token(api)
    first = accesses(api, token["id"], database="app", access=["read_branch"])["data"]
    again = accesses(api, token["id"], database="app", access=["read_branch", "read_branch"])["data"]
    assert again == first
    assert len(api.get(f"{TOKENS}/{token['id']}").json()["service_token_accesses"]) == 1


def test_removing_accesses(api):
    token = create_token(api)
    accesses(api, token["id"], database="app", access=["read_branch", "create_branch", "delete_branch"])
    accesses(api, token["id"], access=["read_branch"])  # organization-wide: another grant
    accesses(api, token["id"], "DELETE", 204, database="app", access=["create_branch", "delete_branch"])
    left = api.get(f"{TOKENS}/{token['id']}").json()["service_token_accesses"]
    assert sorted((a["access"], a["resource_type"]) for a in left) == [
        ("read_branch", "Database"), ("read_branch", "Organization")]
    accesses(api, token["id"], "DELETE", 204, database="app", access=["create_branch"])  # absent: no change
    accesses(api, token["id"], "DELETE", 204, access=["read_branch"])
    assert [a["resource_type"] for a in api.get(f"{TOKENS}/{token['id']}/access").json()["data"]] == ["Database"]


def test_bad_accesses_are_refused(api):
    token = create_token(api)
    path = f"{TOKENS}/{token['id']}/access"
    assert "unknown_thing" in error_of(api.post(path, json={"database": "app", "access": ["unknown_thing"]}), 422)
    assert "leave out" in error_of(api.post(path, json={"database": "app", "access": ["create_databases"]}), 422)
    assert "nope" in error_of(api.post(path, json={"database": "nope", "access": ["read_branch"]}), 422)
    error_of(api.post(path, json={"database": "app", "access": []}), 422, "invalid_params")
    error_of(api.post(path, json={"access": "read_branch"}), 422, "invalid_params")
    error_of(api.post(f"{TOKENS}/missing/access", json={"access": ["read_branch"]}), 404, "not_found")
    assert api.get(f"{TOKENS}/{token['id']}").json()["service_token_accesses"] == []


def test_seeded_tokens_fill_more_than_one_page(api):
    seeded = api.control("POST", "/seed", json={"service_tokens": {"count": 30, "ttl": 3600}}).json()
    ids = seeded["service_tokens"]
    assert len(ids) == 30
    first = api.get(TOKENS, params={"per_page": 25}).json()
    second = api.get(TOKENS, params={"per_page": 25, "page": 2}).json()
    assert first["total_count"] == 31 and first["next_page"] == 2 and len(second["data"]) == 6
    by_id = {t["id"]: t for t in first["data"] + second["data"]}
    wide = by_id[ids[0]]
    assert [(a["access"], a["resource_type"]) for a in wide["service_token_accesses"]][0] == \
        ("create_databases", "Organization")
    assert by_id[ids[1]]["expires_at"] is None and by_id[ids[2]]["expires_at"] is not None
    assert all(a["resource_type"] == "Database" for a in by_id[ids[1]]["service_token_accesses"])
    assert sum(by_id[i]["expires_at"] is None for i in ids) == 15


def test_max_per_page_answers_smaller_pages_than_asked(api):
    """max_per_page makes a few records more than a page (the suites' multi-page tests need fewer of them)."""
    api.control("POST", "/seed", json={"service_tokens": {"count": 11}})
    api.control("POST", "/settings", json={"max_per_page": 5})
    first = api.get(TOKENS, params={"per_page": 100}).json()
    assert (len(first["data"]), first["per_page"], first["next_page"], first["total_count"]) == (5, 5, 2, 12)
    third = api.get(TOKENS, params={"per_page": 100, "page": 3}).json()
    assert (len(third["data"]), third["next_page"]) == (2, None)
    assert len(api.get(TOKENS, params={"per_page": 3}).json()["data"]) == 3  # a smaller page, as asked


# ---------------------------------------------------------------- members


def member_auth(api, user_id):
    """An OAuth access token of another member (the consent stand-in, then the code grant)."""
    app = api.world["oauth_application"]
    code = api.authorization_code(user_id=user_id)
    grant = api.token(grant_type="authorization_code", code=code, redirect_uri=app["redirect_uri"],
                      client_id=app["client_id"], client_secret=app["client_secret"]).json()
    return {"Authorization": f"Bearer {grant['access_token']}"}


def test_get_a_member_by_user_or_membership_id(api):
    user = api.world["users"][0]
    member = api.get(f"{MEMBERS}/{user['id']}").json()
    assert member["user"]["email"] == user["email"] and member["role"] == "member"
    assert api.get(f"{MEMBERS}/{member['id']}").json() == member
    error_of(api.get(f"{MEMBERS}/nobody"), 404, "not_found")


def test_q_filters_by_name_or_email(api):
    by_email = api.get(MEMBERS, params={"q": "MEMBER1"}).json()["data"]
    assert sorted(m["user"]["email"] for m in by_email) == ["member10@acme.test", "member1@acme.test"]
    by_name = api.get(MEMBERS, params={"q": "directory user"}).json()["data"]
    assert len(by_name) == 2
    assert api.get(MEMBERS, params={"q": "zzz"}).json()["total_count"] == 0


def test_change_a_role(api):
    user = api.world["users"][0]
    promoted = api.patch(f"{MEMBERS}/{user['id']}", json={"role": "admin"})
    assert promoted.status_code == 200 and promoted.json()["role"] == "admin"
    assert api.get(f"{MEMBERS}/{user['id']}").json()["role"] == "admin"
    again = api.patch(f"{MEMBERS}/{user['id']}", json={"role": "admin"})
    assert again.json()["updated_at"] == promoted.json()["updated_at"]  # no change
    assert api.patch(f"{MEMBERS}/{user['id']}", json={"role": "member"}).json()["role"] == "member"
    error_of(api.patch(f"{MEMBERS}/{user['id']}", json={"role": "owner"}), 422, "invalid_params")


def test_own_role_cannot_change(api):
    message = error_of(api.patch(f"{MEMBERS}/{api.world['user']['id']}", json={"role": "member"}), 422)
    assert "your own role" in message
    assert api.get(f"{MEMBERS}/{api.world['user']['id']}").json()["role"] == "admin"


def test_identity_provider_managed_role_cannot_change(api):
    managed = api.world["idp_managed_member"]
    member = api.get(f"{MEMBERS}/{managed['id']}").json()
    assert member["user"]["directory_managed"] is True and member["user"]["email"] == managed["email"]
    message = error_of(api.patch(f"{MEMBERS}/{managed['id']}", json={"role": "admin"}), 422)
    assert "identity provider" in message
    assert "identity provider" in error_of(api.delete(f"{MEMBERS}/{managed['id']}"), 422)
    assert api.get(f"{MEMBERS}/{managed['id']}").json()["role"] == "member"


def test_the_last_administrator_stays(api):
    admin = api.world["user"]
    other = member_auth(api, api.world["users"][0]["id"])  # a member's credential demotes the only admin
    response = api.client.patch(f"{MEMBERS}/{admin['id']}", json={"role": "member"}, headers=other)
    assert "last administrator" in error_of(response, 422)
    assert "last administrator" in error_of(api.delete(f"{MEMBERS}/{admin['id']}"), 422)
    # with a second administrator, the first one can go
    assert api.patch(f"{MEMBERS}/{api.world['users'][1]['id']}", json={"role": "admin"}).status_code == 200
    response = api.client.patch(f"{MEMBERS}/{admin['id']}", json={"role": "member"}, headers=other)
    assert response.status_code == 200 and response.json()["role"] == "member"


def test_remove_a_member_with_their_passwords_and_tokens(api):
    user = api.world["users"][2]
    theirs = member_auth(api, user["id"])
    token = api.client.post(TOKENS, json={"name": "theirs"}, headers=theirs).json()
    password = api.client.post(f"{ORG}/databases/app/branches/main/passwords", json={"name": "theirs"},
                               headers=theirs).json()
    mine = create_token(api, name="mine")
    team = api.world["teams"]["regular"]
    assert api.post(f"{ORG}/teams/{team}/members", json={"user_id": user["id"]}).status_code == 200
    response = api.delete(f"{MEMBERS}/{user['id']}", params={"delete_passwords": "true",
                                                            "delete_service_tokens": "true"})
    assert response.status_code == 204
    error_of(api.get(f"{MEMBERS}/{user['id']}"), 404, "not_found")
    assert api.client.get("/v1/user", headers=auth_of(token)).status_code == 401
    error_of(api.get(f"{ORG}/databases/app/branches/main/passwords/{password['id']}"), 404, "not_found")
    assert api.get(f"{TOKENS}/{mine['id']}").status_code == 200
    assert user["id"] not in [m["user"]["id"] for m in api.get(f"{ORG}/teams/{team}/members",
                                                                 params={"per_page": 100}).json()["data"]]


def test_remove_a_member_keeps_their_passwords_and_tokens_unless_asked(api):
    user = api.world["users"][3]
    theirs = member_auth(api, user["id"])
    token = api.client.post(TOKENS, json={"name": "theirs"}, headers=theirs).json()
    password = api.client.post(f"{ORG}/databases/app/branches/main/passwords", json={"name": "theirs"},
                               headers=theirs).json()
    assert api.delete(f"{MEMBERS}/{user['id']}").status_code == 204
    assert api.get(f"{TOKENS}/{token['id']}").status_code == 200
    assert api.get(f"{ORG}/databases/app/branches/main/passwords/{password['id']}").status_code == 200


def test_seeded_members_and_paging(api):
    seeded = api.control("POST", "/seed", json={"members": {"count": 30, "admins": 2, "directory_managed": 3}})
    ids = seeded.json()["members"]
    assert len(ids) == 30
    first = api.get(MEMBERS, params={"per_page": 100}).json()
    assert first["next_page"] == 2 and first["total_count"] > 100
    found = {m["user"]["id"]: m for m in api.get(MEMBERS, params={"q": "person", "per_page": 100}).json()["data"]}
    assert [found[i]["role"] for i in ids[:3]] == ["admin", "admin", "member"]
    assert [found[i]["user"]["directory_managed"] for i in ids[-4:]] == [False, True, True, True]


def test_removing_yourself_without_the_flags(api):
    user = api.world["users"][4]
    theirs = member_auth(api, user["id"])
    flagged = api.client.delete(f"{MEMBERS}/{user['id']}", params={"delete_passwords": "true"}, headers=theirs)
    assert "another member" in error_of(flagged, 422, "invalid_params")
    assert api.client.delete(f"{MEMBERS}/{user['id']}", headers=theirs).status_code == 204
    assert api.client.get(MEMBERS, headers=theirs).status_code == 403  # no longer a member


def test_lean_shapes_of_tokens_and_members(api):
    token = create_token(api, name="lean")
    accesses(api, token["id"], access=["read_organization"])
    api.control("POST", "/settings", json={"lean": True})
    listed = api.get(TOKENS).json()
    assert set(listed) == {"data"}
    record = next(t for t in listed["data"] if t["id"] == token["id"])
    assert record["type"] == "ServiceToken" and record["service_token_accesses"][0]["type"] == "ServiceTokenAccess"
    assert api.get(f"{MEMBERS}/{api.world['user']['id']}").json()["type"] == "OrganizationMembership"
