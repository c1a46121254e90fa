# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A secret the API shows once: in the answer to the request that issues it, never in a read.

Passwords, Postgres roles and service tokens carry such a secret (SECRETS), and their names are not
unique. Everything the modules of these kinds share about it is here: records without their secrets
(without_secrets), renewals and resets sent through write_and_settle (ShownOnce.resend), and after a
create whose answer was lost (a dropped connection, a gateway error), which new record of the name is
the task's own (ShownOnce.settle). Such a create may have made one, whose secret nobody holds; or the
server never applied it, and what appeared meanwhile is another client's. A record found after the lost
answer is the task's own only if

- it was not there when the task looked (its id is not known),
- it was created between just before the request and the read that finds it: on the server's clock
  (its Date header) when it tells it, with a little slack (CreationWindow),
- it has every field the task sent, and
- its actor (actor.id, or actor_id) is the task's credential: the service token's ID, or the user that
  GET /user names for the credential (read only here, and only when the service token's ID is not the actor).

Only that record is deleted, to be created anew. A record the task cannot prove it made is never deleted:
it is left, the create is sent again, and a warning (which no_log does not hide) names its id, never a secret.
Several records that are each proven the task's own are a failure, and none is deleted.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError
from ansible_collections.planetscale.cloud.plugins.module_utils.reviews import reviewer_ids
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


def without_secrets(record, fields=SECRETS):
    """A copy of an API record without the fields that carry a secret; None stays None.

    The API shows a secret only to the request that issues it; a record read back never carries one (a Postgres
    role's read carries an empty one).
    """
    if record is None:
        return None
    return dict((key, value) for key, value in record.items() if key not in fields)


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


def actor_of(record):
    """The ID of who made a record: actor.id (passwords, roles) or actor_id (service tokens); None when it names
    nobody."""
    actor = record.get("actor")
    if isinstance(actor, dict) and actor.get("id"):
        return actor["id"]
    return record.get("actor_id") or None


def credential_ids(client, service_token_id):
    """The actor IDs that are the credential's own (reviews.reviewer_ids); where the user cannot be read, only the
    service token's ID, or none."""
    try:
        return reviewer_ids(client, service_token_id)
    except (ApiError, ModuleFailure):  # nothing it cannot prove counts as its own
        return set([service_token_id]) if service_token_id else set()


# The sentences -------------------------------------------------------------------------------------------------------

def ids(records):
    return ", ".join(sorted(str(record["id"]) for record in records))


def several_named(noun, name, found, where=""):
    """The failure (and warning) when a name is not enough to choose a record; where says where the name is."""
    return ("%d %ss are named %r%s (ids %s): set id to the one to manage, or delete the others (state=absent with "
            "their id)." % (len(found), noun, name, where, ids(found)))


def ambiguous(what, mine, noun):
    return ("%s: %d %ss (ids %s) were made while the answer to this task's create was lost, and each has every "
            "field the task sent: one may be this task's, whose secret nobody holds, and the others another run's. "
            "None was deleted and no other created. Delete the ones whose secret you do not hold (state=absent with "
            "their id), then run the task again." % (what, len(mine), noun, ids(mine)))


def left_alone(what, others, noun):
    found = ids(others)
    if len(others) == 1:
        return ("%s: the %s with id %s appeared while the answer to this task's create was lost, but it lacks a "
                "field the task sent or was made outside the time of that request, so it is left as it is. If it is "
                "this task's, nobody holds its secret: delete it (state=absent with its id)." % (what, noun, found))
    return ("%s: the %ss with ids %s appeared while the answer to this task's create was lost, but each lacks a "
            "field the task sent or was made outside the time of that request, so they are left as they are. If one "
            "is this task's, nobody holds its secret: delete it (state=absent with its id)." % (what, noun, found))


def unproven(what, record, noun):
    actor = actor_of(record)
    whose = "its actor (%s) is not this task's credential" % actor if actor else "it names no actor"
    return ("%s: the %s with id %s appeared while the answer to this task's create was lost and has every field the "
            "task sent, but %s, so this task cannot prove it made it: it is left as it is and the create is sent "
            "again. It may be this task's, whose secret nobody holds, or another client's: if it is yours, delete it "
            "(state=absent with its id)." % (what, noun, record["id"], whose))


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
    before it created one (seen()), left alone, or deleted. lost is true while a write that issues a secret lost its
    answer and no later one has succeeded.
    """

    def __init__(self, module, noun):
        self.module = module  # the resource module: client, ctx, params (service_token_id)
        self.noun = noun
        self.known = set()
        self.looked = False  # whether the task has read the records of the name
        self.lost = False
        self.window = None
        self.own_ids = None  # the credential's actor IDs, read when first needed

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

    def own(self, record):
        """Whether the record's actor is this task's credential (GET /user only when the token's ID is not it)."""
        actor, token_id = actor_of(record), self.module.params.get("service_token_id")
        if not actor:
            return False
        if token_id and actor == token_id:
            return True
        if self.own_ids is None:
            self.own_ids = credential_ids(self.module.client, token_id)
        return actor in self.own_ids

    def judge(self, found, alike):
        """(mine, strangers, others): the records of found not known before, split into the task's own (new, in
        the window, alike, by the task's credential), those alike and in the window by another or no actor, and the
        rest."""
        unseen = [record for record in found if record["id"] not in self.known]
        candidates = [record for record in unseen if alike(record) and self.window.holds(record)]
        mine = [record for record in candidates if self.own(record)]
        strangers = [record for record in candidates if record not in mine]
        others = [record for record in unseen if record not in candidates]
        return mine, strangers, others

    def settle(self, named, alike, delete, what):
        """After a create lost its answer. named() reads the name's records now; alike(record): whether it has every
        field the create sent; delete(record) deletes one. Deletes the task's own record, leaves and names every other
        new one; returns the records deleted. Several that are each the task's own are a failure (also a warning)."""
        self.lost = True  # until a create succeeds; a failure before then says what to do
        found = named()
        self.window.close()  # the read's answer ends the window
        mine, strangers, others = self.judge(found, alike)
        if len(mine) > 1:  # which one is this task's cannot be told, and deleting another run's loses its secret
            message = ambiguous(what, mine, self.noun)
            self.module.ctx.warn(message)  # a warning is shown where no_log hides the failure's message
            raise ModuleFailure(message)
        if others:
            self.module.ctx.warn(left_alone(what, others, self.noun))
        for record in strangers:
            self.module.ctx.warn(unproven(what, record, self.noun))
        self.known.update(record["id"] for record in others + strangers)
        for record in mine:
            delete(record)
            self.known.add(record["id"])  # gone: never the older record another run made
        return mine

    def resend(self, send):
        """The answer of a write that issues a new secret of a record (a renewal, a reset), through write_and_settle:
        its lost answer cannot be read back (it held the only copy of the secret), so the write is sent again."""
        def cannot_be_read_back(error):  # pylint: disable=unused-argument
            self.lost = True
        answer = write_and_settle(send, read_back=cannot_be_read_back, attempts=RESEND_ATTEMPTS)[0]
        self.lost = False
        return answer
