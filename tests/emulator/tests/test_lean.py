"""Answering as the real platform does when it is lean: the list_envelope, cluster_rate_name and
type_keys settings (and the lean shortcut), and fault rules that answer other bodies.

Every response here is validated against the published OpenAPI after the test, like all the
others (conftest.openapi_check): a lean answer may differ from it only as its setting asks."""

import pytest

from emulator.__main__ import parse_args, settings_of

from .conftest import DB, MAIN

TEAMS = "/v1/organizations/acme/teams"
MEMBERS = f"{TEAMS}/everyone/members"
FULL_PAGE = {"type", "current_page", "per_page", "next_page", "next_page_url", "prev_page", "prev_page_url",
             "total_count", "total_pages", "data"}
CURSOR_PAGE = {"type", "has_next", "has_prev", "cursor_start", "cursor_end", "data"}


def settings(api, **changes):
    response = api.control("POST", "/settings", json=changes)
    assert response.status_code == 200, response.text
    return response.json()


def faults(api, *rules):
    response = api.control("POST", "/faults", json={"rules": list(rules)})
    assert response.status_code == 200, response.text


# ---------------------------------------------------------------- list envelopes


def test_full_envelope_is_the_default(api):
    assert api.get(MEMBERS).json().keys() == FULL_PAGE
    assert api.get(f"{MAIN}/query-patterns").json().keys() == CURSOR_PAGE


def test_no_totals_envelope_keeps_the_links(api):
    settings(api, list_envelope="no_totals")
    first = api.get(MEMBERS, params={"per_page": 100}).json()
    assert first.keys() == FULL_PAGE - {"current_page", "total_count", "total_pages"}
    assert (first["type"], first["per_page"], first["next_page"], first["prev_page"]) == ("list", 100, 2, None)
    assert first["next_page_url"].endswith("page=2")
    assert api.get(f"{MAIN}/query-patterns").json().keys() == CURSOR_PAGE  # cursor lists have no totals


def test_bare_envelope_still_honours_page_and_per_page(api):
    settings(api, list_envelope="bare")
    seen, page = [], 1
    while True:
        body = api.get(MEMBERS, params={"page": page, "per_page": 100}).json()
        assert body.keys() == {"data"}
        seen += [member["id"] for member in body["data"]]
        if len(body["data"]) < 100:
            break
        page += 1
    assert (page, len(seen), len(set(seen))) == (3, 260, 260)
    assert api.get(MEMBERS, params={"page": 4, "per_page": 100}).json() == {"data": []}
    assert api.get(f"{DB}/regions", params={"per_page": 2}).json()["data"][1]["slug"] == "us-west"


def test_bare_cursor_list_honours_limit_and_starting_after(api):
    api.control("POST", "/seed", json={"reports": {"branch": "main", "count": 5}})
    settings(api, list_envelope="bare")
    first = api.get(f"{MAIN}/query-patterns", params={"limit": 3}).json()
    assert first.keys() == {"data"} and len(first["data"]) == 3
    rest = api.get(f"{MAIN}/query-patterns", params={"limit": 3, "starting_after": first["data"][-1]["id"]}).json()
    assert rest.keys() == {"data"} and len(rest["data"]) == 2
    assert not {r["id"] for r in first["data"]} & {r["id"] for r in rest["data"]}


# ---------------------------------------------------------------- records


def test_cluster_rate_name_replaces_cluster_name(api):
    settings(api, cluster_rate_name=True)
    main = api.get(f"{DB}/branches/main").json()
    assert main["cluster_rate_name"] == "PS_40" and "cluster_name" not in main
    listed = api.get(f"{DB}/branches").json()["data"][0]
    assert listed["cluster_rate_name"] == "PS_40" and "cluster_name" not in listed
    created = api.post(f"{DB}/branches", json={"name": "sized", "parent_branch": "main", "cluster_size": "PS_20"})
    assert created.status_code == 201 and created.json()["cluster_rate_name"] == "PS_20"
    settings(api, cluster_rate_name=False)
    assert api.get(f"{DB}/branches/sized").json()["cluster_name"] == "PS_20"


def test_type_keys_tag_every_record(api):
    settings(api, type_keys=True)
    branch = api.get(f"{DB}/branches/main").json()
    assert (branch["type"], branch["region"]["type"], branch["actor"]["type"]) == ("Branch", "Region", "User")
    password = api.post(f"{MAIN}/passwords", json={"name": "typed"}).json()
    assert (password["type"], password["region"]["type"]) == ("Password", "Region")
    team = api.get(f"{TEAMS}/engineering").json()
    assert (team["type"], team["members"][0]["type"], team["creator"]["type"]) == ("Team", "User", "User")
    assert api.get("/v1/user").json()["type"] == "User"
    regions = api.get(f"{DB}/regions").json()
    assert regions["type"] == "list" and {r["type"] for r in regions["data"]} == {"Region"}
    assert api.get(DB).json()["type"] == "Database"
    settings(api, type_keys=False)
    assert "type" not in api.get(f"{DB}/branches/main").json()


def test_recorded_databases_carry_neither_ready_nor_kind(api):
    full = api.get(DB).json()
    assert full["ready"] is True and full["kind"] == "mysql" and full["state"] == "ready"
    settings(api, recorded_databases=True)
    for record in [api.get(DB).json(), api.get("/v1/organizations/acme/databases").json()["data"][0],
                   api.patch(DB, json={"require_approval_for_deploy": False}).json()]:
        assert "ready" not in record and "kind" not in record and record["state"] == "ready"
    assert "ready" in api.get(f"{DB}/branches/main").json()  # branch records keep theirs
    settings(api, recorded_databases=False)
    assert api.get(DB).json()["kind"] == "mysql"


def test_recorded_capacity_leaves_the_vtgates_to_resizes_and_replicas_to_the_branch(api):
    """Issue 43: the platform's branch records carry replicas and no vtgate_* fields, its completed change requests
    no replicas."""
    pg = "/v1/organizations/acme/databases/pgapp/branches/main"
    assert "replicas" not in api.get(pg).json() and api.get(MAIN).json()["vtgate_count"] == 2
    settings(api, recorded_capacity=True, change_step_delay=0)
    for record in (api.get(MAIN).json(), api.get(f"{DB}/branches").json()["data"][0]):
        assert not [key for key in record if key.startswith("vtgate_")] and record["cluster_name"] == "PS_40"
    assert api.get(pg).json()["replicas"] == 2
    assert api.call("PUT", f"{MAIN}/resizes", json={"vtgate_size": "VTG_20", "vtgate_count": 3}).status_code == 200
    resize = api.get(f"{MAIN}/resizes").json()["data"][0]
    assert (resize["state"], resize["vtgate_name"], resize["vtgate_count"]) == ("completed", "VTG_20", 3)
    assert api.patch(f"{pg}/changes", json={"replicas": 1}).status_code == 200
    done = api.get(f"{pg}/changes").json()["data"][0]
    assert done["state"] == "completed" and "replicas" not in done and done["previous_replicas"] == 2
    assert api.get(pg).json()["replicas"] == 1
    settings(api, recorded_capacity=False)
    assert api.get(MAIN).json()["vtgate_count"] == 3 and "replicas" not in api.get(pg).json()


# ---------------------------------------------------------------- the lean shortcut, flags, validation


def test_lean_turns_on_the_leanest_shapes(api):
    changed = settings(api, lean=True)
    assert (changed["list_envelope"], changed["cluster_rate_name"], changed["type_keys"]) == ("bare", True, True)
    listed = api.get(f"{DB}/branches").json()
    assert listed.keys() == {"data"}
    assert listed["data"][0]["type"] == "Branch" and listed["data"][0]["cluster_rate_name"] == "PS_40"
    assert changed["recorded_databases"] is True and "ready" not in api.get(DB).json()
    assert changed["recorded_capacity"] is True and "vtgate_count" not in api.get(MAIN).json()
    assert settings(api, lean=True, list_envelope="no_totals")["list_envelope"] == "no_totals"  # named keys win
    back = settings(api, lean=False)
    assert (back["list_envelope"], back["cluster_rate_name"], back["type_keys"]) == ("full", False, False)


def test_reset_restores_the_start_up_shapes(api):
    settings(api, lean=True)
    api.control("POST", "/reset")
    assert api.control("GET", "/settings").json()["list_envelope"] == "full"


@pytest.mark.parametrize(
    "bad", [{"list_envelope": "tiny"}, {"lean": "yes"}, {"type_keys": "sometimes"}, {"cluster_rate_name": None}]
)
def test_invalid_shape_settings(api, bad):
    response = api.control("POST", "/settings", json=bad)
    assert response.status_code == 422 and response.json()["code"] == "invalid_params", response.text
    assert api.control("GET", "/settings").json()["list_envelope"] == "full"


@pytest.mark.parametrize(
    "argv, expected",
    [
        ([], ("full", False, False)),
        (["--lean"], ("bare", True, True)),
        (["--lean", "--list-envelope", "no_totals"], ("no_totals", True, True)),
        (["--list-envelope", "no_totals", "--type-keys"], ("no_totals", False, True)),
        (["--cluster-rate-name"], ("full", True, False)),
    ],
)
def test_command_line_flags(argv, expected):
    chosen = settings_of(parse_args(argv))
    assert (chosen.list_envelope, chosen.cluster_rate_name, chosen.type_keys) == expected
    assert chosen.recorded_databases is ("--lean" in argv)
    assert settings_of(parse_args(argv + ["--recorded-databases"])).recorded_databases is True


# ---------------------------------------------------------------- fault bodies


def test_fault_answers_the_validation_errors_shape(api):
    faults(api, {"method": "POST", "path": "/passwords$", "status": 422, "body": "errors", "times": 1,
                 "message": "Name has already been taken"})
    answer = api.post(f"{MAIN}/passwords", json={"name": "dup"})
    assert answer.status_code == 422 and answer.headers["content-type"] == "application/json"
    assert answer.json() == {"errors": [{"namespace": "request", "name": "base",
                                         "errors": ["Name has already been taken"]}]}
    assert api.get(f"{MAIN}/passwords").json()["data"] == []  # before commit: nothing applied


def test_fault_answers_given_validation_entries(api):
    entries = [{"namespace": "database_branch_password", "name": "name", "errors": ["is too long", "is invalid"]}]
    faults(api, {"path": "/teams$", "status": 422, "body": "errors", "errors": entries})
    assert api.post(TEAMS, json={"name": "x"}).json() == {"errors": entries}


def test_fault_answers_text_empty_object_and_nothing(api):
    faults(
        api,
        {"method": "GET", "path": "/user$", "status": 500, "body": "text", "times": 1},
        {"method": "GET", "path": "/user$", "status": 502, "body": "empty_object", "times": 1},
        {"method": "DELETE", "path": "/teams/", "status": 204, "body": "empty", "times": 1},
        {"method": "GET", "path": "/user$", "status": 503, "body": "text", "message": "upstream reset", "times": 1},
    )
    text = api.get("/v1/user")
    assert (text.status_code, text.text) == (500, "Internal Server Error\n")
    assert text.headers["content-type"].startswith("text/plain")
    empty_object = api.get("/v1/user")
    assert (empty_object.status_code, empty_object.json()) == (502, {})
    nothing = api.delete(f"{TEAMS}/engineering")
    assert (nothing.status_code, nothing.content) == (204, b"")
    assert api.get(f"{TEAMS}/engineering").status_code == 200  # the fault answered, nothing was deleted
    upstream = api.get("/v1/user")
    assert (upstream.status_code, upstream.text, upstream.headers["retry-after"]) == (503, "upstream reset\n", "1")


@pytest.mark.parametrize("value", [[], "x", None, {"data": "not a list"}])
def test_fault_answers_wrong_shape_json_successes(api, value):
    faults(api, {"method": "GET", "path": "/user$", "status": 200, "body": "json", "value": value, "times": 1})
    answer = api.get("/v1/user")
    assert answer.status_code == 200 and answer.json() == value
    assert api.get("/v1/user").json()["id"] == api.world["user"]["id"]
    assert api.control("GET", "/requests").json()[-2]["fault"] == {"status": 200, "body": "json"}


def test_fault_bodies_after_commit(api):
    faults(api, {"method": "POST", "path": "/branches$", "status": 201, "body": "empty_object",
                 "after_commit": True, "times": 1})
    answer = api.post(f"{DB}/branches", json={"name": "applied", "parent_branch": "main"})
    assert (answer.status_code, answer.json()) == (201, {})
    assert api.get(f"{DB}/branches/applied").status_code == 200


@pytest.mark.parametrize(
    "rule, needle",
    [
        ({"path": "x", "body": "text"}, "body needs a status"),
        ({"path": "x", "status": 418}, "needs a body"),
        ({"path": "x", "status": 200, "body": "json"}, "value"),
        ({"path": "x", "status": 200, "body": "text", "value": 1}, "value"),
        ({"path": "x", "status": 422, "body": "text", "errors": []}, "errors are the entries"),
        ({"path": "x", "status": 502, "message": "m"}, "message"),
        ({"path": "x", "status": 204, "body": "empty_object"}, "carries no body"),
        ({"path": "x", "status": 600, "body": "text"}, "less than or equal to 599"),
        ({"path": "x", "status": 422, "body": "yaml"}, "body"),
        ({"path": "x", "status": 422, "body": "errors", "errors": [{"namespace": "n"}]}, "errors"),
    ],
)
def test_invalid_fault_bodies(api, rule, needle):
    response = api.control("POST", "/faults", json={"rules": [rule]})
    assert response.status_code == 422 and response.json()["code"] == "invalid_params"
    assert needle in response.json()["message"], response.json()["message"]
