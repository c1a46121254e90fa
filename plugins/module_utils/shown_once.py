# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A secret the API shows once: in the answer to the request that issues it, never in a read.

Passwords, Postgres roles and service tokens carry such a secret (SECRETS), and their names are not
unique. Everything the modules of these kinds share about it is here: records without their secrets
(without_secrets), renewals and resets sent through write_and_settle (ShownOnce.resend), and what a
task takes after a create whose answer was lost (a dropped connection, a gateway error): ShownOnce.settle.

Such a create may have made a record whose secret nobody holds; or the server never applied it, and
what appeared meanwhile is another run's or another client's, made with the same credential or another.
Nothing the platform returns tells these apart: a record's actor names a credential, not a run, and one
credential may run in two places. So nothing that appeared is ever deleted. A new record of the name
(its id not known), made in the time of the request (on the server's clock, its Date header, when it
tells it: CreationWindow) and with every field the task sent, is taken as the task's result, the oldest
of them as when runs race: without its secret, with a warning (which no_log does not hide) that names its
id, says its secret may have been lost with the answer, and what gives a secret the user holds. Only when
no such record appeared is the create sent again; any other new record is left and named in a warning.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.settle import write_and_settle
from ansible_collections.planetscale.cloud.plugins.module_utils.timestamps import parse_http_date
from ansible_collections.planetscale.cloud.plugins.module_utils.timestamps import parse_iso8601 as timestamp

# The fields that carry a secret: a password's plain_text, a Postgres role's password, a service token's token and
# plain_text_refresh_token. No record of these kinds has a field of these names that is not its secret.
SECRETS = ("plain_text", "password", "token", "plain_text_refresh_token")
SERVER_SLACK = timedelta(seconds=2)  # the Date header's whole seconds, and clocks of the servers behind one name
LOCAL_SLACK = timedelta(seconds=60)  # without a Date header this machine's clock stands in for the server's
# A renewal or reset is sent at most this often: its answer holds the only copy of the new secret, so a lost answer
# cannot be read back, and the write is sent once more.
RESEND_ATTEMPTS = 2
NEWEST = datetime.max.replace(tzinfo=timezone.utc)  # where a record's created_at is missing or unreadable


def without_secrets(record, fields=SECRETS):
    """A copy of an API record without the fields that carry a secret; None stays None.

    The API shows a secret only to the request that issues it; a record read back never carries one (a Postgres
    role's read carries an empty one).
    """
    if record is None:
        return None
    return dict((key, value) for key, value in record.items() if key not in fields)


def age(record):
    """The order in which records were made: created_at, then id; one without a readable time counts as newest."""
    return timestamp(record.get("created_at")) or NEWEST, str(record.get("id"))


def server_time(client):
    """The server's time at its last answer (its Date header), or None."""
    return parse_http_date(client.server_date)


class CreationWindow:
    """When the record of one create request may have been made: opened just before the request, closed by the
    read that looks for it."""

    def __init__(self, client):
        self.client = client
        self.server_start = server_time(client)
        self.local_start = datetime.fromtimestamp(time.time(), timezone.utc)
        self.bounds = None

    def close(self):
        """Call after the read that lists the records: its answer's Date ends the window."""
        server_end = server_time(self.client)
        if self.server_start is not None and server_end is not None:
            self.bounds = (self.server_start - SERVER_SLACK, server_end + SERVER_SLACK)
        else:
            self.bounds = (self.local_start - LOCAL_SLACK, datetime.now(timezone.utc) + LOCAL_SLACK)

    def holds(self, record):
        created = timestamp(record.get("created_at"))
        return created is not None and self.bounds[0] <= created <= self.bounds[1]


# The sentences -------------------------------------------------------------------------------------------------------

def ids(records):
    return ", ".join(sorted(str(record["id"]) for record in records))


def several_named(noun, name, found, where=""):
    """The failure (and warning) when a name is not enough to choose a record; where says where the name is."""
    return ("%d %ss are named %r%s (ids %s): set id to the one to manage, or delete the others (state=absent with "
            "their id)." % (len(found), noun, name, where, ids(found)))


def left_alone(what, others, noun):
    found = ids(others)
    if len(others) == 1:
        return ("%s: the %s with id %s appeared while the answer to this task's create was lost, but it lacks a "
                "field the task sent or was made outside the time of that request, so it is left as it is. If it is "
                "this task's, nobody holds its secret: delete it (state=absent with its id)." % (what, noun, found))
    return ("%s: the %ss with ids %s appeared while the answer to this task's create was lost, but each lacks a "
            "field the task sent or was made outside the time of that request, so they are left as they are. If one "
            "is this task's, nobody holds its secret: delete it (state=absent with its id)." % (what, noun, found))


def taken(what, record, alike, noun, remedy):
    """The warning when a lost create is answered by what appeared: the record taken (the oldest of alike), never a
    secret; remedy is what gives a secret the user holds ("renew it (renew=true)")."""
    others = [item for item in alike if item["id"] != record["id"]]
    if not others:
        found = ("the %s with id %s appeared while the answer to this task's create was lost and has every field the "
                 "task sent. Nothing the platform returns tells whether this task's create made it or another run or "
                 "client did (with this credential or another), so it is not deleted and no other is created: the task "
                 "returns it without its secret, as when another run made the same %s first." % (
                     noun, record["id"], noun))
    else:
        found = ("%d %ss (ids %s) appeared while the answer to this task's create was lost, and each has every field "
                 "the task sent. Nothing the platform returns tells which, if any, this task's create made, so none is "
                 "deleted and no other is created: the task returns the oldest (id %s) without its secret, as when "
                 "another run made the same %s first. One of the others whose secret nobody holds may be this task's: "
                 "delete it (state=absent with its id)." % (len(alike), noun, ids(alike), record["id"], noun))
    return ("%s: %s If another run or client made the %s with id %s, take its secret from there; otherwise its secret "
            "was lost with the answer: %s to get a secret you hold (the old secret then stops working wherever it is "
            "used)." % (what, found, noun, record["id"], remedy))


def answered_another(what, asked, answer, noun):
    """The create was answered with a record of another name than asked: a failure, before acting on it."""
    return ("%s: the create was answered with the %s %r (id %s), not with the %s named %r that was asked for, so "
            "the task stops without acting on it and returns no secret. Check the %ss of that name (state=absent with "
            "an id deletes one), then run the task again." % (what, noun, answer.get("name"), answer.get("id"), noun,
                                                              asked, noun))


def check_answer(answer, asked, what, noun):
    """Refuse a create answer that names another record than the one asked for (another name)."""
    if isinstance(answer, dict) and answer.get("name") is not None and answer.get("name") != asked:
        raise ModuleFailure(answered_another(what, asked, answer, noun))


def secret_lost(error, noun, remedy):
    """The sentence of a failure after a write that issues a secret lost its answer (remedy: "renew it (renew=true)",
    "reset it (reset=true)")."""
    return ("%s The API may have issued a secret whose answer was lost, and running the task again would find the %s "
            "without it: delete the %s (state=absent) or %s to get a secret you hold." % (error, noun, noun, remedy))


class ShownOnce:
    """The writes of one task that issue a secret of a kind (noun): creates, renewals and resets.

    before_create() before each create and check() of its answer; settle() after a create's answer was lost;
    resend() for a renewal or reset. known holds the IDs of the name that are never this task's new record: seen
    before it created one (seen()), or left alone. lost is true while a write that issues a secret lost its answer
    and no later one has succeeded.
    """

    def __init__(self, module, noun):
        self.module = module  # the resource module: client, ctx
        self.noun = noun
        self.known = set()
        self.looked = False  # whether the task has read the records of the name
        self.lost = False
        self.window = None

    def seen(self, records):
        """The records of the name as the task read them: none of them is its new record."""
        self.looked = True
        self.known.update(record["id"] for record in records)

    def before_create(self, named=None):
        """Opens the creation window; named() reads the records of the name first if the task has not yet."""
        if named is not None and not self.looked:
            self.seen(named())
        self.window = CreationWindow(self.module.client)

    def check(self, answer, asked, what):
        """Refuse a create answer that names another record than the one asked for; the secret is no longer lost
        once a create's answer arrived."""
        check_answer(answer, asked, what, self.noun)
        self.lost = False

    def settle(self, named, alike, what, remedy):
        """After a create lost its answer: the record the task takes instead of creating again, or None to send the
        create again. named() reads the name's records now; alike(record): whether it has every field the create sent;
        remedy(record): what gives the user a secret they hold, such as "renew it (renew=true)".

        The new records made in the time of the request with every field sent may be the lost create's or another
        run's or client's, and nothing tells which: none is deleted. The oldest is taken, as when runs race, and a
        warning names it; every other new record is left, and a warning names it too."""
        self.lost = True  # until a create succeeds; a failure before then says what to do
        found = named()
        self.window.close()  # the read's answer ends the window
        unseen = [record for record in found if record["id"] not in self.known]
        candidates = [record for record in unseen if alike(record) and self.window.holds(record)]
        others = [record for record in unseen if record not in candidates]
        self.known.update(record["id"] for record in unseen)
        if others:
            self.module.ctx.warn(left_alone(what, others, self.noun))
        if not candidates:
            return None
        oldest = min(candidates, key=age)
        self.module.ctx.warn(taken(what, oldest, candidates, self.noun, remedy(oldest)))
        return oldest

    def resend(self, send):
        """The answer of a write that issues a new secret of a record (a renewal, a reset), through write_and_settle:
        its lost answer cannot be read back (it held the only copy of the secret), so the write is sent again."""
        def cannot_be_read_back(error):  # pylint: disable=unused-argument
            self.lost = True
        answer = write_and_settle(send, read_back=cannot_be_read_back, attempts=RESEND_ATTEMPTS)[0]
        self.lost = False
        return answer
