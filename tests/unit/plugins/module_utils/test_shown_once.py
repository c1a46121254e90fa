# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""shown_once: a secret the API shows once. The record a task takes after a lost create (never one it deletes), the
window of the create, the renewals and resets sent again, the sentences, and the records without their secrets."""

from __future__ import annotations

from datetime import datetime, timezone
from types import SimpleNamespace

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure, TaskContext
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError
from ansible_collections.planetscale.cloud.plugins.module_utils.shown_once import (
    SECRETS, CreationWindow, ShownOnce, check_answer, secret_lost, server_time, several_named, without_secrets)

UTC = timezone.utc
START, END = "Sun, 22 Nov 2026 01:02:03 GMT", "Sun, 22 Nov 2026 01:02:10 GMT"  # the Date of the create, of the read
IN_TIME, LATE = "2026-11-22T01:02:06Z", "2026-11-22T01:03:00Z"
WHAT = "Password 'app' on branch 'main' of database 'shop'"


def made(number, actor="svc", created_at=IN_TIME, **fields):
    return dict(dict(id="pw%d" % number, name="app", actor=dict(id=actor) if actor else None, created_at=created_at),
                **fields)


REMEDY = "renew it (renew=true)"


def settle(records, known=(), alike=lambda item: item.get("role") != "admin"):
    """Runs one lost create against the records read after it: (the record taken, warnings, ShownOnce)."""
    module = SimpleNamespace(client=SimpleNamespace(server_date=START), ctx=TaskContext())
    once = ShownOnce(module, "password")
    once.seen([dict(id=number) for number in known])
    once.before_create()
    module.client.server_date = END
    remedies = []
    taken = once.settle(lambda: records, alike, WHAT, lambda record: remedies.append(record["id"]) or REMEDY)
    assert remedies == ([taken["id"]] if taken else [])  # the remedy is the taken record's
    return taken, module.ctx.warnings, once


def taken_alone(number):
    return ("%s: the password with id pw%d appeared while the answer to this task's create was lost and has every "
            "field the task sent. Nothing the platform returns tells whether this task's create made it or another "
            "run or client did (with this credential or another), so it is not deleted and no other is created: the "
            "task returns it without its secret, as when another run made the same password first. If another run or "
            "client made the password with id pw%d, take its secret from there; otherwise its secret was lost with the "
            "answer: renew it (renew=true) to get a secret you hold (the old secret then stops working wherever it is "
            "used)." % (WHAT, number, number))


# The decision after a lost create: take what appeared, never delete it; or create again ---------------------------

@pytest.mark.parametrize("actor", ["svc", "someone", None], ids=["this-credential", "another", "no-actor"])
def test_the_one_new_record_in_time_with_every_field_is_taken_whoever_made_it_and_named_in_a_warning(actor):
    """The task's credential as actor proves nothing: another run may share it (two pipelines, one service token)."""
    found, warnings, once = settle([made(1, created_at=None, actor="old"), made(2, actor=actor)], known=["pw1"])
    assert found["id"] == "pw2" and warnings == [taken_alone(2)] and once.lost is True
    assert once.known == {"pw1", "pw2"}


def test_of_several_new_records_the_oldest_is_taken_and_every_one_named():
    records = [made(3, created_at="2026-11-22T01:02:05Z"), made(2, created_at="2026-11-22T01:02:04Z"),
               made(4, created_at="2026-11-22T01:02:04Z")]
    found, warnings = settle(records)[:2]
    assert found["id"] == "pw2" and len(warnings) == 1
    assert warnings[0] == (
        "%s: 3 passwords (ids pw2, pw3, pw4) appeared while the answer to this task's create was lost, and each has "
        "every field the task sent. Nothing the platform returns tells which, if any, this task's create made, so none "
        "is deleted and no other is created: the task returns the oldest (id pw2) without its secret, as when another "
        "run made the same password first. One of the others whose secret nobody holds may be this task's: delete it "
        "(state=absent with its id). If another run or client made the password with id pw2, take its secret from "
        "there; otherwise its secret was lost with the answer: renew it (renew=true) to get a secret you hold (the old "
        "secret then stops working wherever it is used)." % WHAT)


@pytest.mark.parametrize("records, known", [([], []), ([made(1)], ["pw1"])])
def test_no_new_record_takes_nothing_and_says_nothing(records, known):
    assert settle(records, known=known)[:2] == (None, [])


def test_a_record_taken_beside_one_left_names_both():
    found, warnings = settle([made(1, role="admin"), made(2)])[:2]
    assert found["id"] == "pw2" and len(warnings) == 2
    assert "the password with id pw1 appeared" in warnings[0] and "is left as it is" in warnings[0]
    assert warnings[1] == taken_alone(2)


@pytest.mark.parametrize("others, sentence", [
    ([made(1, created_at=LATE)],
     "the password with id pw1 appeared while the answer to this task's create was lost, but it lacks a field the "
     "task sent or was made outside the time of that request, so it is left as it is."),
    ([made(1, role="admin"), made(2, created_at=None)],
     "the passwords with ids pw1, pw2 appeared while the answer to this task's create was lost, but each lacks a "
     "field the task sent or was made outside the time of that request, so they are left as they are."),
])
def test_new_records_without_every_field_or_made_out_of_time_are_left_and_named(others, sentence):
    found, warnings, once = settle(others)
    assert found is None and len(warnings) == 1 and warnings[0].startswith("%s: %s" % (WHAT, sentence))
    assert once.known == set(item["id"] for item in others)  # never taken for this task's record later


def test_the_names_records_are_read_before_the_first_create_only_once():
    module = SimpleNamespace(client=SimpleNamespace(server_date=START))
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


# The window of a create, the answer to a create ----------------------------------------------

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


def test_a_create_answer_of_another_name_is_refused_and_one_without_a_name_is_not():
    check_answer(dict(id="pw1", name="app"), "app", "Password 'app'", "password")
    check_answer(dict(id="pw1"), "app", "Password 'app'", "password")  # a lean answer states no name: no difference
    with pytest.raises(ModuleFailure) as caught:
        check_answer(dict(id="pw2", name="other", plain_text="secret"), "app", "Password 'app'", "password")
    assert caught.value.msg.startswith("Password 'app': the create was answered with the password 'other' (id pw2), "
                                       "not with the password named 'app' that was asked for")
    assert "secret" not in caught.value.msg.replace("no secret", "")
