# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""shown_once: a secret the API shows once. Which record a lost create made is the task's own, the window of the
create, the renewals and resets sent again, the sentences, and the records without their secrets."""

from __future__ import annotations

from datetime import datetime, timezone
from types import SimpleNamespace

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure, TaskContext
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError
from ansible_collections.planetscale.cloud.plugins.module_utils.shown_once import (
    SECRETS, CreationWindow, ShownOnce, actor_of, check_answer, secret_lost, server_time, several_named,
    without_secrets)

UTC = timezone.utc
START, END = "Sun, 22 Nov 2026 01:02:03 GMT", "Sun, 22 Nov 2026 01:02:10 GMT"  # the Date of the create, of the read
IN_TIME, LATE = "2026-11-22T01:02:06Z", "2026-11-22T01:03:00Z"
WHAT = "Password 'app' on branch 'main' of database 'shop'"


class User:
    """A client whose GET /user names the user u1 (or fails with status), and whose Date header is set by the test."""

    def __init__(self, status=None):
        self.server_date = START
        self.status = status
        self.reads = []

    def get(self, path):
        self.reads.append(path)
        if self.status:
            raise ApiError("GET", path, status=self.status)
        return dict(id="u1")


def made(number, actor="svc", created_at=IN_TIME, **fields):
    return dict(dict(id="pw%d" % number, name="app", actor=dict(id=actor) if actor else None, created_at=created_at),
                **fields)


def settle(records, known=(), alike=lambda item: item.get("role") != "admin", client=None):
    """Runs one lost create against the records read after it: (records deleted, warnings, ShownOnce)."""
    module = SimpleNamespace(client=client or User(), ctx=TaskContext(), params=dict(service_token_id="svc"))
    once = ShownOnce(module, "password")
    once.seen([dict(id=number) for number in known])
    once.before_create()
    module.client.server_date = END
    deleted = []
    mine = once.settle(lambda: records, alike, deleted.append, WHAT)
    assert mine == deleted
    return [item["id"] for item in deleted], module.ctx.warnings, once


# The decision after a lost create: the task's own, a stranger's, several, none ----------------------------------------

def test_the_one_new_record_in_time_with_every_field_by_the_tasks_credential_is_deleted_without_a_warning():
    deleted, warnings, once = settle([made(1, created_at=None, actor="old"), made(2)], known=["pw1"])
    assert deleted == ["pw2"] and warnings == [] and once.known == {"pw1", "pw2"} and once.lost is True


def test_the_user_the_credential_acts_for_is_the_tasks_own_too():
    client = User()
    assert settle([made(1, actor="u1")], client=client)[0] == ["pw1"] and client.reads == ["/user"]


def test_one_strangers_record_is_left_and_named_in_a_warning():
    deleted, warnings, once = settle([made(1, actor="someone")])
    assert deleted == [] and once.known == {"pw1"}
    assert warnings == ["%s: the password with id pw1 appeared while the answer to this task's create was lost and has "
                        "every field the task sent, but its actor (someone) is not this task's credential, so this "
                        "task cannot prove it made it: it is left as it is and the create is sent again. It may be "
                        "this task's, whose secret nobody holds, or another client's: if it is yours, delete it "
                        "(state=absent with its id)." % WHAT]


def test_a_record_without_an_actor_is_a_strangers_and_the_user_is_not_read():
    client = User()
    deleted, warnings = settle([made(1, actor=None)], client=client)[:2]
    assert deleted == [] and "but it names no actor, so" in warnings[0] and client.reads == []


def test_where_the_user_cannot_be_read_only_the_service_token_is_the_tasks_own():
    deleted, warnings = settle([made(1, actor="u1"), made(2)], client=User(status=403))[:2]
    assert deleted == ["pw2"] and "its actor (u1) is not this task's credential" in warnings[0]


def test_several_records_of_the_tasks_own_delete_none_and_fail_naming_them_also_in_a_warning():
    module = SimpleNamespace(client=User(), ctx=TaskContext(), params=dict(service_token_id="svc"))
    once = ShownOnce(module, "password")
    once.before_create()
    module.client.server_date = END
    deleted = []
    with pytest.raises(ModuleFailure) as caught:
        once.settle(lambda: [made(2), made(1)], lambda item: True, deleted.append, WHAT)
    assert deleted == [] and module.ctx.warnings == [caught.value.msg]
    assert caught.value.msg == (
        "%s: 2 passwords (ids pw1, pw2) were made while the answer to this task's create was lost, and each has every "
        "field the task sent: one may be this task's, whose secret nobody holds, and the others another run's. None "
        "was deleted and no other created. Delete the ones whose secret you do not hold (state=absent with their id), "
        "then run the task again." % WHAT)


@pytest.mark.parametrize("records, known", [([], []), ([made(1)], ["pw1"])])
def test_no_new_record_deletes_nothing_and_says_nothing(records, known):
    assert settle(records, known=known)[:2] == ([], [])


@pytest.mark.parametrize("others, sentence", [
    ([made(1, created_at=LATE)],
     "the password with id pw1 appeared while the answer to this task's create was lost, but it lacks a field the "
     "task sent or was made outside the time of that request, so it is left as it is."),
    ([made(1, role="admin"), made(2, created_at=None)],
     "the passwords with ids pw1, pw2 appeared while the answer to this task's create was lost, but each lacks a "
     "field the task sent or was made outside the time of that request, so they are left as they are."),
])
def test_new_records_without_every_field_or_made_out_of_time_are_left_and_named(others, sentence):
    deleted, warnings, once = settle(others)
    assert deleted == [] and len(warnings) == 1 and warnings[0].startswith("%s: %s" % (WHAT, sentence))
    assert once.known == set(item["id"] for item in others)  # never taken for this task's record later


def test_the_names_records_are_read_before_the_first_create_only_once():
    module = SimpleNamespace(client=User())
    once, reads = ShownOnce(module, "password"), []
    once.before_create(lambda: reads.append(1) or [dict(id="pw1")])
    once.before_create(lambda: reads.append(2) or [dict(id="pw2")])
    assert reads == [1] and once.known == {"pw1"}


def test_a_create_that_is_answered_ends_the_lost_secret():
    once = ShownOnce(SimpleNamespace(), "password")
    once.lost = True
    once.check(dict(id="pw1", name="app"), "app", WHAT)
    assert once.lost is False


# Renewals and resets: sent again, once, after a lost answer ------------------------------------------------------------

def sender(*outcomes):
    sent = []

    def send():
        sent.append(1)
        outcome = outcomes[len(sent) - 1]
        if isinstance(outcome, Exception):
            raise outcome
        return outcome
    return send, sent


LOST = ApiError("POST", "/renew", status=502, outcome_unknown=True)


def test_a_renewal_whose_answer_was_lost_is_sent_once_more(sleeps):
    once = ShownOnce(SimpleNamespace(), "password")
    send, sent = sender(LOST, dict(plain_text="new"))
    assert once.resend(send) == dict(plain_text="new") and len(sent) == 2 and once.lost is False
    assert len(sleeps) == 1  # write_and_settle's backoff between the two


def test_a_renewal_lost_twice_fails_with_the_secret_lost(sleeps):
    once = ShownOnce(SimpleNamespace(), "role")
    send, sent = sender(LOST, LOST, dict(password="never sent"))
    with pytest.raises(ApiError):
        once.resend(send)
    assert len(sent) == 2 and once.lost is True


def test_a_renewal_refused_is_not_sent_again(sleeps):
    once = ShownOnce(SimpleNamespace(), "role")
    send, sent = sender(ApiError("POST", "/reset", status=422), dict(password="never sent"))
    with pytest.raises(ApiError):
        once.resend(send)
    assert len(sent) == 1 and once.lost is False and sleeps == []


# The sentences ------------------------------------------------------------------------------------------------------

def test_the_sentences_name_ids_never_a_secret():
    found = [dict(id="b", plain_text="s1"), dict(id="a", token="s2")]
    assert several_named("password", "app", found, " on branch 'main'") == (
        "2 passwords are named 'app' on branch 'main' (ids a, b): set id to the one to manage, or delete the others "
        "(state=absent with their id).")
    assert several_named("service token", "ci", found) == (
        "2 service tokens are named 'ci' (ids a, b): set id to the one to manage, or delete the others (state=absent "
        "with their id).")
    assert secret_lost("POST /x failed.", "role", "reset it (reset=true)") == (
        "POST /x failed. The API may have issued a secret whose answer was lost, and running the task again would find "
        "the role without it: delete the role (state=absent) or reset it (reset=true) to get a secret you hold.")


# Records without their secrets --------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind, secrets", [
    ("password", dict(plain_text="pscale_pw_x")),
    ("Postgres role", dict(password="pscale_pg_x")),
    ("service token", dict(token="pscale_tkn_x", plain_text_refresh_token="pscale_rt_x")),
])
def test_every_secret_field_is_stripped_and_nothing_else(kind, secrets):
    shown = dict(id="r1", name=kind, username="u", access_host_url="h", created_at=IN_TIME)
    assert without_secrets(dict(shown, **secrets)) == shown
    assert set(secrets) <= set(SECRETS)


def test_without_secrets_keeps_none_and_copies():
    assert without_secrets(None) is None
    original = dict(id="r1", plain_text="s")
    assert without_secrets(original) == dict(id="r1") and original == dict(id="r1", plain_text="s")
    assert without_secrets(dict(id="w1", secret="k"), fields=("secret",)) == dict(id="w1")


# The window of a create, the actor of a record, the answer to a create ----------------------------------------------

@pytest.mark.parametrize("header", [None, "", "not a date"])
def test_without_a_readable_date_header_there_is_no_server_time(header):
    assert server_time(SimpleNamespace(server_date=header)) is None


def test_the_window_is_on_the_server_clock_with_two_seconds_either_side():
    client = SimpleNamespace(server_date="Sun, 22 Nov 2026 01:02:03 GMT")
    window = CreationWindow(client)
    client.server_date = "Sun, 22 Nov 2026 01:02:10 GMT"
    window.close()
    inside = ["2026-11-22T01:02:01.000Z", "2026-11-22T01:02:06Z", "2026-11-22T01:02:12.000Z"]
    outside = ["2026-11-22T01:02:00.999Z", "2026-11-22T01:02:12.001Z", None]
    assert [window.holds(dict(created_at=t)) for t in inside + outside] == [True] * 3 + [False] * 3


def test_without_the_server_clock_the_window_is_on_this_machine_with_a_minute_either_side():
    window = CreationWindow(SimpleNamespace(server_date=None))
    window.close()
    now = datetime.now(UTC)
    assert window.bounds[0] < now < window.bounds[1]
    assert 119 < (window.bounds[1] - window.bounds[0]).total_seconds() < 125


@pytest.mark.parametrize("record, actor", [
    (dict(actor=dict(id="u1", display_name="A")), "u1"),  # passwords and Postgres roles
    (dict(actor_id="u2", actor_type="User"), "u2"),  # service tokens
    (dict(actor=None, actor_id=None), None),
    (dict(actor=dict(display_name="no id")), None),
    ({}, None),
])
def test_the_actor_of_a_record_is_its_actor_id_or_its_actor_id_field(record, actor):
    assert actor_of(record) == actor


def test_a_create_answer_of_another_name_is_refused_and_one_without_a_name_is_not():
    check_answer(dict(id="pw1", name="app"), "app", "Password 'app'", "password")
    check_answer(dict(id="pw1"), "app", "Password 'app'", "password")  # a lean answer states no name: no difference
    with pytest.raises(ModuleFailure) as caught:
        check_answer(dict(id="pw2", name="other", plain_text="secret"), "app", "Password 'app'", "password")
    assert caught.value.msg.startswith("Password 'app': the create was answered with the password 'other' (id pw2), "
                                       "not with the password named 'app' that was asked for")
    assert "secret" not in caught.value.msg.replace("no secret", "")
