# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""branch: production (promote/demote), safe_migrations and deletion_protected."""

from __future__ import annotations

import json

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.branch import Branch

URL = "/v1/organizations/acme/databases/shop/branches"
NOT_FOUND = (404, {"code": "not_found", "message": "Not Found"})
NO_KEY = dict(lint_error="NO_UNIQUE_KEY", subject_type="table", keyspace_name="shop", table_name="logs",
              error_description="The table has no primary or unique key.", docs_url="https://docs.example/keys")
NO_KEY_2 = dict(NO_KEY, table_name="events")
NO_KEY_SENTENCE = ("table 'logs' of keyspace 'shop': NO_UNIQUE_KEY: The table has no primary or unique key (see "
                   "https://docs.example/keys); table 'events' of keyspace 'shop': NO_UNIQUE_KEY: The table has no "
                   "primary or unique key (see https://docs.example/keys)")


MODULE = Branch  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="shop", name="dev", service_token_id="svc", service_token="s3cret")


def branch(state="ready", **fields):
    return dict(dict(id="b1", name="dev", parent_branch="main", state=state, ready=state == "ready",
                     region=dict(slug="us-east"), production=False, safe_migrations=False, deletion_protected=False),
                **fields)


def lint(*errors, next_page=None):
    return (200, dict(type="list", current_page=1, next_page=next_page, data=list(errors)))


def calls(server):
    return [(r["method"], r["path"][len(URL):]) for r in server.requests]


def body(server, index):
    return json.loads(server.requests[index]["body"])


# production ------------------------------------------------------------------------------------

def test_production_true_promotes_and_shows_it_in_the_diff(server, run):
    server.script = [(200, branch()), (200, branch(production=True))]
    result = run(production=True, diff=True)
    assert result["changed"] is True and result["branch"]["production"] is True
    assert calls(server) == [("GET", "/dev"), ("POST", "/dev/promote")]
    assert result["diff"] == dict(before=dict(name="dev", parent_branch="main", region="us-east", production=False),
                                  after=dict(name="dev", parent_branch="main", region="us-east", production=True))


def test_production_true_on_a_production_branch_is_one_read(server, run):
    server.script = [(200, branch(production=True))]
    assert run(production=True)["changed"] is False
    assert calls(server) == [("GET", "/dev")]


DATABASE = dict(id="d1", name="shop", default_branch="main")
DEFAULT_DEMOTE = ("Branch 'main' of database 'shop' is the database's default branch, which the platform does not "
                  "demote: make another branch the default first (planetscale.cloud.database with default_branch), "
                  "then demote this one.")


def test_production_false_demotes(server, run):
    server.script = [(200, branch(production=True)), (200, DATABASE), (200, branch())]
    assert run(production=False)["changed"] is True
    assert calls(server) == [("GET", "/dev"), ("GET", ""), ("POST", "/dev/demote")]
    assert server.requests[1]["path"] == "/v1/organizations/acme/databases/shop"


@pytest.mark.parametrize("check_mode", [True, False])
def test_the_default_branch_is_not_demoted_in_either_mode(server, run, sleeps, check_mode):
    server.script = [(200, branch(name="main", parent_branch=None, production=True)), (200, DATABASE)]
    with pytest.raises(ModuleFailure) as caught:
        run(check_mode=check_mode, name="main", production=False, deletion_protected=True)
    assert caught.value.msg == DEFAULT_DEMOTE
    assert [r["method"] for r in server.requests] == ["GET", "GET"]  # the branch, the database: no write


@pytest.mark.parametrize("check_mode", [True, False])
def test_a_branch_record_that_says_default_needs_no_read_of_the_database(server, run, sleeps, check_mode):
    server.script = [(200, branch(name="main", production=True, default=True))]
    with pytest.raises(ModuleFailure) as caught:
        run(check_mode=check_mode, name="main", production=False)
    assert caught.value.msg == DEFAULT_DEMOTE
    assert calls(server) == [("GET", "/main")]
    server.requests.clear()
    server.script = [(200, branch(production=True, default=False)), (200, branch())]
    assert run(check_mode=check_mode, production=False)["changed"] is True
    assert calls(server) == [("GET", "/dev")] + ([] if check_mode else [("POST", "/dev/demote")])


def test_a_promotion_still_under_way_is_waited_for(server, run, sleeps):
    server.script = [(200, branch()), (200, branch()), (200, branch()), (200, branch(production=True))]
    result = run(production=True)
    assert result["branch"]["production"] is True
    assert calls(server) == [("GET", "/dev"), ("POST", "/dev/promote"), ("GET", "/dev"), ("GET", "/dev")]
    assert sleeps == [1.0, 1.5]


def test_a_promotion_that_never_shows_fails_after_wait_timeout_with_the_branch(server, run, sleeps):
    server.script = [(200, branch()), (200, branch())]
    server.default = (200, branch())
    with pytest.raises(ModuleFailure) as caught:
        run(production=True, wait_timeout=10)
    assert caught.value.msg.startswith("Waited 10 seconds for branch 'dev' of database 'shop' to be promoted to "
                                       "production; the last state was 'development'.")
    assert caught.value.result["branch"]["production"] is False
    assert caught.value.result["changed"] is True  # the promotion was sent


@pytest.mark.parametrize("args, changed", [(dict(), False), (dict(deletion_protected=True), True)],
                         ids=["nothing-sent", "protected-first"])
def test_a_branch_never_ready_to_be_promoted_fails_saying_whether_anything_was_written(
        server, run, sleeps, args, changed):
    server.script = [(200, branch("pending")), (200, branch("pending", deletion_protected=True))]
    server.default = (200, branch("pending"))
    with pytest.raises(ModuleFailure) as caught:
        run(production=True, wait_timeout=5, **args)
    assert caught.value.msg == ("Branch 'dev' of database 'shop' was not ready after 5 seconds (state 'pending'); it "
                                "must be ready to be promoted: raise wait_timeout.")
    assert caught.value.result["changed"] is changed
    assert "POST" not in [r["method"] for r in server.requests]


def test_a_new_branch_that_is_never_ready_to_be_promoted_fails_as_changed(server, run, sleeps):
    server.script = [NOT_FOUND, (201, branch("pending"))]
    server.default = (200, branch("pending"))
    with pytest.raises(ModuleFailure) as caught:
        run(parent_branch="main", production=True, wait_timeout=5)
    assert caught.value.result["changed"] is True
    assert [r["method"] for r in server.requests].count("POST") == 1


def test_a_branch_that_is_not_ready_is_waited_for_before_it_is_promoted(server, run, sleeps):
    server.script = [(200, branch("pending")), (200, branch()), (200, branch(production=True))]
    assert run(production=True, wait=False)["changed"] is True
    assert calls(server) == [("GET", "/dev"), ("GET", "/dev"), ("POST", "/dev/promote")]


def test_a_promotion_whose_answer_was_lost_is_read_back_and_not_sent_again(server, run, sleeps):
    server.script = [(200, branch()), (502, {"code": "bad_gateway"}), (200, branch(production=True))]
    result = run(production=True)
    assert result["changed"] is True and result["branch"]["production"] is True
    assert calls(server) == [("GET", "/dev"), ("POST", "/dev/promote"), ("GET", "/dev")]


def test_check_mode_predicts_the_promotion_and_writes_nothing(server, run):
    server.script = [(200, branch())]
    result = run(check_mode=True, diff=True, production=True, deletion_protected=True)
    assert result["changed"] is True
    assert result["branch"]["production"] is True and result["branch"]["deletion_protected"] is True
    assert result["diff"]["after"]["production"] is True and result["diff"]["before"]["production"] is False
    assert calls(server) == [("GET", "/dev")]


# safe_migrations ---------------------------------------------------------------------------------

def test_safe_migrations_true_reads_the_lint_then_enables(server, run):
    server.script = [(200, branch(production=True)), lint(), (200, branch(production=True, safe_migrations=True))]
    result = run(safe_migrations=True)
    assert result["changed"] is True and result["branch"]["safe_migrations"] is True
    assert calls(server) == [("GET", "/dev"), ("GET", "/dev/schema/lint"), ("POST", "/dev/safe-migrations")]


def test_safe_migrations_on_a_postgresql_branch_read_no_lint(server, run):
    server.script = [(200, branch(production=True, kind="postgresql")),
                     (200, branch(production=True, kind="postgresql", safe_migrations=True))]
    assert run(safe_migrations=True)["changed"] is True
    assert calls(server) == [("GET", "/dev"), ("POST", "/dev/safe-migrations")]


def test_a_schema_lint_answered_404_is_no_lint(server, run):
    server.script = [(200, branch(production=True)), NOT_FOUND, (200, branch(production=True, safe_migrations=True))]
    assert run(safe_migrations=True)["changed"] is True
    assert calls(server) == [("GET", "/dev"), ("GET", "/dev/schema/lint"), ("POST", "/dev/safe-migrations")]


def test_safe_migrations_already_on_is_one_read(server, run):
    server.script = [(200, branch(production=True, safe_migrations=True))]
    assert run(safe_migrations=True)["changed"] is False
    assert calls(server) == [("GET", "/dev")]


@pytest.mark.parametrize("check_mode", [True, False], ids=["check", "run"])
def test_safe_migrations_on_a_schema_with_lint_errors_fails_listing_every_page_of_them(server, run, check_mode):
    server.script = [(200, branch(production=True)), lint(NO_KEY, next_page=2), lint(NO_KEY_2)]
    with pytest.raises(ModuleFailure) as caught:
        run(check_mode=check_mode, safe_migrations=True)
    assert caught.value.msg == ("Branch 'dev' of database 'shop' has 2 schema lint errors, and safe migrations cannot "
                                "be enabled until the schema has none; fix them: %s." % NO_KEY_SENTENCE)
    assert calls(server) == [("GET", "/dev"), ("GET", "/dev/schema/lint"), ("GET", "/dev/schema/lint")]


@pytest.mark.parametrize("status", [400, 409, 422])
def test_a_refusal_of_safe_migrations_because_of_new_lint_errors_lists_them(server, run, status):
    """The schema changed between the lint read and the write: the API's refusal becomes the same sentence."""
    server.script = [(200, branch(production=True)), lint(), (status, {"code": "unprocessable", "message": "lint"}),
                     lint(NO_KEY)]
    with pytest.raises(ModuleFailure) as caught:
        run(safe_migrations=True)
    assert caught.value.msg.startswith("Branch 'dev' of database 'shop' has 1 schema lint error, and safe migrations "
                                       "cannot be enabled until the schema has none; fix it: table 'logs' of keyspace "
                                       "'shop': NO_UNIQUE_KEY")
    assert caught.value.result["status"] == status and caught.value.result["changed"] is False
    assert calls(server)[-2:] == [("POST", "/dev/safe-migrations"), ("GET", "/dev/schema/lint")]


@pytest.mark.parametrize("lint_then", [[lint(NO_KEY)], [lint()]], ids=["lint-errors", "api-words"])
def test_a_refusal_of_safe_migrations_after_the_promotion_fails_as_changed(server, run, lint_then):
    server.script = [(200, branch()), lint(), (200, branch(production=True)),
                     (422, {"code": "unprocessable", "message": "no"})] + lint_then
    with pytest.raises(ModuleFailure) as caught:
        run(production=True, safe_migrations=True)
    assert caught.value.result["changed"] is True and caught.value.result["status"] == 422


def test_a_refusal_of_safe_migrations_without_lint_errors_is_the_api_s_own(server, run):
    server.script = [(200, branch()), lint(), (422, {"code": "unprocessable", "message": "not a production branch"}),
                     lint()]
    with pytest.raises(ModuleFailure) as caught:
        run(safe_migrations=True)
    assert "HTTP 422: unprocessable, not a production branch" in caught.value.msg
    assert caught.value.result["status"] == 422 and len(server.requests) == 4


def test_safe_migrations_false_disables(server, run):
    server.script = [(200, branch(production=True, safe_migrations=True)), (200, branch(production=True))]
    assert run(safe_migrations=False)["changed"] is True
    assert calls(server) == [("GET", "/dev"), ("DELETE", "/dev/safe-migrations")]


BAD_GATEWAY = (502, {"code": "bad_gateway", "message": "Bad Gateway"})


def test_a_lost_enable_not_applied_is_sent_again_as_a_put_of_the_wanted_value(server, run, sleeps):
    """The answer to POST safe-migrations is lost and the branch read back has them off: the resend is a PUT of
    true, which cannot turn them off should the first write land after all."""
    server.script = [(200, branch(production=True)), lint(), BAD_GATEWAY, (200, branch(production=True)),
                     (200, branch(production=True, safe_migrations=True))]
    result = run(safe_migrations=True)
    assert result["changed"] is True and result["branch"]["safe_migrations"] is True
    assert calls(server) == [("GET", "/dev"), ("GET", "/dev/schema/lint"), ("POST", "/dev/safe-migrations"),
                             ("GET", "/dev"), ("PUT", "/dev/safe-migrations")]
    assert body(server, 4) == dict(safe_migrations=True) and len(sleeps) == 1


def test_a_lost_enable_that_was_applied_is_read_back_and_not_sent_again(server, run):
    server.script = [(200, branch(production=True)), lint(), BAD_GATEWAY,
                     (200, branch(production=True, safe_migrations=True))]
    assert run(safe_migrations=True)["branch"]["safe_migrations"] is True
    assert [method for method, path in calls(server)] == ["GET", "GET", "POST", "GET"]


def test_a_lost_disable_not_applied_is_sent_again_as_a_put_of_false(server, run, sleeps):
    server.script = [(200, branch(production=True, safe_migrations=True)), BAD_GATEWAY,
                     (200, branch(production=True, safe_migrations=True)), (200, branch(production=True))]
    assert run(safe_migrations=False, api_retries=0)["changed"] is True
    assert calls(server) == [("GET", "/dev"), ("DELETE", "/dev/safe-migrations"), ("GET", "/dev"),
                             ("PUT", "/dev/safe-migrations")]
    assert body(server, 3) == dict(safe_migrations=False) and len(sleeps) == 1


# deletion_protected ----------------------------------------------------------------------------

def test_deletion_protected_is_patched_and_then_a_no_op(server, run):
    server.script = [(200, branch()), (200, branch(deletion_protected=True)), (200, branch(deletion_protected=True))]
    assert run(deletion_protected=True)["changed"] is True
    assert run(deletion_protected=True)["changed"] is False
    assert calls(server) == [("GET", "/dev"), ("PATCH", "/dev"), ("GET", "/dev")]
    assert body(server, 1) == dict(deletion_protected=True)


@pytest.mark.parametrize("check_mode", [True, False], ids=["check", "run"])
def test_a_protected_branch_is_not_deleted_and_nothing_is_written(server, run, check_mode):
    server.script = [(200, branch(deletion_protected=True))]
    with pytest.raises(ModuleFailure) as caught:
        run(check_mode=check_mode, state="absent")
    assert caught.value.msg == ("Branch 'dev' of database 'shop' is protected from deletion (deletion_protected): set "
                                "deletion_protected: false in this task, or in a task before it, to delete it.")
    assert calls(server) == [("GET", "/dev")]


def test_a_refused_delete_of_a_branch_that_became_protected_gives_the_same_sentence(server, run):
    server.script = [(200, branch()), (422, {"code": "unprocessable", "message": "protected"}),
                     (200, branch(deletion_protected=True))]
    with pytest.raises(ModuleFailure) as caught:
        run(state="absent")
    assert caught.value.msg.startswith("Branch 'dev' of database 'shop' is protected from deletion")
    assert caught.value.result["status"] == 422


def test_absent_with_deletion_protected_false_lifts_the_protection_then_deletes(server, run):
    server.script = [(200, branch(deletion_protected=True)), (200, branch()), (204, b"")]
    result = run(state="absent", deletion_protected=False, diff=True)
    assert result["changed"] is True
    assert calls(server) == [("GET", "/dev"), ("PATCH", "/dev"), ("DELETE", "/dev")]
    assert body(server, 1) == dict(deletion_protected=False)
    assert result["diff"]["before"]["deletion_protected"] is True and result["diff"]["after"] == {}


def test_check_mode_absent_with_deletion_protected_false_writes_nothing(server, run):
    server.script = [(200, branch(deletion_protected=True))]
    assert run(check_mode=True, state="absent", deletion_protected=False)["changed"] is True
    assert calls(server) == [("GET", "/dev")]


def test_a_lost_answer_of_lifting_the_protection_is_read_back_and_not_sent_again(server, run, sleeps):
    server.script = [(200, branch(deletion_protected=True)), (502, {"code": "bad_gateway"}), (200, branch()),
                     (204, b"")]
    assert run(state="absent", deletion_protected=False)["changed"] is True
    assert calls(server) == [("GET", "/dev"), ("PATCH", "/dev"), ("GET", "/dev"), ("DELETE", "/dev")]


def test_a_production_branch_is_refused_even_with_deletion_protected_false(server, run):
    server.script = [(200, branch(production=True, deletion_protected=True))]
    with pytest.raises(ModuleFailure, match="is a production branch"):
        run(state="absent", deletion_protected=False)
    assert calls(server) == [("GET", "/dev")]


@pytest.mark.parametrize("option", ["production", "safe_migrations", "deletion_protected"])
def test_true_with_state_absent_is_refused_before_any_request(server, run, option):
    with pytest.raises(ModuleFailure) as caught:
        run(state="absent", **{option: True})
    assert caught.value.msg == "state absent deletes the branch, so %s: true cannot hold; leave it out." % option
    assert server.requests == []


# together and on a new branch ------------------------------------------------------------------

def test_protect_promote_and_enable_go_in_that_order(server, run):
    server.script = [(200, branch()), lint(), (200, branch(deletion_protected=True)),
                     (200, branch(deletion_protected=True, production=True)),
                     (200, branch(deletion_protected=True, production=True, safe_migrations=True))]
    result = run(production=True, safe_migrations=True, deletion_protected=True)
    assert result["changed"] is True and result["branch"]["safe_migrations"] is True
    assert calls(server) == [("GET", "/dev"), ("GET", "/dev/schema/lint"), ("PATCH", "/dev"), ("POST", "/dev/promote"),
                             ("POST", "/dev/safe-migrations")]


def test_safe_migrations_are_disabled_before_the_demotion(server, run):
    server.script = [(200, branch(production=True, safe_migrations=True)), (200, DATABASE),
                     (200, branch(production=True)), (200, branch())]
    assert run(production=False, safe_migrations=False)["changed"] is True
    assert calls(server) == [("GET", "/dev"), ("GET", ""), ("DELETE", "/dev/safe-migrations"), ("POST", "/dev/demote")]


def test_a_new_branch_is_created_without_them_then_promoted_once_ready(server, run, sleeps):
    server.script = [NOT_FOUND, (201, branch("pending")), (200, branch()), (200, branch(production=True))]
    result = run(parent_branch="main", production=True)
    assert result["changed"] is True and result["branch"]["production"] is True
    assert calls(server) == [("GET", "/dev"), ("POST", ""), ("GET", "/dev"), ("POST", "/dev/promote")]
    assert body(server, 1) == dict(name="dev", parent_branch="main")


@pytest.mark.parametrize("check_mode", [True, False], ids=["check", "run"])
def test_a_new_branch_with_safe_migrations_is_refused_before_creating_if_its_parent_has_lint_errors(
        server, run, check_mode):
    server.script = [NOT_FOUND, (200, branch(name="main")), lint(NO_KEY)] if check_mode else [NOT_FOUND, lint(NO_KEY)]
    with pytest.raises(ModuleFailure) as caught:
        run(check_mode=check_mode, parent_branch="main", safe_migrations=True)
    assert caught.value.msg.startswith("Branch 'main', whose schema branch 'dev' of database 'shop' would start with, "
                                       "has 1 schema lint error")
    assert calls(server)[-1] == ("GET", "/main/schema/lint")
    assert [r["method"] for r in server.requests] == ["GET"] * len(server.requests)


def test_check_mode_create_predicts_the_settings(server, run):
    server.script = [NOT_FOUND, (200, branch(name="main"))]
    result = run(check_mode=True, diff=True, parent_branch="main", deletion_protected=True)
    assert result["branch"]["deletion_protected"] is True
    assert result["diff"] == dict(before={}, after=dict(name="dev", parent_branch="main", deletion_protected=True))
