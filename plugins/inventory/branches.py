# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: branches
short_description: Every branch of the organization's databases as a host
version_added: 0.2.0
description:
  - Reads every database of an organization and every branch of each (every page of both), and adds each branch
    as a host named C(<database>.<branch>). Database and branch names hold only lower-case letters, digits, C(-)
    and C(_), so the name is unambiguous and safe as an inventory host name.
  - Each host gets C(ansible_host), the branch's MySQL address (C(mysql_address), else C(mysql_edge_address)),
    C(ansible_connection) (V(local) by default, see O(connection)), C(planetscale_database),
    C(planetscale_organization) and C(planetscale_branch), the branch as the API returns it.
  - "Hosts are grouped by database (C(database_<name>)), by role (C(production) or C(development)), by kind
    (C(kind_mysql), C(kind_postgresql)), by region (C(region_<slug>)) and by state (C(state_<state>)).
    O(keyed_groups), O(groups) and O(compose) add more. In the name of every group, those of O(keyed_groups) and
    O(groups) too, every character other than a letter, a digit or C(_) becomes C(_) (C(region_us_east))."
  - Every value that comes from the API (C(planetscale_branch) and all it holds, C(ansible_host),
    C(planetscale_database), host and group names) is marked unsafe, so that no ansible-core ever templates it,
    neither when O(compose), O(keyed_groups) and O(groups) are evaluated nor in a play that reads it, also when the
    records come from the cache. A text such as C({{ lookup('pipe', 'id') }}) in a display name stays that text.
    A value composed from such a value is unsafe too.
  - A database or branch whose name is not a name the platform gives (lower-case letters, digits, C(-) and C(_),
    starting with a letter or a digit) is not added; a warning names its ID.
  - The credentials and connection options are checked by the code that checks those of the modules, before any
    request, with the same sentences and the same warnings (plain http to another machine, O(validate_certs=false)).
  - Read-only. It never creates a password or any other credential, and never writes.
  - The configuration file must end in C(.planetscale.yml) or C(.planetscale.yaml).
author:
  - planetscale.cloud contributors (@planetscale-ansible)
requirements:
  - requests
extends_documentation_fragment:
  - constructed
  - inventory_cache
seealso:
  - module: planetscale.cloud.branch_info
  - module: planetscale.cloud.database_info
options:
  plugin:
    description: The name of this plugin; V(planetscale.cloud.branches) makes the file this plugin's.
    type: str
    required: true
    choices: [planetscale.cloud.branches]
  organization:
    description: The organization whose databases are read.
    type: str
    env:
      - name: PLANETSCALE_ORG
  access_token:
    description:
      - An OAuth access token.
      - Give one kind of credential, this or O(service_token_id) with O(service_token), as the modules take them.
        One kind set in the configuration file wins over the other kind from the environment; both kinds in the
        file, or both only in the environment, are refused before any request.
    type: str
    env:
      - name: PLANETSCALE_ACCESS_TOKEN
  service_token_id:
    description: The ID of a service token, used together with O(service_token) (see O(access_token)).
    type: str
    env:
      - name: PLANETSCALE_SERVICE_TOKEN_ID
  service_token:
    description: The secret of the service token named by O(service_token_id).
    type: str
    env:
      - name: PLANETSCALE_SERVICE_TOKEN
  api_url:
    description:
      - The root of the resource API, including its version segment; an http or https URL without a query.
      - It must not carry a user name or password (C(user:password@host)); such a URL is refused before any request.
    type: str
    default: https://api.planetscale.com/v1
    env:
      - name: PLANETSCALE_API_URL
  api_timeout:
    description: Seconds to wait for each answer of the API, from 1 to 86400.
    type: int
    default: 30
    env:
      - name: PLANETSCALE_API_TIMEOUT
  api_retries:
    description: How many times (0 or more) a request that failed transiently is retried, with backoff.
    type: int
    default: 5
    env:
      - name: PLANETSCALE_API_RETRIES
  validate_certs:
    description: Whether to verify the TLS certificate of the server.
    type: bool
    default: true
  ca_path:
    description:
      - A file of PEM certificates of the authorities to trust instead of the system's bundle; it must exist.
    type: path
  databases:
    description: Only the branches of these databases. By default those of every database.
    type: list
    elements: str
    default: []
  production:
    description: V(true) adds only production branches, V(false) only development branches; by default both.
    type: bool
  states:
    description: Only the branches in these states (for example V(ready)). By default every state.
    type: list
    elements: str
    default: []
  connection:
    description: The C(ansible_connection) of every host; the branches are reached from the controller.
    type: str
    default: local
"""

EXAMPLES = r"""
# production.planetscale.yml: the ready production branches of two databases, grouped by cluster size,
# read from the API at most every ten minutes; credentials from the PLANETSCALE_* environment variables.
# The smallest file holds the first two lines alone: every branch of every database.
plugin: planetscale.cloud.branches
organization: acme
databases: [shop, billing]
production: true
states: [ready]
keyed_groups:
  - key: planetscale_branch.cluster_name
    prefix: size
compose:
  branch_name: planetscale_branch.name
cache: true
cache_plugin: ansible.builtin.jsonfile
cache_connection: ~/.cache/planetscale-inventory
cache_timeout: 600
"""

import re

from ansible.errors import AnsibleParserError
from ansible.plugins.inventory import BaseInventoryPlugin, Cacheable, Constructable
from ansible.utils.unsafe_proxy import wrap_var

from ansible_collections.planetscale.cloud.plugins.module_utils.base import (
    BRANCH_NAME, ModuleFailure, check_connection, is_name)
from ansible_collections.planetscale.cloud.plugins.module_utils.client import HAS_REQUESTS, ApiError, Client, path
from ansible_collections.planetscale.cloud.plugins.module_utils.databases import NEW_NAME as DATABASE_NAME

NOT_IN_GROUP_NAMES = re.compile(r"[^A-Za-z0-9_]")
# The options that the modules take as the option sets CREDENTIALS and CONNECTION, checked by the modules' code.
CONNECTION_OPTIONS = ("access_token", "service_token_id", "service_token", "api_url", "api_timeout", "api_retries",
                      "validate_certs", "ca_path")


def group_name(name):
    """A group name as the inventory gives every group: a character other than a letter, a digit or _ becomes _,
    and never a template (the name may come from the API)."""
    return wrap_var(NOT_IN_GROUP_NAMES.sub("_", name))


class InventoryModule(BaseInventoryPlugin, Constructable, Cacheable):
    NAME = "planetscale.cloud.branches"

    def verify_file(self, path):  # pylint: disable=redefined-outer-name
        return super().verify_file(path) and path.endswith((".planetscale.yml", ".planetscale.yaml"))

    def parse(self, inventory, loader, path, cache=True):  # pylint: disable=redefined-outer-name
        super().parse(inventory, loader, path, cache)
        self._read_config_data(path)
        authorization, params = self._check()
        key = self.get_cache_key(path)
        use_cache = self.get_option("cache") and cache
        update_cache = self.get_option("cache") and not cache
        records = None
        if use_cache:
            try:
                records = self._cache[key]
            except KeyError:
                update_cache = True
        if records is None:
            records = self._read(authorization, params)
        if update_cache:
            self._cache[key] = records
        self._populate(records)

    def _check(self):
        """Every option that the API would refuse, said before any request; answer the Authorization header and
        the connection settings."""
        if not HAS_REQUESTS:
            raise AnsibleParserError("The planetscale.cloud.branches inventory needs the Python library requests "
                                     "on the controller: pip install requests.")
        organization = self.get_option("organization")
        if not organization or not is_name(organization):
            raise AnsibleParserError("Set organization (or PLANETSCALE_ORG) to the organization whose branches the "
                                     "planetscale.cloud.branches inventory lists%s." % (
                                         ", not %r" % organization if organization else ""))
        bad = [name for name in self.get_option("databases") or []
               if not isinstance(name, str) or not DATABASE_NAME.fullmatch(name)]
        if bad:
            raise AnsibleParserError("databases must name databases, not %s." % ", ".join(repr(b) for b in bad))
        params = dict((name, self.get_option(name)) for name in CONNECTION_OPTIONS)
        try:  # the modules' own checks and sentences; the kind of credential not kept leaves params
            return check_connection(params, warn=self.display.warning), params
        except ModuleFailure as failure:
            raise AnsibleParserError(failure.msg) from None

    @staticmethod
    def _sanitize_group_name(name):
        """The names of the groups of keyed_groups and groups, as those of the inventory's own groups."""
        return group_name(name) if name else name

    def _read(self, authorization, params):
        """The branches to list, as {database: [branch, ...]}, every page of each list, as the API answers them."""
        secrets = [params.get(name) for name in ("access_token", "service_token_id", "service_token")]
        client = Client(params["api_url"], authorization=authorization, timeout=params["api_timeout"],
                        retries=params["api_retries"], validate_certs=params["validate_certs"],
                        ca_path=params["ca_path"], secrets=[s for s in secrets if s])
        organization = path("organizations", self.get_option("organization"))
        try:
            names = self.get_option("databases") or [
                database["name"] for database in client.paginate(organization + path("databases"))
                if self._named(database, DATABASE_NAME, "database", "")]
            return dict((name, list(client.paginate(organization + path("databases", name, "branches"))))
                        for name in names)
        except ApiError as error:
            raise AnsibleParserError("The planetscale.cloud.branches inventory could not read the branches of "
                                     "organization %r: %s" % (self.get_option("organization"), error)) from None
        finally:
            client.close()

    def _named(self, record, rule, kind, where):
        """Whether an API record's name is a name the platform gives (so a safe part of a host name); else warn with
        its id and skip it."""
        if isinstance(record.get("name"), str) and rule.fullmatch(record["name"]):
            return True
        self.display.warning("The planetscale.cloud.branches inventory skipped %s %r%s: its name is not a %s name "
                             "the platform gives (lower-case letters, digits, '-' and '_')." % (
                                 kind, record.get("id"), where, kind))
        return False

    def _populate(self, records):
        production, states = self.get_option("production"), self.get_option("states")
        strict = self.get_option("strict")
        for database, branches in sorted(records.items()):
            if not DATABASE_NAME.fullmatch(database):  # a cache written before names were checked
                self.display.warning("The planetscale.cloud.branches inventory skipped the branches of database %r: "
                                     "not a database name the platform gives." % database)
                continue
            for branch in branches:
                if not isinstance(branch, dict) or not self._named(branch, BRANCH_NAME, "branch",
                                                                   " of database %r" % database):
                    continue
                if production is not None and bool(branch.get("production")) != production:
                    continue
                if states and branch.get("state") not in states:
                    continue
                self._add(database, wrap_var(branch), strict)

    def _add(self, database, branch, strict):
        """Add a branch as a host. Every value from the API (the branch is wrapped already) is marked unsafe, so
        that no ansible-core templates it: on ansible-core before 2.19 a plain string in the inventory is a template,
        and any member of the organization can set some of them (a display name)."""
        host = self.inventory.add_host(wrap_var("%s.%s" % (database, branch["name"])))
        address = branch.get("mysql_address") or branch.get("mysql_edge_address")
        variables = dict(
            ansible_host=address if isinstance(address, str) else None,
            ansible_connection=self.get_option("connection"),
            planetscale_organization=self.get_option("organization"),
            planetscale_database=wrap_var(database),
            planetscale_branch=branch,
        )
        for name, value in variables.items():
            if value is not None:
                self.inventory.set_variable(host, name, value)
        region = branch.get("region").get("slug") if isinstance(branch.get("region"), dict) else None
        kind = branch.get("kind") if isinstance(branch.get("kind"), str) and branch.get("kind") else "mysql"
        groups = ["database_" + database, "production" if branch.get("production") else "development", "kind_" + kind]
        groups += ["region_" + region] if isinstance(region, str) and region else []
        groups += ["state_" + branch["state"]] if isinstance(branch.get("state"), str) and branch["state"] else []
        for group in groups:
            self.inventory.add_child(self.inventory.add_group(group_name(group)), host)
        self._set_composite_vars(self.get_option("compose"), variables, host, strict=strict)
        self._add_host_to_composed_groups(self.get_option("groups"), variables, host, strict=strict)
        self._add_host_to_keyed_groups(self.get_option("keyed_groups"), variables, host, strict=strict)
