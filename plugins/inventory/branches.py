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
  - The branches of ten databases at a time are read side by side (then the default roles of ten branches at a
    time, where O(connect_with) needs them), as the modules read the pages of a long list; one request for each
    page of each list, no more. When the API asks to wait (429 or 503 with C(Retry-After)), every read waits.
  - Each host gets C(ansible_host), the address O(connect_with) chooses (by default the address of the branch's
    engine; for a MySQL branch its C(mysql_address), else its C(mysql_edge_address); for a PostgreSQL branch the
    C(access_host_url) of its default role), and C(ansible_port) when that address names a port (C(host:port)).
    It also gets C(ansible_connection) (V(local) by default, see O(connection)), C(planetscale_database),
    C(planetscale_organization) and C(planetscale_branch), the branch as the API returns it.
  - "Hosts are grouped by database (C(database_<name>)), by role (C(production) or C(development)), by kind
    (C(kind_mysql), C(kind_postgresql)), by region (C(region_<slug>)) and by state (C(state_<state>)), each name
    after O(group_prefix). O(keyed_groups), O(groups) and O(compose) add more. In the name of every group, those
    of O(keyed_groups) and O(groups) too, every character other than a letter, a digit or C(_) becomes C(_)
    (C(region_us_east))."
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
  - The configuration file's name must end in C(branches.yml) or C(branches.yaml), for example
    C(planetscale.branches.yml) or C(production.planetscale.branches.yml). A name that ends in C(.planetscale.yml)
    or C(.planetscale.yaml), the only names version 0.2.0 accepted, is still accepted.
  - Every option below is checked before any request; a wrong value fails with a sentence that names it.
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
    description:
      - Only the branches of these databases. By default those of every database.
      - Unlike a C(database) filter of O(include_filters), this one also spares the request that lists the
        databases and the requests that list the branches of the others.
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
  connect_with:
    description:
      - Which address of a branch becomes its C(ansible_host) (and C(ansible_port) when the address names a port).
      - V(engine), the address of the branch's engine, C(mysql_address) (else C(mysql_edge_address)) for a MySQL
        branch and the C(access_host_url) of the default role for a PostgreSQL branch.
      - V(mysql_address) or V(mysql_edge_address), that field of the branch record (the platform gives a
        PostgreSQL branch these fields too).
      - V(postgresql_address) or V(postgresql_private_address), the C(access_host_url) or the
        C(private_access_host_url) of the branch's default role, for PostgreSQL branches only; a MySQL branch then
        gets no C(ansible_host).
      - The PostgreSQL addresses are read from the branch's default role (C(GET .../branches/<branch>/roles/default),
        one request for each PostgreSQL branch that the filters keep; the role's secret is never kept, and a read
        answers none). V(mysql_address) and V(mysql_edge_address) read no role.
      - A branch without the chosen address gets no C(ansible_host). O(compose) can set another one (an entry
        C(ansible_host) whose expression is C(planetscale_branch.mysql_edge_address), for example).
    type: str
    default: engine
    choices: [engine, mysql_address, mysql_edge_address, postgresql_address, postgresql_private_address]
    version_added: 0.3.0
  hostnames:
    description:
      - The host name of each branch, as a list of preferences, the way amazon.aws.aws_ec2 takes them, Jinja2
        expressions evaluated as those of O(compose) (without C({{ }})), over the variables of the host
        (C(planetscale_branch), C(planetscale_database), C(planetscale_organization), C(ansible_host)).
      - The first expression whose value is a host name (letters, digits, C(.), C(-) and C(_)) names the host;
        an expression whose value is undefined, empty or anything else is passed over (with O(strict=true), an
        expression that fails fails the inventory).
      - By default (an empty list), and for a branch for which no expression gives a host name,
        C(<database>.<branch>).
      - Branches that would get the same host name get their default names C(<database>.<branch>) instead, with a
        warning (a branch whose name is still that of another is not added, with a warning).
    type: list
    elements: str
    default: []
    version_added: 0.3.0
  include_filters:
    description:
      - Only the branches that match at least one of these filters; by default every branch.
      - A filter is a mapping of one or more of these keys, and a branch matches it when it matches every key.
        C(database), C(branch), C(region) (its slug) and C(state) take a name or a list of names, each a shell
        pattern (C(preview-*)). C(kind) takes V(mysql), V(postgresql) or a list of them; C(production) takes
        V(true) or V(false).
      - O(databases), O(production) and O(states) apply too.
    type: list
    elements: dict
    default: []
    version_added: 0.3.0
  exclude_filters:
    description:
      - Leave out the branches that match at least one of these filters, written as those of O(include_filters).
        A branch that matches both is left out.
    type: list
    elements: dict
    default: []
    version_added: 0.3.0
  group_prefix:
    description:
      - A text put in front of the name of every group the inventory makes by itself (C(database_<name>),
        C(production), C(development), C(kind_<kind>), C(region_<slug>), C(state_<state>)), for example
        V(planetscale_) for C(planetscale_production). The groups of O(keyed_groups) and O(groups) take their own
        names.
    type: str
    default: ""
    version_added: 0.3.0
"""

EXAMPLES = r"""
# planetscale.branches.yml: every branch of every database of the organization acme, the smallest file;
# credentials from the PLANETSCALE_* environment variables. A PostgreSQL branch's ansible_host is the address of
# its default role, a MySQL branch's its mysql_address.
plugin: planetscale.cloud.branches
organization: acme

---
# production.planetscale.branches.yml: the ready production branches of the database app, grouped by cluster
# size, read from the API at most every ten minutes.
plugin: planetscale.cloud.branches
organization: acme
databases: [app]
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

---
# postgresql.planetscale.branches.yml: the PostgreSQL branches, except the previews, named after their database
# alone for the production branches (pgapp), and <database>-<branch> for the others; the groups of the inventory
# get the prefix planetscale_ (planetscale_kind_postgresql, planetscale_region_us_east, ...).
plugin: planetscale.cloud.branches
organization: acme
include_filters:
  - kind: postgresql
exclude_filters:
  - branch: preview-*
hostnames:
  - planetscale_database if planetscale_branch.production else ''
  - planetscale_database ~ '-' ~ planetscale_branch.name
group_prefix: planetscale_

---
# edge.planetscale.branches.yml: the production branches of every MySQL database and the main branch of the
# database app, reached through the MySQL edge, named by their IDs.
plugin: planetscale.cloud.branches
organization: acme
include_filters:
  - kind: mysql
    production: true
  - database: app
    branch: main
connect_with: mysql_edge_address
hostnames:
  - planetscale_branch.id
"""

import fnmatch
import re
from collections import Counter

from jinja2 import Environment, TemplateSyntaxError

from ansible.errors import AnsibleParserError
from ansible.plugins.inventory import BaseInventoryPlugin, Cacheable, Constructable
from ansible.utils.unsafe_proxy import AnsibleUnsafe, wrap_var

from ansible_collections.planetscale.cloud.plugins.module_utils.base import (
    BRANCH_NAME, ModuleFailure, check_connection, is_name)
from ansible_collections.planetscale.cloud.plugins.module_utils.client import HAS_REQUESTS, ApiError, Client, path
from ansible_collections.planetscale.cloud.plugins.module_utils.databases import NEW_NAME as DATABASE_NAME
from ansible_collections.planetscale.cloud.plugins.module_utils.pagination import PARALLEL_PAGES, read_side_by_side
from ansible_collections.planetscale.cloud.plugins.module_utils.passwords import split_address

NOT_IN_GROUP_NAMES = re.compile(r"[^A-Za-z0-9_]")
HOST_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
# The options that the modules take as the option sets CREDENTIALS and CONNECTION, checked by the modules' code.
CONNECTION_OPTIONS = ("access_token", "service_token_id", "service_token", "api_url", "api_timeout", "api_retries",
                      "validate_certs", "ca_path")
# connect_with: the field of the branch record, or (for a PostgreSQL branch) of its default role
ROLE_ADDRESS = dict(engine="access_host_url", postgresql_address="access_host_url",
                    postgresql_private_address="private_access_host_url")
KINDS = ("mysql", "postgresql")
FILTER_KEYS = ("database", "branch", "kind", "production", "region", "state")
CACHE_FORMAT = 2  # {"format": 2, "databases": {database: [branch]}, "roles": {"db/branch": addresses} or None}


# Before ansible-core 2.19, a plain string in the inventory is a template unless wrap_var marks it unsafe. From 2.19
# on, only a string marked trusted (one from a playbook or a variables file) is ever templated, never one from the
# API, and wrap_var only copies the value (for 3,000 branches, half the time the hosts take to add).
MARKS_UNSAFE = isinstance(wrap_var(""), AnsibleUnsafe)


def unsafe(value):
    """A value from the API, never templated: wrapped by wrap_var where the ansible-core needs it."""
    return wrap_var(value) if MARKS_UNSAFE else value


def group_name(name):
    """A group name as the inventory gives every group: a character other than a letter, a digit or _ becomes _,
    and never a template (the name may come from the API)."""
    return unsafe(NOT_IN_GROUP_NAMES.sub("_", name))


def kind_of(branch):
    return branch.get("kind") if isinstance(branch.get("kind"), str) and branch.get("kind") else "mysql"


def branch_facts(database, branch):
    """What a filter compares: the fields of a branch, by filter key."""
    region = branch.get("region").get("slug") if isinstance(branch.get("region"), dict) else None
    return dict(database=database, branch=branch.get("name"), kind=kind_of(branch),
                production=bool(branch.get("production")), region=region, state=branch.get("state"))


def matches(facts, rule):
    """Whether a branch (its facts) matches every key of a filter (checked already by check_filters)."""
    for key, wanted in rule.items():
        if key == "production":
            if facts[key] != wanted:
                return False
        elif not isinstance(facts[key], str) or not any(
                fnmatch.fnmatchcase(facts[key], pattern) for pattern in ([wanted] if isinstance(wanted, str)
                                                                         else wanted)):
            return False
    return True


def check_filters(option, rules):
    """Refuse a filter this inventory cannot apply, in one sentence."""
    if not isinstance(rules, list):
        raise AnsibleParserError("%s must be a list of filters, not %r." % (option, rules))
    for rule in rules:
        if not isinstance(rule, dict) or not rule or set(rule) - set(FILTER_KEYS):
            raise AnsibleParserError("Each filter of %s must be a mapping of one or more of %s, not %r." % (
                option, ", ".join(FILTER_KEYS), rule))
        for key, value in rule.items():
            values = [value] if isinstance(value, str) else value
            if key == "production":
                good = isinstance(value, bool)
            elif key == "kind":
                good = isinstance(values, list) and values and all(kind in KINDS for kind in values)
            else:
                good = isinstance(values, list) and values and all(isinstance(item, str) and item for item in values)
            if not good:
                raise AnsibleParserError("The %s of a filter of %s must be %s, not %r." % (key, option, dict(
                    production="true or false", kind="mysql, postgresql or a list of them")
                    .get(key, "a name or a list of names (shell patterns such as preview-*)"), value))


def check_hostnames(hostnames):
    """Refuse a hostnames entry that is not a Jinja2 expression, in one sentence."""
    if not isinstance(hostnames, list):
        raise AnsibleParserError("hostnames must be a list of Jinja2 expressions, not %r." % (hostnames,))
    for expression in hostnames:
        error = None if isinstance(expression, str) and expression.strip() else "it is not an expression"
        if error is None:
            try:
                Environment().parse("{{ %s }}" % expression)
            except TemplateSyntaxError as syntax:
                error = syntax.message
        if error:
            raise AnsibleParserError("Each entry of hostnames must be a Jinja2 expression as those of compose, "
                                     "without {{ }} (for example planetscale_branch.id), not %r: %s." % (
                                         expression, error))


class InventoryModule(BaseInventoryPlugin, Constructable, Cacheable):
    NAME = "planetscale.cloud.branches"

    def verify_file(self, path):  # pylint: disable=redefined-outer-name
        return super().verify_file(path) and path.endswith(
            ("branches.yml", "branches.yaml", ".planetscale.yml", ".planetscale.yaml"))

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
            if records is not None and not self._usable(records):  # another format, or without the roles needed
                records, update_cache = None, True
        if records is None:
            records = self._read(authorization, params)
        if update_cache:
            self._cache[key] = records
        self._populate(records)

    def _check(self):
        """Every option that the API would refuse, or this inventory could not apply, said before any request
        (ansible-core checks the choices of connect_with and the types); answer the Authorization header and the
        connection settings."""
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
        check_hostnames(self.get_option("hostnames"))
        check_filters("include_filters", self.get_option("include_filters"))
        check_filters("exclude_filters", self.get_option("exclude_filters"))
        params = dict((name, self.get_option(name)) for name in CONNECTION_OPTIONS)
        try:  # the modules' own checks and sentences; the kind of credential not kept leaves params
            return check_connection(params, warn=self.display.warning), params
        except ModuleFailure as failure:
            raise AnsibleParserError(failure.msg) from None

    @staticmethod
    def _sanitize_group_name(name):
        """The names of the groups of keyed_groups and groups, as those of the inventory's own groups."""
        return group_name(name) if name else name

    def _usable(self, records):
        """Whether cached records are of this format and hold the roles this configuration needs."""
        return (isinstance(records, dict) and records.get("format") == CACHE_FORMAT
                and (records.get("roles") is not None or self.get_option("connect_with") not in ROLE_ADDRESS))

    def _read(self, authorization, params):
        """The branches to list, as {database: [branch, ...]}, every page of each list, as the API answers them,
        and the addresses of the default roles of the PostgreSQL branches kept, when connect_with needs them."""
        secrets = [params.get(name) for name in ("access_token", "service_token_id", "service_token")]
        client = Client(params["api_url"], authorization=authorization, timeout=params["api_timeout"],
                        retries=params["api_retries"], validate_certs=params["validate_certs"],
                        ca_path=params["ca_path"], secrets=[s for s in secrets if s])
        organization = path("organizations", self.get_option("organization"))
        try:
            names = self.get_option("databases") or [
                database["name"] for database in client.paginate(organization + path("databases"))
                if self._named(database, DATABASE_NAME, "database", "")]
            databases = dict(read_side_by_side(  # PARALLEL_PAGES databases' branches at a time, as pages are read
                lambda name: list(client.paginate(organization + path("databases", name, "branches"))), names,
                PARALLEL_PAGES))
        except ApiError as error:
            raise AnsibleParserError("The planetscale.cloud.branches inventory could not read the branches of "
                                     "organization %r: %s" % (self.get_option("organization"), error)) from None
        try:
            roles = None
            if self.get_option("connect_with") in ROLE_ADDRESS:
                postgresql = [(database, branch["name"]) for database, branch in self._kept(databases, quiet=True)
                              if kind_of(branch) == "postgresql"]
                roles = dict(("%s/%s" % pair, role) for pair, role in read_side_by_side(
                    lambda pair: self._role(client, organization, *pair), postgresql, PARALLEL_PAGES))
            return dict(format=CACHE_FORMAT, databases=databases, roles=roles)
        finally:
            client.close()

    def _role(self, client, organization, database, branch):
        """The addresses of a PostgreSQL branch's default role (never its secret); None when the branch is gone."""
        try:
            role = client.get(organization + path("databases", database, "branches", branch, "roles", "default"),
                              missing_ok=True)
        except ApiError as error:
            raise AnsibleParserError(
                "The planetscale.cloud.branches inventory could not read the default role of branch %r of database "
                "%r, where the address of a PostgreSQL branch is (connect_with: mysql_address reads no role): %s" % (
                    branch, database, error)) from None
        return dict((key, role.get(key)) for key in ("access_host_url", "private_access_host_url")) if isinstance(
            role, dict) else None

    def _named(self, record, rule, kind, where, quiet=False):
        """Whether an API record's name is a name the platform gives (so a safe part of a host name); else warn with
        its id and skip it."""
        if isinstance(record.get("name"), str) and rule.fullmatch(record["name"]):
            return True
        if not quiet:
            self.display.warning("The planetscale.cloud.branches inventory skipped %s %r%s: its name is not a %s "
                                 "name the platform gives (lower-case letters, digits, '-' and '_')." % (
                                     kind, record.get("id"), where, kind))
        return False

    def _kept(self, databases, quiet=False):
        """(database, branch) of every branch that the names, production, states and the filters keep."""
        production, states = self.get_option("production"), self.get_option("states")
        include, exclude = self.get_option("include_filters"), self.get_option("exclude_filters")
        for database, branches in sorted(databases.items()):
            if not DATABASE_NAME.fullmatch(database):  # a cache written before names were checked
                if not quiet:
                    self.display.warning("The planetscale.cloud.branches inventory skipped the branches of database "
                                         "%r: not a database name the platform gives." % database)
                continue
            for branch in branches:
                if not isinstance(branch, dict) or not self._named(branch, BRANCH_NAME, "branch",
                                                                   " of database %r" % database, quiet):
                    continue
                if production is not None and bool(branch.get("production")) != production:
                    continue
                if states and branch.get("state") not in states:
                    continue
                facts = branch_facts(database, branch)
                if include and not any(matches(facts, rule) for rule in include):
                    continue
                if any(matches(facts, rule) for rule in exclude):
                    continue
                yield database, branch

    def _populate(self, records):
        strict = self.get_option("strict")
        roles = records.get("roles") or {}
        kept = list(self._kept(records["databases"]))
        named = [self._host_name(database, branch, roles.get("%s/%s" % (database, branch["name"])), strict)
                 for database, branch in kept]
        counts = Counter(pair[0] for pair in named)
        added = set()
        for (database, branch), (name, variables) in zip(kept, named):
            default = "%s.%s" % (database, branch["name"])
            if name != default and counts[name] > 1:
                self.display.warning("The planetscale.cloud.branches inventory named branch %r of database %r %r, "
                                     "its default name: hostnames gives %r to more than one branch." % (
                                         branch["name"], database, default, name))
                name = unsafe(default)
            if name in added:
                self.display.warning("The planetscale.cloud.branches inventory skipped branch %r of database %r: "
                                     "its host name %r is that of another branch." % (branch["name"], database, name))
                continue
            added.add(name)
            self._add(database, name, variables, strict)

    def _address(self, branch, role):
        """The address connect_with chooses for a branch, or None."""
        choice = self.get_option("connect_with")
        if choice in ("mysql_address", "mysql_edge_address"):
            address = branch.get(choice)
        elif kind_of(branch) == "postgresql":
            address = role.get(ROLE_ADDRESS[choice]) if isinstance(role, dict) else None
        else:
            address = (branch.get("mysql_address") or branch.get("mysql_edge_address")) if choice == "engine" else None
        return unsafe(address) if isinstance(address, str) and address else None

    def _host_name(self, database, branch, role, strict):
        """(host name, variables) of a branch: the variables of the host, and the first name hostnames gives that
        is a host name, else <database>.<branch>. Every value from the API is marked unsafe, so that no ansible-core
        templates it: on ansible-core before 2.19 a plain string in the inventory is a template, and any member of
        the organization can set some of them (a display name)."""
        branch = unsafe(branch)
        host, port = split_address(self._address(branch, role), None)
        variables = dict(ansible_host=unsafe(host), ansible_port=port,
                         ansible_connection=self.get_option("connection"),
                         planetscale_organization=self.get_option("organization"),
                         planetscale_database=unsafe(database), planetscale_branch=branch)
        variables = dict((name, value) for name, value in variables.items() if value is not None)
        for expression in self.get_option("hostnames"):
            try:
                name = self._compose(expression, variables)
            except Exception as error:  # pylint: disable=broad-except
                if strict:
                    raise AnsibleParserError("hostnames could not name branch %r of database %r with %r: %s" % (
                        branch["name"], database, expression, error)) from None
                continue
            if isinstance(name, (str, int)) and not isinstance(name, bool) and HOST_NAME.fullmatch(str(name)):
                return unsafe(str(name)), variables  # an ID of digits alone is an int on ansible-core 2.17
        return unsafe("%s.%s" % (database, branch["name"])), variables

    def _add(self, database, name, variables, strict):
        """Add a branch as a host, with its variables, in its groups."""
        host = self.inventory.add_host(name)
        for variable, value in variables.items():
            self.inventory.set_variable(host, variable, value)
        branch, prefix = variables["planetscale_branch"], self.get_option("group_prefix")
        facts = branch_facts(database, branch)
        groups = ["database_" + database, "production" if facts["production"] else "development",
                  "kind_" + facts["kind"]]
        groups += ["region_" + facts["region"]] if isinstance(facts["region"], str) and facts["region"] else []
        groups += ["state_" + facts["state"]] if isinstance(facts["state"], str) and facts["state"] else []
        for group in groups:
            self.inventory.add_child(self.inventory.add_group(group_name(prefix + group)), host)
        self._set_composite_vars(self.get_option("compose"), variables, host, strict=strict)
        self._add_host_to_composed_groups(self.get_option("groups"), variables, host, strict=strict)
        self._add_host_to_keyed_groups(self.get_option("keyed_groups"), variables, host, strict=strict)
