#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: schema_recommendation
short_description: Dismiss a schema recommendation of a database
version_added: 0.3.0
description:
  - Ensures that a schema recommendation the platform made for a database (an index to add, a redundant index or an
    unused table to drop, ...) is dismissed, with the reason the team gives.
  - The recommendation is named by its O(number). Apply one by deploying its C(ddl_statement) with a deploy request
    (M(planetscale.cloud.deploy_request)); the platform then closes it as applied.
  - Idempotent. A recommendation that is dismissed already is left as it is and nothing is sent; its reason is not
    changed (the platform keeps no reason it shows back).
  - Only an open recommendation can be dismissed. One that is applied or stale fails the task, before anything is
    sent.
  - When the answer to the dismissal is lost, the module reads the recommendation back and does not send the
    dismissal twice.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  database:
    description: The name of the database.
    type: str
    required: true
  number:
    description:
      - The number of the recommendation, as
        RV(planetscale.cloud.schema_recommendation_info#module:schema_recommendations[].number) returns it.
    type: int
    required: true
  state:
    description: V(dismissed) dismisses the recommendation.
    type: str
    choices: [dismissed]
    default: dismissed
  reason:
    description:
      - Why the recommendation is dismissed, at most 500 characters. Sent with the dismissal; not compared with
        anything when the recommendation is dismissed already.
    type: str
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.resource
seealso:
  - module: planetscale.cloud.schema_recommendation_info
  - module: planetscale.cloud.deploy_request
"""

EXAMPLES = r"""
- name: Dismiss a recommendation the team has decided against
  planetscale.cloud.schema_recommendation:
    organization: acme
    database: app
    number: 1
    state: dismissed
    reason: Reports read users by id only; an index on created_at would cost every insert.

- name: Read the open recommendations of a database
  planetscale.cloud.schema_recommendation_info:
    organization: acme
    database: app
    state: open
  register: open_recommendations

- name: Dismiss every open recommendation to drop a redundant index
  planetscale.cloud.schema_recommendation:
    organization: acme
    database: app
    number: "{{ item.number }}"
    reason: The index serves a covering read.
  loop: "{{ open_recommendations.schema_recommendations
            | selectattr('recommendation_type', 'equalto', 'duplicate_index') }}"
  loop_control:
    label: "#{{ item.number }} {{ item.title }}"
"""

RETURN = r"""
schema_recommendation:
  description:
    - The recommendation as the platform holds it after the task. In check mode, when it would be dismissed, the
      record read with RV(schema_recommendation.state) V(dismissed).
  returned: success
  type: dict
  contains:
    number:
      description: The number of the recommendation.
      type: int
      sample: 1
    id:
      description: The ID of the recommendation.
      type: str
    title:
      description: What the recommendation proposes.
      type: str
    recommendation_type:
      description: The kind of recommendation, such as V(new_index), V(duplicate_index) or V(unused_table).
      type: str
    state:
      description: V(open), V(applied), V(dismissed) or V(stale).
      type: str
      sample: dismissed
    table_name:
      description: The table it applies to.
      type: str
    keyspace:
      description: The keyspace it applies to.
      type: str
    ddl_statement:
      description: The DDL statement that applies it.
      type: str
    html_url:
      description: The recommendation in the platform's web application.
      type: str
    dismissed_at:
      description: When it was dismissed (ISO 8601), or null.
      type: str
    dismissed_by:
      description: Who dismissed it (C(id), C(display_name), C(avatar_url)), or null.
      type: dict
    applied_at:
      description: When it was applied (ISO 8601), or null.
      type: str
    closed_by_deploy_request:
      description: The deploy request that applied it (C(id), C(branch_id), C(number)), or null.
      type: dict
    created_at:
      description: When the platform made it (ISO 8601).
      type: str
    updated_at:
      description: When it last changed (ISO 8601).
      type: str
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import Module, ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION
from ansible_collections.planetscale.cloud.plugins.module_utils.settle import write_and_settle

REASON_LIMIT = 500


def view(recommendation):
    """A recommendation as the diff shows it: its state, and the reason a dismissal gives."""
    return dict((key, recommendation[key]) for key in ("state", "reason") if (recommendation or {}).get(key))


class SchemaRecommendation(Module):
    """One recommendation, by number: dismissed once; a dismissed one is never sent again."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        database=dict(type="str", required=True),
        number=dict(type="int", required=True),
        state=dict(type="str", choices=["dismissed"], default="dismissed"),
        reason=dict(type="str"),
    )
    path_options = ("database",)
    must_exist = ("database", ("number", "schema recommendation"))

    def validate(self):
        super().validate()
        if self.params["number"] < 1:
            raise ModuleFailure("number must be a schema recommendation's number, 1 or more, not %s."
                                % self.params["number"])
        reason = self.params["reason"]
        if reason is not None and not reason.strip():
            raise ModuleFailure("reason must not be blank: say why the recommendation is dismissed, or leave reason "
                                "out.")
        if reason is not None and len(reason) > REASON_LIMIT:
            raise ModuleFailure("reason must be at most %d characters, not %d." % (REASON_LIMIT, len(reason)))

    def url(self, *more):
        return self.org_path("databases", self.params["database"], "schema-recommendations", self.params["number"],
                             *more)

    def label(self):
        return "Schema recommendation #%s of database %r" % (self.params["number"], self.params["database"])

    def run(self):
        found = self.client.get(self.url())
        if found.get("state") == "dismissed":
            return self.result(found, found, changed=False)
        if found.get("state") != "open":
            raise ModuleFailure("%s is %s: only an open recommendation can be dismissed." % (
                self.label(), found.get("state")), schema_recommendation=found)
        if self.ctx.check_mode:
            return self.result(found, dict(found, state="dismissed"), changed=True)
        return self.result(found, self.dismiss(), changed=True)

    def dismiss(self):
        """POST .../dismiss once: after a lost answer, or a refusal (the transport may have sent it twice), a read
        that finds it dismissed is the answer."""
        body = dict(reason=self.params["reason"]) if self.params["reason"] is not None else {}

        def dismissed(error):  # pylint: disable=unused-argument
            again = self.client.get(self.url())
            return (again, True) if again.get("state") == "dismissed" else None
        answer, dummy = write_and_settle(lambda: self.client.post(self.url("dismiss"), json=body),
                                         read_back=dismissed, on_conflict=dismissed)
        if not isinstance(answer, dict) or "state" not in answer:  # an answer without the record: read it
            answer = self.client.get(self.url())
        return answer

    def result(self, before, after, changed):
        result = dict(changed=changed, schema_recommendation=after)
        if self.ctx.diff:
            wanted = dict(after, reason=self.params["reason"]) if changed else after
            result["diff"] = dict(before=view(before), after=view(wanted))
        return result


def main():
    run_module(SchemaRecommendation)


if __name__ == "__main__":
    main()
