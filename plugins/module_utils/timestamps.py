# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The times the API writes: ISO 8601 in its records, RFC 7231 in the Date header of its answers."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from email.utils import parsedate_to_datetime

ISO8601 = re.compile(r"(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?(Z|[+-]\d{2}:?\d{2})?",
                     re.IGNORECASE)
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def parse_iso8601(text):
    """An ISO 8601 time such as 2026-11-22T01:02:03.000Z as a datetime in UTC (no zone counts as UTC), or None.

    None also for a date that does not exist (month 13) and for a time that cannot be placed: one whose offset moves
    it out of the years 1 to 9999 in UTC (0001-01-01T00:00:00+01:00).
    """
    found = ISO8601.fullmatch(text.strip()) if isinstance(text, str) else None
    if not found:
        return None
    fields = [int(part) for part in found.groups()[:6]]
    try:
        moment = datetime(*fields, microsecond=int((found.group(7) or "0")[:6].ljust(6, "0")), tzinfo=timezone.utc)
    except ValueError:
        return None
    zone = (found.group(8) or "Z").upper()
    if zone != "Z":
        digits = zone[1:].replace(":", "")
        offset = timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
        try:
            moment -= offset if zone[0] == "+" else -offset
        except OverflowError:
            return None
    return moment


def parse_http_date(text):
    """An HTTP Date header as a datetime in UTC, or None."""
    try:
        moment = parsedate_to_datetime(text) if text else None
    except (TypeError, ValueError, IndexError):
        return None
    if moment is not None and moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment


def iso8601(seconds):
    """A Unix timestamp as ISO 8601 UTC to the second (2026-11-22T01:02:03Z); None stays None."""
    if seconds is None:
        return None
    return (EPOCH + timedelta(seconds=int(seconds))).strftime("%Y-%m-%dT%H:%M:%SZ")
