# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which password of a name is a task's own, when the platform cannot say.

Password names are not unique on a branch, and only the request that creates a password sees its
secret. So two runs that ensure one password both create it, and a create whose answer was lost
may have made a password nobody holds the secret of. Two rules settle it:

- When several runs create the same password at once, the oldest (created_at, then id) stays:
  every other run deletes the one it made and returns the oldest. A run that reads the name while
  they do so finds several passwords of it for a moment, and waits a few seconds for them to go.
- After a lost answer nothing is deleted: the password that appeared with every field sent, in the
  time of the request, is returned without its secret, with a warning (shown_once.ShownOnce.settle);
  the create is sent again only when none did.

A create answer that lacks what the connection needs (the platform answers some without username) is
completed by reading the password back, once; the secret stays the create's.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError
from ansible_collections.planetscale.cloud.plugins.module_utils.resource import capital
from ansible_collections.planetscale.cloud.plugins.module_utils.settle import poll
from ansible_collections.planetscale.cloud.plugins.module_utils.shown_once import (
    ShownOnce, age, secret_lost, server_time, several_named, without_secrets)
from ansible_collections.planetscale.cloud.plugins.module_utils.timestamps import parse_iso8601 as timestamp
# Passwords of one name that look made by runs racing to create the same one (see OwnPasswords.racing) are read
# again for this long, until the runs have deleted the newer ones.
RACE_WAIT = 5  # seconds
RACE_AGE = timedelta(seconds=60)  # the newest is no older than this


MAX_TTL = 2147483647  # seconds, about 68 years: the largest 32-bit integer


def check_ttl(ttl):
    """Refuse a ttl the platform refuses, before any request."""
    if not 0 <= (ttl or 0) <= MAX_TTL:
        raise ModuleFailure("ttl must be from 0 (never expires) to %d seconds, not %s." % (MAX_TTL, ttl))


def split_address(address, port):
    """host and port of an access_host_url: the platform's names no port (``port`` is the one); where it names one
    (host:port), that port is the one. A bare IPv6 address is a host."""
    name, colon, number = address.rpartition(":") if isinstance(address, str) else ("", "", "")
    if colon and number.isdigit() and (":" not in name or name.startswith("[")):
        return name, int(number)
    return address, port


def duplicate_kept(what, older, created, error, noun="password"):
    return ("%s: another run made the same %s first (id %s), and deleting the one this task made (id %s) "
            "failed (%s). Both exist and this task returns the secret of its own; delete one of them (state=absent "
            "with its id)." % (what, noun, older["id"], created["id"], str(error).rstrip(".")))


class OwnPasswords:
    """The reads and creates of a Resource whose names are not unique and whose secret only its create shows.

    The resource class has the option "name", and create_defaults: what the platform gives a field that a create
    leaves out. alike() compares with the resource's same().
    """

    create_defaults = {}
    noun = "password"  # the word for the resource in messages
    remedy = "renew it (renew=true)"  # what gives a secret the task holds, after one was lost (explain)
    connects = ("username", "access_host_url")  # what a create answer must state for the result's connection

    def __init__(self, params, ctx=None):
        super().__init__(params, ctx)
        self.once = ShownOnce(self, self.noun)  # the creates and renewals of this task, and the IDs seen
        self.sent = None  # the body of the last create
        self.superseded = False  # another run made the same password first: this task deleted its own, returns that
        self.replacing = False  # the task deleted a password to create it again (replace: true)

    def named(self):
        found = self.client.paginate(self.url(), params=dict(q=self.params["name"]))
        return [without_secrets(p) for p in found if p.get("name") == self.params["name"]]

    def only_named(self):
        """The one password of the name, or None; a failure (and a warning, which no_log does not hide) for several."""
        found = poll(self.named, lambda passwords: not self.racing(passwords), RACE_WAIT, current=self.named(),
                     first=0.5, factor=2, longest=2)[0]
        self.once.seen(found)
        if len(found) > 1:
            message = several_named(self.noun, self.params["name"], found, " on branch %r" % self.params.get("branch"))
            self.ctx.warn(message)
            raise ModuleFailure(message)
        return found[0] if found else None

    def racing(self, found):
        """Whether several passwords of the name look made by runs that ensure the same password at once, which
        delete all but the oldest: every one has the oldest one's fields, and the newest was made a moment ago."""
        if len(found) < 2:
            return False
        fields, made = self.managed(min(found, key=age)), timestamp(max(found, key=age).get("created_at"))
        now = server_time(self.client) or datetime.now(timezone.utc)
        return made is not None and now - made <= RACE_AGE and all(self.alike(p, fields) for p in found)

    def unseen(self):
        """The passwords of this name made since the task first looked (other than those it already judged)."""
        return [p for p in self.named() if p["id"] not in self.once.known]

    def alike(self, password, fields):
        """Whether a password has every one of fields (in the form managed() gives)."""
        have = self.managed(password)
        return all(self.same(name, have.get(name), value) for name, value in fields.items())

    def create(self, values):
        self.once.before_create(self.named)
        self.sent = dict((name, value) for name, value in values.items() if value not in (None, []))
        created = super().create(self.sent)
        self.once.check(created, self.sent.get("name"), capital(self.label()))
        return self.first_made(self.completed(created))

    def completed(self, created):
        """A create answer that lacks a field of connects (a lean answer), with what it lacks read back: one GET, and
        the secret stays the create's. Where the read fails, the answer as it is, and a warning."""
        lacking = [name for name in self.connects if isinstance(created, dict) and not created.get(name)]
        if not lacking or not created.get("id"):
            return created
        try:
            found = self.client.get(self.url(created["id"]), missing_ok=True)
        except ApiError as error:  # the create succeeded: its secret is returned rather than lost in a failure
            self.ctx.warn("%s: the create's answer has no %s, and reading the %s back failed (%s)." % (
                capital(self.label()), " or ".join(lacking), self.noun, str(error).rstrip(".")))
            return created
        read = without_secrets(found) if isinstance(found, dict) else {}
        return dict(read, **dict((name, value) for name, value in created.items() if value not in (None, "")))

    def first_made(self, created):
        """Runs that create the same password at once keep the oldest: this task's goes if another is older."""
        fields = self.managed(created)
        older = [p for p in self.unseen()
                 if p["id"] != created["id"] and age(p) < age(created) and self.alike(p, fields)]
        if not older:
            return created
        oldest = min(older, key=age)
        try:
            self.client.delete(self.url(created["id"]), missing_ok=True)
        except ApiError as error:  # keep the password whose secret this task holds, and say that both exist
            self.ctx.warn(duplicate_kept(capital(self.label()), oldest, created, error, self.noun))
            return created
        self.superseded = True
        return oldest

    def recover(self, error):
        """A create lost its answer: the password with every field sent that appeared meanwhile, without its secret
        (the oldest, as when runs race; whose it is cannot be told, so none is deleted), or None to create again."""
        sent = dict(self.create_defaults, **self.sent)
        return self.once.settle(self.named, lambda password: self.alike(password, sent), capital(self.label()),
                                self.remedy_for)

    def remedy_for(self, record):  # pylint: disable=unused-argument
        """What gives the user a secret they hold of a record whose secret may have been lost."""
        return self.remedy

    def renewed(self, resource):
        """The password renewed: a new secret and expiry. A renewal whose answer was lost (it held the only copy
        of the new secret) is sent again."""
        renew = self.url(resource["id"], "renew")
        return self.once.resend(lambda: self.client.post(renew))

    def explain(self, error):
        if not self.once.lost:
            return super().explain(error)
        return secret_lost(error, self.noun, self.remedy)

    def replace(self, resource, field):
        self.replacing = True
        return super().replace(resource, field)

    def outcome(self, changed, resource, before):
        found = self.superseded and not self.replacing  # as if the task had found it: nothing of its own to show
        return super().outcome(changed, resource, self.managed(resource) if found else before)
