# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure, TaskContext
from ansible_collections.planetscale.cloud.plugins.modules.service_token import ServiceToken

URL = "/v1/organizations/acme/service-tokens"
SECRET = "pscale_tkn_the_secret_itself"
NOT_FOUND = (404, {"code": "not_found", "message": "Not Found"})
LOST = "drop"


MODULE = ServiceToken  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", name="ci", service_token_id="svc", service_token="s3cret")


def stamp(seconds=0.0):
    moment = datetime.now(timezone.utc) + timedelta(seconds=seconds)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (moment.microsecond // 1000)


def token(number=1, ttl=None, **fields):
    created = datetime.now(timezone.utc).replace(microsecond=0)
    expires = None if ttl is None else (created + timedelta(seconds=ttl)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return dict(dict(id="tk%d" % number, name="ci", display_name="ci", created_at=created.strftime(
        "%Y-%m-%dT%H:%M:%SZ"), expires_at=expires, actor_id="u1", service_token_accesses=[]), **fields)


def issued(number=1, **fields):
    return dict(token(number, **fields), token=SECRET, plain_text_refresh_token="pscale_refresh_secret")


def page(*items):
    return (200, dict(type="list", current_page=1, next_page=None, data=list(items)))


def access(name, database=None):
    if database is None:
        return dict(id="a-" + name, access=name, type="ServiceTokenAccess",
                    resource=dict(id="org1", name="acme", type="Organization"))
    return dict(id="a-%s-%s" % (database, name), access=name, type="ServiceTokenAccess",
                resource=dict(id="db-" + database, name=database, type="Database"))


def accesses(*items):
    return (200, dict(data=list(items)))


def sent(server):
    return [(r["method"], r["path"], json.loads(r["body"]) if r["body"] else None) for r in server.requests]


def writes(server):
    return [r for r in sent(server) if r[0] != "GET"]


def test_create_returns_the_secret_once_and_adds_accesses_one_request_per_database(server, run):
    server.script = [page(), (200, issued()), accesses(access("read_branch", "app")), accesses(access("x", "logs")),
                     accesses(access("create_databases"))]
    result = run(diff=True, ttl=3600, accesses=[
        dict(database="app", access=["read_branch", "create_branch"]), dict(database="logs", access=["read_branch"]),
        dict(access=["create_databases"])])
    assert result["changed"] is True
    assert result["service_token"]["token"] == SECRET
    assert writes(server) == [
        ("POST", URL, dict(name="ci", ttl=3600)),
        ("POST", URL + "/tk1/access", dict(access=["create_databases"])),
        ("POST", URL + "/tk1/access", dict(database="app", access=["create_branch", "read_branch"])),
        ("POST", URL + "/tk1/access", dict(database="logs", access=["read_branch"]))]
    assert result["service_token"]["accesses"] == [
        dict(access=["create_databases"]), dict(database="app", access=["create_branch", "read_branch"]),
        dict(database="logs", access=["read_branch"])]
    assert "service_token_accesses" not in result["service_token"]
    assert SECRET not in json.dumps(result["diff"]) and "pscale_refresh_secret" not in json.dumps(result["diff"])
    assert result["diff"]["after"]["accesses"] == result["service_token"]["accesses"]


def test_equal_accesses_send_nothing_and_show_no_secret(server, run):
    found = dict(token(), token="leaked", plain_text_refresh_token="leaked too")
    server.script = [page(found, token(2, name="other")),
                     accesses(access("read_branch", "app"), access("create_branch", "app"))]
    result = run(accesses=[dict(database="app", access=["create_branch", "read_branch"])])
    assert result["changed"] is False
    assert "leaked" not in json.dumps(result)
    assert writes(server) == []
    assert [r[1] for r in sent(server)] == [URL, URL + "/tk1/access"]


def test_accesses_grow_and_shrink_with_one_request_per_database_and_undeclared_ones_stay(server, run):
    server.script = [page(token()), accesses(access("read_branch", "app"), access("delete_branch", "app"),
                                             access("read_branch", "logs"))]
    result = run(accesses=[dict(database="app", access=["read_branch", "create_branch"])])
    assert result["changed"] is True
    assert writes(server) == [("POST", URL + "/tk1/access", dict(database="app", access=["create_branch"]))]
    assert result["service_token"]["accesses"] == [
        dict(database="app", access=["create_branch", "delete_branch", "read_branch"]),
        dict(database="logs", access=["read_branch"])]


def test_purge_accesses_removes_what_is_not_declared(server, run):
    server.script = [page(token()), accesses(access("read_branch", "app"), access("delete_branch", "app"),
                                             access("read_branch", "logs"), access("create_databases"))]
    result = run(diff=True, purge_accesses=True,
                 accesses=[dict(database="app", access=["read_branch", "create_branch"])])
    assert result["changed"] is True
    assert writes(server) == [
        ("DELETE", URL + "/tk1/access", dict(access=["create_databases"])),
        ("POST", URL + "/tk1/access", dict(database="app", access=["create_branch"])),
        ("DELETE", URL + "/tk1/access", dict(database="app", access=["delete_branch"])),
        ("DELETE", URL + "/tk1/access", dict(database="logs", access=["read_branch"]))]
    assert result["diff"]["after"] == dict(name="ci", accesses=[dict(database="app",
                                                                     access=["create_branch", "read_branch"])])


def test_check_mode_predicts_without_writing(server, run):
    server.script = [page(token()), accesses(access("read_branch", "app"))]
    result = run(check_mode=True, diff=True, accesses=[dict(database="app", access=["create_branch"])])
    assert result["changed"] is True and writes(server) == []
    assert result["service_token"]["accesses"] == [dict(database="app", access=["create_branch", "read_branch"])]
    server.requests.clear()
    server.script = [page()]
    result = run(check_mode=True, diff=True, accesses=[dict(access=["create_databases"])])
    assert result["changed"] is True and writes(server) == []
    assert "token" not in result["service_token"]
    assert result["diff"] == dict(before={}, after=dict(name="ci", accesses=[dict(access=["create_databases"])]))


def test_several_tokens_of_the_name_are_refused_naming_their_ids(server, run):
    server.script = [page(token(1), token(2))]
    ctx = TaskContext()
    with pytest.raises(ModuleFailure) as failure:
        run(ctx=ctx)
    assert failure.value.msg == ("2 service tokens are named 'ci' (ids tk1, tk2): set id to the one to manage, or "
                                 "delete the others (state=absent with their id).")
    assert ctx.warnings == [failure.value.msg] and writes(server) == []


def test_by_id_and_a_missing_id_is_a_sentence(server, run):
    server.script = [(200, token(2)), accesses()]
    assert run(id="tk2", name=None)["service_token"]["id"] == "tk2"
    server.script = [NOT_FOUND]
    with pytest.raises(ModuleFailure) as failure:
        run(id="tk9", name=None)
    assert "with id 'tk9' does not exist" in failure.value.msg


def test_a_different_ttl_on_an_existing_token_fails_naming_the_field(server, run):
    server.script = [page(token(ttl=3600)), accesses()]
    with pytest.raises(ModuleFailure) as failure:
        run(ttl=7200)
    assert failure.value.msg == ("Service token 'ci' has ttl 3600, not 7200: ttl can only be set when a service token "
                                 "is created. Delete it (state=absent) to create it again, or leave ttl out.")
    server.script = [page(token(ttl=3600)), accesses()]
    assert run(ttl=3600)["changed"] is False
    server.script = [page(token()), accesses()]
    assert run(ttl=0)["changed"] is False


def test_delete_twice(server, run):
    server.script = [page(token()), accesses(), (204, b"")]
    assert run(state="absent") == dict(changed=True)
    assert writes(server) == [("DELETE", URL + "/tk1", None)]
    server.requests.clear()
    server.script = [page()]
    assert run(state="absent") == dict(changed=False)
    assert writes(server) == []


@pytest.mark.parametrize("entry, sentence", [
    (dict(database="app", access=[]), "accesses: the entry for database 'app' lists no access; give at least one, "
                                      "such as read_branch."),
    (dict(access=["Read Branch"]), "accesses: the organization-wide entry has 'Read Branch', which is not an access "
                                   "name such as read_branch or create_databases."),
    (dict(database="a/b", access=["read_branch"]), "accesses: database must be a database name, not 'a/b'."),
])
def test_bad_accesses_are_refused_before_any_request(server, run, entry, sentence):
    with pytest.raises(ModuleFailure) as failure:
        run(accesses=[entry])
    assert failure.value.msg == sentence and server.requests == []


def taken(number):
    return ("Service token 'ci': the service token with id tk%d appeared while the answer to this task's create was "
            "lost and has every field the task sent. Nothing the platform returns tells whether this task's create "
            "made it or another run or client did (with this credential or another), so it is not deleted and no other "
            "is created: the task returns it without its secret, as when another run made the same service token "
            "first. If another run or client made the service token with id tk%d, take its secret from there; "
            "otherwise its secret was lost with the answer: delete it (state=absent with its id) and run the task "
            "again to get a secret you hold (the old secret then stops working wherever it is used)." % (
                number, number))


@pytest.mark.parametrize("actor", ["svc", "u1", "someone-else", None],
                         ids=["this-service-token", "the-user-it-acts-for", "another-credential", "no-actor"])
def test_a_lost_create_never_deletes_the_token_that_appeared_and_returns_it_with_the_accesses(server, run, actor):
    """The create was lost before the server applied it, and meanwhile another pipeline that shares this service token
    made a token ci: nothing the platform returns tells it from one this task made. It is returned without a secret,
    given the accesses declared, and named in a warning; nothing is deleted."""
    other = token(7, actor_id=actor)
    server.script = [page(), LOST, page(other), accesses(), (200, {})]
    ctx = TaskContext()
    result = run(ctx=ctx, accesses=[dict(database="app", access=["read_branch"])])
    assert result["changed"] is True and result["service_token"]["id"] == "tk7"
    assert "token" not in result["service_token"] and "plain_text_refresh_token" not in result["service_token"]
    assert result["service_token"]["accesses"] == [dict(database="app", access=["read_branch"])]
    assert writes(server) == [("POST", URL, dict(name="ci")),
                              ("POST", URL + "/tk7/access", dict(database="app", access=["read_branch"]))]
    assert "/v1/user" not in [r["path"] for r in server.requests]
    assert ctx.warnings == [taken(7)]


def test_a_lost_create_leaves_another_runs_older_token_alone(server, run, sleeps):
    older = token(5, created_at="2020-01-01T00:00:00Z")
    server.script = [page(), LOST, page(older), (200, issued(8))]
    ctx = TaskContext()
    result = run(ctx=ctx)
    assert result["service_token"]["id"] == "tk8" and result["service_token"]["token"] == SECRET
    assert writes(server) == [("POST", URL, dict(name="ci")), ("POST", URL, dict(name="ci"))]
    assert "tk5" in ctx.warnings[0] and "left as it is" in ctx.warnings[0]


def test_a_lost_create_leaves_a_token_with_another_ttl_and_creates_once_more(server, run, sleeps):
    other = token(7, ttl=60)
    server.script = [page(), LOST, page(other), (200, issued(8, ttl=3600))]
    ctx = TaskContext()
    result = run(ctx=ctx, ttl=3600)
    assert result["service_token"]["id"] == "tk8" and result["service_token"]["token"] == SECRET
    assert writes(server) == [("POST", URL, dict(name="ci", ttl=3600))] * 2
    assert len(ctx.warnings) == 1 and "the service token with id tk7 appeared" in ctx.warnings[0]
    assert SECRET not in json.dumps(ctx.warnings) and "pscale_refresh_secret" not in json.dumps(ctx.warnings)


def test_a_create_answered_with_another_token_is_not_acted_on(server, run):
    server.script = [page(), (200, issued(8, name="deploy"))]
    with pytest.raises(ModuleFailure) as failure:
        run(accesses=[dict(database="app", access=["read_branch"])])
    assert failure.value.msg == (
        "Service token 'ci': the create was answered with the service token 'deploy' (id tk8), not with the service "
        "token named 'ci' that was asked for, so the task stops without acting on it and returns no secret. Check the "
        "service tokens of that name (state=absent with an id deletes one), then run the task again.")
    assert writes(server) == [("POST", URL, dict(name="ci"))]  # no access added, nothing deleted


def test_a_token_whose_accesses_cannot_be_added_is_deleted_again(server, run):
    server.script = [page(), (200, issued()), NOT_FOUND, (204, b"")]
    with pytest.raises(ModuleFailure) as failure:
        run(accesses=[dict(database="nope", access=["read_branch"])])
    assert writes(server)[-1] == ("DELETE", URL + "/tk1", None)
    assert "(id tk1) was deleted again" in failure.value.msg and SECRET not in failure.value.msg
    assert failure.value.result["status"] == 404


def test_a_name_that_differs_from_the_token_of_the_id_is_refused(server, run):
    server.script = [(200, token()), accesses()]
    with pytest.raises(ModuleFailure) as failure:
        run(id="tk1", name="deploy")
    assert failure.value.msg.startswith("Service token 'tk1' has name 'ci', not 'deploy': name can only be set")
    assert writes(server) == []


def test_of_several_tokens_made_while_the_create_answer_was_lost_the_oldest_is_returned_and_none_deleted(server, run):
    server.script = [page(), LOST, page(token(8), token(7)), accesses()]
    ctx = TaskContext()
    result = run(ctx=ctx)
    assert result["service_token"]["id"] == "tk7" and "token" not in result["service_token"]
    assert writes(server) == [("POST", URL, dict(name="ci"))]
    assert ctx.warnings[0].startswith(
        "Service token 'ci': 2 service tokens (ids tk7, tk8) appeared while the answer to this task's create was lost")


def test_a_new_token_that_cannot_be_deleted_again_is_named_in_the_failure(server, run):
    server.script = [page(), (200, issued()), NOT_FOUND, (500, dict(code="internal_server_error"))]
    with pytest.raises(ModuleFailure) as failure:
        run(accesses=[dict(database="nope", access=["read_branch"])])
    assert "Deleting the service token this task created (id tk1)" in failure.value.msg
    assert "delete it (state=absent with its id)" in failure.value.msg and SECRET not in failure.value.msg
