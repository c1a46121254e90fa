# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure, TaskContext
from ansible_collections.planetscale.cloud.plugins.modules.postgres_role import PostgresRole

BRANCH = "/v1/organizations/acme/databases/ledger/branches/main"
URL = BRANCH + "/roles"
SECRET = "pscale_pw_the_secret_itself"
NOT_FOUND = (404, {"code": "not_found", "message": "Not Found"})
LOST = (502, {"code": "bad_gateway"})
LABEL = "Role 'app' on branch 'main' of database 'ledger'"


MODULE = PostgresRole  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="ledger", branch="main", name="app", service_token_id="svc",
            service_token="s3cret")


def stamp(seconds=0.0):
    moment = datetime.now(timezone.utc) + timedelta(seconds=seconds)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (moment.microsecond // 1000)


def role(number=1, **fields):
    """A role as a read answers it: the secret field is an empty string; made by this task's credential (svc)."""
    return dict(dict(id="r%d" % number, name="app", username="pscale_api_%d.br1" % number,
                     base_username="pscale_api_%d" % number, access_host_url="us-east.pg.example.test",
                     database_name="postgres", inherited_roles=[], ttl=0, expires_at=None, expired=False,
                     default=False, password="", created_at=stamp(), actor=dict(id="svc", display_name="svc")),
                **fields)


def issued(number=1, **fields):
    return dict(role(number, **fields), password=SECRET)


def page(*items):
    return (200, dict(type="list", current_page=1, next_page=None, data=list(items)))


def sent(server):
    return [(r["method"], r["path"], json.loads(r["body"]) if r["body"] else None) for r in server.requests]


def writes(server):
    return [r for r in sent(server) if r[0] != "GET"]


def test_create_returns_the_secret_and_the_connection_once(server, run):
    inherited = ["pg_read_all_data", "pg_write_all_data"]
    server.script = [page(), (200, issued(inherited_roles=inherited, ttl=3600)),
                     page(role(inherited_roles=inherited, ttl=3600))]
    result = run(diff=True, inherited_roles=inherited, ttl=3600)
    assert result["changed"] is True and result["role"]["password"] == SECRET
    assert result["connection"] == dict(kind="postgresql", host="us-east.pg.example.test", port=5432,
                                        username="pscale_api_1.br1", password=SECRET, database="postgres")
    assert writes(server) == [("POST", URL, dict(name="app", inherited_roles=inherited, ttl=3600))]
    assert server.requests[0]["query"]["q"] == ["app"]
    assert result["diff"] == dict(before={}, after=dict(name="app", inherited_roles=inherited, ttl=3600))
    assert SECRET not in json.dumps(result["diff"])


def test_a_host_that_names_its_port_gives_that_port(server, run):
    server.script = [page(), (200, issued(access_host_url="127.0.0.1:54321")), page(role())]
    result = run()
    assert (result["connection"]["host"], result["connection"]["port"]) == ("127.0.0.1", 54321)


def test_an_existing_role_is_one_read_and_shows_no_secret(server, run):
    server.script = [page(role(inherited_roles=["pg_write_all_data", "pg_read_all_data"]), role(2, name="other"),
                          role(3, name="app-old"))]
    result = run(inherited_roles=["pg_read_all_data", "pg_write_all_data"], ttl=0)
    assert result["changed"] is False and "password" not in result["role"] and "connection" not in result
    assert result["role"]["id"] == "r1" and len(server.requests) == 1


def test_a_secret_a_read_carries_is_dropped(server, run):
    server.script = [page(dict(role(), password="leaked"))]
    result = run()
    assert "leaked" not in json.dumps(result) and result["changed"] is False


def test_a_rename_by_id_is_one_patch_and_returns_no_secret_the_api_echoes(server, run):
    server.script = [(200, role(name="old")), (200, issued(name="app"))]
    result = run(diff=True, id="r1")
    assert result["changed"] is True and "password" not in result["role"] and "connection" not in result
    assert writes(server) == [("PATCH", URL + "/r1", dict(name="app"))]
    assert result["diff"]["before"]["name"] == "old" and result["diff"]["after"]["name"] == "app"


@pytest.mark.parametrize("args, field", [(dict(ttl=60), "ttl"), (dict(inherited_roles=["postgres"]), "inherited_roles")])
def test_a_create_only_field_that_differs_fails_naming_it(server, run, args, field):
    server.script = [page(role())]
    with pytest.raises(ModuleFailure) as caught:
        run(**args)
    assert caught.value.msg.startswith("%s has %s " % (LABEL, field))
    assert "%s can only be set when the role is created; delete it first" % field in caught.value.msg
    assert writes(server) == []


def test_check_mode_create_predicts_without_a_secret(server, run):
    server.script = [page()]
    result = run(check_mode=True, diff=True, ttl=60)
    assert result["changed"] is True and result["role"] == dict(name="app", ttl=60)
    assert "connection" not in result and writes(server) == []


EXPIRED = dict(ttl=3600, expired=True, expires_at="2026-01-01T00:00:00Z")


def test_an_expired_role_is_left_as_it_is_with_a_warning(server, run):
    server.script = [page(role(**EXPIRED))]
    ctx = TaskContext()
    assert run(ctx=ctx)["changed"] is False and writes(server) == []
    assert ctx.warnings == ["%s expired at 2026-01-01T00:00:00Z: its secret no longer connects. Set renew: true to "
                            "give it a new expiry." % LABEL]


def test_renew_extends_the_expiry_and_returns_the_secret(server, run):
    server.script = [page(role(**EXPIRED)), (200, issued(ttl=3600))]
    ctx = TaskContext()
    result = run(ctx=ctx, renew=True)
    assert result["changed"] is True and result["connection"]["password"] == SECRET and ctx.warnings == []
    assert writes(server) == [("POST", URL + "/r1/renew", None)]


def test_a_role_that_never_expires_cannot_be_renewed(server, run):
    server.script = [page(role())]
    with pytest.raises(ModuleFailure, match="cannot be renewed: it never expires"):
        run(renew=True)
    assert writes(server) == []


def test_a_renewal_whose_answer_was_lost_is_sent_again(server, run):
    server.script = [page(role(ttl=60)), LOST, (200, issued(ttl=60))]
    assert run(renew=True)["role"]["password"] == SECRET
    assert [w[1] for w in writes(server)] == [URL + "/r1/renew"] * 2


def test_reset_gives_a_new_secret(server, run):
    server.script = [page(role()), (200, issued())]
    result = run(reset=True)
    assert result["changed"] is True and result["connection"]["password"] == SECRET
    assert writes(server) == [("POST", URL + "/r1/reset", None)]


def test_reset_of_the_default_role_uses_reset_default(server, run):
    default = role(9, name="postgres", default=True, username="postgres.br1")
    server.script = [page(default), (200, dict(username="postgres.br1", password=SECRET,
                                               access_host_url="us-east.pg.example.test"))]
    result = run(name="postgres", reset=True)
    assert result["role"]["id"] == "r9" and result["connection"]["username"] == "postgres.br1"
    assert result["connection"]["password"] == SECRET
    assert writes(server) == [("POST", URL + "/reset-default", None)]


def test_a_reset_lost_twice_says_how_to_get_a_secret_back(server, run):
    server.script = [page(role()), LOST, LOST]
    with pytest.raises(ModuleFailure) as caught:
        run(reset=True)
    assert caught.value.msg.endswith("delete the role (state=absent) or reset it (reset=true) to get a secret you "
                                     "hold.")
    assert [w[1] for w in writes(server)] == [URL + "/r1/reset"] * 2


def test_renew_and_reset_in_check_mode_write_nothing(server, run):
    for option in ("renew", "reset"):
        server.script = [page(role(ttl=60))]
        result = run(check_mode=True, **{option: True})
        assert result["changed"] is True and "connection" not in result
    assert writes(server) == []


def test_a_new_role_is_not_reset_too(server, run):
    server.script = [page(), (200, issued()), page(role())]
    assert run(reset=True)["changed"] is True
    assert [w[1] for w in writes(server)] == [URL]


def test_delete_hands_the_objects_to_the_successor(server, run):
    server.script = [page(role()), (204, b"")]
    assert run(state="absent", successor="pscale_api_2")["changed"] is True
    assert writes(server) == [("DELETE", URL + "/r1", None)]
    assert server.requests[-1]["query"] == dict(successor=["pscale_api_2"])


def test_delete_without_a_successor_sends_none(server, run):
    server.script = [page(role()), (204, b"")]
    assert run(state="absent")["changed"] is True
    assert server.requests[-1]["method"] == "DELETE" and server.requests[-1]["query"] == {}


@pytest.mark.parametrize("successor", ["r1", "pscale_api_1.br1", "pscale_api_1"])
def test_a_role_cannot_be_its_own_successor(server, run, successor):
    server.script = [page(role())]
    with pytest.raises(ModuleFailure, match="cannot be its own successor"):
        run(state="absent", successor=successor)
    assert writes(server) == []


def test_reassign_hands_the_objects_over_and_keeps_the_role(server, run):
    server.script = [page(role()), (204, b"")]
    result = run(reassign_objects_to="pscale_api_2")
    assert result["changed"] is True and result["role"]["id"] == "r1" and "connection" not in result
    assert writes(server) == [("POST", URL + "/r1/reassign", dict(successor="pscale_api_2"))]


def test_reassign_in_check_mode_is_a_change_without_a_write(server, run):
    server.script = [page(role())]
    assert run(check_mode=True, reassign_objects_to="pscale_api_2")["changed"] is True
    assert writes(server) == []


def test_a_role_the_task_creates_has_nothing_to_reassign(server, run):
    server.script = [page(), (200, issued()), page(role())]
    assert run(reassign_objects_to="pscale_api_2")["changed"] is True
    assert [w[1] for w in writes(server)] == [URL]


def test_a_lost_reassign_answer_is_sent_again(server, run, sleeps):
    server.script = [page(role()), LOST, (204, b"")]
    assert run(reassign_objects_to="pscale_api_2")["changed"] is True
    assert [w[1] for w in writes(server)] == [URL + "/r1/reassign"] * 2 and len(sleeps) == 1


@pytest.mark.parametrize("successor", ["r1", "pscale_api_1.br1", "pscale_api_1"])
def test_a_role_cannot_take_its_own_objects_even_while_renamed(server, run, successor):
    server.script = [(200, role())]
    with pytest.raises(ModuleFailure) as caught:
        run(id="r1", name="renamed", reassign_objects_to=successor)
    assert caught.value.msg == ("Role 'renamed' on branch 'main' of database 'ledger' cannot be its own successor: "
                                "name another role of the branch, or leave reassign_objects_to out.")
    assert writes(server) == []


def test_the_default_role_is_neither_deleted_nor_renamed(server, run):
    default = role(9, name="postgres", default=True)
    server.script = [page(default)]
    with pytest.raises(ModuleFailure, match="default role, which cannot be deleted; reset=true"):
        run(name="postgres", state="absent")
    server.script = [(200, default)]
    with pytest.raises(ModuleFailure, match="default role, which cannot be renamed"):
        run(id="r9", name="mine")
    assert writes(server) == []


def test_absent_when_missing_is_no_change(server, run):
    server.script = [page()]
    assert run(state="absent", successor="other") == dict(changed=False)


def test_a_mysql_branch_fails_pointing_to_password(server, run):
    server.script = [(422, {"code": "unprocessable", "message": "Branch 'main' is a MySQL branch"}),
                     (200, dict(id="br1", name="main", kind="mysql"))]
    with pytest.raises(ModuleFailure) as caught:
        run()
    assert caught.value.msg == ("Branch 'main' of database 'ledger' is a MySQL branch: roles are for PostgreSQL "
                                "branches; manage its credentials with planetscale.cloud.password.")
    assert [r[1] for r in sent(server)] == [URL, BRANCH]


def test_a_missing_branch_is_the_apis_answer(server, run):
    server.script = [NOT_FOUND, NOT_FOUND]
    with pytest.raises(ModuleFailure, match="failed with HTTP 404"):
        run()
    assert writes(server) == []


def test_several_roles_with_the_name_fail_naming_their_ids_also_in_a_warning(server, run):
    server.script = [page(role(1, created_at=stamp(-120)), role(2, ttl=60))]
    ctx = TaskContext()
    with pytest.raises(ModuleFailure) as caught:
        run(ctx=ctx)
    expected = ("2 roles are named 'app' on branch 'main' (ids r1, r2): set id to the one to manage, or delete the "
                "others (state=absent with their id).")
    assert caught.value.msg == expected and ctx.warnings == [expected]


def test_an_unknown_id_fails_rather_than_creating(server, run):
    server.script = [NOT_FOUND]
    with pytest.raises(ModuleFailure, match="^%s with id 'r9' does not exist; leave id out to create it.$" % LABEL):
        run(id="r9")
    assert writes(server) == []


@pytest.mark.parametrize("actor", [dict(id="svc"), dict(id="someone-else"), None],
                         ids=["this-service-token", "another-credential", "no-actor"])
def test_a_lost_create_never_deletes_the_role_that_appeared_and_returns_it_without_a_secret(server, run, actor):
    """The create was dropped before the server applied it, and meanwhile another run (with this service token, or
    another credential) made the same role: nothing tells it from one this task made, so it is never deleted."""
    other = role(7, actor=actor)
    server.script = [page(), "drop", page(other)]
    ctx = TaskContext()
    result = run(ctx=ctx, inherited_roles=[])
    assert result["changed"] is True and "connection" not in result
    assert result["role"] == dict((key, value) for key, value in other.items() if key != "password")
    assert writes(server) == [("POST", URL, dict(name="app"))]
    assert ctx.warnings == [
        "%s: the role with id r7 appeared while the answer to this task's create was lost and has every field the "
        "task sent. Nothing the platform returns tells whether this task's create made it or another run or client "
        "did (with this credential or another), so it is not deleted and no other is created: the task returns it "
        "without its secret, as when another run made the same role first. If another run or client made the role "
        "with id r7, take its secret from there; otherwise its secret was lost with the answer: reset it (reset=true) "
        "to get a secret you hold (the old secret then stops working wherever it is used)." % LABEL]


def test_a_lost_create_leaves_a_role_with_other_fields_and_names_it(server, run, sleeps):
    other = role(7, ttl=60)
    server.script = [page(), LOST, page(other), (200, issued(8)), page(other, role(8))]
    ctx = TaskContext()
    result = run(ctx=ctx)
    assert result["role"]["id"] == "r8" and result["connection"]["password"] == SECRET
    assert [w[:2] for w in writes(server)] == [("POST", URL), ("POST", URL)]
    assert ctx.warnings[0].startswith("%s: the role with id r7 appeared while the answer" % LABEL)
    assert SECRET not in json.dumps(ctx.warnings)


def test_a_create_answered_with_another_role_is_not_acted_on(server, run):
    server.script = [page(), (200, issued(8, name="admin"))]
    with pytest.raises(ModuleFailure) as caught:
        run()
    assert caught.value.msg.startswith("%s: the create was answered with the role 'admin' (id r8), not with the role "
                                       "named 'app' that was asked for" % LABEL)
    assert writes(server) == [("POST", URL, dict(name="app"))] and SECRET not in caught.value.msg


def test_a_create_that_stays_unknown_says_how_to_get_a_secret_back(server, run, sleeps):
    server.script = [page(), LOST, page(), LOST, page(), LOST, page()]
    with pytest.raises(ModuleFailure) as caught:
        run()
    assert caught.value.msg.endswith("delete the role (state=absent) or reset it (reset=true) to get a secret you "
                                     "hold.")
    assert writes(server) == [("POST", URL, dict(name="app"))] * 3


def test_a_lean_create_answer_is_completed_by_one_read_and_keeps_its_secret(server, run):
    lean = dict(id="r1", name="app", password=SECRET, inherited_roles=[], ttl=0)
    server.script = [page(), (200, lean), (200, role(1)), page(role(1))]
    result = run()
    assert result["connection"] == dict(kind="postgresql", host="us-east.pg.example.test", port=5432,
                                        username="pscale_api_1.br1", password=SECRET, database="postgres")
    assert [(r["method"], r["path"]) for r in server.requests] == [("GET", URL), ("POST", URL), ("GET", URL + "/r1"),
                                                                   ("GET", URL)]


@pytest.mark.parametrize("args, message", [
    (dict(ttl=-1), "ttl must be from 0 (never expires) to 2147483647 seconds, not -1."),
    (dict(name=" "), "name must not be empty."),
    (dict(successor=" ", state="absent"), "successor must not be empty."),
    (dict(id="../x"), "id must be a name, not '../x'."),
    (dict(renew=True, reset=True), "renew and reset cannot both be true: reset gives a new secret, renew a new expiry."),
    (dict(successor="heir"), "successor is for state=absent only: it names the role that receives the objects of the "
                             "role deleted."),
    (dict(reassign_objects_to="heir", state="absent"), "reassign_objects_to is for state=present only: it keeps the "
                                                       "role; successor names the role that receives the objects of a "
                                                       "role deleted."),
    (dict(reassign_objects_to=" "), "reassign_objects_to must not be empty."),
])
def test_bad_input_fails_before_any_request(server, run, args, message):
    with pytest.raises(ModuleFailure) as caught:
        run(**args)
    assert caught.value.msg == message
    assert server.requests == []


def test_an_inherited_role_the_platform_does_not_have_is_refused_by_the_argument_spec(run):
    validation = run.validate(inherited_roles=["superuser"])
    assert "inherited_roles" in " ".join(validation.error_messages)


def test_check_mode_on_a_branch_an_earlier_task_would_create_predicts_the_create(server, run):
    server.script = [NOT_FOUND, NOT_FOUND]  # the roles list, then the branch itself
    ctx = TaskContext(check_mode=True)
    result = run(ctx=ctx)
    assert result["changed"] is True and result["role"] == dict(name="app")
    assert ctx.warnings[0].startswith("Branch 'main' was not found")
    assert writes(server) == []
