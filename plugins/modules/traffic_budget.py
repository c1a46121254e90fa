#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: traffic_budget
short_description: Manage a traffic budget of a PostgreSQL branch and its rules (Database Traffic Control)
version_added: 0.3.0
description:
  - Ensures that a PostgreSQL branch has a traffic budget named O(name), with the mode, the limits and the rules
    declared, or that it has none. Database Traffic Control is a feature of PostgreSQL branches; the platform refuses
    it on a MySQL branch, and the task then fails with a sentence that says so.
  - A budget is named by its O(name) within its branch. A budget whose create answer was lost is found by its name
    and never created twice.
  - The limits and the mode are compared when given and changed in place, in one request. A limit left out is left as
    it is; O(unlimited) sets a limit back to unlimited.
  - O(rules) is compared as a set of what each rule matches (its O(rules[].kind), O(rules[].keyspace),
    O(rules[].fingerprint) and O(rules[].tags)), in any order. A rule that is missing is added, and with
    O(purge_rules) a rule not declared is removed, one request each; a rule is never changed in place. A rule whose
    create answer was lost is found in the budget and never added twice.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  database:
    description: The name of the PostgreSQL database.
    type: str
    required: true
  branch:
    description: The name of the branch.
    type: str
    required: true
  name:
    description: The name of the budget, unique within its branch.
    type: str
    required: true
  mode:
    description:
      - V(enforce) blocks the queries that exceed the budget, V(warn) lets them run and reports them, V(off) does
        neither.
      - Not given, an existing budget keeps its mode and a new one gets the platform's default (V(warn)).
    type: str
    choices: [enforce, warn, "off"]
  capacity:
    description: The capacity that can be banked, in percent of seconds of full server usage (0 to 6000).
    type: int
  rate:
    description: The rate at which capacity refills, in percent of the server's resources (0 to 100).
    type: int
  burst:
    description: The capacity a single query can consume, in percent of seconds of full server usage (0 to 6000).
    type: int
  concurrency:
    description: The share of the worker processes the budget's queries can use, in percent (0 to 100).
    type: int
  warning_threshold:
    description: The percentage of the capacity, burst or concurrency limits at which an enforced budget warns
      (0 to 100).
    type: int
  unlimited:
    description:
      - The limits to set back to unlimited, what a limit the platform is not given is. A limit listed here cannot
        also be given a value.
      - A budget that already has no such limit is not changed; a new budget is created without them.
    type: list
    elements: str
    choices: [capacity, rate, burst, concurrency]
  rules:
    description:
      - The rules that decide which queries the budget applies to. Each rule matches a query pattern
        (O(rules[].fingerprint)), tags, or both; one of them is required.
      - Not given, the budget's rules are left as they are.
    type: list
    elements: dict
    suboptions:
      kind:
        description: V(match) applies the budget to all the matching queries together; V(each) gives each value of the
          rule's tags a budget of its own.
        type: str
        choices: [match, each]
        default: match
      fingerprint:
        description: The fingerprint of a query pattern, as query insights shows it.
        type: str
      keyspace:
        description: The keyspace of the query pattern. Only with O(rules[].fingerprint).
        type: str
      tags:
        description:
          - SQLCommenter tags the queries carry, each V(key=value); V(key) alone matches any value (for
            O(rules[].kind=each)). Compared as a set.
        type: list
        elements: str
  purge_rules:
    description:
      - Remove the rules of the budget that O(rules) does not declare, so that the budget has exactly the rules
        declared. As with the C(purge_tags) of other collections, this is the default; set it to V(false) to only add
        rules. Without O(rules), no rule is removed.
    type: bool
    default: true
  state:
    description:
      - V(present) creates the budget if it does not exist, sets the mode and limits given, and adds (and with
        O(purge_rules) removes) rules.
      - V(absent) deletes the budget with its rules; a budget that does not exist is not a change.
    type: str
    choices: [present, absent]
    default: present
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.resource
seealso:
  - module: planetscale.cloud.traffic_budget_info
  - module: planetscale.cloud.query_pattern_info
"""

EXAMPLES = r"""
- name: Watch the reporting queries first, without blocking any
  planetscale.cloud.traffic_budget:
    organization: acme
    database: pgapp
    branch: main
    name: reports
    mode: warn
    rate: 20
    burst: 300
    concurrency: 10
    rules:
      - tags: [route=/reports]
      - fingerprint: 7a3d2c1b0e9f8a76

- name: Then enforce it
  planetscale.cloud.traffic_budget:
    organization: acme
    database: pgapp
    branch: main
    name: reports
    mode: enforce
    warning_threshold: 80

- name: Give each background job its own budget, and keep the rules added elsewhere
  planetscale.cloud.traffic_budget:
    organization: acme
    database: pgapp
    branch: main
    name: jobs
    mode: enforce
    rate: 10
    rules:
      - kind: each
        tags: [job]
    purge_rules: false

- name: Delete a budget and its rules
  planetscale.cloud.traffic_budget:
    organization: acme
    database: pgapp
    branch: main
    name: jobs
    state: absent
"""

RETURN = r"""
traffic_budget:
  description:
    - The budget (id, name, mode, capacity, rate, burst, concurrency, warning_threshold, rules, created_at...); a limit
      that is not set is null (unlimited). Each rule has its id, kind, fingerprint, keyspace and tags (key, value,
      source).
    - In check mode, when it would be created or changed, the fields given; a rule to add is shown as declared.
  returned: O(state=present)
  type: dict
  sample:
    id: tb1a2b3c4d5e
    name: reports
    mode: warn
    capacity: null
    rate: 20
    burst: 300
    concurrency: 10
    warning_threshold: null
    rules:
      - id: tr9f8e7d6c5b
        kind: match
        fingerprint: null
        keyspace: null
        tags: [{key_id: 5c1e0f2a7b3d, key: route, value: /reports, source: sql}]
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.capacity import NOT_FOR_THIS_BRANCH, refuse_other_kinds
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION
from ansible_collections.planetscale.cloud.plugins.module_utils.resource import Resource
from ansible_collections.planetscale.cloud.plugins.module_utils.settle import write_and_settle

LIMITS = dict(capacity=6000, rate=100, burst=6000, concurrency=100, warning_threshold=100)
UNLIMITED = ("capacity", "rate", "burst", "concurrency")  # unlimited when not set (null in the platform's answers)
RULE_OPTIONS = dict(
    kind=dict(type="str", choices=["match", "each"], default="match"),
    fingerprint=dict(type="str"),
    keyspace=dict(type="str", no_log=False),  # a keyspace name, not a key
    tags=dict(type="list", elements="str"),
)


def tag_text(tag):
    """A tag as the module writes it: key=value, or key alone for any value (the API answers {key, value, ...})."""
    if isinstance(tag, dict):
        key, value = tag.get("key") or "", tag.get("value") or ""
    else:
        key, value = tag.partition("=")[::2]
    key, value = key.strip(), value.strip()
    return "%s=%s" % (key, value) if value else key


def canonical(rule):
    """What a rule matches, from an API record or a declared rule, in the form rules are compared and shown."""
    return dict(kind=rule.get("kind") or "match", fingerprint=rule.get("fingerprint") or None,
                keyspace=rule.get("keyspace") or None, tags=sorted(set(tag_text(t) for t in rule.get("tags") or [])))


def rule_key(rule):
    rule = canonical(rule)
    return (rule["kind"], rule["fingerprint"] or "", rule["keyspace"] or "", tuple(rule["tags"]))


def check_rule(number, rule):
    where = "rules[%d]" % number
    if not rule.get("fingerprint") and not rule.get("tags"):
        raise ModuleFailure("%s matches nothing: give its fingerprint, its tags, or both." % where)
    if rule.get("keyspace") and not rule.get("fingerprint"):
        raise ModuleFailure("%s: keyspace narrows a fingerprint; give the fingerprint too." % where)
    for name in ("fingerprint", "keyspace"):
        if rule.get(name) is not None and not rule[name].strip():
            raise ModuleFailure("%s: %s must not be empty." % (where, name))
    for tag in rule.get("tags") or []:
        if not tag.partition("=")[0].strip():
            raise ModuleFailure("%s: the tag %r is not key=value (or key alone)." % (where, tag))


class TrafficBudget(Resource):
    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        database=dict(type="str", required=True),
        branch=dict(type="str", required=True),
        name=dict(type="str", required=True),
        mode=dict(type="str", choices=["enforce", "warn", "off"]),
        capacity=dict(type="int"),
        rate=dict(type="int"),
        burst=dict(type="int"),
        concurrency=dict(type="int"),
        warning_threshold=dict(type="int"),
        rules=dict(type="list", elements="dict", options=RULE_OPTIONS),
        purge_rules=dict(type="bool", default=True),
        unlimited=dict(type="list", elements="str", choices=list(UNLIMITED)),
    )
    path_options = ("database", "branch")
    must_exist = ("database", "branch")
    parent = "branch"
    names = ("name",)
    kind = "traffic_budget"
    api_path = ("databases", "{database}", "branches", "{branch}", "traffic", "budgets")
    fields = ("mode",) + tuple(LIMITS) + ("rules",)

    def validate(self):
        super().validate()
        for name, ceiling in LIMITS.items():
            value = self.params[name]
            if value is not None and not 0 <= value <= ceiling:
                raise ModuleFailure("%s must be from 0 to %d, not %d." % (name, ceiling, value))
        for number, rule in enumerate(self.params["rules"] or []):
            check_rule(number, rule)
        for name in self.params["unlimited"] or ():
            if self.params[name] is not None:
                raise ModuleFailure("%s is given %d and listed in unlimited; give it a value or list it in unlimited, "
                                    "not both." % (name, self.params[name]))

    def run(self):
        try:
            return super().run()
        except ApiError as error:  # the platform refuses traffic control on a MySQL branch (422): say so
            if error.status in NOT_FOR_THIS_BRANCH:
                refuse_other_kinds(self, "traffic budgets", error)
            raise

    def label(self):
        return "traffic budget %r of branch %r of database %r" % (
            self.params["name"], self.params["branch"], self.params["database"])

    def read(self):
        found = [budget for budget in self.client.paginate(self.url()) if budget.get("name") == self.params["name"]]
        if len(found) > 1:
            raise ModuleFailure("%d traffic budgets of branch %r are named %r (IDs %s); delete all but one." % (
                len(found), self.params["branch"], self.params["name"], ", ".join(str(b.get("id")) for b in found)))
        return found[0] if found else None

    def managed(self, resource):
        fields = super().managed(resource)
        fields["rules"] = sorted((canonical(rule) for rule in resource.get("rules") or []), key=rule_key)
        return fields

    def wanted(self, resource):
        fields = super().wanted(resource)
        fields.update((name, None) for name in self.params["unlimited"] or ())
        if "rules" in fields:
            rules = dict((rule_key(rule), canonical(rule)) for rule in fields["rules"])
            if not self.params["purge_rules"] and resource is not None:
                rules.update((rule_key(rule), canonical(rule)) for rule in resource.get("rules") or [])
            fields["rules"] = [rules[key] for key in sorted(rules)]
        return fields

    def same(self, name, have, want):
        if name == "rules":
            return set(map(rule_key, have or [])) == set(map(rule_key, want or []))
        return have == want

    def diff_view(self, fields):
        rules = fields.get("rules")
        shown = super().diff_view(dict((name, value) for name, value in fields.items() if name != "rules"))
        if rules is not None:
            shown["rules"] = [dict((k, v) for k, v in rule.items() if v not in (None, [])) for rule in rules]
        return shown

    def predict(self, resource, changes):
        return dict(resource or dict(name=self.params["name"], rules=[]), **changes)

    def create(self, values):
        body = dict((name, value) for name, value in values.items() if name != "rules" and value is not None)
        return self.client.post(self.url(), json=dict(body, name=self.params["name"]))

    def update(self, resource, changes):
        body = dict((name, value) for name, value in changes.items() if name != "rules")  # null: unlimited
        budget = self.client.patch(self.url(resource["id"]), json=body) if body else resource
        kept = ["%s %s" % (name, budget.get(name)) for name in UNLIMITED
                if name in body and body[name] is None and budget.get(name) is not None]
        if kept:
            raise ModuleFailure("The platform kept %s of %s when asked to make it unlimited; delete the budget "
                                "(state: absent) and create it again without it." % (" and ".join(kept), self.label()),
                                traffic_budget=budget)
        if "rules" in changes:
            have = dict((rule_key(rule), rule) for rule in resource.get("rules") or [])
            want = dict((rule_key(rule), rule) for rule in changes["rules"])
            rules = [rule for key, rule in have.items() if key in want]
            rules += [self.add_rule(resource["id"], want[key]) for key in sorted(want) if key not in have]
            for key in sorted(set(have) - set(want)):
                self.client.delete(self.url(resource["id"], "rules", have[key]["id"]), missing_ok=True)
            budget = dict(budget, rules=rules)
        return budget

    def add_rule(self, budget_id, rule):
        """Add a rule: after a lost answer, or a refusal because the budget has it, the rule the budget has."""
        body = dict((name, value) for name, value in rule.items() if value not in (None, []))

        def in_budget(applied):
            def read(error):  # pylint: disable=unused-argument
                budget = self.client.get(self.url(budget_id), missing_ok=True) or {}
                found = [have for have in budget.get("rules") or [] if rule_key(have) == rule_key(rule)]
                return (found[0], applied) if found else None
            return read
        return write_and_settle(lambda: self.client.post(self.url(budget_id, "rules"), json=body),
                                read_back=in_budget(True), on_conflict=in_budget(False))[0]


def main():
    run_module(TrafficBudget)


if __name__ == "__main__":
    main()
