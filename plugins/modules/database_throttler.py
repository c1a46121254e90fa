#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: database_throttler
short_description: Set the throttler of a database's deploy requests
version_added: 0.3.0
description:
  - Ensures that the throttler of a database's schema migrations (its deploy requests) has the ratio given, for every
    keyspace of the database (O(ratio)) or for the keyspaces named (O(keyspaces)).
  - The ratios are read and compared first; what differs is set in one request, and nothing is sent when nothing
    differs.
  - A ratio is from V(0) (the throttler is off) to V(95) (migrations slowed down the most).
  - The throttler is the Vitess (MySQL) databases'; the platform refuses it for a PostgreSQL database.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  database:
    description: The name of the database.
    type: str
    required: true
  ratio:
    description: The ratio of every keyspace of the database, 0 to 95.
    type: int
  keyspaces:
    description:
      - The ratios of the keyspaces named; the keyspaces not named keep theirs.
      - A keyspace the database does not have fails the task before anything is written.
    type: list
    elements: dict
    suboptions:
      name:
        description: The name of the keyspace.
        type: str
        required: true
      ratio:
        description: Its ratio, 0 to 95.
        type: int
        required: true
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.resource
seealso:
  - module: planetscale.cloud.deploy_request
"""

EXAMPLES = r"""
- name: Slow every migration of app down a little
  planetscale.cloud.database_throttler:
    organization: acme
    database: app
    ratio: 20

- name: Throttle the migrations of one keyspace harder
  planetscale.cloud.database_throttler:
    organization: acme
    database: app
    keyspaces:
      - name: app
        ratio: 60
"""

RETURN = r"""
throttler:
  description:
    - The throttler as the platform has it after the task (in check mode, as it would be).
    - C(keyspaces), the keyspaces whose ratio can be set; C(configurations), each configured keyspace's
      C(keyspace_name) and C(ratio); C(configurable), the database.
  returned: always
  type: dict
  sample: {keyspaces: [app], configurations: [{keyspace_name: app, ratio: 20}], configurable: {id: d1, name: app}}
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import Module, ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION
from ansible_collections.planetscale.cloud.plugins.module_utils.settle import write_and_settle

HIGHEST = 95


def ratios(throttler):
    """The configured ratios of a throttler record, by keyspace."""
    return {item.get("keyspace_name"): item.get("ratio") for item in throttler.get("configurations") or []
            if isinstance(item, dict)}


class DatabaseThrottler(Module):
    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        database=dict(type="str", required=True),
        ratio=dict(type="int"),
        keyspaces=dict(type="list", elements="dict", no_log=False, options=dict(
            name=dict(type="str", required=True),
            ratio=dict(type="int", required=True),
        )),
    )
    mutually_exclusive = (("ratio", "keyspaces"),)
    required_one_of = (("ratio", "keyspaces"),)
    path_options = ("database",)
    must_exist = ("database",)

    def validate(self):
        super().validate()
        given = [("ratio", self.params["ratio"])] if self.params["ratio"] is not None else []
        names = [item["name"] for item in self.params["keyspaces"] or []]
        given += [("ratio of keyspace %r" % item["name"], item["ratio"]) for item in self.params["keyspaces"] or []]
        for what, value in given:
            if not 0 <= value <= HIGHEST:
                raise ModuleFailure("The %s must be from 0 (off) to %d, not %s." % (what, HIGHEST, value))
        if self.params["keyspaces"] is not None and not names:
            raise ModuleFailure("keyspaces must name at least one keyspace; to set every keyspace, give ratio.")
        if any(not name.strip() for name in names):
            raise ModuleFailure("keyspaces: a keyspace's name must not be empty.")
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ModuleFailure("keyspaces names %s more than once: give each keyspace one ratio." % ", ".join(twice))

    def url(self):
        return self.org_path("databases", self.params["database"], "throttler")

    def wanted(self, throttler):
        """The ratio each keyspace must have; ModuleFailure naming a keyspace the database does not have."""
        keyspaces = [name for name in throttler.get("keyspaces") or [] if isinstance(name, str)]
        if self.params["ratio"] is not None:
            return {name: self.params["ratio"] for name in keyspaces}
        wanted = {item["name"]: item["ratio"] for item in self.params["keyspaces"]}
        unknown = [name for name in wanted if name not in keyspaces]
        if unknown:
            raise ModuleFailure("Database %r has no keyspace %s; its keyspaces are %s." % (
                self.params["database"], ", ".join(repr(name) for name in unknown),
                ", ".join(keyspaces) or "none"))
        return wanted

    def differences(self, throttler):
        have = ratios(throttler)
        return {name: ratio for name, ratio in self.wanted(throttler).items()
                if not isinstance(have.get(name), (int, float)) or float(have[name]) != ratio}

    def body(self, changes):
        if self.params["ratio"] is not None:
            return dict(ratio=self.params["ratio"])
        return dict(configurations=[dict(keyspace_name=name, ratio=ratio) for name, ratio in changes.items()])

    def run(self):
        throttler = self.client.get(self.url())
        if not isinstance(throttler, dict):
            raise self.client.wrong_answer("the answer is not a throttler record")
        before = ratios(throttler)
        changes = self.differences(throttler)
        if changes and self.ctx.check_mode:
            merged = dict(before, **changes)
            throttler = dict(throttler, configurations=[dict(keyspace_name=name, ratio=ratio)
                                                        for name, ratio in merged.items()])
        elif changes:
            throttler = self.write(changes)
        result = dict(changed=bool(changes), throttler=throttler)
        if self.ctx.diff:
            result["diff"] = dict(before=before, after=ratios(throttler))
        return result

    def write(self, changes):
        """PATCH what differs; after a lost answer, read back and send again only what still differs."""
        pending = dict(changes=changes)

        def read_back(error):  # pylint: disable=unused-argument
            found = self.client.get(self.url())
            pending["changes"] = self.differences(found)
            return None if pending["changes"] else (found, True)
        answer = write_and_settle(lambda: self.client.patch(self.url(), json=self.body(pending["changes"])),
                                  read_back=read_back)[0]
        return answer if isinstance(answer, dict) else self.client.get(self.url())


def main():
    run_module(DatabaseThrottler)


if __name__ == "__main__":
    main()
