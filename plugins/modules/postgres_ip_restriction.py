#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: postgres_ip_restriction
short_description: Manage the IP restrictions of a PostgreSQL database
version_added: 0.3.0
description:
  - Ensures that an IP restriction of a PostgreSQL database, named by the O(role) and O(schema) it applies to,
    admits exactly the networks in O(cidrs), with its O(description), changing what differs in one request.
  - Ensures that such a restriction does not exist.
  - Once a database has IP restrictions, the platform admits a login to it only from an address that a restriction
    of the login's role (or one for every role) lists. Every branch of the database is restricted.
  - O(cidrs) are compared as a set of networks (an address is a V(/32) network), so neither their order nor their
    spelling is a change.
  - The platform takes IPv4 networks only. An IPv6 or malformed network fails the task before anything is sent, and
    so does a range with host bits set (V(203.0.113.7/0) would mean V(0.0.0.0/0), every address), naming the network
    it would mean and the address alone (V(203.0.113.7/32)).
  - A change that takes networks out of the restriction warns, in check mode too, naming them; a client that logs in
    from one of them (this machine, perhaps) is refused once the change is applied.
  - A MySQL database has no IP restrictions; restrict where a password logs in from with the
    O(planetscale.cloud.password#module:cidrs) of M(planetscale.cloud.password).
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  database:
    description: The name of the PostgreSQL database.
    type: str
    required: true
  role:
    description:
      - The PostgreSQL role the restriction applies to. V("") (the default) applies it to every role.
      - With O(schema), it names the restriction in the database.
    type: str
    default: ""
  schema:
    description:
      - The schema the restriction applies to. V("") (the default) applies it to every schema.
      - With O(role), it names the restriction in the database.
    type: str
    default: ""
  cidrs:
    description:
      - The IPv4 networks (V(192.168.1.0/24)) or addresses (V(192.168.1.1)) the restriction admits, at least one.
      - Required to create a restriction.
    type: list
    elements: str
  description:
    description: What the restriction is for. V("") clears it.
    type: str
  state:
    description:
      - V(present) creates the restriction when the database has none for this O(role) and O(schema), and updates
        its O(cidrs) and O(description) where they differ.
      - V(absent) deletes it; a restriction that does not exist is not a change.
    type: str
    choices: [present, absent]
    default: present
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.resource
notes:
  - Two restrictions of the same role and schema, made outside this module, fail the task with their IDs; delete
    one of them first.
seealso:
  - module: planetscale.cloud.postgres_ip_restriction_info
  - module: planetscale.cloud.postgres_role
  - module: planetscale.cloud.password
"""

EXAMPLES = r"""
- name: Admit logins to every role of pgapp from the office and the VPN only
  planetscale.cloud.postgres_ip_restriction:
    organization: acme
    database: pgapp
    cidrs:
      - 203.0.113.0/24
      - 198.51.100.7
    description: office and VPN

- name: Let the reporting role in from the analytics network too
  planetscale.cloud.postgres_ip_restriction:
    organization: acme
    database: pgapp
    role: reporting
    cidrs: [192.0.2.0/28]

- name: Lift the restriction of the reporting role
  planetscale.cloud.postgres_ip_restriction:
    organization: acme
    database: pgapp
    role: reporting
    state: absent
"""

RETURN = r"""
ip_restriction:
  description:
    - The IP restriction (id, role, schema, cidrs, description, created_at, updated_at, actor). In check mode, when
      it would be created, the fields known before creating it.
  returned: O(state=present)
  type: dict
  sample: {id: c1d2e3, role: "", schema: "", cidrs: [203.0.113.0/24], description: office}
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError
from ansible_collections.planetscale.cloud.plugins.module_utils.databases import refuse_mysql_restrictions
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION
from ansible_collections.planetscale.cloud.plugins.module_utils.resource import Resource, capital, networks


def ipv4_networks(cidrs):
    """The networks of cidrs, sorted; ModuleFailure for an empty list, a malformed, an IPv6 one or host bits set."""
    found = networks(cidrs)
    ipv6 = sorted(str(network) for network in found if network.version != 4)
    if ipv6:
        raise ModuleFailure("cidrs: %s %s IPv6: the platform restricts PostgreSQL logins to IPv4 networks only." % (
            ", ".join(ipv6), "is" if len(ipv6) == 1 else "are"))
    networks(cidrs, strict=True)
    if not found:
        raise ModuleFailure("cidrs must list at least one IPv4 network or address; to lift the restriction, use "
                            "state: absent.")
    return [str(network) for network in sorted(found)]


class PostgresIpRestriction(Resource):
    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        database=dict(type="str", required=True),
        role=dict(type="str", default=""),
        schema=dict(type="str", default=""),
        cidrs=dict(type="list", elements="str"),
        description=dict(type="str"),
    )
    path_options = ("database",)
    must_exist = ("database",)
    kind = "ip_restriction"
    api_path = ("databases", "{database}", "cidrs")
    fields = ("cidrs", "description")
    required_to_create = ("cidrs",)

    def validate(self):
        super().validate()
        if self.params["cidrs"] is not None:
            ipv4_networks(self.params["cidrs"])
        for name in ("role", "schema"):
            if self.params[name] != self.params[name].strip():
                raise ModuleFailure("%s must not start or end with a space: %r." % (name, self.params[name]))

    def label(self):
        return "the IP restriction of %s and %s of database %r" % (
            "role %r" % self.params["role"] if self.params["role"] else "every role",
            "schema %r" % self.params["schema"] if self.params["schema"] else "every schema", self.params["database"])

    found = None  # the restriction the first read found

    def read(self):
        """The restriction of the role and schema, from the list; read again (after a lost answer) by the ID of the
        one found: one request."""
        if self.found is not None:
            return self.client.get(self.url(self.found["id"]), missing_ok=True)
        try:
            found = [entry for entry in self.client.paginate(self.url())
                     if (entry.get("role") or "") == self.params["role"]
                     and (entry.get("schema") or "") == self.params["schema"]]
        except ApiError as error:
            refuse_mysql_restrictions(self, error)
            raise
        if len(found) > 1:
            raise ModuleFailure("%s is not one restriction but %d (IDs %s): delete all but one of them first." % (
                capital(self.label()), len(found), ", ".join(str(entry.get("id")) for entry in found)))
        self.found = found[0] if found else None
        return self.found

    def present(self, resource):
        if resource is not None and self.params["cidrs"] is not None:
            self.caution(resource)
        return super().present(resource)

    def caution(self, resource):
        """Warn, in check mode too, naming the networks the change takes out: their logins are refused after it."""
        try:
            have = networks(resource.get("cidrs") or [])
        except ModuleFailure:  # a network the platform holds that is not one admits nobody
            return
        want = networks(self.params["cidrs"])
        dropped = sorted(str(network) for network in have if not any(
            network.version == kept.version and network.subnet_of(kept) for kept in want))
        if dropped:
            self.ctx.warn("This change takes %s out of %s: a login from there is refused once it is applied, this "
                          "machine's too if it connects from there. Keep in cidrs every network your clients connect "
                          "from." % (", ".join(dropped), self.label()))

    def managed(self, resource):
        return dict(cidrs=resource.get("cidrs") or [], description=resource.get("description") or "")

    def wanted(self, resource):
        fields = super().wanted(resource)
        if "cidrs" in fields:
            fields["cidrs"] = ipv4_networks(fields["cidrs"])
        return fields

    def same(self, name, have, want):
        if name == "cidrs":
            try:
                return networks(have) == networks(want)
            except ModuleFailure:  # a network the platform holds that is not one: differs, and is replaced
                return False
        return super().same(name, have, want)

    def create(self, values):
        body = dict(values, role=self.params["role"], schema=self.params["schema"])
        if not body.get("description"):
            body.pop("description", None)
        return self.client.post(self.url(), json=body)

    def predict(self, resource, changes):
        return dict(resource or dict(role=self.params["role"], schema=self.params["schema"], description=None),
                    **changes)

    def diff_view(self, fields):
        try:
            fields = dict(fields, cidrs=sorted(str(network) for network in networks(fields["cidrs"])))
        except (KeyError, ModuleFailure):
            pass
        return super().diff_view(fields)


def main():
    run_module(PostgresIpRestriction)


if __name__ == "__main__":
    main()
