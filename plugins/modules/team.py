#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: team
short_description: Manage the teams of an organization and their members
version_added: 0.1.0
description:
  - Ensures that a team exists with the name, description and members given, changing only what differs.
  - Ensures that a team does not exist.
  - A team managed by single sign-on cannot be changed through the API; any change to one fails before anything
    is sent.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  team:
    description:
      - The slug of the team, which names it in the API.
      - With O(name) too, O(name) is the name the team is given.
      - One of O(team) and O(name) is required.
    type: str
  name:
    description:
      - The name of the team. Without O(team), the team is found by this name.
      - Required to create a team.
    type: str
  description:
    description:
      - The description of the team.
    type: str
  members:
    description:
      - Members of the team, each a user ID or an e-mail address of a member of the organization.
      - Their order does not matter. Members not listed stay, unless O(purge_members=true).
    type: list
    elements: str
  purge_members:
    description:
      - Remove the members that O(members) does not list.
    type: bool
    default: false
  state:
    description:
      - V(present) creates the team if it does not exist and updates what differs.
      - V(absent) deletes the team; a team that does not exist is not a change.
    type: str
    choices: [present, absent]
    default: present
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.resource
seealso:
  - module: planetscale.cloud.team_info
  - module: planetscale.cloud.team_member_info
"""

EXAMPLES = r"""
- name: Ensure the backend team and its members
  planetscale.cloud.team:
    organization: acme
    name: Backend
    description: Owns the app database
    members:
      - member1@acme.test
      - member2@acme.test

- name: Make the members list exact, removing everybody else
  planetscale.cloud.team:
    organization: acme
    team: backend
    members:
      - member1@acme.test
    purge_members: true

- name: Rename the team
  planetscale.cloud.team:
    organization: acme
    team: backend
    name: Platform

- name: Delete the team
  planetscale.cloud.team:
    organization: acme
    team: backend
    state: absent
"""

RETURN = r"""
team:
  description:
    - The team. In check mode, when it would be created, the fields that are known before creating it.
  returned: O(state=present)
  type: dict
  contains:
    id:
      description: The ID of the team.
      type: str
    slug:
      description: The slug that names the team in the API.
      type: str
      sample: backend
    name:
      description: The name of the team.
      type: str
      sample: Backend
    description:
      description: The description.
      type: str
    members:
      description: The members, user records (id, email, display_name, and so on).
      type: list
      elements: dict
    managed:
      description: Whether the team is managed by single sign-on.
      type: bool
    databases:
      description: The databases the team can access.
      type: list
      elements: dict
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure, is_name
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION
from ansible_collections.planetscale.cloud.plugins.module_utils.resource import Outcome, Resource
from ansible_collections.planetscale.cloud.plugins.module_utils.settle import write_and_settle


class Directory:
    """User records by ID, filled from what the module reads; the organization's members listed only when an
    e-mail address is not among the users already seen."""

    def __init__(self, list_members, organization):
        self.list_members = list_members  # called once, when an e-mail address is looked up: the members' records
        self.organization = organization
        self.users = {}  # user ID -> user record, of every user seen
        self.by_email = None  # e-mail address -> user record, of the organization's members

    def saw(self, users):
        """Remember user records read elsewhere (a team's members)."""
        self.users.update((user["id"], user) for user in users or [])

    def user(self, entry, near=()):
        """The user record of a user ID or e-mail address (only the ID when nothing more is known).

        near: user records to look in first (a team's members), which saves listing the organization.
        """
        if "@" not in entry:
            return self.users.setdefault(entry, dict(id=entry))
        for user in near or ():
            if (user.get("email") or "").lower() == entry.lower():
                return user
        if self.by_email is None:
            members = self.list_members()
            self.by_email = dict((m["user"]["email"].lower(), m["user"]) for m in members
                                 if (m.get("user") or {}).get("email"))
        user = self.by_email.get(entry.lower())
        if user is None:
            raise ModuleFailure("No member of organization %r has the e-mail address %r; invite them first." % (
                self.organization, entry))
        self.users[user["id"]] = user
        return user

    def email(self, uid):
        """How a user is shown: the e-mail address when known, else the ID."""
        return self.users.get(uid, {}).get("email") or uid


SSO_MANAGED = ("Team %r is managed by single sign-on, so it cannot be changed through the API; "
               "change it in the identity provider instead.")


class Team(Resource):
    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        team=dict(type="str"),
        name=dict(type="str"),
        description=dict(type="str"),
        members=dict(type="list", elements="str"),
        purge_members=dict(type="bool", default=False),
    )
    required_one_of = (("team", "name"),)
    path_options = ("team",)
    kind = "team"
    api_path = ("teams",)
    key = "slug"
    names = ("name", "members")
    fields = ("name", "description", "members")
    required_to_create = ("name",)

    def __init__(self, params, ctx=None):
        super().__init__(params, ctx)
        self.directory = Directory(lambda: self.client.paginate(self.org_path("members")), params.get("organization"))

    def validate(self):
        super().validate()
        for entry in self.params["members"] or []:
            if "@" not in entry and not is_name(entry):  # a user ID is a path segment
                raise ModuleFailure("members: %r is neither a user ID nor an e-mail address." % entry)

    def label(self):
        return "team %r" % (self.params["team"] or self.params["name"])

    def read(self):
        if self.params["team"]:
            team = self.client.get(self.url(self.params["team"]), missing_ok=True)
            if team is not None or not self.params["name"]:
                return team
        name = self.params["name"].lower()
        found = self.client.paginate(self.url(), params=dict(q=self.params["name"]))
        return next((team for team in found if (team.get("name") or "").lower() == name), None)

    def managed(self, resource):
        self.directory.saw(resource.get("members"))
        return dict(name=resource.get("name"), description=resource.get("description"),
                    members=[user["id"] for user in resource.get("members") or []])

    def wanted(self, resource):
        wanted = dict((name, self.params[name]) for name in ("name", "description") if self.params[name] is not None)
        if self.params["members"] is not None:
            members = set(self.directory.user(entry, near=(resource or {}).get("members"))["id"]
                          for entry in self.params["members"])
            if not self.params["purge_members"] and resource is not None:
                members.update(self.managed(resource)["members"])
            wanted["members"] = sorted(members)
        return wanted

    def diff_view(self, fields):
        fields = dict(fields)
        if "members" in fields:
            fields["members"] = [self.directory.email(uid) for uid in fields["members"]]
        return super().diff_view(fields)

    def guard(self, resource):
        if resource.get("managed"):
            raise ModuleFailure(SSO_MANAGED % resource.get("slug"))

    def predict(self, resource, changes):
        team = dict(resource or {}, **dict((k, v) for k, v in changes.items() if k != "members"))
        if "members" in changes:
            team["members"] = [self.directory.users[uid] for uid in changes["members"]]
        return team

    def create(self, values):
        body = dict((name, values[name]) for name in ("name", "description") if name in values)
        return super().create(body)

    def update(self, resource, changes):
        url = self.url(resource["slug"])
        body = dict((name, changes[name]) for name in ("name", "description") if name in changes)
        team = self.client.patch(url, json=body) if body else resource
        url = self.url(team.get("slug") or resource["slug"])  # a rename may give the team a new slug
        added = removed = ()
        if "members" in changes:
            have, want = set(self.managed(resource)["members"]), set(changes["members"])
            added = [self.add(url + "/members", uid) for uid in sorted(want - have)]
            removed = sorted(have - want)
            for uid in removed:
                self.client.delete(url + self.path("members", uid), missing_ok=True)
            team = dict(team, members=[self.directory.users[uid] for uid in changes["members"]])
        return Outcome(team, applied=not (added and not (body or removed or any(added))))

    def add(self, url, uid):
        """Add a member: True; False where a refusal shows another run added them (after an unknown outcome, the
        membership that exists is the answer)."""
        def membership(applied):
            def read(error):  # pylint: disable=unused-argument
                member = self.client.get(url + self.path(uid), missing_ok=True)
                return (member, applied) if member else None
            return read
        member, applied = write_and_settle(lambda: self.client.post(url, json=dict(user_id=uid)),
                                           read_back=membership(True), on_conflict=membership(False))
        self.directory.users[uid] = member.get("user") or self.directory.users[uid]
        return applied


def main():
    run_module(Team)


if __name__ == "__main__":
    main()
