# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""After a create of a credential whose answer was lost: which new record of the name is the task's own.

Passwords, Postgres roles and service tokens show their secret only in the answer to the create that
makes them, and their names are not unique. A create whose answer was lost (a dropped connection, a
gateway error) may have made one, whose secret nobody holds; or the server never applied it, and what
appeared meanwhile is another client's. One rule, here, settles it for the three kinds. A record found
after the lost answer is the task's own only if

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
from ansible_collections.planetscale.cloud.plugins.module_utils.timestamps import parse_http_date
from ansible_collections.planetscale.cloud.plugins.module_utils.timestamps import parse_iso8601 as timestamp

SERVER_SLACK = timedelta(seconds=2)  # the Date header's whole seconds, and clocks of the servers behind one name
LOCAL_SLACK = timedelta(seconds=60)  # without a Date header this machine's clock stands in for the server's


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


def ids(records):
    return ", ".join(sorted(str(record["id"]) for record in records))


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


class LostCreate:
    """The creates of one task of a credential kind: before_create() before each, settle() after a lost answer."""

    def __init__(self, module, known, noun):
        self.module = module  # the resource module: client, ctx, params (service_token_id)
        self.known = known  # the module's set of the IDs of the name that are not this task's new record
        self.noun = noun
        self.window = None
        self.own_ids = None  # the credential's actor IDs, read when first needed

    def before_create(self):
        self.window = CreationWindow(self.module.client)

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

    def settle(self, found, alike, delete, what):
        """found: the name's records now (read after the lost answer); alike(record): whether it has every field the
        create sent; delete(record) deletes one. Deletes the task's own record, leaves and names every other new one;
        returns the records deleted. Several that are each the task's own are a failure (also a warning)."""
        self.window.close()
        unseen = [record for record in found if record["id"] not in self.known]
        candidates = [record for record in unseen if alike(record) and self.window.holds(record)]
        mine = [record for record in candidates if self.own(record)]
        strangers = [record for record in candidates if record not in mine]
        others = [record for record in unseen if record not in candidates]
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
