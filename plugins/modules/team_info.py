#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: team_info
short_description: List the teams of an organization, or read one
version_added: 0.1.0
description:
  - Returns every team of an organization, walking all pages of the list, or the one team named by O(team).
  - Each team says whether it is managed through single sign-on (RV(teams[].managed)); such teams cannot
    be changed through the API.
  - A team that does not exist is not an error; RV(teams) is then empty. An organization that does not
    exist is an error.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  team:
    description:
      - The slug of one team to read. RV(teams) then holds that team, or nothing if it does not exist.
    type: str
  limit:
    description:
      - Return at most this many teams. By default every team is returned.
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
- name: List every team of the organization
  planetscale.cloud.team_info:
    organization: acme
  register: result

- name: Show the slugs of the teams that are not managed by single sign-on
  ansible.builtin.debug:
    msg: "{{ result.teams | rejectattr('managed') | map(attribute='slug') | list }}"

- name: Read one team
  planetscale.cloud.team_info:
    organization: acme
    team: engineering
  register: engineering

- name: Show whether the team exists
  ansible.builtin.debug:
    msg: "{{ 'engineering exists' if engineering.teams else 'engineering does not exist' }}"
"""

RETURN = r"""
teams:
  description:
    - The teams, in the order the API lists them.
    - With O(team), a list of the one team, or an empty list when the team does not exist.
  returned: success
  type: list
  elements: dict
  contains:
    id:
      description: The ID of the team.
      type: str
    slug:
      description: The slug that names the team in requests.
      type: str
      sample: backend
    name:
      description: The name of the team.
      type: str
      sample: Backend
    display_name:
      description: The display name of the team.
      type: str
    description:
      description: The description of the team.
      type: str
    managed:
      description: Whether the team is managed through single sign-on or directory services.
      type: bool
      sample: false
    members:
      description: The members, as user records (id, display_name, email, and so on).
      type: list
      elements: dict
    databases:
      description: The databases the team can access (id, name, url, branches_url).
      type: list
      elements: dict
    creator:
      description: Who created the team (id, display_name, avatar_url).
      type: dict
    created_at:
      description: When the team was created (ISO 8601).
      type: str
    updated_at:
      description: When the team was last updated (ISO 8601).
      type: str
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import InfoModule
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION


class TeamInfo(InfoModule):
    """A named team that is absent is an empty list; the organization being absent is a failure."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        team=dict(type="str"),
        limit=dict(type="int"),
    )
    path_options = ("team",)
    must_exist = ()

    def run(self):
        teams = self.org_path("teams")
        if self.params["team"] is None:
            return dict(teams=self.items(teams, limit=self.params["limit"]))
        team = self.client.get(self.org_path("teams", self.params["team"]), missing_ok=True)
        if team is None:
            self.client.get(teams, params=dict(per_page=1))  # a missing organization fails here
            return dict(teams=[])
        return dict(teams=[team])


def main():
    run_module(TeamInfo)


if __name__ == "__main__":
    main()
