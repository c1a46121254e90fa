# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The inventory plugin planetscale.cloud.branches, run by the real ansible-inventory (and ansible-playbook) of the
ansible-core under test, against the scripted server: values from the API are never templated (on ansible-core
2.17 a plain string in the inventory is a template), names from the API are checked, and the connection settings
are checked by the modules' own code."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections import Counter

import pytest

from ansible.module_utils.common.arg_spec import ModuleArgumentSpecValidator

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure, TaskContext
from ansible_collections.planetscale.cloud.plugins.module_utils.pagination import PARALLEL_PAGES
from ansible_collections.planetscale.cloud.plugins.modules.database_info import DatabaseInfo

# the directory that holds ansible_collections/planetscale/cloud, where ansible-test runs the tests
COLLECTIONS = os.path.abspath(os.path.join(os.path.dirname(__file__), *[os.pardir] * 7))
BIN = os.path.dirname(sys.executable)  # the ansible-core under test
CREDENTIALS = dict(service_token_id="svc-id", service_token="svc-secret")


def pipe(target):
    """A template that leaves a file behind whenever something renders it."""
    return "{{ lookup('pipe', 'touch %s') }}" % target


def page(items):
    return (200, dict(type="list", current_page=1, next_page=None, data=items))


def branch(name, touch, **fields):
    record = dict(id="id-" + name, type="Branch", name=name, production=False, state="ready", kind="mysql",
                  mysql_address=pipe(touch), cluster_name="PS_10",
                  actor=dict(id="actor-1", display_name=pipe(touch)),
                  region=dict(slug="us-east", display_name=pipe(touch)))
    record.update(fields)
    return record


def answer(branches, databases=None):
    """The scripted server's answers, by path: the databases (by default those of branches), then each one's
    branches."""
    databases = databases or [dict(id="db-" + name, name=name) for name in sorted(branches)]

    def route(request):
        if request["path"] == "/organizations/acme/databases":
            return page(databases)
        return page(branches.get(request["path"].split("/")[4], []))
    return route


def config(tmp_path, server, name="inv.planetscale.yml", **options):
    """Write the inventory's configuration; an option given as None is left out."""
    values = dict(plugin="planetscale.cloud.branches", organization="acme", api_url=server.url, api_retries=0,
                  **CREDENTIALS)
    values.update(options)
    path = tmp_path / name
    path.write_text(json.dumps(dict((key, value) for key, value in values.items() if value is not None)))
    return path


def ansible(tmp_path, command, *args, env=None):
    """Run an ansible-core command of the version under test from tmp_path, with none of the caller's ANSIBLE_* and
    PLANETSCALE_* variables, the collection under test and these variables."""
    clean = dict((key, value) for key, value in os.environ.items()
                 if not key.startswith(("ANSIBLE_", "PLANETSCALE_")) and key != "PYTHONPATH")
    clean.update(ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_HOME=str(tmp_path / "home"), ANSIBLE_NOCOLOR="true",
                 ANSIBLE_INVENTORY_UNPARSED_FAILED="true", ANSIBLE_DEPRECATION_WARNINGS="false", **(env or {}))
    return subprocess.run([os.path.join(BIN, command)] + [str(arg) for arg in args], env=clean, cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=300, check=False)


def inventory(tmp_path, path, *args, env=None):
    done = ansible(tmp_path, "ansible-inventory", "-i", path, *args, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def plain(value):
    """ansible-inventory's JSON without the markers of untrusted strings ({"__ansible_unsafe": ...} on 2.19+)."""
    if isinstance(value, dict):
        if list(value) == ["__ansible_unsafe"]:
            return value["__ansible_unsafe"]
        return dict((key, plain(item)) for key, item in value.items())
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value


def says(done, message):
    """Whether a command's output holds the message (ansible-core wraps its warnings and errors anywhere)."""
    return "".join(message.split()) in "".join((done.stdout + done.stderr).split())


COMPOSED = dict(
    compose=dict(who="planetscale_branch.actor.display_name", where="planetscale_branch.region.display_name",
                 said="'by ' ~ planetscale_branch.actor.display_name"),
    keyed_groups=[dict(key="planetscale_branch.actor.display_name", prefix="by")],
    groups=dict(named="planetscale_branch.actor.display_name is string"))


def assert_literal(listed, touched):
    """The --list answer holds the API's strings as they came, composed and in group names."""
    text = pipe(str(touched))
    hostvars = listed["_meta"]["hostvars"]["app.main"]
    assert hostvars["planetscale_branch"]["actor"]["display_name"] == text
    assert hostvars["planetscale_branch"]["region"]["display_name"] == text
    assert (hostvars["who"], hostvars["where"], hostvars["said"]) == (text, text, "by " + text)
    assert hostvars["ansible_host"] == text
    assert listed["by_" + re.sub("[^A-Za-z0-9_]", "_", text)]["hosts"] == ["app.main"]
    assert listed["named"]["hosts"] == ["app.main"] and listed["region_us_east"]["hosts"] == ["app.main"]


def test_values_from_the_api_are_never_templated(server, tmp_path):
    touched = tmp_path / "touched"
    server.default = answer(dict(app=[branch("main", str(touched))]))
    path = config(tmp_path, server, **COMPOSED)
    listed = inventory(tmp_path, path, "--list")
    assert not touched.exists()
    assert_literal(plain(json.loads(listed.stdout)), touched)
    graph = inventory(tmp_path, path, "--graph", "--vars")
    assert not touched.exists()
    assert "--app.main" in graph.stdout

    play = tmp_path / "play.yml"
    play.write_text(json.dumps([dict(hosts="all", gather_facts=False, tasks=[
        dict(debug=dict(msg="{{ planetscale_branch }} {{ who }} {{ said }} {{ group_names }} {{ ansible_host }}")),
        dict(debug=dict(var="hostvars[inventory_hostname]"))])]))
    played = ansible(tmp_path, "ansible-playbook", "-i", path, play)
    assert played.returncode == 0, played.stdout + played.stderr
    assert not touched.exists()
    assert "lookup('pipe', 'touch %s')" % touched in played.stdout


def test_a_second_run_from_the_cache_templates_nothing_either(server, tmp_path):
    touched = tmp_path / "touched"
    server.default = answer(dict(app=[branch("main", str(touched))]))
    cache = dict(cache=True, cache_plugin="ansible.builtin.jsonfile", cache_connection=str(tmp_path / "cache"),
                 cache_timeout=600)
    inventory(tmp_path, config(tmp_path, server, **cache), "--list")  # fills the cache with the API's records
    assert list((tmp_path / "cache").iterdir())
    touched.unlink(missing_ok=True)  # this test is of the run from the cache
    sent = len(server.requests)
    listed = inventory(tmp_path, config(tmp_path, server, **dict(cache, **COMPOSED)), "--list")
    assert len(server.requests) == sent  # from the cache
    assert not touched.exists()
    assert_literal(plain(json.loads(listed.stdout)), touched)


def test_a_record_whose_name_is_not_a_name_is_skipped_with_a_warning(server, tmp_path):
    touched = tmp_path / "touched"
    bad = "main{{ lookup('pipe', 'touch touched') }}"
    server.default = answer(dict(app=[branch("main", str(touched)), dict(branch("x", str(touched)), id="id-bad", name=bad),
                                      branch("Upper", str(touched), id="id-upper")]),
                            databases=[dict(id="db-app", name="app"), dict(id="db-bad", name="app.evil")])
    done = inventory(tmp_path, config(tmp_path, server, **COMPOSED), "--list")
    assert not touched.exists()
    assert sorted(plain(json.loads(done.stdout))["_meta"]["hostvars"]) == ["app.main"]
    assert says(done, "skipped branch 'id-bad' of database 'app': its name is not a branch name the platform gives")
    assert says(done, "skipped branch 'id-upper' of database 'app'")
    assert says(done, "skipped database 'db-bad': its name is not a database name the platform gives")
    assert not [request for request in server.requests if "app.evil" in request["path"]]  # its branches not read


def module_failure(**params):
    """The sentence a module gives for these settings (database_info: the option sets the inventory shares)."""
    args = dict(dict(organization="acme", api_url="http://127.0.0.1:9", api_retries=0), **params)
    spec = DatabaseInfo.spec()
    spec.pop("supports_check_mode")
    validated = ModuleArgumentSpecValidator(**spec).validate(args)
    assert not validated.error_messages
    with pytest.raises(ModuleFailure) as failure:
        DatabaseInfo(validated.validated_parameters, TaskContext()).execute()
    return failure.value.msg


@pytest.mark.parametrize("options, env, sentence", [
    (dict(api_url="http://user:pass-word@127.0.0.1:9"), {},
     "api_url must not carry a user name or password (user:password@host): the modules never send them. Remove "
     "them from the URL and give the credentials in their own options."),
    (dict(access_token="access-secret"), {},
     "parameters are mutually exclusive: access_token|service_token_id, service_token; give one kind of credential."),
    (dict(service_token_id=None, service_token=None),
     dict(PLANETSCALE_ACCESS_TOKEN="access-secret", PLANETSCALE_SERVICE_TOKEN_ID="svc-id",
          PLANETSCALE_SERVICE_TOKEN="svc-secret"),
     "Both kinds of credential come from the environment (PLANETSCALE_ACCESS_TOKEN, and PLANETSCALE_SERVICE_TOKEN_ID "
     "with PLANETSCALE_SERVICE_TOKEN), or the task passes their values."),
    (dict(service_token=None), {}, "service_token_id is set but service_token is not, and a service token needs both: "
     "set service_token (or the environment variable PLANETSCALE_SERVICE_TOKEN) to the token's secret."),
    (dict(access_token="has space", service_token_id=None, service_token=None), {},
     "access_token holds a space or a character an HTTP header cannot carry"),
    (dict(api_url="http://127.0.0.1:9/v1?x=1"), {}, "api_url must be an http or https URL without a query"),
    (dict(api_retries=-1), {}, "api_retries must be 0 or more, not -1."),
    (dict(ca_path="missing-ca.pem"), {}, "is not a readable file."),
], ids=["userinfo", "two-kinds", "two-kinds-from-the-environment", "half-a-service-token", "header", "query",
        "retries", "ca-path"])
def test_the_connection_settings_are_refused_as_the_modules_refuse_them(server, tmp_path, monkeypatch, options, env,
                                                                        sentence):
    server.default = answer(dict(app=[]))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    if "ca_path" in options:
        options = dict(options, ca_path=str(tmp_path / options["ca_path"]))
    given = dict(CREDENTIALS, **options)
    expected = module_failure(**dict((key, value) for key, value in given.items() if value is not None))
    assert sentence in expected  # the module's sentence, from the same code
    done = ansible(tmp_path, "ansible-inventory", "-i", config(tmp_path, server, **options), "--list", env=env)
    assert done.returncode != 0
    assert says(done, expected), done.stderr
    shown = done.stdout + done.stderr
    assert "Traceback" not in shown
    assert not [secret for secret in ("pass-word", "access-secret", "svc-secret") if secret in shown]
    assert server.requests == []


def test_a_credential_in_the_file_wins_over_the_other_kind_from_the_environment(server, tmp_path):
    server.default = answer(dict(app=[]))
    inventory(tmp_path, config(tmp_path, server), "--list", env=dict(PLANETSCALE_ACCESS_TOKEN="access-secret"))
    assert server.requests and all(request["headers"]["Authorization"] == "svc-id:svc-secret"
                                   for request in server.requests)


def test_the_transport_is_warned_about_as_the_modules_do(server, tmp_path):
    server.default = answer(dict(app=[]))
    done = inventory(tmp_path, config(tmp_path, server, validate_certs=False), "--list")
    assert says(done, "validate_certs has no effect on api_url: plain http has no TLS.")


# ---------------------------------------------------------------- the options of 0.3.0

ROLES = "/roles/default"


def world(touch, roles=None):
    """The scripted server's answers for the databases app (MySQL: main, production; feat-1; dev) and pgapp
    (PostgreSQL: main, production; preview-1), and the default role of each PostgreSQL branch (roles: {branch
    name: role record}, by default one with an address that names a port)."""
    branches = dict(
        app=[branch("main", touch, id="id-app-main", production=True, mysql_address="app.private-connect.example",
                    mysql_edge_address="app.connect.example"),
             branch("feat-1", touch, id="12345", mysql_address="feat.private-connect.example"),
             branch("dev", touch, id="id-app-dev", region=dict(slug="eu-west", display_name="x"),
                    mysql_address="dev.private-connect.example")],
        pgapp=[branch("main", touch, id="id-pg-main", kind="postgresql", production=True,
                      mysql_address="pg.private-connect.example", mysql_edge_address="pg.connect.example"),
               branch("preview-1", touch, id="id-pg-preview", kind="postgresql",
                      mysql_address="pgp.private-connect.example")])
    roles = roles if roles is not None else {
        "main": dict(id="role-1", name="postgres", password="", username="postgres.id-pg-main",
                     access_host_url="pg.example:6432", private_access_host_url="private-pg.example"),
        "preview-1": dict(id="role-2", name="postgres", password="", access_host_url="pgp.example",
                          private_access_host_url="private-pgp.example")}
    listing = answer(branches)

    def route(request):
        if request["path"].endswith(ROLES):
            name = request["path"].split("/")[6]
            return (200, roles[name]) if name in roles else (404, dict(code="not_found", message="Not Found"))
        return listing(request)
    return route


def hosts_of(tmp_path, server, *args, **options):
    """ansible-inventory --list with these options: the groups, and {host: its variables} in _meta.hostvars."""
    return plain(json.loads(inventory(tmp_path, config(tmp_path, server, **options), "--list", *args).stdout))


def hostvars_of(tmp_path, server, *args, **options):
    return hosts_of(tmp_path, server, *args, **options)["_meta"]["hostvars"]


def role_reads(server):
    return sorted(request["path"].split("/")[4] + "/" + request["path"].split("/")[6] for request in server.requests
                  if request["path"].endswith(ROLES))


def test_a_postgresql_branch_connects_to_the_address_of_its_default_role(server, tmp_path):
    touched = tmp_path / "touched"
    server.default = world(str(touched))
    hostvars = hostvars_of(tmp_path, server)
    assert hostvars["app.main"]["ansible_host"] == "app.private-connect.example"
    assert "ansible_port" not in hostvars["app.main"]
    assert (hostvars["pgapp.main"]["ansible_host"], hostvars["pgapp.main"]["ansible_port"]) == ("pg.example", 6432)
    assert hostvars["pgapp.preview-1"]["ansible_host"] == "pgp.example"
    assert "ansible_port" not in hostvars["pgapp.preview-1"]
    assert role_reads(server) == ["pgapp/main", "pgapp/preview-1"]  # no role read for a MySQL branch
    assert all(request["method"] == "GET" for request in server.requests)
    assert "role-1" not in json.dumps(hostvars)  # only the addresses of the role are kept


@pytest.mark.parametrize("choice, app_main, pgapp_main, reads", [
    ("mysql_address", "app.private-connect.example", "pg.private-connect.example", []),
    ("mysql_edge_address", "app.connect.example", "pg.connect.example", []),
    ("postgresql_address", None, "pg.example", ["pgapp/main", "pgapp/preview-1"]),
    ("postgresql_private_address", None, "private-pg.example", ["pgapp/main", "pgapp/preview-1"]),
])
def test_connect_with_chooses_the_address(server, tmp_path, choice, app_main, pgapp_main, reads):
    server.default = world(str(tmp_path / "touched"))
    hostvars = hostvars_of(tmp_path, server, connect_with=choice)
    assert hostvars["app.main"].get("ansible_host") == app_main
    assert hostvars["pgapp.main"]["ansible_host"] == pgapp_main
    assert role_reads(server) == reads


def test_a_postgresql_branch_without_a_default_role_gets_no_address(server, tmp_path):
    server.default = world(str(tmp_path / "touched"), roles={})
    hostvars = hostvars_of(tmp_path, server)
    assert "ansible_host" not in hostvars["pgapp.main"] and "ansible_port" not in hostvars["pgapp.main"]
    assert hostvars["app.main"]["ansible_host"] == "app.private-connect.example"


def test_a_refused_role_read_is_a_sentence(server, tmp_path):
    listing = world(str(tmp_path / "touched"))
    server.default = lambda request: ((403, dict(code="forbidden", message="no access"))
                                      if request["path"].endswith(ROLES) else listing(request))
    done = ansible(tmp_path, "ansible-inventory", "-i", config(tmp_path, server), "--list")
    assert done.returncode != 0 and "Traceback" not in done.stdout + done.stderr
    assert says(done, "could not read the default role of branch 'main' of database 'pgapp', where the address of "
                      "a PostgreSQL branch is (connect_with: mysql_address reads no role): GET /organizations/acme/"
                      "databases/pgapp/branches/main/roles/default failed with HTTP 403"), done.stderr


def test_the_address_of_a_role_is_never_templated(server, tmp_path):
    touched = tmp_path / "touched"
    text = pipe(str(touched))
    server.default = world(str(touched), roles=dict(main=dict(access_host_url=text, private_access_host_url=text)))
    hostvars = hostvars_of(tmp_path, server, compose=dict(where="ansible_host"))
    assert hostvars["pgapp.main"]["ansible_host"] == text and hostvars["pgapp.main"]["where"] == text
    path = config(tmp_path, server, compose=dict(where="ansible_host"))
    play = tmp_path / "play.yml"
    play.write_text(json.dumps([dict(hosts="pgapp.main", gather_facts=False, tasks=[
        dict(debug=dict(msg="{{ ansible_host }} {{ where }}"))])]))
    played = ansible(tmp_path, "ansible-playbook", "-i", path, play)
    assert played.returncode == 0, played.stdout + played.stderr
    assert not touched.exists()


def test_hostnames_are_preferences(server, tmp_path):
    touched = tmp_path / "touched"
    server.default = world(str(touched))
    listed = hosts_of(tmp_path, server, hostnames=[
        "planetscale_branch.no_such_field",  # undefined: passed over
        "planetscale_branch.actor.display_name",  # a template's text, not a host name: passed over
        "planetscale_database ~ '-' ~ planetscale_branch.name if planetscale_branch.production else ''",
        "planetscale_branch.id"])
    hostvars = listed["_meta"]["hostvars"]
    assert sorted(hostvars) == ["12345", "app-main", "id-app-dev", "id-pg-preview", "pgapp-main"]
    assert hostvars["app-main"]["planetscale_branch"]["name"] == "main"
    assert hostvars["12345"]["planetscale_branch"]["name"] == "feat-1"  # an ID of digits alone too
    assert sorted(listed["database_app"]["hosts"]) == ["12345", "app-main", "id-app-dev"]
    assert not touched.exists()


def test_hostnames_that_name_two_branches_alike_give_them_their_default_names(server, tmp_path):
    server.default = world(str(tmp_path / "touched"))
    done = inventory(tmp_path, config(tmp_path, server, hostnames=["planetscale_branch.name"]), "--list")
    assert sorted(plain(json.loads(done.stdout))["_meta"]["hostvars"]) == [
        "app.main", "dev", "feat-1", "pgapp.main", "preview-1"]
    assert says(done, "named branch 'main' of database 'app' 'app.main', its default name: hostnames gives 'main' "
                      "to more than one branch.")


def test_hostnames_with_strict_fail_on_an_expression_that_fails(server, tmp_path):
    server.default = world(str(tmp_path / "touched"))
    done = ansible(tmp_path, "ansible-inventory", "-i", config(
        tmp_path, server, strict=True, hostnames=["planetscale_branch.no_such_field.x"]), "--list")
    assert done.returncode != 0 and says(done, "hostnames could not name branch 'main' of database 'app'")
    assert "Traceback" not in done.stdout + done.stderr


@pytest.mark.parametrize("options, expected, reads", [
    (dict(include_filters=[dict(kind="postgresql")]), ["pgapp.main", "pgapp.preview-1"],
     ["pgapp/main", "pgapp/preview-1"]),
    (dict(include_filters=[dict(kind="mysql", production=True), dict(database="pgapp", branch="preview-*")]),
     ["app.main", "pgapp.preview-1"], ["pgapp/preview-1"]),
    (dict(exclude_filters=[dict(branch=["preview-*", "feat-*"])]), ["app.dev", "app.main", "pgapp.main"],
     ["pgapp/main"]),
    (dict(include_filters=[dict(region="us-*")], exclude_filters=[dict(database="app", state="ready")]),
     ["pgapp.main", "pgapp.preview-1"], ["pgapp/main", "pgapp/preview-1"]),
    (dict(include_filters=[dict(region="eu-west", production=False)]), ["app.dev"], []),
], ids=["kind", "any-of-two", "exclude-patterns", "include-and-exclude", "region"])
def test_include_and_exclude_filters(server, tmp_path, options, expected, reads):
    server.default = world(str(tmp_path / "touched"))
    hostvars = hostvars_of(tmp_path, server, **options)
    assert sorted(hostvars) == expected
    assert role_reads(server) == reads  # no role read for a branch left out


def test_group_prefix_goes_before_the_default_groups_only(server, tmp_path):
    server.default = world(str(tmp_path / "touched"))
    listed = hosts_of(tmp_path, server, group_prefix="ps-", keyed_groups=[dict(
        key="planetscale_branch.cluster_name", prefix="size")])
    groups = set(listed) - {"_meta", "all", "ungrouped"}
    assert groups == {"ps_database_app", "ps_database_pgapp", "ps_production", "ps_development", "ps_kind_mysql",
                      "ps_kind_postgresql", "ps_region_us_east", "ps_region_eu_west", "ps_state_ready", "size_PS_10"}
    assert sorted(listed["ps_kind_postgresql"]["hosts"]) == ["pgapp.main", "pgapp.preview-1"]


@pytest.mark.parametrize("name, accepted", [
    ("planetscale.branches.yml", True), ("production.planetscale.branches.yaml", True), ("branches.yml", True),
    ("inv.planetscale.yml", True), ("inv.planetscale.yaml", True), ("inventory.yml", False),
    ("branches.json", False)])
def test_the_file_names_the_inventory_takes(tmp_path, name, accepted):
    from ansible_collections.planetscale.cloud.plugins.inventory.branches import InventoryModule

    (tmp_path / name).write_text("plugin: planetscale.cloud.branches\n")
    assert InventoryModule().verify_file(str(tmp_path / name)) is accepted


def test_a_file_named_after_the_plugin_is_read(server, tmp_path):
    server.default = world(str(tmp_path / "touched"))
    done = inventory(tmp_path, config(tmp_path, server, name="planetscale.branches.yml"), "--list")
    assert "pgapp.main" in plain(json.loads(done.stdout))["_meta"]["hostvars"]


def test_a_cache_without_the_roles_needed_is_read_again(server, tmp_path):
    server.default = world(str(tmp_path / "touched"))
    cache = dict(cache=True, cache_plugin="ansible.builtin.jsonfile", cache_connection=str(tmp_path / "cache"),
                 cache_timeout=600)
    hostvars = hostvars_of(tmp_path, server, connect_with="mysql_address", **cache)  # a cache without roles
    assert hostvars["pgapp.main"]["ansible_host"] == "pg.private-connect.example" and not role_reads(server)
    hostvars = hostvars_of(tmp_path, server, **cache)
    assert hostvars["pgapp.main"]["ansible_host"] == "pg.example" and role_reads(server)
    sent = len(server.requests)
    hostvars = hostvars_of(tmp_path, server, **cache)  # now from the cache, roles included
    assert len(server.requests) == sent and hostvars["pgapp.main"]["ansible_host"] == "pg.example"


def test_a_cache_of_the_first_release_is_read_again(server, tmp_path):
    """0.2.0 cached {database: [branch]}; such a record is read again rather than taken for the new format."""
    server.default = world(str(tmp_path / "touched"))
    cache = dict(cache=True, cache_plugin="ansible.builtin.jsonfile", cache_connection=str(tmp_path / "cache"),
                 cache_timeout=600)
    hosts_of(tmp_path, server, **cache)
    entries = list((tmp_path / "cache").iterdir())
    assert len(entries) == 1
    entry = entries[0]
    old = dict(app=[branch("old", "x", mysql_address="old.example")])
    entry.write_text(json.dumps(old))
    sent = len(server.requests)
    hostvars = hostvars_of(tmp_path, server, **cache)
    assert len(server.requests) > sent and "app.old" not in hostvars and "pgapp.main" in hostvars


class Overlap:
    """Reads of a kind (branches, roles) held until PARALLEL_PAGES of that kind are in flight at once (or, the first
    time that does not happen within seconds, no longer held): the most in flight at once is recorded, never a time."""

    def __init__(self, seconds=10):
        self.lock, self.seconds = threading.Lock(), seconds
        self.now, self.most, self.full = Counter(), Counter(), dict(branches=threading.Event(),
                                                                    roles=threading.Event())

    def hold(self, kind):
        with self.lock:
            self.now[kind] += 1
            self.most[kind] = max(self.most[kind], self.now[kind])
            if self.now[kind] >= PARALLEL_PAGES:
                self.full[kind].set()
        if not self.full[kind].wait(self.seconds):
            self.full[kind].set()  # one after another: one wait, not one per read
        with self.lock:
            self.now[kind] -= 1


def test_the_branches_and_roles_of_many_databases_are_read_side_by_side_with_no_request_more(server, tmp_path):
    """Issue 49: PARALLEL_PAGES databases' branches (then PARALLEL_PAGES branches' default roles) are read at a time,
    never more; one request for the databases, one per database's branches, one per PostgreSQL branch's role."""
    count = PARALLEL_PAGES + 2
    names = ["db-%02d" % n for n in range(count)]
    listing = answer(dict((name, [branch("main", "x", id="id-" + name, kind="postgresql")]) for name in names))
    overlap = Overlap()

    def route(request):
        if request["path"].endswith("/branches"):
            overlap.hold("branches")
        if request["path"].endswith(ROLES):
            overlap.hold("roles")
            return 200, dict(id="role", access_host_url="%s.example" % request["path"].split("/")[4])
        return listing(request)
    server.default = route
    hostvars = hostvars_of(tmp_path, server)
    assert dict((name, hostvars[name + ".main"]["ansible_host"]) for name in names) == dict(
        (name, name + ".example") for name in names)
    assert overlap.most == Counter(branches=PARALLEL_PAGES, roles=PARALLEL_PAGES)
    assert Counter("roles" if r["path"].endswith(ROLES) else r["path"].rsplit("/", 1)[1]
                   for r in server.requests) == Counter(databases=1, branches=count, roles=count)


@pytest.mark.parametrize("options, sentence", [
    (dict(connect_with="public_ipv4"), "Invalid value"),  # ansible-core's sentence, from the choices
    (dict(hostnames=["{{ planetscale_branch.id }}"]), "Each entry of hostnames must be a Jinja2 expression as those "
     "of compose, without {{ }} (for example planetscale_branch.id), not '{{ planetscale_branch.id }}'"),
    (dict(hostnames=["planetscale_branch.id +"]), "Each entry of hostnames must be a Jinja2 expression"),
    (dict(hostnames=[""]), "Each entry of hostnames must be a Jinja2 expression as those of compose, without {{ }} "
     "(for example planetscale_branch.id), not '': it is not an expression."),
    (dict(hostnames=[dict(name="x")]), "Each entry of hostnames must be a Jinja2 expression"),
    (dict(include_filters=[dict(engine="mysql")]), "Each filter of include_filters must be a mapping of one or more "
     "of database, branch, kind, production, region, state, not {'engine': 'mysql'}."),
    (dict(include_filters=["kind=mysql"]), "Each filter of include_filters must be a mapping of one or more of"),
    (dict(include_filters=[{}]), "Each filter of include_filters must be a mapping of one or more of"),
    (dict(exclude_filters=[dict(kind="oracle")]), "The kind of a filter of exclude_filters must be mysql, postgresql "
     "or a list of them, not 'oracle'."),
    (dict(include_filters=[dict(production="yes")]), "The production of a filter of include_filters must be true or "
     "false, not 'yes'."),
    (dict(exclude_filters=[dict(database=[])]), "The database of a filter of exclude_filters must be a name or a "
     "list of names (shell patterns such as preview-*), not []."),
    (dict(include_filters=[dict(region=7)]), "The region of a filter of include_filters must be a name or a list"),
], ids=["connect-with", "braces", "syntax", "empty", "mapping", "unknown-key", "not-a-mapping", "empty-filter",
        "kind", "production", "no-names", "not-a-name"])
def test_bad_options_are_a_sentence_before_any_request(server, tmp_path, options, sentence):
    server.default = world(str(tmp_path / "touched"))
    done = ansible(tmp_path, "ansible-inventory", "-i", config(tmp_path, server, **options), "--list")
    assert done.returncode != 0
    assert says(done, sentence), done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert server.requests == []
    if "connect_with" in options:
        assert says(done, "public_ipv4") and says(done, "connect_with")
