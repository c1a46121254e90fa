# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The inventory plugin planetscale.cloud.branches, through real ansible-inventory runs against the emulator,
with an organization of more than one page of databases and of branches."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

DATABASES = "/organizations/acme/databases"


def write_config(tmp_path, name="branches.planetscale.yml", **options):
    config = tmp_path / name
    config.write_text(json.dumps(dict(plugin="planetscale.cloud.branches", organization="acme", **options)))
    return config


def inventory(ansible, config, *args, env=None, check=True):
    """ansible-inventory -i config ARGS: the completed process (its output searched for every secret)."""
    done = subprocess.run([os.path.join(ansible.bin, "ansible-inventory"), "-i", str(config), *args],
                          env=ansible.env(dict(ANSIBLE_INVENTORY_UNPARSED_FAILED="true", **(env or {}))),
                          cwd=str(config.parent), capture_output=True, text=True, timeout=600, check=False)
    if check:
        assert done.returncode == 0, done.stdout + done.stderr
    for secret in ansible.watch.known if ansible.watch else ():
        assert secret not in done.stdout + done.stderr, "a secret in ansible-inventory's output"
    return done


def plain(value):
    """A value of ansible-inventory's JSON without its markers: values from the API are untrusted (never templated),
    and ansible-core 2.19 and later print such a string as {"__ansible_unsafe": "..."}."""
    if isinstance(value, dict):
        if list(value) == ["__ansible_unsafe"]:
            return value["__ansible_unsafe"]
        return dict((key, plain(item)) for key, item in value.items())
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value


def listing(done):
    return plain(json.loads(done.stdout))


def says(done, message):
    """Whether ansible-inventory's warnings hold the message (they wrap lines anywhere, hyphens included)."""
    return "".join(message.split()) in "".join(done.stderr.split())


def every_branch(emulator):
    """{host name: branch record} of every branch of every database, as the resource API lists them."""
    return dict(("%s.%s" % (database["name"], branch["name"]), branch)
                for database in emulator.list(DATABASES)
                for branch in emulator.list(DATABASES + "/%s/branches" % database["name"]))


@pytest.fixture
def large(emulator):
    """More than one page (100) of databases, and of branches in the database app."""
    emulator.seed(databases=dict(count=101, prefix="inv", branches=2), branches=dict(database="app", count=100))


def test_every_branch_is_a_host_in_its_groups(ansible, emulator, tmp_path, large):  # pylint: disable=unused-argument
    expected = every_branch(emulator)
    assert len(expected) > 300
    emulator.clear_requests()
    listed = listing(inventory(ansible, write_config(tmp_path), "--list"))
    hostvars = listed["_meta"]["hostvars"]
    assert sorted(hostvars) == sorted(expected)
    pages = [entry["path"] for entry in emulator.requests() if entry["path"].endswith((DATABASES, "/app/branches"))]
    assert len(pages) >= 4, pages  # two pages of databases, two of app's branches
    assert all(entry["method"] == "GET" for entry in emulator.requests())  # read-only

    main = hostvars["app.main"]
    assert main["ansible_host"] == expected["app.main"]["mysql_address"] and main["ansible_connection"] == "local"
    assert main["planetscale_database"] == "app" and main["planetscale_branch"]["id"] == expected["app.main"]["id"]

    def members(group):
        return set(listed.get(group, {}).get("hosts", []))

    assert members("database_app") == {name for name in expected if name.startswith("app.")}
    assert members("production") == {name for name, branch in expected.items() if branch["production"]}
    assert members("development") == {name for name, branch in expected.items() if not branch["production"]}
    for kind in ("mysql", "postgresql"):
        assert members("kind_" + kind) == {name for name, branch in expected.items() if branch["kind"] == kind}
    assert members("kind_postgresql")
    regions = {branch["region"]["slug"] for branch in expected.values()}
    assert len(regions) > 1
    for region in regions:
        assert members("region_" + region.replace("-", "_")) == {
            name for name, branch in expected.items() if branch["region"]["slug"] == region}
    assert members("state_ready") == set(expected)

    graph = inventory(ansible, write_config(tmp_path), "--graph").stdout
    assert "@database_app:" in graph and "--app.main" in graph and "@region_us_east:" in graph


def test_filters_compose_and_keyed_groups(ansible, emulator, tmp_path):
    emulator.seed(branches=dict(database="app", count=3))
    emulator.settings(ready_delay=3600)  # stays pending while the test runs
    emulator.api("POST", DATABASES + "/app/branches", dict(name="pending-1", parent_branch="main"))
    config = write_config(tmp_path, databases=["app"], production=False, states=["ready"],
                          compose=dict(branch_name="planetscale_branch.name"),
                          keyed_groups=[dict(key="planetscale_branch.cluster_name", prefix="size")])
    emulator.clear_requests()
    listed = listing(inventory(ansible, config, "--list"))
    hostvars = listed["_meta"]["hostvars"]
    expected = sorted("app." + branch["name"] for branch in emulator.list(DATABASES + "/app/branches")
                      if not branch["production"] and branch["state"] == "ready")
    assert sorted(hostvars) == expected and len(expected) == 3  # not main, not the pending branch
    assert all(hostvars[name]["branch_name"] == name.split(".", 1)[1] for name in expected)
    sizes = [group for group in listed if group.startswith("size_")]
    assert sizes and set().union(*(listed[group]["hosts"] for group in sizes)) == set(expected)
    assert not [entry for entry in emulator.requests() if entry["path"].endswith(DATABASES)]  # named: not listed


def test_a_second_run_within_the_cache_timeout_sends_no_request(ansible, emulator, tmp_path):
    config = write_config(tmp_path, cache=True, cache_plugin="ansible.builtin.jsonfile",
                          cache_connection=str(tmp_path / "cache"), cache_timeout=600)
    emulator.clear_requests()
    first = inventory(ansible, config, "--list").stdout
    assert emulator.requests()
    cached = list((tmp_path / "cache").iterdir())
    assert cached and not any(emulator.world["service_token"]["token"] in path.read_text() for path in cached)

    emulator.clear_requests()
    assert inventory(ansible, config, "--list").stdout == first
    assert emulator.requests() == []

    emulator.api("POST", DATABASES + "/app/branches", dict(name="after-cache", parent_branch="main"))
    for path in cached:  # what --flush-cache does (ansible-core 2.17 has no such flag)
        path.unlink()
    emulator.clear_requests()
    flushed = listing(inventory(ansible, config, "--list"))
    assert emulator.requests() and "app.after-cache" in flushed["_meta"]["hostvars"]


@pytest.mark.parametrize("options, env, message", [
    (dict(organization=None), dict(PLANETSCALE_ORG=""), "Set organization (or PLANETSCALE_ORG)"),
    (dict(databases=["../main"]), dict(), "databases must name databases, not '../main'."),
    (dict(api_timeout=0), dict(), "api_timeout must be from 1 to 86400 seconds, not 0."),
    (dict(), dict(PLANETSCALE_SERVICE_TOKEN_ID="", PLANETSCALE_SERVICE_TOKEN=""),
     "No credentials were given: set service_token_id and service_token"),
    (dict(), dict(PLANETSCALE_SERVICE_TOKEN=""), "service_token_id is set but service_token is not, and a service "
     "token needs both: set service_token (or the environment variable PLANETSCALE_SERVICE_TOKEN) to the token's "
     "secret."),
    (dict(api_url="http://user:pass-word@127.0.0.1:9/v1"), dict(),
     "api_url must not carry a user name or password (user:password@host): the modules never send them."),
    (dict(), dict(PLANETSCALE_ACCESS_TOKEN="an-access-token"),
     "Both kinds of credential come from the environment (PLANETSCALE_ACCESS_TOKEN, and PLANETSCALE_SERVICE_TOKEN_ID "
     "with PLANETSCALE_SERVICE_TOKEN), or the task passes their values."),
], ids=["no-organization", "bad-database", "bad-timeout", "no-credentials", "half-a-service-token", "userinfo",
        "two-kinds"])
def test_bad_configuration_is_a_sentence_before_any_request(ansible, emulator, tmp_path, options, env, message):
    config = tmp_path / "bad.planetscale.yml"
    config.write_text(json.dumps(dict(dict(plugin="planetscale.cloud.branches", organization="acme"), **options)))
    emulator.clear_requests()
    failed = inventory(ansible, config, "--list", env=env, check=False)
    assert failed.returncode != 0 and says(failed, message), failed.stderr
    assert "Traceback" not in failed.stderr and "pass-word" not in failed.stdout + failed.stderr
    assert emulator.requests() == []


def test_an_api_refusal_is_a_sentence(ansible, emulator, tmp_path):
    failed = inventory(ansible, write_config(tmp_path, databases=["no-such-database"]), "--list", check=False)
    assert failed.returncode != 0
    assert says(failed, "could not read the branches of organization 'acme': GET /organizations/acme/databases/"
                        "no-such-database/branches failed with HTTP 404"), failed.stderr


def test_a_postgresql_branch_is_reached_at_its_postgresql_address(ansible, emulator, tmp_path):
    """connect_with's default: a MySQL branch's mysql_address, a PostgreSQL branch's default role's address (the
    emulator's data plane names a port); the filters, hostnames and group_prefix, in a file named after the
    plugin."""
    role = emulator.api("GET", DATABASES + "/pgapp/branches/main/roles/default")
    host, port = role["access_host_url"].rsplit(":", 1)
    assert host and port.isdigit()  # the data plane's address
    main = emulator.api("GET", DATABASES + "/app/branches/main")
    assert main["mysql_address"] != role["access_host_url"]
    config = write_config(tmp_path, "planetscale.branches.yml", group_prefix="planetscale_",
                          include_filters=[dict(database=["app", "pgapp"], branch="main")],
                          hostnames=["planetscale_database ~ '-' ~ planetscale_branch.kind"])
    emulator.clear_requests()
    listed = listing(inventory(ansible, config, "--list"))
    hostvars = listed["_meta"]["hostvars"]
    assert sorted(hostvars) == ["app-mysql", "pgapp-postgresql"]
    assert (hostvars["pgapp-postgresql"]["ansible_host"], hostvars["pgapp-postgresql"]["ansible_port"]) == (
        host, int(port))
    assert hostvars["app-mysql"]["ansible_host"] == main["mysql_address"]
    assert listed["planetscale_kind_postgresql"]["hosts"] == ["pgapp-postgresql"]
    assert listed["planetscale_database_app"]["hosts"] == ["app-mysql"]
    reads = [entry["path"] for entry in emulator.requests() if entry["path"].endswith("/roles/default")]
    assert len(reads) == 1 and reads[0].endswith(DATABASES + "/pgapp/branches/main/roles/default"), reads
    assert all(entry["method"] == "GET" for entry in emulator.requests())

    edge = listing(inventory(ansible, write_config(tmp_path, "edge.planetscale.branches.yml",
                                                   connect_with="mysql_edge_address",
                                                   exclude_filters=[dict(kind="mysql")]), "--list"))
    pgapp = emulator.api("GET", DATABASES + "/pgapp/branches/main")
    assert edge["_meta"]["hostvars"]["pgapp.main"]["ansible_host"] == pgapp["mysql_edge_address"]
    assert not [name for name in edge["_meta"]["hostvars"] if not name.startswith("pgapp.")]
