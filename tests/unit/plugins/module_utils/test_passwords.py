# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The times that tell a task's own password from another run's."""

from __future__ import annotations

from datetime import datetime, timezone
from types import SimpleNamespace

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.lost_creates import (
    CreationWindow, actor_of, check_answer, server_time)
from ansible_collections.planetscale.cloud.plugins.module_utils.passwords import NEWEST, age, timestamp

UTC = timezone.utc


@pytest.mark.parametrize("text, expected", [
    ("2026-11-22T01:02:03.000Z", datetime(2026, 11, 22, 1, 2, 3, tzinfo=UTC)),
    ("2026-11-22T01:02:03.5Z", datetime(2026, 11, 22, 1, 2, 3, 500000, tzinfo=UTC)),
    ("2026-11-22T01:02:03.1234567Z", datetime(2026, 11, 22, 1, 2, 3, 123456, tzinfo=UTC)),
    ("2026-11-22 01:02:03", datetime(2026, 11, 22, 1, 2, 3, tzinfo=UTC)),
    ("2026-11-22T03:02:03+02:00", datetime(2026, 11, 22, 1, 2, 3, tzinfo=UTC)),
    ("2026-11-21T23:32:03-0130", datetime(2026, 11, 22, 1, 2, 3, tzinfo=UTC)),
    ("2026-02-30T01:02:03Z", None),
    ("yesterday", None),
    ("", None),
    (None, None),
    (1700000000, None),
])
def test_timestamp_reads_the_forms_of_iso_8601_the_api_writes(text, expected):
    assert timestamp(text) == expected


def test_age_orders_by_time_then_id_and_an_unknown_time_is_newest():
    passwords = [dict(id="b", created_at="2026-01-01T00:00:00Z"), dict(id="a", created_at="2026-01-01T00:00:00Z"),
                 dict(id="0"), dict(id="z", created_at="2025-12-31T23:59:59.999Z")]
    assert [p["id"] for p in sorted(passwords, key=age)] == ["z", "a", "b", "0"]
    assert age(dict(id="0")) == (NEWEST, "0")


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
