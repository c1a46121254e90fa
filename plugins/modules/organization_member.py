#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: organization_member
short_description: Change the role of an organization member, or remove the member
version_added: 0.2.0
description:
  - Ensures that a member of an organization has a O(role), or that a user is not a member.
  - The platform has no invitation API, so this module cannot add a member; a user who is not a member fails the task
    with a sentence that says so. Invite people in the platform's web application.
  - Before anything is sent, the module refuses to change or remove the user the credentials act for (with a service
    token, the user on whose behalf the token was created), a member whose role an identity provider manages, and
    the last administrator of the organization (removing them, or making them a member).
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  member:
    description: The member's e-mail address (in any case), user ID or membership ID.
    type: str
    required: true
  role:
    description: The role the member has. Leave it out to only check that the user is a member.
    type: str
    choices: [member, admin]
  state:
    description:
      - V(present) gives the member O(role); a user who is not a member fails the task.
      - V(absent) removes the member from the organization; a user who is not a member is not a change.
    type: str
    choices: [present, absent]
    default: present
  delete_passwords:
    description: With O(state=absent), also delete every database password the member created.
    type: bool
    default: false
  delete_service_tokens:
    description: With O(state=absent), also delete every service token the member created.
    type: bool
    default: false
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.resource
notes:
  - Every run lists the organization's members (all pages), to find the member by e-mail address and to count the
    administrators.
seealso:
  - module: planetscale.cloud.organization_member_info
  - module: planetscale.cloud.team
"""

EXAMPLES = r"""
- name: Make Member 1 an administrator
  planetscale.cloud.organization_member:
    organization: acme
    member: member1@acme.test
    role: admin

- name: Remove Member 2, with the passwords and service tokens they created
  planetscale.cloud.organization_member:
    organization: acme
    member: member2@acme.test
    state: absent
    delete_passwords: true
    delete_service_tokens: true
"""

RETURN = r"""
member:
  description: The membership. In check mode, as it would be after the change.
  returned: O(state=present)
  type: dict
  contains:
    id:
      description: The ID of the membership.
      type: str
    role:
      description: The member's role.
      type: str
      sample: admin
    user:
      description: The user (id, display_name, name, email, managed, directory_managed, and so on).
      type: dict
    created_at:
      description: When the user joined (ISO 8601).
      type: str
    updated_at:
      description: When the membership was last updated (ISO 8601).
      type: str
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure, is_name
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError
from ansible_collections.planetscale.cloud.plugins.module_utils.members import names_member
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION
from ansible_collections.planetscale.cloud.plugins.module_utils.resource import Resource, capital


class OrganizationMember(Resource):
    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        member=dict(type="str", required=True),
        role=dict(type="str", choices=["member", "admin"]),
        delete_passwords=dict(type="bool", default=False),
        delete_service_tokens=dict(type="bool", default=False),
    )
    kind = "member"
    api_path = ("members",)
    names = ("member",)
    fields = ("role",)

    def __init__(self, params, ctx=None):
        super().__init__(params, ctx)
        self.members = []

    def validate(self):
        super().validate()
        member = self.params["member"]
        if "@" not in member and not is_name(member):
            raise ModuleFailure("member must be an e-mail address, a user ID or a membership ID, not %r." % member)

    def label(self):
        return "member %r of organization %r" % (self.params["member"], self.params["organization"])

    def read(self):
        self.members = list(self.client.paginate(self.url()))
        return next((m for m in self.members if names_member(m, self.params["member"])), None)

    def managed(self, resource):
        user = resource.get("user") or {}
        return dict(member=user.get("email") or user.get("id"), role=resource.get("role"))

    def present(self, resource):
        if resource is None:
            raise ModuleFailure("%s is not a member of organization %r, and the platform has no API to invite a "
                                "user: invite them in the platform's web application, then run the task again." % (
                                    self.params["member"], self.params["organization"]))
        return super().present(resource)

    def guard(self, resource):
        user = resource.get("user") or {}
        who = capital(self.label())
        if user.get("managed") or user.get("directory_managed"):
            raise ModuleFailure("%s has a role an identity provider manages, so it cannot be changed or removed "
                                "through the API; change it in the identity provider." % who)
        removing = self.params["state"] == "absent"
        if resource.get("role") == "admin" and (removing or self.params["role"] == "member"):
            admins = [m for m in self.members if m.get("role") == "admin"]
            if len(admins) <= 1:
                raise ModuleFailure("%s is the organization's only administrator, who cannot be %s; make another "
                                    "member an administrator first." % (who, "removed" if removing else "made a member"))
        if user.get("id") and user.get("id") == self.own_user_id():
            raise ModuleFailure("%s is the user these credentials act for, whom the platform does not let %s; use "
                                "another administrator's credentials." % (
                                    who, "remove themselves" if removing else "change their own role"))

    def own_user_id(self):
        """The user the credentials act for: GET /user, or with a service token the user who created the token."""
        try:
            return self.client.get("/user").get("id")
        except ApiError as error:
            if error.outcome_unknown or not self.params.get("service_token_id"):
                raise
        token = self.client.get(self.org_path("service-tokens", self.params["service_token_id"]), missing_ok=True)
        if token and token.get("actor_id"):
            return token["actor_id"]
        self.ctx.warn("Which user the credentials act for could not be read, so %s was not checked to be another "
                      "user; the platform refuses a change of one's own membership." % self.label())
        return None

    def predict(self, resource, changes):
        return dict(resource, **changes)

    def update(self, resource, changes):
        return self.client.patch(self.url(resource["user"]["id"]), json=dict(role=changes["role"]))

    def delete(self, resource):
        query = dict((name, "true") for name in ("delete_passwords", "delete_service_tokens") if self.params[name])
        self.client.request("DELETE", self.url(resource["user"]["id"]), params=query or None, missing_ok=True)


def main():
    run_module(OrganizationMember)


if __name__ == "__main__":
    main()
