# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Service tokens: their accesses, read and declared in one form, and the secret only their create shows.

An access is a name (read_branch, create_databases, ...) on a database, or on the organization.
The API lists them one record each (GET service-tokens/{id}/access) and adds or removes several
on one database in one request (POST or DELETE service-tokens/{id}/access with
{"database": NAME, "access": [...]}, no database for the organization). Here they are a list
of {database, access} entries, one per database, sorted; the organization's entry has no database.
"""

from __future__ import annotations

import re

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure, is_name
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError
from ansible_collections.planetscale.cloud.plugins.module_utils.lost_creates import LostCreate, check_answer
from ansible_collections.planetscale.cloud.plugins.module_utils.resource import capital
from ansible_collections.planetscale.cloud.plugins.module_utils.timestamps import parse_iso8601

SECRETS = ("token", "plain_text_refresh_token")
ACCESS_NAME = re.compile(r"[a-z][a-z0-9_]*")
ORGANIZATION = None  # the key of organization-wide accesses


def without_token(record):
    """A service token record without its secrets; the API shows them only to the request that creates it."""
    if record is None:
        return None
    return dict((key, value) for key, value in record.items() if key not in SECRETS)


def check_accesses(entries):
    """Refuse, before any request, an entry of the option accesses that the platform could not take."""
    for entry in entries or []:
        database = entry.get("database")
        where = "the entry for database %r" % database if database is not None else "the organization-wide entry"
        if database is not None and not is_name(database):
            raise ModuleFailure("accesses: database must be a database name, not %r." % database)
        if not entry.get("access"):
            raise ModuleFailure("accesses: %s lists no access; give at least one, such as read_branch." % where)
        for name in entry["access"]:
            if not ACCESS_NAME.fullmatch(name or ""):
                raise ModuleFailure("accesses: %s has %r, which is not an access name such as read_branch or "
                                    "create_databases." % (where, name))


def by_database(entries):
    """{database or None: set of access names} from entries in the form of the option (or of accesses())."""
    found = {}
    for entry in entries or []:
        found.setdefault(entry.get("database"), set()).update(entry.get("access") or ())
    return dict((database, names) for database, names in found.items() if names)


def as_entries(grouped):
    """The list form of {database or None: names}: one entry per database, the organization's first."""
    entries = []
    for database in sorted(grouped, key=lambda name: (name is not None, name or "")):
        entry = dict(access=sorted(grouped[database]))
        if database is not None:
            entry = dict(database=database, **entry)
        entries.append(entry)
    return entries


def read_accesses(client, url):
    """The accesses of a token, in the list form, from GET service-tokens/{id}/access (url)."""
    answer = client.get(url)
    data = answer.get("data")
    if not isinstance(data, list):
        raise client.wrong_answer("the answer has no data list of accesses")
    grouped = {}
    for access in data:
        resource = access.get("resource") or {}
        kind = (resource.get("type") or access.get("resource_type") or "").lower()
        database = (resource.get("name") or access.get("resource_name")) if kind == "database" else ORGANIZATION
        grouped.setdefault(database, set()).add(access.get("access"))
    return as_entries(grouped)


def access_changes(have, want):
    """The requests that turn accesses have into want: [(method, body)], one per database that grows or shrinks."""
    have, want = by_database(have), by_database(want)
    changes = []
    for database in sorted(set(have) | set(want), key=lambda name: (name is not None, name or "")):
        body = {} if database is None else dict(database=database)
        added = sorted(want.get(database, set()) - have.get(database, set()))
        removed = sorted(have.get(database, set()) - want.get(database, set()))
        if added:
            changes.append(("POST", dict(body, access=added)))
        if removed:
            changes.append(("DELETE", dict(body, access=removed)))
    return changes


def ids(tokens):
    return ", ".join(sorted(str(token["id"]) for token in tokens))


def several_named(name, found):
    return ("%d service tokens are named %r (ids %s): set id to the one to manage, or delete the others (state=absent "
            "with their id)." % (len(found), name, ids(found)))


def lifetime(token):
    """Seconds from a token's creation to its expiry: 0 when it never expires, None when its times are unreadable."""
    if "ttl" in token:  # a token predicted in check mode
        return token["ttl"] or 0
    if not token.get("expires_at"):
        return 0
    created, expires = parse_iso8601(token.get("created_at")), parse_iso8601(token.get("expires_at"))
    if created is None or expires is None:
        return None
    return int(round((expires - created).total_seconds()))


class OwnTokens:
    """The reads and writes of the service_token module: a token with its accesses, whose secret only the create
    that makes it shows (kept for the result), and whose name may be shared."""

    def __init__(self, params, ctx=None):
        super().__init__(params, ctx)
        self.known = set()  # IDs of the tokens of the name seen before this task created one
        self.lost = None  # lost_creates.LostCreate, once a create was sent
        self.sent_ttl = 0  # the ttl of the last create
        self.secret = None  # the secrets of the token this task created
        self.dropped = []  # IDs of tokens this task made and deleted because nobody holds their secret
        self.created_id = None  # the ID of the token this task created

    # Reading ---------------------------------------------------------------------------------

    def named(self):
        found = self.client.paginate(self.url())
        return [without_token(token) for token in found if token.get("name") == self.params["name"]]

    def read(self):
        if self.params["id"]:
            token = without_token(self.client.get(self.url(self.params["id"]), missing_ok=True))
        else:
            found = self.named()
            self.known.update(token["id"] for token in found)
            if len(found) > 1:
                message = several_named(self.params["name"], found)
                self.ctx.warn(message)
                raise ModuleFailure(message)
            token = found[0] if found else None
        if not token or not token.get("id"):
            return token
        token.pop("service_token_accesses", None)  # the accesses read next are the truth
        return dict(token, accesses=read_accesses(self.client, self.url(token["id"], "access")))

    def managed(self, resource):
        return dict(name=resource.get("name"), ttl=lifetime(resource), accesses=resource.get("accesses") or [])

    def same(self, name, have, want):
        if name == "accesses":
            return by_database(have) == by_database(want)
        if name == "ttl":  # the lifetime read back is rounded to the second; an unreadable one cannot differ
            return have is None or abs(have - (want or 0)) <= 1
        return have == want

    def diff_view(self, fields):
        return dict((name, fields[name]) for name in ("name", "accesses") if fields.get(name) is not None)

    def predict(self, resource, changes):
        token = dict(resource or {}, **changes)
        token["accesses"] = as_entries(by_database(token.get("accesses")))
        return token

    def replace(self, resource, field):
        have, want = self.managed(resource)[field], self.wanted(resource)[field]
        raise ModuleFailure("%s has %s %s, not %s: %s can only be set when a service token is created. Delete it "
                            "(state=absent) to create it again, or leave %s out." % (
                                capital(self.label()), field, "%r" % have if field == "name" else have,
                                "%r" % want if field == "name" else want, field, field))

    # Writing ---------------------------------------------------------------------------------

    def create(self, values):
        if self.lost is None:
            self.lost = LostCreate(self, self.known, "service token")
        body = dict(name=values["name"])
        if values.get("ttl"):
            body["ttl"] = values["ttl"]
        self.sent_ttl = body.get("ttl", 0)
        self.lost.before_create()
        answer = self.client.post(self.url(), json=body)
        check_answer(answer, body["name"], capital(self.label()), "service token")
        if isinstance(answer, dict) and answer.get("id"):
            self.secret = dict((key, answer[key]) for key in SECRETS if answer.get(key))
            self.created_id = answer["id"]
        token = without_token(answer)
        token.pop("service_token_accesses", None)
        return dict(token, accesses=[])

    def recover(self, error):
        """A create lost its answer: the token it made, if it can be shown to be this task's, has a secret nobody
        holds. Delete it, to create anew; any other new token is left, with a warning that names it."""
        def delete(token):
            self.client.delete(self.url(token["id"]), missing_ok=True)
            self.dropped.append(token["id"])
        self.lost.settle(self.named(), lambda token: self.same("ttl", lifetime(token), self.sent_ttl), delete,
                         capital(self.label()))
        return None

    def update(self, resource, changes):
        url = self.url(resource["id"], "access")
        for method, body in access_changes(resource.get("accesses"), changes["accesses"]):
            self.client.request(method, url, json=body)
        return dict(resource, accesses=as_entries(by_database(changes["accesses"])))

    def present(self, resource):
        """Where adding the accesses to the token this task made fails, delete it: nobody would hold its secret."""
        try:
            return super().present(resource)
        except (ApiError, ModuleFailure) as error:
            if not self.created_id or self.ctx.check_mode:
                raise
            if isinstance(error, ApiError):
                sentence, result = self.explain(error), dict(status=error.status, error=error.as_dict())
            else:
                sentence, result = error.msg, error.result
            made = self.created_id
            try:
                self.client.delete(self.url(made), missing_ok=True)
            except ApiError as failure:
                raise ModuleFailure("%s Deleting the service token this task created (id %s), whose secret this task "
                                    "does not return, failed too (%s): delete it (state=absent with its id)." % (
                                        sentence, made, str(failure).rstrip(".")), **result)
            raise ModuleFailure("%s The service token this task created (id %s) was deleted again, so that no token "
                                "whose secret nobody holds is left; fix the cause and run the task again." % (
                                    sentence, made), **result)

    def result_keys(self, resource):
        if self.secret and not self.ctx.check_mode:
            return {self.kind: dict(resource, **self.secret)}
        return {self.kind: resource}

    def explain(self, error):
        sentence = super().explain(error)
        if self.dropped:
            sentence += (" The service token this task had made while an answer was lost (id %s) was deleted, because "
                         "nobody holds its secret." % ", ".join(self.dropped))
        return sentence
