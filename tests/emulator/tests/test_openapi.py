"""The OpenAPI check itself: it bites when a model loses a required field (with the full shapes
and with the lean ones), tells lean and faulted answers from violations, takes in every
published file found, and says why when there is none."""

import json

import pytest
from fastapi.testclient import TestClient

from emulator import Settings, create_app
from emulator.world.models import RECORDED_WITHOUT, Team

from .conftest import MAIN, Api, emulator_operations
from .openapi_check import Exchange, PublishedApi, Recorder, missing_reason, reference_files

TEAM = "/v1/organizations/acme/teams/engineering"


@pytest.fixture
def team_without_analyst_databases():
    """The Team model with its required analyst_databases left out of every answer."""
    field = Team.model_fields["analyst_databases"]
    field.exclude = True
    Team.model_rebuild(force=True)
    try:
        yield
    finally:
        field.exclude = None
        Team.model_rebuild(force=True)


def outcomes(published, settings, calls):
    """Run calls (a function of an Api) on a fresh emulator of its own; the outcome of each /v1 answer."""
    recorder = Recorder()
    with TestClient(recorder.wrap(create_app(settings))) as client:
        calls(Api(client))
    return [published.check(exchange) for exchange in recorder.drain() if exchange.path.startswith("/v1/")]


@pytest.mark.parametrize("settings", [Settings(), Settings(lean=True)], ids=["full", "lean"])
def test_a_model_without_a_required_field_is_a_violation(published, team_without_analyst_databases, settings):
    def calls(api):
        assert "analyst_databases" not in api.get(TEAM).json()
        assert "analyst_databases" not in api.get("/v1/organizations/acme/teams").json()["data"][0]

    found = outcomes(published, settings, calls)
    assert [outcome.kind for outcome in found] == ["violation", "violation"]
    assert all("missing required 'analyst_databases'" in problem for o in found for problem in o.problems)
    assert "missing required 'analyst_databases'" in found[1].problems[0] and "/data/0" in found[1].problems[0]


def test_the_same_calls_are_valid_with_the_model_whole(published):
    def calls(api):
        api.get(TEAM)
        api.get("/v1/organizations/acme/teams")

    assert [outcome.kind for outcome in outcomes(published, Settings(), calls)] == ["validated", "validated"]


def test_lean_answers_differ_only_as_asked(published):
    def calls(api):
        api.get("/v1/organizations/acme/databases/app/branches")
        api.get("/v1/organizations/acme/databases/app/branches/main")
        api.get(TEAM)

    found = outcomes(published, Settings(lean=True), calls)
    assert [outcome.kind for outcome in found] == ["expected", "expected", "validated"]
    assert any("missing required 'total_count'" in problem for problem in found[0].problems)
    recorded = ["cluster_name", *RECORDED_WITHOUT]  # the recorded_capacity setting
    assert sorted(found[1].problems) == sorted(f"{name}: at /: missing required '{key}'" for key in recorded
                                               for name in ("platform-openapi-next.json", "platform-openapi-subset.json"))


def test_a_lean_setting_excuses_only_its_own_difference(published):
    """cluster_rate_name excuses a branch without cluster_name, not a list without its totals."""
    exchange = Exchange("GET", "/v1/organizations/acme/databases/app/branches", 200, "application/json",
                        json.dumps({"data": []}).encode(), settings={"cluster_rate_name": True})
    outcome = published.check(exchange)
    assert outcome.kind == "violation" and "missing required 'current_page'" in " ".join(outcome.problems)


def test_faulted_answers_are_held_to_what_the_operation_declares(published):
    def calls(api):
        rules = [
            {"method": "GET", "path": "/user$", "status": 500, "body": "text", "times": 1},
            {"method": "POST", "path": "/passwords$", "status": 422, "body": "errors", "times": 1},
            {"method": "GET", "path": "/user$", "status": 200, "body": "json", "value": [], "times": 1},
            {"method": "GET", "path": "/user$", "status": 502, "times": 1},
            {"method": "GET", "path": "/user$", "status": 500, "times": 1},
        ]
        api.control("POST", "/faults", json={"rules": rules})
        api.get("/v1/user")
        api.post(f"{MAIN}/passwords")
        api.get("/v1/user")
        api.get("/v1/user")
        api.get("/v1/user")

    found = outcomes(published, Settings(), calls)
    assert [(o.exchange.status, o.kind) for o in found] == [
        (500, "validated"),  # declared without content: any body
        (422, "validated"),  # POST passwords declares 422
        (200, "expected"),  # the wrong shape the rule asked for
        (502, "undeclared_error"),  # a proxy's page: no operation declares 502
        (500, "validated"),
    ]


def test_a_success_answer_to_an_operation_nobody_declares_is_a_violation(published):
    outcome = published.check(Exchange("GET", "/v1/organizations/acme/widgets", 200, "application/json", b"{}"))
    assert outcome.kind == "violation" and "no published OpenAPI file declares" in outcome.problems[0]
    assert published.check(Exchange("GET", "/v1/nope", 404, "application/json", b"{}")).kind == "outside"


def test_every_file_in_the_reference_directory_takes_part(tmp_path):
    """A file added beside the others (as later issues bring new endpoints) is read with them."""
    schema = {"type": "object", "properties": {"colour": {"type": "string"}}, "required": ["colour"]}
    document = {
        "openapi": "3.0.1",
        "info": {"title": "widgets", "version": "v1"},
        "servers": [{"url": "https://api.planetscale.com/v1"}],
        "paths": {"/organizations/{organization}/widgets/{id}": {"get": {
            "parameters": [{"name": "organization", "in": "path", "required": True, "schema": {"type": "string"}},
                           {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
            "responses": {"200": {"description": "a widget", "content": {"application/json": {"schema": schema}}}},
        }}},
        "x-not-in-published-spec": {"gadgets": [{"method": "GET", "path": "/organizations/{organization}/gadgets"}]},
    }
    (tmp_path / "platform-openapi-widgets.json").write_text(json.dumps(document))
    published = PublishedApi(sorted(tmp_path.glob("platform-openapi-*.json")))
    path = "/v1/organizations/acme/widgets/w1"
    good = published.check(Exchange("GET", path, 200, "application/json", b'{"colour": "red"}'))
    bad = published.check(Exchange("GET", path, 200, "application/json", b'{"colour": 7}'))
    assert (good.kind, bad.kind) == ("validated", "violation")
    assert "7 is not of type 'string'" in bad.problems[0]
    unpublished = Exchange("GET", "/v1/organizations/acme/gadgets", 200, "application/json", b"[]")
    assert published.check(unpublished).kind == "outside"


def test_without_the_reference_files_the_check_says_why(tmp_path):
    reason = missing_reason(tmp_path)
    assert str(tmp_path) in reason and "platform-openapi-*.json" in reason and "not validated" in reason
    (tmp_path / "platform-openapi-subset.json").write_text("{}")
    assert missing_reason(tmp_path) is None


def test_the_operations_of_the_emulator_are_found_through_its_routers(published):
    """The coverage of operations (conftest.unexercised_operations) reads the routes of every included router."""
    operations = emulator_operations()
    assert operations["GET /v1/user"] == "GET /user"
    assert operations["POST /v1/organizations/{organization}/databases/{database}/deploy-requests"] == \
        "POST /organizations/{organization}/databases/{database}/deploy-requests"
    assert None not in operations.values(), [route for route, op in operations.items() if op is None]


@pytest.mark.parametrize("group", ["deploy_requests", "branch_lifecycle"])
def test_every_operation_of_a_scope_group_is_served(published, group):
    """Issue 19's groups of the published OpenAPI: the emulator answers each operation (and the whole suite
    gets a validated success answer from each, conftest.pytest_sessionfinish)."""
    declared = set()
    for path in reference_files():
        for template, item in json.loads(path.read_text()).get("paths", {}).items():
            declared |= {f"{method.upper()} {template}" for method, operation in item.items()
                         if isinstance(operation, dict) and operation.get("x-next-scope-group") == group}
    assert declared, f"no operation of group {group} in the published OpenAPI"
    assert declared - set(emulator_operations().values()) == set()
