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

import pytest

from ansible.module_utils.common.arg_spec import ModuleArgumentSpecValidator

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure, TaskContext
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


def config(tmp_path, server, **options):
    """Write the inventory's configuration; an option given as None is left out."""
    values = dict(plugin="planetscale.cloud.branches", organization="acme", api_url=server.url, api_retries=0,
                  **CREDENTIALS)
    values.update(options)
    path = tmp_path / "inv.planetscale.yml"
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
