# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What Automation Platform takes from the collection, from the built tarball, installed: its credential types
(extensions/credential_types/) and its indirect managed-node query (extensions/audit/event_query.yml).

A job runs through ansible-runner as AWX runs it (test_runner.run_job), and its only credential is the environment
that a credential of the collection's type injects, rendered from the installed type's injectors as AWX renders
them (Jinja2 in a sandbox, the credential's inputs as variables): the service token type for a playbook that
creates a branch and lists the databases and their branches, the OAuth application type for one that exchanges an
authorization code for tokens and uses them. No job event, nor the output, holds a secret.

Then the event query runs as the controller runs it (awx/main/tasks/host_indirect.py): for each event with a result
and a resolved action the query names, the jq expression over the result; each output's canonical facts are one
node. The nodes of the service token job are exactly the databases and branches it read or managed. jq is Debian's.

A reader of the guide (docs/docsite/rst/guide_automation_platform.rst) finds every file it names in the installed
collection, and what a decision environment build reads from the collection (ansible-builder introspect) names
aiohttp, which the event source needs; the guide's decision environment definition is one ansible-builder takes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest
import yaml
from jinja2.sandbox import ImmutableSandboxedEnvironment

from test_runner import handled_secrets, run_job, secret_leaks

COLLECTION = os.path.join("ansible_collections", "planetscale", "cloud")
SHIPPED = ("extensions/audit/event_query.yml", "extensions/credential_types/service_token.yml",
           "extensions/credential_types/oauth_application.yml", "extensions/credential_types/webhook_secret.yml",
           "extensions/eda/plugins/event_source/webhook_deliveries.py",
           "extensions/eda/plugins/event_source/webhook.py", "extensions/eda/eda_runtime.yml",
           "extensions/eda/rulebooks/cutover.yml", "extensions/eda/rulebooks/cutover_job_template.yml",
           "playbooks/cutover.yml")
GUIDE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "docs", "docsite",
                     "rst", "guide_automation_platform.rst")

INVENTORY_PLAYBOOK = """\
- name: The databases and branches of the organization (an AWX job template with a PlanetScale credential)
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Create a branch for the job
      planetscale.cloud.branch:
        database: app
        name: aap-job
        parent_branch: main
    - name: List the databases
      planetscale.cloud.database_info:
      register: listed
    - name: List the branches of each database
      planetscale.cloud.branch_info:
        database: "{{ item.name }}"
      loop: "{{ listed.databases }}"
      loop_control:
        label: "{{ item.name }}"
    - name: A database that does not exist
      planetscale.cloud.branch_info:
        database: no-such-database
      ignore_errors: true
"""
OAUTH_PLAYBOOK = """\
- name: Tokens of the OAuth application (an AWX job template with a PlanetScale OAuth application credential)
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Exchange the code for tokens
      planetscale.cloud.token:
        grant_type: authorization_code
        code: "{{ oauth_code }}"
        redirect_uri: "{{ oauth_redirect_uri }}"
      register: issued
      no_log: true
    - name: Show who the token acts for
      planetscale.cloud.user_info:
        access_token: "{{ issued.token.access_token }}"
        api_url: "{{ oauth_api_url }}"
"""


def credential_env(collections, kind, inputs):
    """The environment a credential of the installed collection's type kind with these inputs injects."""
    with open(os.path.join(collections, COLLECTION, "extensions", "credential_types", kind + ".yml"),
              encoding="utf-8") as handle:
        definition = yaml.safe_load(handle)
    assert set(inputs) <= set(field["id"] for field in definition["inputs"]["fields"])
    assert set(definition["inputs"]["required"]) <= set(inputs)
    sandbox = ImmutableSandboxedEnvironment()
    return dict((name, sandbox.from_string(template).render(**inputs))
                for name, template in definition["injectors"]["env"].items())


def jq(expression, document):
    """The outputs of a jq expression over a JSON document (Debian's jq, the language AWX's jq package runs)."""
    done = subprocess.run([shutil.which("jq") or "jq", "--compact-output", expression], input=json.dumps(document),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60, check=False)
    assert done.returncode == 0, "jq failed on %s: %s" % (json.dumps(document)[:300], done.stderr)
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def indirect_nodes(queries, events):
    """The nodes the controller counts for a job (host_indirect.build_indirect_host_data): canonical facts
    (as JSON) -> dict(name, facts, events: the modules that touched it, count)."""
    nodes = {}
    for event in events:
        data = event.get("event_data", {})
        action = data.get("resolved_action")
        if "res" not in data or not action or action not in queries:
            continue
        for found in jq(queries[action]["query"], data["res"]):
            assert found.get("canonical_facts"), (action, found)
            node = nodes.setdefault(json.dumps(found["canonical_facts"], sort_keys=True),
                                    dict(name=found.get("name"), facts=found.get("facts"), events=[], count=0))
            node["events"] += [action] if action not in node["events"] else []
            node["count"] += 1
    return nodes


@pytest.fixture(scope="module")
def service_token_job(emulator, tmp_path_factory, installed):
    if not shutil.which("jq"):
        pytest.fail("No jq: the event query test runs Debian's jq (apt-get install jq).")
    emulator.reset()
    world = emulator.world
    token = world["service_token"]
    environment = credential_env(installed, "service_token", dict(
        organization=world["organization"], service_token_id=token["id"], service_token=token["token"],
        api_url=emulator.api_url))
    job = run_job(tmp_path_factory.mktemp("aap-job"), emulator, installed, ("branches.yml", INVENTORY_PLAYBOOK), {},
                  credentials=environment)
    assert (job.status, job.rc) == ("successful", 0), job
    return job, environment


def test_the_tarball_ships_what_automation_platform_reads(installed):
    missing = [path for path in SHIPPED if not os.path.isfile(os.path.join(installed, COLLECTION, path))]
    assert missing == []


def test_the_service_token_credential_alone_runs_a_job_and_no_event_holds_a_secret(emulator, service_token_job):
    job, environment = service_token_job
    assert sorted(environment) == ["PLANETSCALE_API_URL", "PLANETSCALE_ORG", "PLANETSCALE_SERVICE_TOKEN",
                                   "PLANETSCALE_SERVICE_TOKEN_ID"]
    with open(os.path.join(job.private, "env", "envvars"), encoding="utf-8") as handle:
        given = yaml.safe_load(handle)
    assert sorted(name for name in given if name.startswith("PLANETSCALE_")) == sorted(environment)
    assert [event["event_data"]["res"]["changed"] for event in job.task_events("Create a branch for the job")] == [True]
    assert len(job.task_events("List the branches of each database")) > 1
    assert secret_leaks(job, handled_secrets(emulator)) == []
    assert job.other_files_with(handled_secrets(emulator)) == ["artifacts/job/command", "env/envvars"]


def test_the_event_query_counts_the_databases_and_branches_the_job_touched(emulator, service_token_job, installed):
    job, unused_environment = service_token_job
    with open(os.path.join(installed, COLLECTION, "extensions", "audit", "event_query.yml"), encoding="utf-8") as f:
        queries = yaml.safe_load(f)
    assert sorted(queries) == ["planetscale.cloud.branch", "planetscale.cloud.branch_info",
                               "planetscale.cloud.database", "planetscale.cloud.database_info"]
    actions = set(event["event_data"].get("resolved_action") for event in job.parsed if "res" in event["event_data"])
    assert {"planetscale.cloud.branch", "planetscale.cloud.database_info", "planetscale.cloud.branch_info"} <= actions

    nodes = indirect_nodes(queries, job.parsed)
    databases = emulator.list("/organizations/acme/databases")
    branches = [(database, branch) for database in databases
                for branch in emulator.list("/organizations/acme/databases/%s/branches" % database["name"])]
    expected = dict((json.dumps(dict(host_name=database["id"])), ("planetscale_database", database["name"]))
                    for database in databases)
    expected.update((json.dumps(dict(host_name=branch["id"])), ("planetscale_branch", branch["name"]))
                    for unused, branch in branches)
    assert dict((key, (node["facts"]["device_type"], node["name"])) for key, node in nodes.items()) == expected
    # the branch the job created: counted once, from the module that created it and the one that listed it
    created = next(node for node in nodes.values() if node["name"] == "aap-job")
    assert created["events"] == ["planetscale.cloud.branch", "planetscale.cloud.branch_info"]
    app = next(database for database in databases if database["name"] == "app")
    assert nodes[json.dumps(dict(host_name=app["id"]))]["facts"]["kind"] == "mysql"
    # the failed task's result yields no node (and no jq error)
    failed = [event for event in job.task_events("A database that does not exist") if event["event_data"]["res"]]
    assert failed and all(jq(queries["planetscale.cloud.branch_info"]["query"], event["event_data"]["res"]) == []
                          for event in failed)


def test_the_event_query_yields_nothing_for_results_without_records():
    """A check-mode prediction without an ID, an absent resource, a skipped task: no node, and jq does not fail."""
    with open(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                           "extensions", "audit", "event_query.yml"), encoding="utf-8") as handle:
        queries = yaml.safe_load(handle)
    results = [dict(changed=True, branch=dict(name="pr-1")), dict(changed=False), dict(skipped=True),
               dict(changed=True, database=None), dict(databases=[]), dict(branches=[None, "main"]),
               dict(failed=True, msg="Database 'x' was not found.")]
    assert [jq(query["query"], result) for query in queries.values() for result in results] == \
        [[]] * (len(queries) * len(results))


def test_the_oauth_application_credential_alone_obtains_tokens_and_no_event_holds_a_secret(emulator, tmp_path,
                                                                                           installed):
    emulator.reset()
    app = emulator.world["oauth_application"]
    environment = credential_env(installed, "oauth_application", dict(
        client_id=app["client_id"], client_secret=app["client_secret"], auth_url=emulator.auth_url))
    assert sorted(environment) == ["PLANETSCALE_AUTH_URL", "PLANETSCALE_CLIENT_ID", "PLANETSCALE_CLIENT_SECRET"]
    code = emulator.code()
    job = run_job(tmp_path, emulator, installed, ("tokens.yml", OAUTH_PLAYBOOK),
                  dict(oauth_code=code, oauth_redirect_uri=app["redirect_uri"], oauth_api_url=emulator.api_url),
                  credentials=environment)
    assert (job.status, job.rc) == ("successful", 0), job
    events = job.task_events("Exchange the code for tokens")
    assert events and all(event["event_data"]["res"].get("censored") for event in events)
    assert job.task_events("Show who the token acts for")
    secrets = handled_secrets(emulator) + [code]
    assert secret_leaks(job, secrets) == []
    assert job.other_files_with(secrets) == ["artifacts/job/command", "env/envvars", "env/extravars"]


def named_by_the_guide(collection):
    """What the guide names of the collection, each with the paths in the collection that may hold it: the paths
    it gives (extensions/..., meta/..., playbooks/...), the file names of its tables and loops (found under
    extensions/), its modules (:ansplugin:) and the event sources, rulebooks and playbooks it names by FQCN."""
    with open(GUIDE, encoding="utf-8") as handle:
        text = handle.read()
    named = {}
    for path in re.findall(r"``((?:extensions|meta|playbooks|roles|plugins)/[^`\s]+)``", text):
        named[path] = [path]
    files = set(re.findall(r"``([a-z_]+\.yml)``", text)) | set(
        "%s.yml" % item for item in re.findall(r"^ +- (service_token|oauth_application|webhook_secret)$", text, re.M))
    for name in files - set(os.path.basename(path) for path in named):
        named[name] = [os.path.relpath(os.path.join(folder, name), collection)
                       for folder, unused, found in os.walk(os.path.join(collection, "extensions")) if name in found]
    for module in re.findall(r":ansplugin:`planetscale\.cloud\.([a-z_]+)#module`", text):
        named["planetscale.cloud.%s" % module] = ["plugins/modules/%s.py" % module]
    for fqcn in re.findall(r"``planetscale\.cloud\.([a-z_]+)``", text):
        named.setdefault("planetscale.cloud.%s" % fqcn, []).extend(
            ["extensions/eda/plugins/event_source/%s.py" % fqcn, "extensions/eda/rulebooks/%s.yml" % fqcn,
             "playbooks/%s.yml" % fqcn, "plugins/modules/%s.py" % fqcn, "plugins/inventory/%s.py" % fqcn])
    return named


def test_a_reader_of_the_guide_finds_every_file_it_names_in_the_installed_collection(installed):
    collection = os.path.join(installed, COLLECTION)
    named = named_by_the_guide(collection)
    missing = sorted(name for name, paths in named.items()
                     if not any(os.path.isfile(os.path.join(collection, path)) or (
                         path.endswith("/") and os.path.isdir(os.path.join(collection, path))) for path in paths))
    assert missing == []
    # what the extraction must find (so that it cannot pass on nothing)
    for name in ("extensions/eda/rulebooks/cutover.yml", "extensions/eda/rulebooks/cutover_job_template.yml",
                 "extensions/eda/eda_runtime.yml", "meta/execution-environment.yml", "meta/ee-requirements.txt",
                 "webhook_secret.yml", "service_token.yml", "planetscale.cloud.webhook_deliveries",
                 "planetscale.cloud.cutover", "planetscale.cloud.cutover_job_template", "planetscale.cloud.token"):
        assert [key for key in named if key == name or key.endswith("/" + name)], name


def test_a_decision_environment_build_gets_aiohttp_from_the_collection_and_takes_the_guides_definition(
        installed, tmp_path):
    """ansible-builder introspect (what a build reads from the collections it installs) finds aiohttp, which the
    event source imports; the guide's decision-environment.yml passes ansible-builder's schema (create)."""
    builder = os.path.join(os.path.dirname(sys.executable), "ansible-builder")
    if not os.path.exists(builder):
        pytest.fail("No ansible-builder beside %s (requirements/new.txt installs it)" % sys.executable)
    done = subprocess.run([builder, "introspect", "--sanitize", installed], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout
    assert re.search(r"^- '?aiohttp\b.*# from collection planetscale\.cloud", done.stdout, re.M), done.stdout
    with open(GUIDE, encoding="utf-8") as handle:
        block = re.search(r"\.\. code-block:: text\n +:caption: decision-environment\.yml\n\n((?: +\S.*\n|\n)+)",
                          handle.read())
    assert block, "the guide has no decision-environment.yml block"
    definition = tmp_path / "decision-environment.yml"
    definition.write_text(textwrap.dedent(block.group(1)))
    assert "planetscale.cloud" in definition.read_text()
    done = subprocess.run([builder, "create", "--file", str(definition), "--context", str(tmp_path / "context")],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout
