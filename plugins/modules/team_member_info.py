#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: team_member_info
short_description: List the members of a team
version_added: 0.1.0
description:
  - Returns every member of an organization team, walking all pages of the list.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  team:
    description:
      - The slug of the team.
    type: str
    required: true
  limit:
    description:
      - Return at most this many members. By default every member is returned.
    type: int
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.info
seealso:
  - module: planetscale.cloud.team
"""

EXAMPLES = r"""
- name: List the members of a team
  planetscale.cloud.team_member_info:
    organization: acme
    team: engineering
  register: result

- name: Show their e-mail addresses
  ansible.builtin.debug:
    msg: "{{ result.members | map(attribute='user.email') | list }}"
"""

RETURN = r"""
members:
  description: The team's members.
  returned: success
  type: list
  elements: dict
  contains:
    id:
      description: The ID of the membership.
      type: str
    user:
      description: The member, a user record (id, display_name, name, email, and so on).
      type: dict
    actor:
      description: Who added the member (id, display_name, avatar_url).
      type: dict
    created_at:
      description: When the member was added (ISO 8601).
      type: str
    updated_at:
      description: When the membership was last updated (ISO 8601).
      type: str
    passwords:
      description: The member's passwords, without secrets.
      type: list
      elements: dict
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import InfoModule
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION
from ansible_collections.planetscale.cloud.plugins.module_utils.shown_once import without_secrets


class TeamMemberInfo(InfoModule):
    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        team=dict(type="str", required=True),
        limit=dict(type="int"),
    )
    path_options = ("team",)

    def run(self):
        url = self.org_path("teams", self.params["team"], "members")
        members = self.items(url, limit=self.params["limit"])
        for member in members:
            if member.get("passwords"):
                member["passwords"] = [without_secrets(password) for password in member["passwords"]]
        return dict(members=members)


def main():
    run_module(TeamMemberInfo)


if __name__ == "__main__":
    main()
