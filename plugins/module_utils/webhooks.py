# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the webhook modules know of the platform's webhooks: the events, the limit, and the secret kept out of
results unless asked for."""

from __future__ import annotations

from datetime import datetime, timezone
from urllib.parse import urlsplit

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.shown_once import without_secrets
from ansible_collections.planetscale.cloud.plugins.module_utils.timestamps import parse_iso8601

SECRET = "secret"  # the field of a webhook record that carries the key its deliveries are signed with

RETURN_SECRET_OPTION = dict(type="bool", default=False)
ZERO_TIME = datetime(1, 1, 1, tzinfo=timezone.utc)


def check_url(url):
    """Refuse, before any request, a webhook URL that is not an absolute http or https URL."""
    if url is None:
        return
    try:
        parts = urlsplit(url.strip())
        parts.port  # pylint: disable=pointless-statement  # ValueError for a port out of range
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or url != url.strip():
        raise ModuleFailure("url must be an absolute http or https URL such as https://hooks.example.com/planetscale "
                            "(the platform sends only to public https URLs), not %r." % url)


def is_zero_time(value):
    """Whether a time is the zero time (0001-01-01T00:00:00Z) the platform writes for a time that has not been: a
    new webhook's last_sent_at."""
    moment = parse_iso8601(value)
    return moment is not None and moment == ZERO_TIME


def shown(record, return_secret=False):
    """A webhook record as a result shows it: without its secret unless the user asked for it, a zero time as null."""
    if record is None:
        return record
    record = record if return_secret else without_secrets(record, (SECRET,))
    return dict((key, None if key.endswith("_at") and is_zero_time(value) else value) for key, value in record.items())
