#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: organization_member_info
short_description: List the members of an organization with their roles
version_added: 0.2.0
description:
  - Returns every member of an organization with their role, walking all pages of the list.
  - O(q) filters by name or e-mail address on the platform; O(member) selects one member.
  - O(user_id) reads one member by user ID in a single request instead of listing.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  q:
    description: Only the members whose name or e-mail address contains this text.
    type: str
  member:
    description:
      - Only this member, named by e-mail address (in any case), user ID or membership ID.
      - A user who is not a member gives an empty list.
    type: str
  user_id:
    description:
      - Only the member with this user ID, read on its own (one request) instead of from the list.
      - A user who is not a member gives an empty list.
      - Mutually exclusive with O(q) and O(member).
    type: str
    version_added: 0.3.0
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.info
seealso:
  - module: planetscale.cloud.organization_member
  - module: planetscale.cloud.team_member_info
"""

EXAMPLES = r"""
- name: List the members of the organization
  planetscale.cloud.organization_member_info:
    organization: acme
  register: result

- name: Show the administrators' e-mail addresses
  ansible.builtin.debug:
    msg: "{{ result.members | selectattr('role', 'equalto', 'admin') | map(attribute='user.email') | list }}"

- name: Read one member by user ID, without listing the others
  planetscale.cloud.organization_member_info:
    organization: acme
    user_id: "{{ result.members[0].user.id }}"
  register: one
"""

RETURN = r"""
members:
  description: The members.
  returned: success
  type: list
  elements: dict
  contains:
    id:
      description: The ID of the membership.
      type: str
    role:
      description: The member's role, V(member) or V(admin).
      type: str
    user:
      description: The user (id, display_name, name, email, managed, directory_managed, and so on); C(managed) or
        C(directory_managed) true means an identity provider manages the role.
      type: dict
    created_at:
      description: When the user joined (ISO 8601).
      type: str
    updated_at:
      description: When the membership was last updated (ISO 8601).
      type: str
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import InfoModule
from ansible_collections.planetscale.cloud.plugins.module_utils.members import names_member
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION


class OrganizationMemberInfo(InfoModule):
    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        q=dict(type="str"),
        member=dict(type="str"),
        user_id=dict(type="str"),
    )
    mutually_exclusive = (("user_id", "q"), ("user_id", "member"))
    path_options = ("user_id",)

    def run(self):
        if self.params["user_id"] is not None:
            member = self.client.get(self.org_path("members", self.params["user_id"]), missing_ok=True)
            return dict(members=[member] if member else [])
        query = dict(q=self.params["q"]) if self.params["q"] else None
        members = self.items(self.org_path("members"), query)
        if self.params["member"]:
            members = [member for member in members if names_member(member, self.params["member"])]
        return dict(members=members)


def main():
    run_module(OrganizationMemberInfo)


if __name__ == "__main__":
    main()
