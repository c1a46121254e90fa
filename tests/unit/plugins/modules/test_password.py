# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure, TaskContext
from ansible_collections.planetscale.cloud.plugins.modules.password import Password, connection

URL = "/v1/organizations/acme/databases/shop/branches/main/passwords"
PLAIN_TEXT = "pscale_pw_the_secret_itself"
NOT_FOUND = (404, {"code": "not_found", "message": "Not Found"})


MODULE = Password  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="shop", branch="main", name="app", service_token_id="svc",
            service_token="s3cret")


def stamp(seconds=0.0):
    """The time now, moved by seconds, as the API writes it."""
    moment = datetime.now(timezone.utc) + timedelta(seconds=seconds)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (moment.microsecond // 1000)


def password(number=1, **fields):
    """A password this task's credential (the service token svc) made, unless actor says otherwise."""
    return dict(dict(id="pw%d" % number, name="app", role="reader", replica=False, ttl_seconds=None, cidrs=None,
                     renewable=False, username="u%d" % number, access_host_url="db.example.test",
                     created_at=stamp(), actor=dict(id="svc", display_name="svc")), **fields)


def issued(number=1, **fields):
    return dict(password(number, **fields), plain_text=PLAIN_TEXT)


def page(*items):
    return (200, dict(type="list", current_page=1, next_page=None, data=list(items)))


def sent(server):
    return [(r["method"], r["path"], json.loads(r["body"]) if r["body"] else None) for r in server.requests]


def writes(server):
    return [r for r in sent(server) if r[0] != "GET"]


def test_create_returns_the_secret_and_the_connection_once(server, run):
    server.script = [page(), (201, issued(cidrs=["10.0.0.0/8"])), page(password(cidrs=["10.0.0.0/8"]))]
    result = run(diff=True, role="reader", ttl=0, cidrs=["10.0.0.0/8"])
    assert result["changed"] is True
    assert result["password"]["plain_text"] == PLAIN_TEXT
    assert result["connection"] == dict(kind="mysql", host="db.example.test", port=3306, username="u1",
                                        password=PLAIN_TEXT, database="shop")
    assert writes(server) == [("POST", URL, dict(name="app", role="reader", ttl=0, cidrs=["10.0.0.0/8"]))]
    assert server.requests[0]["query"]["q"] == ["app"]
    assert PLAIN_TEXT not in json.dumps(result["diff"])


def test_an_existing_password_is_one_read_and_shows_no_secret(server, run):
    existing = password()
    server.script = [page(dict(existing, plain_text="leaked"), password(2, name="app-old"))]
    result = run(role="reader", replica=False, ttl=0)
    assert result == dict(changed=False, password=existing)
    assert len(server.requests) == 1


def test_cidrs_are_compared_as_a_set_of_networks(server, run):
    server.script = [page(password(cidrs=["192.0.2.7/32", "10.0.0.0/8"]))]
    assert run(cidrs=["10.0.0.0/8", "192.0.2.7"])["changed"] is False
    assert writes(server) == []


def test_cidrs_and_name_change_in_one_patch(server, run):
    server.script = [(200, password(cidrs=["10.0.0.0/8"])), (200, password(name="api", cidrs=["10.1.0.0/16"]))]
    result = run(diff=True, id="pw1", name="api", role="reader", cidrs=["10.1.0.0/16"])
    assert result["changed"] is True
    assert "plain_text" not in result["password"] and "connection" not in result
    assert writes(server) == [("PATCH", URL + "/pw1", dict(name="api", cidrs=["10.1.0.0/16"]))]
    assert result["diff"]["before"]["cidrs"] == ["10.0.0.0/8"]
    assert result["diff"]["after"]["cidrs"] == ["10.1.0.0/16"]


def test_an_update_never_returns_a_secret_the_api_echoes(server, run):
    server.script = [(200, password()), (200, issued(cidrs=["10.1.0.0/16"]))]
    result = run(id="pw1", cidrs=["10.1.0.0/16"])
    assert result["changed"] is True
    assert "plain_text" not in result["password"] and "connection" not in result
    assert PLAIN_TEXT not in json.dumps(result)


EXPIRED = dict(ttl_seconds=3600, renewable=True, expired=True, expires_at="2026-01-01T00:00:00Z")


def test_an_expired_password_is_left_as_it_is_with_a_warning(server, run):
    server.script = [page(password(**EXPIRED))]
    ctx = TaskContext()
    result = run(ctx=ctx, ttl=3600)
    assert result["changed"] is False and writes(server) == []
    assert ctx.warnings == ["Password 'app' on branch 'main' of database 'shop' expired at 2026-01-01T00:00:00Z: its "
                            "secret no longer connects. Set renew: true to give it a new secret and expiry."]


def test_renewing_an_expired_password_gives_no_warning(server, run):
    server.script = [page(password(**EXPIRED)), (200, issued(ttl_seconds=3600, renewable=True, expired=False))]
    ctx = TaskContext()
    result = run(ctx=ctx, renew=True)
    assert result["changed"] is True and result["password"]["plain_text"] == PLAIN_TEXT
    assert ctx.warnings == []


def test_check_mode_update_writes_nothing(server, run):
    server.script = [page(password())]
    result = run(check_mode=True, diff=True, cidrs=["10.0.0.0/8"])
    assert result["changed"] is True and result["password"]["cidrs"] == ["10.0.0.0/8"]
    assert writes(server) == []


def test_check_mode_create_predicts_without_a_secret(server, run):
    server.script = [page()]
    result = run(check_mode=True, diff=True, role="writer")
    assert result["changed"] is True
    assert result["password"] == dict(name="app", role="writer", replica=False, ttl_seconds=0)
    assert "connection" not in result
    assert result["diff"]["after"] == dict(name="app", role="writer", replica=False, ttl=0, cidrs=[])
    assert writes(server) == []


@pytest.mark.parametrize("args, field", [(dict(role="admin"), "role"), (dict(ttl=60), "ttl"),
                                         (dict(replica=True), "replica")])
def test_a_create_only_field_that_differs_fails_naming_it(server, run, args, field):
    server.script = [page(password())]
    with pytest.raises(ModuleFailure) as caught:
        run(**args)
    assert caught.value.msg.startswith("Password 'app' on branch 'main' of database 'shop' has %s " % field)
    assert "%s can only be set when the password is created; set replace: true" % field in caught.value.msg
    assert writes(server) == []


def test_replace_deletes_and_creates_with_a_new_secret(server, run):
    server.script = [page(password(cidrs=["10.0.0.0/8"])), (204, b""), (201, issued(2, role="admin")),
                     page(password(2, role="admin"))]
    result = run(role="admin", replace=True)
    assert result["changed"] is True
    assert result["connection"]["password"] == PLAIN_TEXT
    assert writes(server) == [("DELETE", URL + "/pw1", None),
                              ("POST", URL, dict(name="app", role="admin", replica=False, ttl=0,
                                                 cidrs=["10.0.0.0/8"]))]


@pytest.mark.parametrize("second", [dict(created_at=-61), dict(role="admin")], ids=["a-minute-old", "other-fields"])
def test_several_passwords_with_the_name_fail_naming_their_ids_also_in_a_warning(server, run, sleeps, second):
    """no_log hides a failure's message (before ansible-core 2.19), not a warning: the warning says what to do."""
    first = password(1, created_at=stamp(-120))
    second = password(2, **dict(second, created_at=stamp(second.get("created_at", 0))))
    server.script = [page(first, second)]
    ctx = TaskContext()
    with pytest.raises(ModuleFailure) as caught:
        run(ctx=ctx, state="absent")
    expected = ("2 passwords are named 'app' on branch 'main' (ids pw1, pw2): set id to the one to manage, or delete "
                "the others (state=absent with their id).")
    assert caught.value.msg == expected
    assert ctx.warnings == [expected]
    assert len(server.requests) == 1 and sleeps == []  # not runs racing to make one password: no wait


def test_several_same_passwords_made_a_moment_ago_are_read_again_until_the_racing_runs_delete_the_newer(
        server, run, sleeps):
    """Runs that ensure one password at once each make one, then all but the oldest delete theirs."""
    oldest = password(1, created_at=stamp(-2))
    server.script = [page(oldest, password(2), password(3)), page(oldest, password(3)), page(oldest)]
    result = run(role="reader")
    assert result == dict(changed=False, password=oldest)
    assert len(server.requests) == 3 and sleeps == [0.5, 1.0] and writes(server) == []


def test_several_same_passwords_that_stay_fail_after_a_few_seconds(server, run, sleeps):
    server.default = page(password(1, created_at=stamp(-2)), password(2))
    with pytest.raises(ModuleFailure, match="^2 passwords are named 'app' on branch 'main' .ids pw1, pw2.: set id"):
        run(role="reader")
    assert sleeps[:3] == [0.5, 1.0, 2.0] and 4.5 < sum(sleeps) <= 5 and writes(server) == []


def test_id_selects_one_of_several(server, run):
    server.script = [(200, password(2)), (204, b"")]
    assert run(id="pw2", state="absent")["changed"] is True
    assert writes(server) == [("DELETE", URL + "/pw2", None)]


def test_an_unknown_id_fails_rather_than_creating(server, run):
    server.script = [NOT_FOUND]
    with pytest.raises(ModuleFailure, match="^Password 'app' on branch 'main' of database 'shop' with id 'pw9' "
                                            "does not exist; leave id out to create it.$"):
        run(id="pw9")
    assert writes(server) == []


def test_absent_when_missing_is_no_change(server, run):
    server.script = [page()]
    assert run(state="absent") == dict(changed=False)


def test_renew_gives_a_new_secret(server, run):
    server.script = [page(password(ttl_seconds=3600, renewable=True)), (200, issued(ttl_seconds=3600))]
    result = run(renew=True)
    assert result["changed"] is True and result["connection"]["password"] == PLAIN_TEXT
    assert writes(server) == [("POST", URL + "/pw1/renew", None)]


def test_renew_in_check_mode_writes_nothing(server, run):
    server.script = [page(password(renewable=True))]
    result = run(check_mode=True, renew=True)
    assert result["changed"] is True and "connection" not in result
    assert writes(server) == []


def test_a_password_without_ttl_cannot_be_renewed(server, run):
    server.script = [page(password())]
    with pytest.raises(ModuleFailure, match="cannot be renewed: only a password with a ttl can"):
        run(renew=True)
    assert writes(server) == []


def test_a_new_password_is_not_renewed_too(server, run):
    server.script = [page(), (201, issued(renewable=True, ttl_seconds=60)), page(password(ttl_seconds=60))]
    assert run(ttl=60, renew=True)["changed"] is True
    assert [w[1] for w in writes(server)] == [URL]


def test_a_renewal_whose_answer_was_lost_is_renewed_again(server, run):
    server.script = [page(password(renewable=True)), (502, {}), (200, issued(renewable=True))]
    assert run(renew=True)["password"]["plain_text"] == PLAIN_TEXT
    assert [w[1] for w in writes(server)] == [URL + "/pw1/renew"] * 2


def test_a_create_whose_answer_was_lost_is_deleted_and_created_again(server, run):
    """The secret of the password created by the lost request is unknown: one usable password must remain."""
    server.script = [page(), (502, {"code": "bad_gateway"}), page(password(7)), (204, b""), (201, issued(8)),
                     page(password(8))]
    result = run(role="reader")
    assert result["changed"] is True
    assert result["password"]["id"] == "pw8" and result["connection"]["password"] == PLAIN_TEXT
    assert writes(server) == [("POST", URL, dict(name="app", role="reader")), ("DELETE", URL + "/pw7", None),
                              ("POST", URL, dict(name="app", role="reader"))]


def test_a_create_that_stays_unknown_says_how_to_get_a_secret_back(server, run):
    """The lost create may have left a password whose secret nobody holds; a plain rerun would keep it."""
    server.script = [page(), (502, {"code": "bad_gateway"}), page(password(7)), (502, {"code": "bad_gateway"})]
    with pytest.raises(ModuleFailure) as caught:
        run(role="reader")
    assert "HTTP 502" in caught.value.msg
    assert caught.value.msg.startswith("DELETE %s/pw7 failed with HTTP 502" % URL[3:])
    assert caught.value.msg.endswith("delete the password (state=absent) or renew it (renew=true) to get a secret "
                                     "you hold.")


def test_a_renewal_lost_twice_says_how_to_get_a_secret_back(server, run):
    server.script = [page(password(renewable=True)), (502, {}), (502, {})]
    with pytest.raises(ModuleFailure) as caught:
        run(renew=True)
    assert caught.value.msg.endswith("renew it (renew=true) to get a secret you hold.")


def test_an_update_that_stays_unknown_says_a_rerun_continues(server, run):
    server.script = [page(password(1)), (502, {}), page(password(1)), (502, {}), page(password(1)), (502, {}),
                     page(password(1))]
    with pytest.raises(ModuleFailure) as caught:
        run(cidrs=["10.0.0.0/8"])
    assert caught.value.msg.endswith("running the task again reads what exists and continues from there.")


def test_a_replacement_whose_answer_was_lost_keeps_the_other_passwords(server, run):
    server.script = [(200, password(1, ttl_seconds=60)), (204, b""), page(password(2)), (502, {}),
                     page(password(2), password(3)), (204, b""), (201, issued(4)), page(password(2), password(4))]
    result = run(id="pw1", ttl=0, replace=True)
    assert result["password"]["id"] == "pw4"
    assert [w[:2] for w in writes(server)] == [("DELETE", URL + "/pw1"), ("POST", URL), ("DELETE", URL + "/pw3"),
                                               ("POST", URL)]


# After a create whose answer was lost, only a password shown to be the task's own is deleted ----------------------

LOST = (502, {"code": "bad_gateway"})


def test_a_lost_create_deletes_the_one_password_with_every_field_sent_made_in_its_time(server, run):
    """cidrs are compared as networks: 192.0.2.7 and 192.0.2.7/32 are one."""
    fields = dict(role="writer", ttl_seconds=3600, cidrs=["192.0.2.7/32", "10.0.0.0/8"])
    mine = password(7, **fields)
    server.script = [page(), LOST, page(mine), (204, b""), (201, issued(8, **fields)),
                     page(mine, password(8, **fields))]  # a list that still shows pw7
    ctx = TaskContext()
    result = run(ctx=ctx, role="writer", ttl=3600, cidrs=["10.0.0.0/8", "192.0.2.7"])
    assert result["changed"] is True and result["connection"]["password"] == PLAIN_TEXT
    assert [w[:2] for w in writes(server)] == [("POST", URL), ("DELETE", URL + "/pw7"), ("POST", URL)]
    assert ctx.warnings == []


@pytest.mark.parametrize("fields", [
    dict(role="admin"),  # another field than the task sent
    dict(ttl_seconds=60),
    dict(replica=True),
    dict(cidrs=["10.0.0.0/8"]),  # the task sent none, so the platform gave its password none
    dict(created_at=-3600),  # made an hour before the request
    dict(created_at=None),  # made at a time nobody can tell
], ids=["role", "ttl", "replica", "cidrs", "an-hour-before", "no-time"])
def test_a_lost_create_leaves_a_password_it_cannot_show_to_be_its_own_and_names_it(server, run, fields):
    if "created_at" in fields and fields["created_at"] is not None:
        fields = dict(created_at=stamp(fields["created_at"]))
    other = password(7, **fields)
    server.script = [page(), LOST, page(other), (201, issued(8)), page(other, password(8))]
    ctx = TaskContext()
    result = run(ctx=ctx, role="reader", replica=False, ttl=0)
    assert result["changed"] is True and result["password"]["id"] == "pw8"
    assert [w[:2] for w in writes(server)] == [("POST", URL), ("POST", URL)]  # pw7 is not deleted
    assert ctx.warnings == [
        "Password 'app' on branch 'main' of database 'shop': the password with id pw7 appeared while the answer to "
        "this task's create was lost, but it lacks a field the task sent or was made outside the time of that request, "
        "so it is left as it is. If it is this task's, nobody holds its secret: delete it (state=absent with its id)."]
    assert PLAIN_TEXT not in json.dumps(ctx.warnings)


def test_a_lost_create_with_several_passwords_that_could_be_its_own_deletes_none_and_fails_naming_them(server, run):
    server.script = [page(), LOST, page(password(7), password(9))]
    ctx = TaskContext()
    with pytest.raises(ModuleFailure) as caught:
        run(ctx=ctx, role="reader")
    expected = ("Password 'app' on branch 'main' of database 'shop': 2 passwords (ids pw7, pw9) were made while "
                "the answer to this task's create was lost, and each has every field the task sent: one may be this "
                "task's, whose secret nobody holds, and the others another run's. None was deleted and no other "
                "created. Delete the ones whose secret you do not hold (state=absent with their id), then run the task "
                "again.")
    assert caught.value.msg == expected and ctx.warnings == [expected]
    assert writes(server) == [("POST", URL, dict(name="app", role="reader"))]


def test_the_time_of_a_lost_create_is_on_the_server_clock(server, run, monkeypatch):
    """The server's clock is a day ahead of this machine's: its Date headers, not the local clock, frame the request."""
    server_now = datetime.now(timezone.utc) + timedelta(days=1)
    monkeypatch.setattr(BaseHTTPRequestHandler, "date_time_string",
                        lambda self, timestamp=None: server_now.strftime("%a, %d %b %Y %H:%M:%S GMT"))
    mine = password(7, created_at=stamp(86400))
    local = password(9, created_at=stamp())
    server.script = [page(), LOST, page(mine, local), (204, b""), (201, issued(8)), page(local, password(8))]
    ctx = TaskContext()
    assert run(ctx=ctx, role="reader")["password"]["id"] == "pw8"
    assert [w[:2] for w in writes(server)] == [("POST", URL), ("DELETE", URL + "/pw7"), ("POST", URL)]
    assert "the password with id pw9 appeared" in ctx.warnings[0]


USER = (200, dict(id="u1", display_name="App user"))  # GET /user: the user the service token svc acts for


def unproven(number, whose):
    return ("Password 'app' on branch 'main' of database 'shop': the password with id pw%d appeared while the answer "
            "to this task's create was lost and has every field the task sent, but %s, so this task cannot prove it "
            "made it: it is left as it is and the create is sent again. It may be this task's, whose secret nobody "
            "holds, or another client's: if it is yours, delete it (state=absent with its id)." % (number, whose))


def test_a_lost_create_never_deletes_another_clients_password_with_the_same_name_and_fields(server, run):
    """The create was lost before the server applied it, and meanwhile another credential made the same password."""
    stranger = password(7, actor=dict(id="someone-else", display_name="Someone else"))
    server.script = [page(), LOST, page(stranger), USER, (201, issued(8)), page(stranger, password(8))]
    ctx = TaskContext()
    result = run(ctx=ctx, role="reader")
    assert result["changed"] is True and result["password"]["id"] == "pw8"
    assert result["connection"]["password"] == PLAIN_TEXT
    assert writes(server) == [("POST", URL, dict(name="app", role="reader"))] * 2  # pw7 is not deleted
    assert ("GET", "/v1/user", None) in sent(server)
    assert ctx.warnings == [unproven(7, "its actor (someone-else) is not this task's credential")]
    assert PLAIN_TEXT not in json.dumps(ctx.warnings)


def test_a_lost_create_leaves_a_password_that_names_no_actor_without_reading_the_user(server, run):
    anonymous = password(7)
    del anonymous["actor"]
    server.script = [page(), LOST, page(anonymous), (201, issued(8)), page(anonymous, password(8))]
    ctx = TaskContext()
    assert run(ctx=ctx, role="reader")["password"]["id"] == "pw8"
    assert writes(server) == [("POST", URL, dict(name="app", role="reader"))] * 2
    assert ctx.warnings == [unproven(7, "it names no actor")]
    assert "/v1/user" not in [r["path"] for r in server.requests]


def test_a_lost_create_deletes_the_password_whose_actor_is_the_user_the_credential_acts_for(server, run):
    mine = password(7, actor=dict(id="u1", display_name="App user"))
    server.script = [page(), LOST, page(mine), USER, (204, b""), (201, issued(8)), page(password(8))]
    ctx = TaskContext()
    assert run(ctx=ctx, role="reader")["password"]["id"] == "pw8"
    assert [w[:2] for w in writes(server)] == [("POST", URL), ("DELETE", URL + "/pw7"), ("POST", URL)]
    assert ctx.warnings == []


def test_an_access_token_that_cannot_read_its_user_proves_nothing_and_deletes_nothing(server, run):
    other = password(7, actor=dict(id="u1"))
    server.script = [page(), LOST, page(other), (403, dict(code="forbidden")), (201, issued(8)),
                     page(other, password(8))]
    ctx = TaskContext()
    assert run(ctx=ctx, role="reader", access_token="pscale_oauth_x", service_token_id=None,
               service_token=None)["password"]["id"] == "pw8"
    assert writes(server) == [("POST", URL, dict(name="app", role="reader"))] * 2
    assert ctx.warnings == [unproven(7, "its actor (u1) is not this task's credential")]


# A create answered with another record than the one asked for -----------------------------------------------------


def test_a_create_answered_with_another_name_is_not_acted_on(server, run):
    server.script = [page(), (201, issued(8, name="prod-admin"))]
    with pytest.raises(ModuleFailure) as caught:
        run(role="reader")
    assert caught.value.msg == (
        "Password 'app' on branch 'main' of database 'shop': the create was answered with the password 'prod-admin' "
        "(id pw8), not with the password named 'app' that was asked for, so the task stops without acting on it and "
        "returns no secret. Check the passwords of that name (state=absent with an id deletes one), then run the task "
        "again.")
    assert writes(server) == [("POST", URL, dict(name="app", role="reader"))]  # no rename, no delete
    assert PLAIN_TEXT not in json.dumps(caught.value.result)


# Runs that create the same password at once keep the oldest -----------------------------------------------------


def test_a_create_that_finds_an_older_same_password_deletes_its_own_and_returns_the_older(server, run):
    older = password(1, created_at=stamp(-1))
    server.script = [page(), (201, issued(2)), page(older, password(2)), (204, b"")]
    result = run(diff=True, role="reader")
    assert result == dict(changed=False, password=older,
                          diff=dict(before=dict(name="app", role="reader", replica=False, ttl=0, cidrs=[]),
                                    after=dict(name="app", role="reader", replica=False, ttl=0, cidrs=[])))
    assert writes(server) == [("POST", URL, dict(name="app", role="reader")), ("DELETE", URL + "/pw2", None)]
    assert PLAIN_TEXT not in json.dumps(result)


def test_the_same_creation_time_is_ordered_by_id(server, run):
    now = stamp()
    server.script = [page(), (201, issued(2, created_at=now)),
                     page(password(2, created_at=now), password(1, created_at=now)), (204, b"")]
    assert run()["password"]["id"] == "pw1"
    assert writes(server)[-1] == ("DELETE", URL + "/pw2", None)


@pytest.mark.parametrize("fields", [dict(created_at=60), dict(role="admin", created_at=-1),
                                    dict(cidrs=["10.0.0.0/8"], created_at=-1)],
                         ids=["newer", "another-role", "other-cidrs"])
def test_a_create_keeps_its_password_when_no_older_one_has_its_fields(server, run, fields):
    other = password(1, **dict(fields, created_at=stamp(fields["created_at"])))
    server.script = [page(), (201, issued(2)), page(other, password(2))]
    result = run(role="reader")
    assert result["changed"] is True and result["password"]["id"] == "pw2"
    assert result["connection"]["password"] == PLAIN_TEXT
    assert [w[0] for w in writes(server)] == ["POST"]


def test_a_replacement_that_finds_an_older_same_password_still_reports_the_delete(server, run):
    """Another run replaced the password at the same time: the one it made stays, and this task deleted the old one."""
    older = password(3, role="admin", created_at=stamp(-1))
    server.script = [page(password(1)), (204, b""), (201, issued(2, role="admin")),
                     page(older, password(2, role="admin")), (204, b"")]
    result = run(diff=True, role="admin", replace=True)
    assert result["changed"] is True and result["password"] == older and "connection" not in result
    assert result["diff"]["before"]["role"] == "reader" and result["diff"]["after"]["role"] == "admin"
    assert [w[:2] for w in writes(server)] == [("DELETE", URL + "/pw1"), ("POST", URL), ("DELETE", URL + "/pw2")]


def test_a_renewal_of_the_older_same_password_gives_its_secret(server, run):
    older = password(1, ttl_seconds=60, renewable=True, created_at=stamp(-1))
    server.script = [page(), (201, issued(2, ttl_seconds=60, renewable=True)), page(older, password(2, ttl_seconds=60)),
                     (204, b""), (200, issued(1, ttl_seconds=60, renewable=True))]
    result = run(ttl=60, renew=True)
    assert result["changed"] is True and result["password"]["id"] == "pw1" and result["connection"]
    assert [w[:2] for w in writes(server)] == [("POST", URL), ("DELETE", URL + "/pw2"), ("POST", URL + "/pw1/renew")]


def test_a_duplicate_that_cannot_be_deleted_is_kept_with_its_secret_and_a_warning(server, run):
    server.script = [page(), (201, issued(2)), page(password(1, created_at=stamp(-1)), password(2)),
                     (403, {"code": "forbidden", "message": "Forbidden"})]
    ctx = TaskContext()
    result = run(ctx=ctx)
    assert result["changed"] is True and result["connection"]["password"] == PLAIN_TEXT
    assert ctx.warnings == [
        "Password 'app' on branch 'main' of database 'shop': another run made the same password first (id pw1), and "
        "deleting the one this task made (id pw2) failed (DELETE /organizations/acme/databases/shop/branches/main/"
        "passwords/pw2 failed with HTTP 403: forbidden, Forbidden). Both exist and this task returns the secret of its "
        "own; delete one of them (state=absent with its id)."]


@pytest.mark.parametrize("args, message", [
    (dict(cidrs=["10.0.0.0/8", "10.0.0.300"]), "cidrs: '10.0.0.300' is not an IP address or CIDR range."),
    (dict(cidrs=["example.com"]), "cidrs: 'example.com' is not an IP address or CIDR range."),
    (dict(ttl=-1), "ttl must be from 0 (never expires) to 2147483647 seconds, not -1."),
    (dict(ttl=2 ** 31), "ttl must be from 0 (never expires) to 2147483647 seconds, not 2147483648."),
    (dict(name=" "), "name must not be empty."),
    (dict(id="../x"), "id must be a name, not '../x'."),
    (dict(branch=".."), "branch must be a name, not '..'."),
])
def test_bad_input_fails_before_any_request(server, run, args, message):
    with pytest.raises(ModuleFailure) as caught:
        run(**args)
    assert caught.value.msg == message
    assert server.requests == []


@pytest.mark.parametrize("address, host, port", [
    ("aws.connect.psdb.cloud", "aws.connect.psdb.cloud", 3306),  # the platform's: no port, MySQL's
    ("127.0.0.1:40001", "127.0.0.1", 40001),  # an address that names its port (the emulator's edge)
    ("[::1]:40001", "[::1]", 40001),
    ("::1", "::1", 3306),  # a bare IPv6 address is a host, not host:port
])
def test_the_connection_splits_a_port_off_the_address(address, host, port):
    found = connection(dict(access_host_url=address, username="u", plain_text="s"), "shop")
    assert (found["host"], found["port"]) == (host, port)
