# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The times that order the passwords of a name (which one runs that race to make it keep)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.passwords import age, timestamp
from ansible_collections.planetscale.cloud.plugins.module_utils.shown_once import NEWEST

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
