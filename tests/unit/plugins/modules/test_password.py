# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import json

import pytest
from ansible.module_utils.common.arg_spec import ModuleArgumentSpecValidator

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure, TaskContext
from ansible_collections.planetscale.cloud.plugins.modules.password import Password

URL = "/v1/organizations/acme/databases/shop/branches/main/passwords"
PLAIN_TEXT = "pscale_pw_the_secret_itself"
NOT_FOUND = (404, {"code": "not_found", "message": "Not Found"})


def run(server, check_mode=False, diff=False, ctx=None, **args):
    args = dict(dict(organization="acme", database="shop", branch="main", name="app", service_token_id="svc",
                     service_token="s3cret", api_url=server.url + "/v1", api_retries=0), **args)
    spec = Password.spec()
    spec.pop("supports_check_mode")
    validation = ModuleArgumentSpecValidator(**spec).validate(args)
    assert not validation.error_messages
    ctx = ctx or TaskContext(check_mode=check_mode, diff=diff)
    return Password(validation.validated_parameters, ctx).execute()


def password(number=1, **fields):
    return dict(dict(id="pw%d" % number, name="app", role="reader", replica=False, ttl_seconds=None, cidrs=None,
                     renewable=False, username="u%d" % number, access_host_url="db.example.test"), **fields)


def issued(number=1, **fields):
    return dict(password(number, **fields), plain_text=PLAIN_TEXT)


def page(*items):
    return (200, dict(type="list", current_page=1, next_page=None, data=list(items)))


def sent(server):
    return [(r["method"], r["path"], json.loads(r["body"]) if r["body"] else None) for r in server.requests]


def writes(server):
    return [r for r in sent(server) if r[0] != "GET"]


def test_create_returns_the_secret_and_the_connection_once(server):
    server.script = [page(), (201, issued(cidrs=["10.0.0.0/8"]))]
    result = run(server, diff=True, role="reader", ttl=0, cidrs=["10.0.0.0/8"])
    assert result["changed"] is True
    assert result["password"]["plain_text"] == PLAIN_TEXT
    assert result["connection"] == dict(host="db.example.test", username="u1", password=PLAIN_TEXT, database="shop")
    assert writes(server) == [("POST", URL, dict(name="app", role="reader", ttl=0, cidrs=["10.0.0.0/8"]))]
    assert server.requests[0]["query"]["q"] == ["app"]
    assert PLAIN_TEXT not in json.dumps(result["diff"])


def test_an_existing_password_is_one_read_and_shows_no_secret(server):
    server.script = [page(dict(password(), plain_text="leaked"), password(2, name="app-old"))]
    result = run(server, role="reader", replica=False, ttl=0)
    assert result == dict(changed=False, password=password())
    assert len(server.requests) == 1


def test_cidrs_are_compared_as_a_set_of_networks(server):
    server.script = [page(password(cidrs=["192.0.2.7/32", "10.0.0.0/8"]))]
    assert run(server, cidrs=["10.0.0.0/8", "192.0.2.7"])["changed"] is False
    assert writes(server) == []


def test_cidrs_and_name_change_in_one_patch(server):
    server.script = [(200, password(cidrs=["10.0.0.0/8"])), (200, password(name="api", cidrs=["10.1.0.0/16"]))]
    result = run(server, diff=True, id="pw1", name="api", role="reader", cidrs=["10.1.0.0/16"])
    assert result["changed"] is True
    assert "plain_text" not in result["password"] and "connection" not in result
    assert writes(server) == [("PATCH", URL + "/pw1", dict(name="api", cidrs=["10.1.0.0/16"]))]
    assert result["diff"]["before"]["cidrs"] == ["10.0.0.0/8"]
    assert result["diff"]["after"]["cidrs"] == ["10.1.0.0/16"]


def test_an_update_never_returns_a_secret_the_api_echoes(server):
    server.script = [(200, password()), (200, issued(cidrs=["10.1.0.0/16"]))]
    result = run(server, id="pw1", cidrs=["10.1.0.0/16"])
    assert result["changed"] is True
    assert "plain_text" not in result["password"] and "connection" not in result
    assert PLAIN_TEXT not in json.dumps(result)


EXPIRED = dict(ttl_seconds=3600, renewable=True, expired=True, expires_at="2026-01-01T00:00:00Z")


def test_an_expired_password_is_left_as_it_is_with_a_warning(server):
    server.script = [page(password(**EXPIRED))]
    ctx = TaskContext()
    result = run(server, ctx=ctx, ttl=3600)
    assert result["changed"] is False and writes(server) == []
    assert ctx.warnings == ["Password 'app' on branch 'main' of database 'shop' expired at 2026-01-01T00:00:00Z: its "
                            "secret no longer connects. Set renew: true to give it a new secret and expiry."]


def test_renewing_an_expired_password_gives_no_warning(server):
    server.script = [page(password(**EXPIRED)), (200, issued(ttl_seconds=3600, renewable=True, expired=False))]
    ctx = TaskContext()
    result = run(server, ctx=ctx, renew=True)
    assert result["changed"] is True and result["password"]["plain_text"] == PLAIN_TEXT
    assert ctx.warnings == []


def test_check_mode_update_writes_nothing(server):
    server.script = [page(password())]
    result = run(server, check_mode=True, diff=True, cidrs=["10.0.0.0/8"])
    assert result["changed"] is True and result["password"]["cidrs"] == ["10.0.0.0/8"]
    assert writes(server) == []


def test_check_mode_create_predicts_without_a_secret(server):
    server.script = [page()]
    result = run(server, check_mode=True, diff=True, role="writer")
    assert result["changed"] is True
    assert result["password"] == dict(name="app", role="writer", replica=False, ttl_seconds=0)
    assert "connection" not in result
    assert result["diff"]["after"] == dict(name="app", role="writer", replica=False, ttl=0, cidrs=[])
    assert writes(server) == []


@pytest.mark.parametrize("args, field", [(dict(role="admin"), "role"), (dict(ttl=60), "ttl"),
                                         (dict(replica=True), "replica")])
def test_a_create_only_field_that_differs_fails_naming_it(server, args, field):
    server.script = [page(password())]
    with pytest.raises(ModuleFailure) as caught:
        run(server, **args)
    assert caught.value.msg.startswith("Password 'app' on branch 'main' of database 'shop' has %s " % field)
    assert "%s can only be set when the password is created; set replace: true" % field in caught.value.msg
    assert writes(server) == []


def test_replace_deletes_and_creates_with_a_new_secret(server):
    server.script = [page(password(cidrs=["10.0.0.0/8"])), (204, b""), (201, issued(2, role="admin"))]
    result = run(server, role="admin", replace=True)
    assert result["changed"] is True
    assert result["connection"]["password"] == PLAIN_TEXT
    assert writes(server) == [("DELETE", URL + "/pw1", None),
                              ("POST", URL, dict(name="app", role="admin", replica=False, ttl=0,
                                                 cidrs=["10.0.0.0/8"]))]


def test_several_passwords_with_the_name_fail_naming_their_ids(server):
    server.script = [page(password(1), password(2))]
    with pytest.raises(ModuleFailure) as caught:
        run(server, state="absent")
    assert caught.value.msg == "2 passwords are named 'app' on branch 'main' (ids pw1, pw2); set id to the one to manage."
    assert writes(server) == []


def test_id_selects_one_of_several(server):
    server.script = [(200, password(2)), (204, b"")]
    assert run(server, id="pw2", state="absent")["changed"] is True
    assert writes(server) == [("DELETE", URL + "/pw2", None)]


def test_an_unknown_id_fails_rather_than_creating(server):
    server.script = [NOT_FOUND]
    with pytest.raises(ModuleFailure, match="^Password 'app' on branch 'main' of database 'shop' with id 'pw9' "
                                            "does not exist; leave id out to create it.$"):
        run(server, id="pw9")
    assert writes(server) == []


def test_absent_when_missing_is_no_change(server):
    server.script = [page()]
    assert run(server, state="absent") == dict(changed=False)


def test_renew_gives_a_new_secret(server):
    server.script = [page(password(ttl_seconds=3600, renewable=True)), (200, issued(ttl_seconds=3600))]
    result = run(server, renew=True)
    assert result["changed"] is True and result["connection"]["password"] == PLAIN_TEXT
    assert writes(server) == [("POST", URL + "/pw1/renew", None)]


def test_renew_in_check_mode_writes_nothing(server):
    server.script = [page(password(renewable=True))]
    result = run(server, check_mode=True, renew=True)
    assert result["changed"] is True and "connection" not in result
    assert writes(server) == []


def test_a_password_without_ttl_cannot_be_renewed(server):
    server.script = [page(password())]
    with pytest.raises(ModuleFailure, match="cannot be renewed: only a password with a ttl can"):
        run(server, renew=True)
    assert writes(server) == []


def test_a_new_password_is_not_renewed_too(server):
    server.script = [page(), (201, issued(renewable=True, ttl_seconds=60))]
    assert run(server, ttl=60, renew=True)["changed"] is True
    assert [w[1] for w in writes(server)] == [URL]


def test_a_renewal_whose_answer_was_lost_is_renewed_again(server):
    server.script = [page(password(renewable=True)), (502, {}), (200, issued(renewable=True))]
    assert run(server, renew=True)["password"]["plain_text"] == PLAIN_TEXT
    assert [w[1] for w in writes(server)] == [URL + "/pw1/renew"] * 2


def test_a_create_whose_answer_was_lost_is_deleted_and_created_again(server):
    """The secret of the password created by the lost request is unknown: one usable password must remain."""
    server.script = [page(), (502, {"code": "bad_gateway"}), page(password(7)), (204, b""), (201, issued(8))]
    result = run(server, role="reader")
    assert result["changed"] is True
    assert result["password"]["id"] == "pw8" and result["connection"]["password"] == PLAIN_TEXT
    assert writes(server) == [("POST", URL, dict(name="app", role="reader")), ("DELETE", URL + "/pw7", None),
                              ("POST", URL, dict(name="app", role="reader"))]


def test_a_create_that_stays_unknown_says_how_to_get_a_secret_back(server):
    """The lost create may have left a password whose secret nobody holds; a plain rerun would keep it."""
    server.script = [page(), (502, {"code": "bad_gateway"}), page(password(7)), (502, {"code": "bad_gateway"})]
    with pytest.raises(ModuleFailure) as caught:
        run(server, role="reader")
    assert "HTTP 502" in caught.value.msg
    assert caught.value.msg.startswith("DELETE %s/pw7 failed with HTTP 502" % URL[3:])
    assert caught.value.msg.endswith("delete the password (state=absent) or renew it (renew=true) to get a secret "
                                     "you hold.")


def test_a_renewal_lost_twice_says_how_to_get_a_secret_back(server):
    server.script = [page(password(renewable=True)), (502, {}), (502, {})]
    with pytest.raises(ModuleFailure) as caught:
        run(server, renew=True)
    assert caught.value.msg.endswith("renew it (renew=true) to get a secret you hold.")


def test_an_update_that_stays_unknown_says_a_rerun_continues(server):
    server.script = [page(password(1)), (502, {}), page(password(1)), (502, {}), page(password(1)), (502, {}),
                     page(password(1))]
    with pytest.raises(ModuleFailure) as caught:
        run(server, cidrs=["10.0.0.0/8"])
    assert caught.value.msg.endswith("running the task again reads what exists and continues from there.")


def test_a_replacement_whose_answer_was_lost_keeps_the_other_passwords(server):
    server.script = [(200, password(1, ttl_seconds=60)), (204, b""), page(password(2)), (502, {}),
                     page(password(2), password(3)), (204, b""), (201, issued(4))]
    result = run(server, id="pw1", ttl=0, replace=True)
    assert result["password"]["id"] == "pw4"
    assert [w[:2] for w in writes(server)] == [("DELETE", URL + "/pw1"), ("POST", URL), ("DELETE", URL + "/pw3"),
                                               ("POST", URL)]


@pytest.mark.parametrize("args, message", [
    (dict(cidrs=["10.0.0.0/8", "10.0.0.300"]), "cidrs: '10.0.0.300' is not an IP address or CIDR range."),
    (dict(cidrs=["example.com"]), "cidrs: 'example.com' is not an IP address or CIDR range."),
    (dict(ttl=-1), "ttl must be from 0 (never expires) to 2147483647 seconds, not -1."),
    (dict(ttl=2 ** 31), "ttl must be from 0 (never expires) to 2147483647 seconds, not 2147483648."),
    (dict(name=" "), "name must not be empty."),
    (dict(id="../x"), "id must be a name, not '../x'."),
    (dict(branch=".."), "branch must be a name, not '..'."),
])
def test_bad_input_fails_before_any_request(server, args, message):
    with pytest.raises(ModuleFailure) as caught:
        run(server, **args)
    assert caught.value.msg == message
    assert server.requests == []
