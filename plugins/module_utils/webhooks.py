# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the webhook modules know of the platform's webhooks: the events, the limit, and the secret kept out of
results unless asked for."""

from __future__ import annotations

from datetime import datetime, timezone
from urllib.parse import urlsplit

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError
from ansible_collections.planetscale.cloud.plugins.module_utils.settle import write_and_settle
from ansible_collections.planetscale.cloud.plugins.module_utils.shown_once import without_secrets
from ansible_collections.planetscale.cloud.plugins.module_utils.timestamps import parse_iso8601

# The events a webhook can subscribe to, as the platform lists them.
EVENTS = ("branch.anomaly", "branch.out_of_memory", "branch.primary_promoted", "branch.ready",
          "branch.schema_recommendation", "branch.sleeping", "branch.start_maintenance", "cluster.storage",
          "database.access_request", "deploy_request.closed", "deploy_request.errored", "deploy_request.in_progress",
          "deploy_request.opened", "deploy_request.pending_cutover", "deploy_request.queued",
          "deploy_request.reverted", "deploy_request.schema_applied", "keyspace.storage", "webhook.test")
MAX_WEBHOOKS = 5  # per database
TEST_INTERVAL = 20  # seconds: the platform sends at most one test delivery of a webhook in this time
REFUSED_TESTS = (429,)  # how the platform refuses a test delivery sooner than it allows (with Retry-After)
SECRET = "secret"  # the field of a webhook record that carries the key its deliveries are signed with

RETURN_SECRET_OPTION = dict(type="bool", default=False)
ZERO_TIME = datetime(1, 1, 1, tzinfo=timezone.utc)


def check_events(events):
    """Refuse, before any request, an event the platform does not have, naming it and the ones it has."""
    unknown = [event for event in events or [] if event not in EVENTS]
    if unknown:
        raise ModuleFailure("events: %s %s not an event of the platform; the events are %s." % (
            ", ".join(repr(event) for event in unknown), "is" if len(unknown) == 1 else "are", ", ".join(EVENTS)))


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


def events_set(events):
    """Events as they are compared and shown: each once, sorted (the platform's order carries no meaning)."""
    return None if events is None else sorted(set(events))


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


def limit_reached(label, database, error):
    """The sentence for a create the platform refused because the database has the most webhooks it allows."""
    return ModuleFailure(
        "Database %r has %d webhooks, the most the platform allows, so it refused to create %s (HTTP %s%s). Delete "
        "one (state absent) or reuse one (give its id and the new url)." % (
            database, MAX_WEBHOOKS, label, error.status, ": %s" % error.message if error.message else ""),
        status=error.status, error=error.as_dict())


def test_refused(label, error):
    """The sentence for a test delivery the platform refused (it sends one a webhook every TEST_INTERVAL seconds)."""
    return (
        "The platform refused to send a test delivery to %s (HTTP %s%s): it sends at most one every %d seconds. Run "
        "the task again later." % (label, error.status, ": %s" % error.message if error.message else "",
                                   TEST_INTERVAL))


def send_test(client, test_path):
    """Ask for a test delivery (POST webhooks/{id}/test), through write_and_settle.

    A test cannot be read back, so one whose answer was lost is asked for again, without the client's retries; the
    platform refuses that second ask when the lost one was sent (one test every TEST_INTERVAL seconds), and that
    refusal means it was sent: it is neither waited out nor resent.
    """
    lost = []

    def send():
        if not lost:
            return client.post(test_path)
        try:
            with client.retrying(0):
                return client.post(test_path)
        except ApiError as error:
            if error.status in REFUSED_TESTS:
                return None
            raise

    def read_back(error):
        lost.append(error)
    write_and_settle(send, read_back=read_back)
