# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every playbook and task of the README, of the role READMEs and of the modules' EXAMPLES, as written: each
document's blocks run in order against the emulator's seeded world, and every block passes ansible-lint's
production profile.

A block that is a list of plays runs as it is. A block that is a list of tasks (a module's EXAMPLES, or a README's
fragment that continues the play above it) runs wrapped into a play on localhost. A block that the text before it
names as a file (`migrate.yml`, `check-orders.yml`) is written beside the plays under that name, for a play that
includes it. A block that is a mapping is no playbook (the inventory source and the execution environment
definition of the README) and is left out of those runs. The inventory sources, each YAML document of the
inventory plugin's EXAMPLES and the README's, are read by ansible-inventory against the emulator instead, under
the file name their first comment gives.
"""

from __future__ import annotations

import ast
import glob
import json
import os
import re
import subprocess
import textwrap

import pytest
import yaml

from harness import ROOT

PLAY = """\
- name: The example of {document}
  hosts: localhost
  gather_facts: false
  tasks:
{tasks}"""


def markdown_blocks(path):
    """(text, file name or None) of every yaml block of a Markdown file."""
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    blocks = []
    for match in re.finditer(r"```yaml\n(.*?)```", text, re.S):
        before = text[:match.start()].rstrip().rsplit("\n\n", 1)[-1]
        named = re.match(r"`([\w.-]+\.ya?ml)`", before)
        blocks.append((match.group(1), named.group(1) if named else None))
    return blocks


def module_examples(path):
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    return next(node.value.value for node in tree.body
                if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "EXAMPLES")


def documents():
    """{document: [(text, file name or None)]}: the README, each role's README, each module's EXAMPLES."""
    found = {"README.md": markdown_blocks(os.path.join(ROOT, "README.md"))}
    for path in sorted(glob.glob(os.path.join(ROOT, "roles", "*", "README.md"))):
        found["roles/%s" % os.path.basename(os.path.dirname(path))] = markdown_blocks(path)
    for path in sorted(glob.glob(os.path.join(ROOT, "plugins", "modules", "*.py"))):
        found["modules/%s" % os.path.basename(path)[:-3]] = [(module_examples(path), None)]
    return found


DOCUMENTS = documents()


def playbooks(document):
    """(plays, files): the document's runnable playbooks (YAML text, in order) and its named tasks files."""
    plays, files = [], {}
    for text, name in DOCUMENTS[document]:
        data = yaml.safe_load(text)
        if name:
            files[name] = text
        elif isinstance(data, list) and "hosts" in data[0]:
            plays.append(text)
        elif isinstance(data, list):
            plays.append(PLAY.format(document=document, tasks=textwrap.indent(textwrap.dedent(text), "    ")))
    return plays, files


def test_every_document_has_a_playbook():
    """The extraction finds the blocks (a change of the Markdown's fences would make every run below vacuous)."""
    assert len(DOCUMENTS) == 1 + len(glob.glob(os.path.join(ROOT, "roles", "*", "README.md"))) + len(
        glob.glob(os.path.join(ROOT, "plugins", "modules", "*.py")))
    for document in DOCUMENTS:
        assert playbooks(document)[0], document


def development_branch(emulator, name, table):
    """A ready development branch of app whose schema adds a table (the change a deploy request carries)."""
    emulator.api("POST", "/organizations/acme/databases/app/branches", dict(name=name, parent_branch="main"))
    emulator.advance(5)  # past the emulator's ready_delay
    emulator.ddl("app", name, ["CREATE TABLE `%s` (`id` bigint unsigned NOT NULL AUTO_INCREMENT, "
                               "PRIMARY KEY (`id`))" % table])


def deploy_requests_to_make(emulator):
    """The branches the deploy_request examples deploy: add-orders, then add-invoices (gated)."""
    development_branch(emulator, "add-orders", "orders")
    development_branch(emulator, "add-invoices", "invoices")


def open_deploy_request(emulator):
    """A deploy request from add-orders into main, open and deployable: the one the examples read and review."""
    development_branch(emulator, "add-orders", "orders")
    emulator.api("POST", "/organizations/acme/databases/app/deploy-requests",
                 dict(branch="add-orders", into_branch="main"))
    emulator.advance(5)  # past the deploy check


def gated_change(emulator):
    """The branch of the schema_change README's gated deploy (the README's first playbook makes its own)."""
    development_branch(emulator, "add-orders", "invoices")


def backup_with_users(emulator, count=1000):
    """A successful backup of app's main, the newest, that holds this many users (rows written through an admin
    password's own connection): the data the restore drill's check counts."""
    password = emulator.api("POST", "/organizations/acme/databases/app/branches/main/passwords",
                            dict(name="seed-users", role="admin"))
    emulator.login(dict(host=password["access_host_url"], username=password["username"],
                        password=password["plain_text"], database="app"),
                   "INSERT INTO users (email) VALUES %s" % ", ".join(
                       "('user%d@example.com')" % n for n in range(count)))
    emulator.api("POST", "/organizations/acme/databases/app/branches/main/backups", {})
    emulator.advance(60)  # past the backup's steps


# What an example presupposes beyond the seeded world: the development branch whose change it deploys, the
# backup whose rows a restore drill counts, more reports than a page of ten, a token with organization-wide access.
PREPARE = {
    "modules/query_pattern_info": lambda emulator: emulator.seed(reports=dict(count=15)),
    "modules/service_token_info": lambda emulator: emulator.seed(service_tokens=dict(count=2)),
    "roles/restore_drill": backup_with_users,
    "roles/schema_change": gated_change,
    "modules/deploy_request": deploy_requests_to_make,
    "modules/deploy_request_info": open_deploy_request,
    "modules/deploy_request_review": open_deploy_request,
}

# The example tasks whose when is false in the seeded world, and why.
SKIPPED_TASKS = {
    # the emulator deletes an unprotected database at once: no other administrator has to approve it
    "modules/database": ["Say when another administrator must approve the deletion"],
}

# The variables a block takes from the command line (-e), as a user gives them, and the runs that act for a user
# through OAuth only (the PLANETSCALE_* variables of the OAuth application, no service token).
OAUTH_ONLY = ("roles/oauth_session", "modules/token", "modules/token_info")


def extra_vars(document, emulator):
    world = emulator.world
    if document == "README.md":
        return dict(vault_planetscale_token_id=world["service_token"]["id"],
                    vault_planetscale_token=world["service_token"]["token"], pr_number=42)
    if document.startswith("roles/"):
        return dict(database_ca_file=world["ca_file"], code=emulator.code())
    if document == "modules/token":
        app = world["oauth_application"]
        return dict(oauth_client_id=app["client_id"], oauth_client_secret=app["client_secret"],
                    code_from_the_redirect=emulator.code())
    if document == "modules/token_info":
        return dict(planetscale_oauth=emulator.tokens())
    return {}


@pytest.mark.parametrize("document", sorted(DOCUMENTS))
def test_examples_run_as_written(ansible, emulator, tmp_path, document):
    plays, files = playbooks(document)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    if document in PREPARE:
        PREPARE[document](emulator)
    variables = extra_vars(document, emulator)
    env = {}
    if document == "modules/token_info":  # its last task takes the token from the environment
        env["PLANETSCALE_ACCESS_TOKEN"] = variables["planetscale_oauth"]["access_token"]
        ansible.assert_no_secret(variables["planetscale_oauth"]["access_token"],
                                 variables["planetscale_oauth"]["refresh_token"])
    for index, play in enumerate(plays):
        path = tmp_path / ("example-%d.yml" % index)
        path.write_text(play)
        run = ansible.run(str(path), extra_vars=variables, env=env, oauth_only=document in OAUTH_ONLY).succeeded()
        if document.startswith("modules/"):  # every task of the example ran (for one item of a loop at least)
            ran = set(task.name for task in run.tasks if task.status != "skipped")
            skipped = sorted(set(task.name for task in run.tasks) - ran)
            assert skipped == SKIPPED_TASKS.get(document, []), skipped


def test_examples_pass_ansible_lint(ansible, tmp_path):
    """ansible-lint --profile production on every block: the plays (fragments wrapped as they run) and the tasks
    files, where ansible-lint takes them for tasks (a tasks/ directory)."""
    for document in DOCUMENTS:
        plays, files = playbooks(document)
        folder = tmp_path / "examples" / re.sub(r"[^a-z0-9_]+", "-", document.lower())
        (folder / "tasks").mkdir(parents=True)
        for index, play in enumerate(plays):
            (folder / ("example-%d.yml" % index)).write_text(play)
        for name, text in files.items():
            (folder / "tasks" / name).write_text(text)
    env = ansible.env(collections_path=ansible.collections_path)
    lint = subprocess.run([os.path.join(ansible.bin, "ansible-lint"), "--profile", "production", "--offline",
                           "--nocolor", "examples"], cwd=str(tmp_path), env=env, capture_output=True, text=True,
                          check=False, timeout=600)
    assert lint.returncode == 0, lint.stdout + lint.stderr


INVENTORY = os.path.join(ROOT, "plugins", "inventory", "branches.py")


def inventory_sources():
    """{label: text} of every inventory source: each YAML document of the inventory plugin's EXAMPLES, and each block
    of the README that is a configuration of the plugin."""
    found = dict(("inventory/branches-%d" % index, text) for index, text in enumerate(
        re.split(r"(?m)^---\n", module_examples(INVENTORY))))
    blocks = [block[0] for block in DOCUMENTS["README.md"]]
    readme = [text for text in blocks if isinstance(yaml.safe_load(text), dict)
              and yaml.safe_load(text).get("plugin") == "planetscale.cloud.branches"]
    found.update(("README.md-%d" % index, text) for index, text in enumerate(readme))
    return found


INVENTORY_SOURCES = inventory_sources()


def test_the_inventory_examples_show_every_option():
    """Each option of the inventory is in an example, but the credentials and the connection settings (from the
    environment, as the modules take them)."""
    with open(INVENTORY, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    documentation = yaml.safe_load(next(node.value.value for node in tree.body if isinstance(node, ast.Assign)
                                        and getattr(node.targets[0], "id", None) == "DOCUMENTATION"))
    shown = set().union(*(yaml.safe_load(text) for label, text in INVENTORY_SOURCES.items()
                          if label.startswith("inventory/")))
    unshown = set(documentation["options"]) - shown - {
        "access_token", "service_token_id", "service_token", "api_url", "api_timeout", "api_retries",
        "validate_certs", "ca_path", "connection"}
    assert not unshown and len(INVENTORY_SOURCES) >= 5


@pytest.mark.parametrize("label", sorted(INVENTORY_SOURCES))
def test_the_inventory_examples_read_as_written(ansible, emulator, tmp_path, label):
    text = INVENTORY_SOURCES[label]
    named = re.search(r"^# ([\w.-]+)", text, re.M)
    assert named and named.group(1).endswith("branches.yml"), "the example's first comment names its file"
    path = tmp_path / named.group(1)
    path.write_text(text)
    emulator.api("POST", "/organizations/acme/databases/pgapp/branches", dict(name="preview-1", parent_branch="main"))
    done = subprocess.run([os.path.join(ansible.bin, "ansible-inventory"), "-i", str(path), "--list"],
                          env=ansible.env(dict(ANSIBLE_INVENTORY_UNPARSED_FAILED="true", HOME=str(tmp_path))),
                          cwd=str(tmp_path), capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    for secret in ansible.watch.known if ansible.watch else ():
        assert secret not in done.stdout + done.stderr, "a secret in ansible-inventory's output"
    hosts = json.loads(done.stdout)["_meta"]["hostvars"]
    assert hosts, done.stdout
    if label == "inventory/branches-2":  # the PostgreSQL branches but the previews, production ones by database
        assert sorted(hosts) == ["pgapp"]
        assert "planetscale_kind_postgresql" in json.loads(done.stdout)
