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


@pytest.mark.parametrize("cidrs, message", [
    (["10.9.8.7/0"], "cidrs: '10.9.8.7/0' has host bits set, so it would mean 0.0.0.0/0 (every IPv4 address): write "
                     "10.9.8.7/32 for that address alone, or 0.0.0.0/0 for the whole range."),
    (["2001:db8::1/64"], "cidrs: '2001:db8::1/64' has host bits set, so it would mean 2001:db8::/64 "
                         "(18446744073709551616 addresses): write 2001:db8::1/128 for that address alone, or "
                         "2001:db8::/64 for the whole range."),
])
def test_a_range_with_host_bits_set_fails_before_any_request(server, run, cidrs, message):
    with pytest.raises(ModuleFailure) as caught:
        run(cidrs=cidrs)
    assert caught.value.msg == message and server.requests == []


def test_an_address_an_ipv6_network_and_every_address_are_taken(server, run):
    server.script = [page(password(cidrs=["10.9.8.7/0"]))]  # held as another tool wrote it: the network it means
    assert run(cidrs=["0.0.0.0/0"])["changed"] is False
    server.script = [page(password()), (200, password(cidrs=["10.0.0.1", "2001:db8::/32"]))]
    assert run(cidrs=["10.0.0.1", "2001:db8::/32"])["changed"] is True
    assert writes(server) == [("PATCH", URL + "/pw1", dict(cidrs=["10.0.0.1", "2001:db8::/32"]))]


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


def test_a_create_whose_answer_was_lost_returns_the_password_it_finds_without_deleting_it(server, run):
    """The secret of the password the lost request may have made is unknown, but another run may hold it: it is
    returned without a secret, with a warning that names it, and nothing is deleted or created again."""
    server.script = [page(), "drop", page(password(7, renewable=True, ttl_seconds=3600))]
    ctx = TaskContext()
    result = run(ctx=ctx, role="reader", ttl=3600)
    assert result["changed"] is True and result["password"]["id"] == "pw7" and "connection" not in result
    assert "plain_text" not in result["password"]
    assert writes(server) == [("POST", URL, dict(name="app", role="reader", ttl=3600))]
    assert ctx.warnings == [taken(7, "renew it (renew=true)")]


def test_a_create_that_stays_unknown_says_how_to_get_a_secret_back(server, run, sleeps):
    """The lost creates may have left a password whose secret nobody holds; a plain rerun would find it."""
    server.script = [page(), "drop", page(), "drop", page(), "drop", page()]
    with pytest.raises(ModuleFailure) as caught:
        run(role="reader")
    assert caught.value.msg.startswith("POST %s failed" % URL[3:])
    assert caught.value.msg.endswith("delete the password (state=absent) or renew it (renew=true) to get a secret "
                                     "you hold.")
    assert [w[0] for w in writes(server)] == ["POST"] * 3


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


def test_a_replacement_whose_answer_was_lost_takes_the_password_it_finds_and_keeps_the_others(server, run):
    server.script = [(200, password(1, ttl_seconds=60)), (204, b""), page(password(2, created_at=stamp(-3600))),
                     "drop", page(password(2, created_at=stamp(-3600)), password(3))]
    ctx = TaskContext()
    result = run(ctx=ctx, id="pw1", ttl=0, replace=True)
    assert result["changed"] is True and result["password"]["id"] == "pw3" and "connection" not in result
    assert [w[:2] for w in writes(server)] == [("DELETE", URL + "/pw1"), ("POST", URL)]
    assert ctx.warnings == [taken(3)]


# After a create whose answer was lost, nothing that appeared is deleted ---------------------------------------------

LOST = "drop"  # the connection drops after the request was sent: whether the server applied it is unknown


def taken(number, remedy="delete it (state=absent with its id) and run the task again"):
    return ("Password 'app' on branch 'main' of database 'shop': the password with id pw%d appeared while the answer "
            "to this task's create was lost and has every field the task sent. Nothing the platform returns tells "
            "whether this task's create made it or another run or client did (with this credential or another), so it "
            "is not deleted and no other is created: the task returns it without its secret, as when another run made "
            "the same password first. If another run or client made the password with id pw%d, take its secret from "
            "there; otherwise its secret was lost with the answer: %s to get a secret you hold (the old secret then "
            "stops working wherever it is used)." % (number, number, remedy))


@pytest.mark.parametrize("actor", [dict(id="svc"), dict(id="u1"), dict(id="someone-else"), None],
                         ids=["this-service-token", "a-user", "another-credential", "no-actor"])
def test_a_lost_create_never_deletes_the_password_that_appeared_whoever_made_it(server, run, actor):
    """The create was lost before the server applied it, and meanwhile another run made the same password: with the
    same service token (two pipelines that share one), nothing tells its password from the one this task may have
    made. It is returned without its secret and named in a warning; no user is read, nothing deleted."""
    other = password(7, actor=actor)
    server.script = [page(), LOST, page(other)]
    ctx = TaskContext(diff=True)
    result = run(ctx=ctx, role="reader")
    assert result["changed"] is True and result["password"] == other and "connection" not in result
    assert result["diff"] == dict(before={}, after=dict(name="app", role="reader", replica=False, ttl=0, cidrs=[]))
    assert writes(server) == [("POST", URL, dict(name="app", role="reader"))]
    assert [r["path"] for r in server.requests if r["method"] == "GET"] == [URL] * 2
    assert ctx.warnings == [taken(7)]


def test_a_lost_create_compares_cidrs_as_networks_and_takes_the_password_with_every_field_sent(server, run):
    """cidrs are compared as networks: 192.0.2.7 and 192.0.2.7/32 are one."""
    fields = dict(role="writer", ttl_seconds=3600, renewable=True, cidrs=["192.0.2.7/32", "10.0.0.0/8"])
    server.script = [page(), LOST, page(password(7, **fields))]
    ctx = TaskContext()
    result = run(ctx=ctx, role="writer", ttl=3600, cidrs=["10.0.0.0/8", "192.0.2.7"])
    assert result["password"]["id"] == "pw7" and [w[0] for w in writes(server)] == ["POST"]
    assert ctx.warnings == [taken(7, "renew it (renew=true)")]


@pytest.mark.parametrize("fields", [
    dict(role="admin"),  # another field than the task sent
    dict(ttl_seconds=60),
    dict(replica=True),
    dict(cidrs=["10.0.0.0/8"]),  # the task sent none, so the platform gave its password none
    dict(created_at=-3600),  # made an hour before the request
    dict(created_at=None),  # made at a time nobody can tell
], ids=["role", "ttl", "replica", "cidrs", "an-hour-before", "no-time"])
def test_a_lost_create_leaves_a_password_without_every_field_sent_names_it_and_creates_again(
        server, run, sleeps, fields):
    if "created_at" in fields and fields["created_at"] is not None:
        fields = dict(created_at=stamp(fields["created_at"]))
    other = password(7, **fields)
    server.script = [page(), LOST, page(other), (201, issued(8)), page(other, password(8))]
    ctx = TaskContext()
    result = run(ctx=ctx, role="reader", replica=False, ttl=0)
    assert result["changed"] is True and result["password"]["id"] == "pw8"
    assert result["connection"]["password"] == PLAIN_TEXT
    assert [w[:2] for w in writes(server)] == [("POST", URL), ("POST", URL)]  # pw7 is not deleted
    assert ctx.warnings == [
        "Password 'app' on branch 'main' of database 'shop': the password with id pw7 appeared while the answer to "
        "this task's create was lost, but it lacks a field the task sent or was made outside the time of that request, "
        "so it is left as it is. If it is this task's, nobody holds its secret: delete it (state=absent with its id)."]
    assert PLAIN_TEXT not in json.dumps(ctx.warnings)


def test_a_lost_create_with_several_passwords_with_every_field_takes_the_oldest_and_deletes_none(server, run):
    server.script = [page(), LOST, page(password(9, created_at=stamp(1)), password(7))]
    ctx = TaskContext()
    result = run(ctx=ctx, role="reader")
    assert result["password"]["id"] == "pw7" and "connection" not in result
    assert writes(server) == [("POST", URL, dict(name="app", role="reader"))]
    assert len(ctx.warnings) == 1 and ctx.warnings[0].startswith(
        "Password 'app' on branch 'main' of database 'shop': 2 passwords (ids pw7, pw9) appeared while the answer to "
        "this task's create was lost, and each has every field the task sent.")
    assert "returns the oldest (id pw7) without its secret" in ctx.warnings[0]


def test_the_time_of_a_lost_create_is_on_the_server_clock(server, run, monkeypatch):
    """The server's clock is a day ahead of this machine's: its Date headers, not the local clock, frame the request."""
    server_now = datetime.now(timezone.utc) + timedelta(days=1)
    monkeypatch.setattr(BaseHTTPRequestHandler, "date_time_string",
                        lambda self, timestamp=None: server_now.strftime("%a, %d %b %Y %H:%M:%S GMT"))
    made = password(7, created_at=stamp(86400))
    local = password(9, created_at=stamp())
    server.script = [page(), LOST, page(made, local)]
    ctx = TaskContext()
    assert run(ctx=ctx, role="reader")["password"]["id"] == "pw7"
    assert [w[:2] for w in writes(server)] == [("POST", URL)]
    assert "the password with id pw9 appeared" in ctx.warnings[0] and ctx.warnings[1] == taken(7)


# A create answer without what the connection needs ----------------------------------------------------------------


def test_a_lean_create_answer_is_completed_by_one_read_and_keeps_its_secret(server, run):
    """The platform answers some creates without username (its Go client records one, for a read-only region)."""
    lean = dict(id="pw1", name="app", role="reader", plain_text=PLAIN_TEXT, access_host_url="db.example.test")
    server.script = [page(), (201, lean), (200, password(1)), page(password(1))]
    result = run(role="reader")
    assert result["password"]["username"] == "u1" and result["password"]["plain_text"] == PLAIN_TEXT
    assert result["connection"] == dict(kind="mysql", host="db.example.test", port=3306, username="u1",
                                        password=PLAIN_TEXT, database="shop")
    assert [(r["method"], r["path"]) for r in server.requests] == [("GET", URL), ("POST", URL), ("GET", URL + "/pw1"),
                                                                   ("GET", URL)]


def test_a_lean_create_answer_whose_read_fails_keeps_its_secret_with_a_warning(server, run):
    lean = dict(id="pw1", name="app", role="reader", plain_text=PLAIN_TEXT)
    server.script = [page(), (201, lean), (403, {"code": "forbidden", "message": "Forbidden"}), page(password(1))]
    ctx = TaskContext()
    result = run(ctx=ctx, role="reader")
    assert result["password"]["plain_text"] == PLAIN_TEXT and result["connection"]["username"] is None
    assert ctx.warnings == [
        "Password 'app' on branch 'main' of database 'shop': the create's answer has no username or access_host_url, "
        "and reading the password back failed (GET /organizations/acme/databases/shop/branches/main/passwords/pw1 "
        "failed with HTTP 403: forbidden, Forbidden)."]


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
