#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: vschema
short_description: Set the VSchema of a keyspace
version_added: 0.3.0
description:
  - Ensures that a keyspace of a branch of a MySQL (Vitess) database has the VSchema O(vschema) gives, which says
    whether it is sharded, names its vindexes, and routes each table (its column vindexes, the first being its primary
    vindex, and its auto-increment sequence).
  - "The VSchema is compared as a document, not as text. The order of keys, the formatting, and a field set to what
    Vitess takes by default (V(false), null, an empty text, list or mapping) are no difference; a table or vindex
    named with nothing more is one (C(tables: {users: {}}) routes the table), and so is the order of a list (the first
    column vindex of a table is its primary vindex). What differs is sent whole, in one request."
  - The platform checks the VSchema; one it refuses (a table or column the keyspace does not have, a vindex type
    Vitess does not know) fails the task with the platform's sentence, and the keyspace keeps its VSchema.
  - A top-level key that is not one of Vitess's (C(sharded), C(vindexes), C(tables), C(require_explicit_routing),
    C(foreign_key_mode), C(multi_tenant_spec)) is sent as given, with a warning, since it is likely a typing error.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  database:
    description: The name of the database, a MySQL (Vitess) database.
    type: str
    required: true
  branch:
    description: The name of the branch.
    type: str
    required: true
  keyspace:
    description: The name of the keyspace, for example the default one, named after the database.
    type: str
    required: true
  vschema:
    description:
      - The VSchema, as data (a mapping in the task), or as JSON or YAML text, for example a file's read with
        C(lookup('ansible.builtin.file', 'vschema.json')).
      - Anything but a mapping, or text that is neither JSON nor YAML, fails the task before any request.
    type: raw
    required: true
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.resource
notes:
  - B(VSchema or deploy request.) A deploy request ships the schema of a development branch to production, and with
    it the VSchema changes made on that branch (its deployment state V(in_progress_vschema)), reviewed, queued with
    the schema changes and revertable with them (M(planetscale.cloud.deploy_request)). Use this module on a
    development branch before opening one, for a new keyspace before a workflow moves tables into it, or for a change
    of routing alone on a production branch, which the service token's C(write_production_branch_vschema) access
    allows and which takes effect at once, without a review.
seealso:
  - module: planetscale.cloud.keyspace
  - module: planetscale.cloud.deploy_request
  - module: planetscale.cloud.branch_schema_info
"""

EXAMPLES = r"""
- name: Route the users table of the default keyspace (unsharded)
  planetscale.cloud.vschema:
    organization: acme
    database: app
    branch: main
    keyspace: app
    vschema:
      sharded: false
      tables:
        users: {}

- name: A sharded keyspace
  planetscale.cloud.keyspace:
    organization: acme
    database: app
    branch: main
    name: sharded
    shards: 2
    cluster_size: PS_10

- name: Its VSchema as JSON text (a file's text, read with the file lookup, is taken the same way)
  planetscale.cloud.vschema:
    organization: acme
    database: app
    branch: main
    keyspace: sharded
    vschema: '{"sharded": true, "vindexes": {"hash": {"type": "hash"}}}'
  diff: true
"""

RETURN = r"""
vschema:
  description: The VSchema of the keyspace after the task, as a mapping; in check mode, as it would be.
  returned: success
  type: dict
  sample: {"sharded": true, "vindexes": {"hash": {"type": "hash"}}, "tables": {"orders": {"column_vindexes": [
    {"column": "customer_id", "name": "hash"}]}}}
"""

import json

from ansible.module_utils.common.yaml import HAS_YAML, yaml_load

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import Module, ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError, json_kind
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION
from ansible_collections.planetscale.cloud.plugins.module_utils.settle import write_and_settle

# The top-level keys of a keyspace's VSchema (Vitess's vschema.proto, message Keyspace).
KEYS = ("sharded", "vindexes", "tables", "require_explicit_routing", "foreign_key_mode", "multi_tenant_spec")
# The fields that map names to things (Vitess's map fields): a keyspace's vindexes and tables, a vindex's params.
MAPS = ("vindexes", "tables", "params")
NOT_A_VSCHEMA = ("vschema must be a VSchema, a mapping such as {sharded: true, vindexes: {hash: {type: hash}}}, given "
                 "as data or as JSON or YAML text; %s is not one.")


def document(value):
    """The VSchema a task gives (data, or JSON or YAML text) as a mapping; ModuleFailure for anything else."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            if not HAS_YAML:
                raise ModuleFailure(NOT_A_VSCHEMA % "text that is not JSON (and PyYAML, to read YAML, is missing)")
            try:
                value = yaml_load(value)
            except Exception:  # pylint: disable=broad-except  # PyYAML's errors, whatever the version names them
                raise ModuleFailure(NOT_A_VSCHEMA % "text that is neither JSON nor YAML")
    if not isinstance(value, dict):
        raise ModuleFailure(NOT_A_VSCHEMA % json_kind(value))
    return value


def pruned(value, entries=False):
    """A VSchema as Vitess reads it: the fields whose value is its default (false, null, an empty text, list or
    mapping) left out at every level; the entries of a map (MAPS: a table, a vindex, a parameter by name) kept, empty
    or not (an empty table is routed); lists in their order. entries: value is such a map."""
    if isinstance(value, dict):
        kept = dict((key, pruned(item, key in MAPS and not entries)) for key, item in value.items())
        return kept if entries else dict((key, item) for key, item in kept.items() if not (
            item is None or item is False or item in ("", [], {})))
    if isinstance(value, list):
        return [pruned(item) for item in value]
    return value


class VSchema(Module):
    """The one VSchema of a keyspace: read (GET .../vschema answers it as JSON text, raw), compared as a document, and
    sent whole in one PATCH when it differs."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        database=dict(type="str", required=True),
        branch=dict(type="str", required=True),
        keyspace=dict(type="str", required=True, no_log=False),  # a keyspace name, not a key
        vschema=dict(type="raw", required=True),
    )
    path_options = ("database", "branch", "keyspace")
    must_exist = ("database", "branch", "keyspace")

    wanted = None  # the VSchema the task gives, as a mapping

    def validate(self):
        super().validate()
        self.wanted = document(self.params["vschema"])
        unknown = sorted(set(self.wanted) - set(KEYS))
        if unknown:
            self.ctx.warn("vschema has %s, which %s not a key of a keyspace's VSchema in Vitess (%s); it is sent as "
                          "given, and the platform judges it." % (", ".join(unknown), "is" if len(unknown) == 1
                                                                  else "are", ", ".join(KEYS)))

    def label(self):
        return "keyspace %r of branch %r of database %r" % (self.params["keyspace"], self.params["branch"],
                                                            self.params["database"])

    def url(self):
        return self.org_path("databases", self.params["database"], "branches", self.params["branch"], "keyspaces",
                             self.params["keyspace"], "vschema")

    def parsed(self, answer):
        """The VSchema of an answer ({raw: "<JSON text>"}); an empty one is {}."""
        raw = answer.get("raw") if isinstance(answer, dict) else None
        try:
            found = json.loads(raw) if isinstance(raw, str) and raw.strip() else raw or {}
        except ValueError:
            found = None
        if not isinstance(found, dict):
            raise self.client.wrong_answer("the answer's raw is not a VSchema in JSON")
        return found

    def read(self):
        return self.parsed(self.client.get(self.url()))

    def run(self):
        before = self.read()
        changed = pruned(before) != pruned(self.wanted)
        after = self.write() if changed and not self.ctx.check_mode else self.wanted if changed else before
        result = dict(changed=changed, vschema=after)
        if self.ctx.diff:
            result["diff"] = dict(before=before, after=self.wanted if changed else before)
        return result

    def write(self):
        """One PATCH of the whole VSchema; after a lost answer, read back: the VSchema it has is the answer, or the
        PATCH is sent again. A refusal is the platform's sentence."""
        body = dict(vschema=json.dumps(self.wanted, sort_keys=True))

        def read_back(error):  # pylint: disable=unused-argument
            found = self.read()
            return (dict(raw=json.dumps(found)), True) if pruned(found) == pruned(self.wanted) else None
        try:
            answer = write_and_settle(lambda: self.client.patch(self.url(), json=body), read_back=read_back)[0]
        except ApiError as error:
            if error.outcome_unknown or error.status not in (400, 422):
                raise
            raise ModuleFailure("The platform refused the VSchema of %s (HTTP %s): %s." % (
                self.label(), error.status, (error.message or error.code or "no reason given").rstrip(".")),
                status=error.status, error=error.as_dict())
        return self.parsed(answer) if isinstance(answer, dict) and "raw" in answer else self.wanted


def main():
    run_module(VSchema)


if __name__ == "__main__":
    main()
