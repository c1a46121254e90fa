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
    (C(kind_mysql), C(kind_postgresql)), by region (C(region_<slug>)) and by state (C(state_<state>)); every
    character other than a letter, a digit or C(_) becomes C(_) (C(region_us_east)). O(keyed_groups), O(groups)
    and O(compose) add more."
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
      - An OAuth access token. When it is set, O(service_token_id) and O(service_token) are not used.
    type: str
    env:
      - name: PLANETSCALE_ACCESS_TOKEN
  service_token_id:
    description: The ID of a service token, used together with O(service_token).
    type: str
    env:
      - name: PLANETSCALE_SERVICE_TOKEN_ID
  service_token:
    description: The secret of the service token named by O(service_token_id).
    type: str
    env:
      - name: PLANETSCALE_SERVICE_TOKEN
  api_url:
    description: The root of the resource API, including its version segment.
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
    description: A file of PEM certificates of the authorities to trust instead of the system's bundle.
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

from ansible_collections.planetscale.cloud.plugins.module_utils.base import is_name
from ansible_collections.planetscale.cloud.plugins.module_utils.client import HAS_REQUESTS, ApiError, Client, path

NOT_IN_GROUP_NAMES = re.compile(r"[^A-Za-z0-9_]")


class InventoryModule(BaseInventoryPlugin, Constructable, Cacheable):
    NAME = "planetscale.cloud.branches"

    def verify_file(self, path):  # pylint: disable=redefined-outer-name
        return super().verify_file(path) and path.endswith((".planetscale.yml", ".planetscale.yaml"))

    def parse(self, inventory, loader, path, cache=True):  # pylint: disable=redefined-outer-name
        super().parse(inventory, loader, path, cache)
        self._read_config_data(path)
        self._check()
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
            records = self._read()
        if update_cache:
            self._cache[key] = records
        self._populate(records)

    def _check(self):
        """Every option that the API would refuse, said before any request."""
        if not HAS_REQUESTS:
            raise AnsibleParserError("The planetscale.cloud.branches inventory needs the Python library requests "
                                     "on the controller: pip install requests.")
        organization = self.get_option("organization")
        if not organization or not is_name(organization):
            raise AnsibleParserError("Set organization (or PLANETSCALE_ORG) to the organization whose branches the "
                                     "planetscale.cloud.branches inventory lists%s." % (
                                         ", not %r" % organization if organization else ""))
        bad = [name for name in self.get_option("databases") or [] if not isinstance(name, str) or not is_name(name)]
        if bad:
            raise AnsibleParserError("databases must name databases, not %s." % ", ".join(repr(b) for b in bad))
        if not 1 <= self.get_option("api_timeout") <= 86400:
            raise AnsibleParserError("api_timeout must be from 1 to 86400 seconds, not %s." %
                                     self.get_option("api_timeout"))
        if self.get_option("api_retries") < 0:
            raise AnsibleParserError("api_retries must be 0 or more, not %s." % self.get_option("api_retries"))
        if not re.match(r"^https?://[^/?#]+", self.get_option("api_url") or ""):
            raise AnsibleParserError("api_url must be an http or https URL such as https://api.planetscale.com/v1, "
                                     "not %r." % self.get_option("api_url"))
        self._authorization()

    def _authorization(self):
        """The Authorization header: the access token when one is set (as the modules do), else the service token."""
        token, token_id, secret = [self.get_option(name) for name in ("access_token", "service_token_id",
                                                                      "service_token")]
        if token:
            return "Bearer %s" % token
        if token_id and secret:
            return "%s:%s" % (token_id, secret)
        raise AnsibleParserError("No credentials were given to the planetscale.cloud.branches inventory: set "
                                 "service_token_id and service_token (or PLANETSCALE_SERVICE_TOKEN_ID and "
                                 "PLANETSCALE_SERVICE_TOKEN), or access_token (PLANETSCALE_ACCESS_TOKEN).")

    def _read(self):
        """The branches to list, as {database: [branch, ...]}, every page of each list."""
        secrets = [self.get_option(name) for name in ("access_token", "service_token_id", "service_token")]
        client = Client(self.get_option("api_url"), authorization=self._authorization(),
                        timeout=self.get_option("api_timeout"), retries=self.get_option("api_retries"),
                        validate_certs=self.get_option("validate_certs"), ca_path=self.get_option("ca_path"),
                        secrets=[s for s in secrets if s])
        organization = path("organizations", self.get_option("organization"))
        try:
            names = self.get_option("databases") or [
                database["name"] for database in client.paginate(organization + path("databases"))]
            return dict((name, list(client.paginate(organization + path("databases", name, "branches"))))
                        for name in names)
        except ApiError as error:
            raise AnsibleParserError("The planetscale.cloud.branches inventory could not read the branches of "
                                     "organization %r: %s" % (self.get_option("organization"), error)) from None
        finally:
            client.close()

    def _populate(self, records):
        production, states = self.get_option("production"), self.get_option("states")
        strict = self.get_option("strict")
        for database, branches in sorted(records.items()):
            for branch in branches:
                if production is not None and bool(branch.get("production")) != production:
                    continue
                if states and branch.get("state") not in states:
                    continue
                self._add(database, branch, strict)

    def _add(self, database, branch, strict):
        host = self.inventory.add_host("%s.%s" % (database, branch.get("name")))
        variables = dict(
            ansible_host=branch.get("mysql_address") or branch.get("mysql_edge_address"),
            ansible_connection=self.get_option("connection"),
            planetscale_organization=self.get_option("organization"),
            planetscale_database=database,
            planetscale_branch=branch,
        )
        for name, value in variables.items():
            if value is not None:
                self.inventory.set_variable(host, name, value)
        region = (branch.get("region") or {}).get("slug") if isinstance(branch.get("region"), dict) else None
        groups = ["database_" + database, "production" if branch.get("production") else "development",
                  "kind_%s" % (branch.get("kind") or "mysql")]
        groups += ["region_" + region] if region else []
        groups += ["state_" + branch["state"]] if branch.get("state") else []
        for group in groups:
            self.inventory.add_child(self.inventory.add_group(NOT_IN_GROUP_NAMES.sub("_", group)), host)
        self._set_composite_vars(self.get_option("compose"), variables, host, strict=strict)
        self._add_host_to_composed_groups(self.get_option("groups"), variables, host, strict=strict)
        self._add_host_to_keyed_groups(self.get_option("keyed_groups"), variables, host, strict=strict)
