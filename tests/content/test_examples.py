# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every playbook and task of the README, of the role READMEs, of the modules' EXAMPLES and of the guides
(docs/docsite/rst), as written (examples.py finds them): each document's blocks run in order against the emulator's
seeded world, each guide's block twice. `make lint` lints every block with the collection (ansible-lint's production
profile), from the tree examples.py writes.

A block that is a list of plays runs as it is. A block that is a list of tasks (a module's EXAMPLES, or a README's
fragment that continues the play above it) runs wrapped into a play on localhost. A block that the text before it
names as a file (`migrate.yml`, `check-orders.yml`) is written beside the plays under that name, for a play that
includes it. A block that is a mapping is no playbook (the inventory source and the execution environment
definition of the README) and is left out of those runs. The inventory sources, each YAML document of the
inventory plugin's EXAMPLES and the README's, are read by ansible-inventory against the emulator instead, under
the file name their first comment gives.

A guide's blocks (``.. code-block:: yaml`` or ``yaml+jinja``) run in order in one ansible-playbook run, each block
twice in a row, as a reader runs a playbook again: the first run does every task, the second changes nothing. A
block that cannot run against the emulator (a rulebook, a GitHub workflow, a play for Automation Platform's
controller) is named in NOT_RUN with the reason.
"""

from __future__ import annotations

import ast
import datetime
import glob
import json
import os
import re
import subprocess

import pymysql
import pytest
import yaml

from examples import DOCUMENTS, GUIDE_FILES, GUIDES, as_play, guide, kind, label, module_examples, playbooks
from harness import ROOT


def test_every_document_has_a_playbook():
    """The extraction finds the blocks (a change of the Markdown's fences or of the guides' code blocks would make
    every run below vacuous)."""
    assert len(DOCUMENTS) == 1 + len(glob.glob(os.path.join(ROOT, "roles", "*", "README.md"))) + len(
        glob.glob(os.path.join(ROOT, "plugins", "modules", "*.py"))) + len(GUIDE_FILES)
    for document in DOCUMENTS:
        if not document.startswith("guides/"):
            assert playbooks(document)[0], document
    for path in GUIDE_FILES:
        with open(path, encoding="utf-8") as handle:
            assert len(DOCUMENTS[guide(path)]) == len(re.findall(r"code-block:: *yaml", handle.read())), path
    assert len(GUIDES) >= 10 and sum(len(playbooks(document)[0]) for document in GUIDES) >= 25


def development_branch(emulator, name, table):
    """A ready development branch of app whose schema adds a table (the change a deploy request carries)."""
    emulator.api("POST", "/organizations/acme/databases/app/branches", dict(name=name, parent_branch="main"))
    emulator.advance(5)  # past the emulator's ready_delay
    emulator.ddl("app", name, ["CREATE TABLE `%s` (`id` bigint unsigned NOT NULL AUTO_INCREMENT, "
                               "PRIMARY KEY (`id`))" % table])


def deploy_requests_to_make(emulator):
    """The branches the deploy_request examples deploy: add-orders, add-invoices (gated), add-audit, and add-archive
    (queued, then cancelled)."""
    development_branch(emulator, "add-orders", "orders")
    development_branch(emulator, "add-invoices", "invoices")
    development_branch(emulator, "add-audit", "audit_events")
    development_branch(emulator, "add-archive", "archived_orders")


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


def tables_to_move(emulator):
    """A sharded keyspace on app's main and a table orders with rows in its default keyspace, the workflow examples'
    move; short workflow steps."""
    emulator.settings(ready_delay=0, workflow_copy_delay=0.3, workflow_step_delay=0.3)
    emulator.api("POST", "/organizations/acme/databases/app/branches/main/keyspaces",
                 dict(name="sharded", shards=2, cluster_size="PS_10"))
    emulator.api("DELETE", "/organizations/acme/databases/app/branches/main/safe-migrations")  # for the DDL below
    emulator.ddl("app", "main", ["CREATE TABLE orders (id bigint NOT NULL PRIMARY KEY, total int)",
                                 "INSERT INTO orders VALUES (1, 10), (2, 20), (3, 30)"])


def workflow_to_read(emulator):
    """Workflow move-orders of app, the one the workflow_info examples read."""
    tables_to_move(emulator)
    emulator.api("POST", "/organizations/acme/databases/app/workflows", dict(
        name="move-orders", source_keyspace="app", target_keyspace="sharded", tables=["orders"]))


def queries_to_read(emulator):
    """Statements run on app's main through a reader's own connection: the queries the query_insights_info examples
    read (a lookup, a tagged scan, a query of a table that does not exist), every one slow enough for an anomaly."""
    created = emulator.api("POST", "/organizations/acme/databases/app/branches/main/passwords",
                           dict(name="insights", role="reader"))
    connection = dict(host=created["access_host_url"], username=created["username"], password=created["plain_text"],
                      database="app")
    emulator.login(connection, "SELECT * FROM users WHERE id = 1", "/* route='home' */ SELECT email FROM users")
    with pytest.raises(pymysql.MySQLError):
        emulator.login(connection, "SELECT * FROM orders")  # the error the examples list
    emulator.settings(insights_slow_query_ms=0)


def no_maintenance_running(emulator):
    """The operations guide gates a release on no maintenance window running: the seeded weekly window is Sunday
    03:00-07:00 UTC, so a run inside it moves the emulator's clock past its end."""
    now = datetime.datetime.now(datetime.timezone.utc)
    if now.isoweekday() == 7 and 3 <= now.hour < 7:
        emulator.advance((now.replace(hour=7, minute=1, second=0, microsecond=0) - now).total_seconds())


# What an example presupposes beyond the seeded world: the development branch whose change it deploys, the
# backup whose rows a restore drill counts, the keyspace and table a workflow moves, more reports than a page of ten,
# a token with organization-wide access.
PREPARE = {
    "modules/query_pattern_info": lambda emulator: emulator.seed(reports=dict(count=15)),
    "modules/service_token_info": lambda emulator: emulator.seed(service_tokens=dict(count=2)),
    "roles/restore_drill": backup_with_users,
    "roles/schema_change": gated_change,
    "roles/deploy_report": lambda emulator: development_branch(emulator, "add-orders", "orders"),
    "modules/deploy_request": deploy_requests_to_make,
    "modules/deploy_request_info": open_deploy_request,
    "modules/deploy_request_review": open_deploy_request,
    "modules/workflow": tables_to_move,
    "modules/workflow_info": workflow_to_read,
    "modules/query_insights_info": queries_to_read,
    "guides/operations": no_maintenance_running,
    "modules/oauth_application_info": lambda emulator: emulator.tokens(),
    "modules/oauth_application_token": lambda emulator: emulator.tokens(),
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


def tables_of_production(emulator):
    """The tables of app's main on the data plane's MySQL server (its real schema)."""
    server = emulator.dataplane.config["mysql"]
    connection = pymysql.connect(unix_socket=server["socket"], user=server["user"])
    with connection, connection.cursor() as cursor:
        cursor.execute("SHOW TABLES FROM `app__main`")
        return sorted(row[0] for row in cursor.fetchall())


# The documents whose first playbook runs twice in a row, as a reader runs it again: the second run changes nothing and
# sends no write.
RUN_AGAIN = ("roles/access_review", "roles/branch_environment", "roles/oauth_session", "roles/organization",
             "roles/organization_export", "roles/restore_drill", "roles/schema_change", "roles/team_access")


def check_first_run(document, emulator, run):
    """What the first playbook of a document did, beyond succeeding."""
    if document == "roles/branch_environment":  # it logs in with the password, TLS verified, and lists the tables
        assert "pr-42 has the tables users." in run.output, run
    if document == "roles/schema_change":
        # the user's path: a development branch and an admin password, the DDL through that password's own connection
        # (ansible.mysql.mysql_query, TLS verified against the CA the README lets a user name), the deploy: the new
        # table is then in production's real schema on the server
        assert "The schema change of pr-42 is complete." in run.output, run
        assert tables_of_production(emulator) == ["orders", "users"]


@pytest.mark.parametrize("document", sorted(document for document in DOCUMENTS if not document.startswith("guides/")))
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
        if index == 0:
            check_first_run(document, emulator, run)
        if index == 0 and document in RUN_AGAIN:
            emulator.clear_requests()
            ansible.run(str(path), extra_vars=variables, env=env, oauth_only=document in OAUTH_ONLY).succeeded(changed=0)
            assert emulator.writes() == []
        if document.startswith("modules/"):  # every task of the example ran (for one item of a loop at least)
            ran = set(task.name for task in run.tasks if task.status != "skipped")
            skipped = sorted(set(task.name for task in run.tasks) - ran)
            assert skipped == SKIPPED_TASKS.get(document, []), skipped


# The blocks of the guides that no ansible-playbook run against the emulator can play, by their first name, and why.
# They are linted all the same (`make lint`, from the tree examples.py writes), but the GitHub workflow, which is no
# Ansible content.
NOT_RUN = {
    ("guides/automation_platform", "Register the PlanetScale credential types"):
        "awx.awx writes to an Automation Platform controller, which the tests do not have",
    ("guides/automation_platform", "Cut over PlanetScale deploy requests that wait for it"):
        "a rulebook, whose job template an Event-Driven Ansible controller launches; ansible-playbook cannot run it",
    ("guides/schema_changes", "database"): "a GitHub Actions workflow, for GitHub's runners",
    ("guides/adopt", "Check the organization acme against its file every hour"):
        "awx.awx writes to an Automation Platform controller, which the tests do not have",
    ("guides/adopt", "Check the organization acme against its file on the platform's events"):
        "a rulebook, which ansible-rulebook runs; ansible-playbook cannot run it",
}

# The tasks of the guides that change something on every run, because they say so, and why: none today. A task
# that reports a change on its second run and is not here fails the test.
CHANGES_EVERY_RUN = {}

# What a guide's examples presuppose beyond the seeded world (PREPARE holds the emulator's side): tasks that run once
# before the first example, and the files the guide leaves to the reader.
PRELUDE = {
    # the fact branch_environment_connection the guide hands to connection_url comes from the role
    "guides/roles_playbooks": """\
- name: The branch environment whose connection the guide's examples take
  hosts: localhost
  gather_facts: false
  tasks:
    - name: The branch pr-42 with a password
      ansible.builtin.include_role:
        name: planetscale.cloud.branch_environment
      vars:
        branch_environment_database: app
        branch_environment_name: pr-42
""",
}
GUIDE_FILES_GIVEN = {
    # the DDL tasks file of the schema_change role: the change is on the branch already (PREPARE)
    "guides/schema_changes": {"migrate.yml": """\
- name: The migrations (the branch has them)
  ansible.builtin.debug:
    msg: The table orders is on pr-42.
"""},
}
PREPARE["guides/schema_changes"] = lambda emulator: development_branch(emulator, "pr-42", "orders")

# The directories outside the working directory that the guides' examples write files into: the runs write under
# the test's directory instead (the paths are rewritten in the generated playbook).
WRITTEN_OUTSIDE = ("/etc/app/", "/etc/ci/", "/etc/reporting/")
# The values of the guides that name the reader's own systems, and what the runs give instead: the redirect URI of
# the reader's OAuth application becomes the seeded application's (the emulator issues codes for that one only).
REPLACED = {"https://app.example.com/oauth/callback": lambda world: world["oauth_application"]["redirect_uri"]}

MARK = """\
- name: Example {index}, run {run}
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Example {index}, run {run}
      ansible.builtin.debug:
        msg: {label}
"""


def guide_examples(document):
    """[(index, label, playbook text)]: the blocks of a guide that ansible-playbook runs, in order."""
    found = []
    for index, (text, _name) in enumerate(DOCUMENTS[document]):
        data = yaml.safe_load(text)
        if (document, label(data)) not in NOT_RUN:
            assert kind(data) in ("plays", "tasks"), "%s: block %d (%s) is a %s: run it or say why in NOT_RUN" % (
                document, index, label(data), kind(data))
            found.append((index, label(data), as_play(document, text)))
    return found


def guide_vars(document, emulator):
    world = emulator.world
    if document == "guides/authentication":
        return dict(vault_planetscale_token_id=world["service_token"]["id"],
                    vault_planetscale_token=world["service_token"]["token"], stored=emulator.tokens(),
                    code=emulator.code())
    return {}


def test_guide_tables_name_what_the_guides_hold():
    """Each entry of NOT_RUN names a block of its guide (a renamed block would otherwise be run, or fail), each
    directory of WRITTEN_OUTSIDE and each value of REPLACED is in a guide's block."""
    shown = set((document, label(yaml.safe_load(text))) for document in GUIDES for text, _name in DOCUMENTS[document])
    assert set(NOT_RUN) <= shown, set(NOT_RUN) - shown
    blocks = "".join(text for document in GUIDES for text, _name in DOCUMENTS[document])
    assert [value for value in WRITTEN_OUTSIDE + tuple(REPLACED) if value not in blocks] == []


@pytest.mark.parametrize("document", GUIDES)
def test_guide_examples_run_twice(ansible, emulator, tmp_path, document):
    """A guide's blocks in order, in one ansible-playbook run, each block twice: the first run does every task
    (but a task of SKIPPED_TASKS), the second changes nothing (but a task of CHANGES_EVERY_RUN)."""
    for name, text in GUIDE_FILES_GIVEN.get(document, {}).items():
        (tmp_path / name).write_text(text)
    if document in PREPARE:
        PREPARE[document](emulator)
    examples = guide_examples(document)
    text = PRELUDE.get(document, "") + "".join(MARK.format(index=index, run=run, label=json.dumps(str(name))) + play
                                               for index, name, play in examples for run in (1, 2))
    for folder in WRITTEN_OUTSIDE:
        os.makedirs(str(tmp_path) + folder, exist_ok=True)
        text = text.replace(" " + folder, " " + str(tmp_path) + folder)
    for value, replacement in REPLACED.items():
        text = text.replace(value, replacement(emulator.world))
    outside = [path for path in re.findall(r"^\s*dest: (/\S*)", text, re.M) if not path.startswith(str(tmp_path))]
    assert not outside, "examples write outside the test's directory (WRITTEN_OUTSIDE): %s" % outside
    variables = guide_vars(document, emulator)
    if "stored" in variables:
        ansible.assert_no_secret(variables["stored"]["access_token"], variables["stored"]["refresh_token"])
    path = tmp_path / "examples.yml"
    path.write_text(text)
    run = ansible.run(str(path), extra_vars=variables, env=dict(HOME=str(tmp_path)), label=document).succeeded()
    runs = {}  # (index, run) -> [task result]
    current = None
    for task in run.tasks:
        mark = re.match(r"Example (\d+), run (\d)$", task.name)
        if mark:
            current = (int(mark.group(1)), int(mark.group(2)))
            runs[current] = []
        elif current:
            runs[current].append(task)
    assert sorted(runs) == sorted((index, r) for index, _name, _play in examples for r in (1, 2)), sorted(runs)
    for index, name, _play in examples:
        first, second = runs[(index, 1)], runs[(index, 2)]
        assert first, "example %d (%s) ran no task" % (index, name)
        ran = set(task.name for task in first if task.status != "skipped")
        skipped = sorted(set(task.name for task in first if " : " not in task.name) - ran)  # not a role's own
        assert skipped == SKIPPED_TASKS.get(document, []), (index, name, skipped)
        changed = sorted(set(task.name for task in second if task.changed) - set(
            task for (where, task) in CHANGES_EVERY_RUN if where == document))
        assert not changed, "the second run of example %d (%s) changed %s" % (index, name, changed)


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
