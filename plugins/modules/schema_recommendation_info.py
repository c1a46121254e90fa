#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: schema_recommendation_info
short_description: List the schema recommendations of a database, or read one
version_added: 0.3.0
description:
  - Returns the schema recommendations the platform made for a database (indexes to add, redundant indexes and
    unused tables to drop, ...), walking all pages of the list, or the one named by O(number).
  - A recommendation is V(open), V(applied) (a deploy request ran its DDL), V(dismissed) or V(stale). O(state)
    selects the open ones or the closed ones (all the others).
  - A recommendation that does not exist is not an error; RV(schema_recommendations) is then empty. A database or
    organization that does not exist is an error.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  database:
    description: The name of the database.
    type: str
    required: true
  number:
    description: The number of one recommendation to read. RV(schema_recommendations) then holds it, or nothing.
    type: int
  state:
    description:
      - V(open) returns the open recommendations; V(closed) those applied, dismissed or stale. By default every
        recommendation is returned.
    type: str
    choices: [open, closed]
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.info
seealso:
  - module: planetscale.cloud.schema_recommendation
"""

EXAMPLES = r"""
- name: List the open schema recommendations of a database
  planetscale.cloud.schema_recommendation_info:
    organization: acme
    database: app
    state: open
  register: recommendations

- name: Show what each one proposes
  ansible.builtin.debug:
    msg: "{{ recommendations.schema_recommendations | map(attribute='ddl_statement') | list }}"

- name: Read one recommendation
  planetscale.cloud.schema_recommendation_info:
    organization: acme
    database: app
    number: 1
  register: one
"""

RETURN = r"""
schema_recommendations:
  description: The recommendations, as the API lists them. With O(number), a list of the one recommendation, or an
    empty list.
  returned: success
  type: list
  elements: dict
  contains:
    number:
      description: The number of the recommendation, for O(planetscale.cloud.schema_recommendation#module:number).
      type: int
      sample: 1
    id:
      description: The ID of the recommendation.
      type: str
    title:
      description: What the recommendation proposes.
      type: str
    recommendation_type:
      description:
        - The kind of recommendation, V(unused_table), V(unused_index), V(duplicate_index), V(sequence_overflow),
          V(sequence_overflow_foreign_key), V(new_index), V(encoding_upgrade), V(bloated_table) or V(bloated_index).
      type: str
    state:
      description: V(open), V(applied), V(dismissed) or V(stale).
      type: str
      sample: open
    table_name:
      description: The table it applies to.
      type: str
    keyspace:
      description: The keyspace it applies to.
      type: str
    ddl_statement:
      description: The DDL statement that applies it.
      type: str
      sample: ALTER TABLE `users` ADD INDEX `index_users_on_created_at` (`created_at`)
    html_url:
      description: The recommendation in the platform's web application.
      type: str
    applied_at:
      description: When it was applied (ISO 8601), or null.
      type: str
    closed_by_deploy_request:
      description: The deploy request that applied it (C(id), C(branch_id), C(number)), or null.
      type: dict
    dismissed_at:
      description: When it was dismissed (ISO 8601), or null.
      type: str
    dismissed_by:
      description: Who dismissed it (C(id), C(display_name), C(avatar_url)), or null.
      type: dict
    created_at:
      description: When the platform made it (ISO 8601).
      type: str
    updated_at:
      description: When it last changed (ISO 8601).
      type: str
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import InfoModule, ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION


def in_state(recommendation, state):
    """Whether a recommendation is in the state the filter names (None: any)."""
    return state is None or (recommendation.get("state") == "open") == (state == "open")


class SchemaRecommendationInfo(InfoModule):
    """A recommendation named by number that is absent is an empty list; its database being absent is a failure."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        database=dict(type="str", required=True),
        number=dict(type="int"),
        state=dict(type="str", choices=["open", "closed"]),
    )
    path_options = ("database",)
    must_exist = ("database",)

    def validate(self):
        super().validate()
        if self.params["number"] is not None and self.params["number"] < 1:
            raise ModuleFailure("number must be a schema recommendation's number, 1 or more, not %s."
                                % self.params["number"])

    def run(self):
        url = self.org_path("databases", self.params["database"], "schema-recommendations")
        state = self.params["state"]
        if self.params["number"] is not None:
            found = self.client.get("%s/%s" % (url, self.params["number"]), missing_ok=True)
            if found is None:
                self.client.get(url, params=dict(per_page=1))  # a missing database or organization fails
            found = [found] if found is not None else []
        else:
            found = self.items(url, params=dict(state=state) if state else None)
        return dict(schema_recommendations=[item for item in found if in_state(item, state)])


def main():
    run_module(SchemaRecommendationInfo)


if __name__ == "__main__":
    main()
