#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: query_pattern_info
short_description: List the query-pattern reports of a branch
version_added: 0.1.0
description:
  - Returns the generated query-pattern reports of a database branch.
  - The list is cursor-based. By default every report is returned, newest first as the API orders them.
  - For manual paging, give O(starting_after) (or O(ending_before)) and O(limit), and continue from
    RV(cursor.cursor_end) (or RV(cursor.cursor_start)) while RV(cursor.has_next) (or RV(cursor.has_prev)) is true.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  database:
    description:
      - The name of the database.
    type: str
    required: true
  branch:
    description:
      - The name of the branch.
    type: str
    required: true
  limit:
    description:
      - Return at most this many reports. By default every report is returned.
    type: int
  starting_after:
    description:
      - Start after the report with this ID and walk forward.
    type: str
  ending_before:
    description:
      - Start before the report with this ID and walk backward.
    type: str
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.info
"""

EXAMPLES = r"""
- name: List every query-pattern report of the main branch
  planetscale.cloud.query_pattern_info:
    organization: acme
    database: app
    branch: main

- name: Read the first ten reports
  planetscale.cloud.query_pattern_info:
    organization: acme
    database: app
    branch: main
    limit: 10
  register: result

- name: Read the next ten reports after the last one seen
  planetscale.cloud.query_pattern_info:
    organization: acme
    database: app
    branch: main
    limit: 10
    starting_after: "{{ result.cursor.cursor_end }}"
  when: result.cursor.has_next
"""

RETURN = r"""
reports:
  description: The reports.
  returned: success
  type: list
  elements: dict
  contains:
    id:
      description: The ID of the report.
      type: str
    state:
      description: The state of the report.
      type: str
      sample: completed
    created_at:
      description: When the report was requested (ISO 8601).
      type: str
    finished_at:
      description: When the report was finished (ISO 8601), or null.
      type: str
    url:
      description: The API URL of the report.
      type: str
    download_url:
      description: The API URL to download the report from.
      type: str
    actor:
      description: Who requested the report (id, display_name, avatar_url).
      type: dict
cursor:
  description: The cursor fields of the last page read, to continue from by hand.
  returned: success
  type: dict
  contains:
    has_next:
      description: Whether more reports follow.
      type: bool
    has_prev:
      description: Whether reports precede.
      type: bool
    cursor_start:
      description: The ID of the first report of the last page read.
      type: str
    cursor_end:
      description: The ID of the last report of the last page read.
      type: str
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import InfoModule
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION


class QueryPatternInfo(InfoModule):
    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        database=dict(type="str", required=True),
        branch=dict(type="str", required=True),
        limit=dict(type="int"),
        starting_after=dict(type="str"),
        ending_before=dict(type="str"),
    )
    mutually_exclusive = [["starting_after", "ending_before"]]
    path_options = ("database", "branch")

    def run(self):
        url = self.org_path("databases", self.params["database"], "branches", self.params["branch"],
                            "query-patterns")
        pages = []
        reports = list(self.client.paginate_cursor(
            url, limit=self.params["limit"], starting_after=self.params["starting_after"],
            ending_before=self.params["ending_before"], pages=pages))
        return dict(reports=reports, cursor=pages[-1])


def main():
    run_module(QueryPatternInfo)


if __name__ == "__main__":
    main()
