#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: service_token
short_description: Manage the service tokens of an organization and their accesses
version_added: 0.2.0
description:
  - Ensures that a service token exists, with the O(accesses) declared, or that it does not.
  - The secret is shown once, by the task that creates the token, in RV(service_token.token). Set C(no_log) on that
    task and store the secret at once; no later read of the token carries it.
  - Accesses are added and removed in the fewest requests, one per database whose accesses grow or shrink; equal
    accesses send nothing. Accesses that are not declared stay, unless O(purge_accesses=true).
  - A token is named by O(id), or by O(name). Names are not unique; when several tokens share the name the module
    fails and names their IDs (also in a warning, which C(no_log) does not hide), and O(id) selects one.
  - After a create whose answer was lost, a token of the name (with the O(ttl) sent) that appeared in the time of the
    request is never deleted. The lost create may have made it, whose secret nobody holds, or another run or client
    did, possibly with the same credential, and nothing the platform returns tells them apart. The task returns it
    (the oldest, as when runs race) without its secret and with the O(accesses) declared, and a warning that
    C(no_log) does not hide names its ID. If nobody holds its secret, delete it (O(state=absent) with O(id)) and run
    the task again. The create is sent again only when no such token appeared.
  - A create answered with a token of another name than asked fails naming both, and nothing more is sent.
  - When adding the declared accesses to a token the task has just created fails, the token is deleted again, so
    that no token whose secret nobody holds is left.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  name:
    description: The name of the token. With O(id), it must be the name the token has (it cannot be changed).
    type: str
  id:
    description: The ID of the token, to select one of several tokens that share a name. One of O(id) and O(name)
      is required.
    type: str
  ttl:
    description:
      - Seconds the new token is valid for, at most 2147483647. V(0) or leaving it out gives a token that never
        expires.
      - It can only be set when the token is created. On an existing token it is compared with the token's lifetime
        (C(expires_at) minus C(created_at), to the second); a difference fails and names the field.
    type: int
  accesses:
    description:
      - The accesses the token has, one entry per database; an entry without O(accesses[].database) holds the
        organization-wide accesses (such as V(create_databases) or V(read_organization)).
      - The platform's access names are listed in its documentation of service tokens.
    type: list
    elements: dict
    suboptions:
      database:
        description: The name of the database. Leave it out for accesses on the whole organization.
        type: str
      access:
        description: The accesses on the database (or the organization), such as V(read_branch) or
          V(create_branch).
        type: list
        elements: str
        required: true
  purge_accesses:
    description: Remove the accesses that O(accesses) does not declare. Without O(accesses) nothing is removed.
    type: bool
    default: false
  state:
    description:
      - V(present) creates the token if there is none of the name, and adds (and with O(purge_accesses) removes)
        accesses.
      - V(absent) deletes it; a token that does not exist is not a change.
    type: str
    choices: [present, absent]
    default: present
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.resource
notes:
  - The diff shows the name and the accesses of the token, never its secret.
  - Removing an organization member with O(planetscale.cloud.organization_member#module:delete_service_tokens=true)
    deletes the tokens that member created.
seealso:
  - module: planetscale.cloud.service_token_info
  - module: planetscale.cloud.organization_member
"""

EXAMPLES = r"""
- name: Ensure the CI token, which may create branches of the app database and open deploy requests
  planetscale.cloud.service_token:
    organization: acme
    name: ci
    ttl: 7776000
    accesses:
      - database: app
        access: [read_branch, create_branch, delete_branch, create_deploy_request]
  register: ci_token
  no_log: true

- name: Store the secret the first time (it is shown once)
  ansible.builtin.copy:
    content: "{{ ci_token.service_token.id }}:{{ ci_token.service_token.token }}\n"
    dest: "{{ playbook_dir }}/planetscale-token"
    mode: "0600"
  when: ci_token.service_token.token is defined
  no_log: true

- name: Keep exactly these accesses on the reporting token
  planetscale.cloud.service_token:
    organization: acme
    name: reporting
    accesses:
      - access: [read_organization]
      - database: app
        access: [read_branch]
    purge_accesses: true

- name: Delete a token by its ID
  planetscale.cloud.service_token:
    organization: acme
    id: 4tsv0q3s0yr0
    state: absent
"""

RETURN = r"""
service_token:
  description: The token. In check mode, when it would be created, its name, accesses and ttl (the O(ttl) given).
  returned: O(state=present)
  type: dict
  contains:
    id:
      description: The ID of the token, the user name of the credential (O(service_token_id)).
      type: str
      sample: 4tsv0q3s0yr0
    name:
      description: The name of the token.
      type: str
      sample: ci
    display_name:
      description: The name the platform shows.
      type: str
    created_at:
      description: When it was created (ISO 8601).
      type: str
    expires_at:
      description: When it expires (ISO 8601); null when it never expires.
      type: str
    last_used_at:
      description: When it was last used (ISO 8601).
      type: str
    actor_id:
      description: The ID of the user on whose behalf it was created.
      type: str
    accesses:
      description: The accesses, one entry per database; the organization-wide entry has no C(database).
      type: list
      elements: dict
      sample: [{access: [read_organization]}, {database: app, access: [create_branch, read_branch]}]
    token:
      description: The secret, the password of the credential (O(service_token)).
      returned: when the token was created by this task (not in check mode)
      type: str
"""

import re

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure, is_name
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION
from ansible_collections.planetscale.cloud.plugins.module_utils.passwords import check_ttl
from ansible_collections.planetscale.cloud.plugins.module_utils.resource import Resource, capital
from ansible_collections.planetscale.cloud.plugins.module_utils.service_tokens import as_entries, read_accesses
from ansible_collections.planetscale.cloud.plugins.module_utils.shown_once import (
    SECRETS, ShownOnce, several_named, without_secrets)
from ansible_collections.planetscale.cloud.plugins.module_utils.timestamps import parse_iso8601

ACCESS_NAME = re.compile(r"[a-z][a-z0-9_]*")


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
    """{database or None: set of access names} from entries in the form of the option (or of read_accesses())."""
    found = {}
    for entry in entries or []:
        found.setdefault(entry.get("database"), set()).update(entry.get("access") or ())
    return dict((database, names) for database, names in found.items() if names)


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


class ServiceToken(Resource):
    """A token with its accesses, whose secret only the create that makes it shows (kept for the result), and whose
    name may be shared."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        name=dict(type="str"),
        id=dict(type="str"),
        ttl=dict(type="int"),
        accesses=dict(type="list", elements="dict", options=dict(
            database=dict(type="str"),
            access=dict(type="list", elements="str", required=True),
        )),
        purge_accesses=dict(type="bool", default=False),
    )
    required_one_of = (("name", "id"),)
    path_options = ("id",)
    kind = "service_token"
    api_path = ("service-tokens",)
    names = ("name",)
    fields = ("name", "ttl", "accesses")
    create_only = ("name", "ttl")

    def __init__(self, params, ctx=None):
        super().__init__(params, ctx)
        self.once = ShownOnce(self, "service token")  # the creates of this task, and the IDs of the name seen
        self.sent_ttl = 0  # the ttl of the last create
        self.secret = None  # the secrets of the token this task created
        self.created_id = None  # the ID of the token this task created

    def validate(self):
        super().validate()
        check_ttl(self.params["ttl"])
        check_accesses(self.params["accesses"])

    def label(self):
        if self.params["id"]:
            return "service token %r" % self.params["id"]
        return "service token %r" % self.params["name"]

    def wanted(self, resource):
        wanted = dict((name, self.params[name]) for name in ("name", "ttl") if self.params[name] is not None)
        if self.params["accesses"] is not None:
            declared = by_database(self.params["accesses"])
            if resource is not None and not self.params["purge_accesses"]:
                for database, names in by_database(resource.get("accesses")).items():
                    declared.setdefault(database, set()).update(names)
            wanted["accesses"] = as_entries(declared)
        return wanted

    def named(self):
        found = self.client.paginate(self.url())
        return [without_secrets(token) for token in found if token.get("name") == self.params["name"]]

    def read(self):
        if self.params["id"]:
            token = without_secrets(self.client.get(self.url(self.params["id"]), missing_ok=True))
        else:
            found = self.named()
            self.once.seen(found)
            if len(found) > 1:
                message = several_named("service token", self.params["name"], found)
                self.ctx.warn(message)
                raise ModuleFailure(message)
            token = found[0] if found else None
        return self.with_accesses(token)

    def with_accesses(self, token):
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

    def create(self, values):
        body = dict(name=values["name"])
        if values.get("ttl"):
            body["ttl"] = values["ttl"]
        self.sent_ttl = body.get("ttl", 0)
        self.once.before_create()
        answer = self.client.post(self.url(), json=body)
        self.once.check(answer, body["name"], capital(self.label()))
        if isinstance(answer, dict) and answer.get("id"):
            self.secret = dict((key, answer[key]) for key in SECRETS if answer.get(key))
            self.created_id = answer["id"]
        token = without_secrets(answer)
        token.pop("service_token_accesses", None)
        return dict(token, accesses=[])

    def recover(self, error):
        """A create lost its answer: the token of the name that appeared meanwhile, without its secret (whose it is
        cannot be told, so none is deleted), or None to create again."""
        return self.with_accesses(self.once.settle(
            self.named, lambda token: self.same("ttl", lifetime(token), self.sent_ttl), capital(self.label()),
            lambda token: "delete it (state=absent with its id) and run the task again"))

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


def main():
    run_module(ServiceToken)


if __name__ == "__main__":
    main()
