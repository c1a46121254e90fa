# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The role schema_change and the playbook planetscale.cloud.schema_change against the emulator.

DDL reaches a development branch through the emulator's control endpoint (standing in for a MySQL
connection), from a DDL tasks file as a user's migration tool would apply it: once, then never again.
The control API is not in the request log, so emulator.writes() shows only what the role sent. The README's user
path, through a real MySQL connection, runs as written (and again) in test_examples.py.
"""

from __future__ import annotations

import pytest

from conftest import role_play

ORG, DATABASE = "acme", "app"
ROLE = "planetscale.cloud.schema_change : "  # how a task of the role is named in the results
DATABASE_PATH = "/organizations/%s/databases/%s" % (ORG, DATABASE)
ORDERS = "CREATE TABLE orders (id bigint unsigned NOT NULL AUTO_INCREMENT, total bigint NOT NULL, PRIMARY KEY (id))"
NO_KEY = "CREATE TABLE events (name varchar(255) NOT NULL)"

# A migration tool applies each migration once: a table that exists is not created again.
DDL_TASKS = """\
- name: Read the tables of the branch
  planetscale.cloud.branch_schema_info:
    database: "{{ schema_change_database }}"
    branch: "{{ schema_change_branch }}"
  register: migrate_schema

- name: Create the table {{ migrate_table }} (the emulator's DDL endpoint stands in for a MySQL connection)
  ansible.builtin.uri:
    url: "{{ emulator_url }}/_emulator/branches/acme/{{ schema_change_database }}/{{ schema_change_branch }}/ddl"
    method: POST
    body_format: json
    body:
      statements: ["{{ migrate_statement }}"]
  changed_when: true
  when: migrate_table not in migrate_schema.schema | map(attribute='name')
"""


@pytest.fixture
def world(ansible, emulator, tmp_path):  # pylint: disable=unused-argument  # after the reset ansible makes
    """Fast deploys (a step every 0.2 s of the emulator's clock), a ready branch pr-7, and a DDL tasks file."""
    emulator.settings(deploy_check_delay=0.2, deploy_step_delay=0.2)
    branch("pr-7", emulator)
    ddl_tasks = tmp_path / "migrate.yml"
    ddl_tasks.write_text(DDL_TASKS)
    return dict(ddl_tasks=str(ddl_tasks), emulator_url=emulator.url)


def branch(name, emulator):
    """A development branch of main, ready; the request log cleared."""
    emulator.api("POST", DATABASE_PATH + "/branches", dict(name=name, parent_branch="main"))
    emulator.advance(5)
    emulator.clear_requests()


def tables(emulator, name):
    return sorted(table["name"] for table in emulator.api("GET", "%s/branches/%s/schema" % (DATABASE_PATH, name))["data"])


def role_vars(world, table="orders", statement=ORDERS, without=(), **more):
    values = dict(schema_change_database=DATABASE, schema_change_branch="pr-7",
                  schema_change_ddl_tasks=world["ddl_tasks"], emulator_url=world["emulator_url"],
                  migrate_table=table, migrate_statement=statement)
    values.update(more)
    for name in without:
        del values[name]
    return values


def facts(number, status, tables):
    """A task after the role: its facts are these (an assert prints only its fail_msg)."""
    return """
- name: The role hands back the deploy request, its status and the tables that differ
  ansible.builtin.assert:
    that:
      - %s
      - schema_change_status == %r
      - schema_change_tables == %s
    fail_msg: "the facts are {{ [schema_change_deploy_request.number | default(none), schema_change_status, schema_change_tables] }}"
    quiet: true
""" % ("schema_change_deploy_request is none" if number is None else "schema_change_deploy_request.number == %d" % number,
       status, tables)


def deploy_requests(emulator):
    return emulator.list(DATABASE_PATH + "/deploy-requests")


def test_schema_change(ansible, emulator, world, tmp_path):
    play = role_play(tmp_path, "schema_change", role_vars(world))
    assert "orders" not in tables(emulator, "main")

    # the DDL tasks write nothing in check mode (uri does not run): there is no change to predict yet
    emulator.clear_requests()
    checked = ansible.run(play, check=True).succeeded(changed=0)
    assert "Branch pr-7 holds no schema change against main (their schemas match): no deploy request was opened." \
        in checked.output
    assert emulator.writes() == [] and "orders" not in tables(emulator, "pr-7")

    done = ansible.run(play).succeeded(changed=3)  # the DDL, the deploy request opened, deployed
    assert "Deploy request #1 from pr-7 into main is revertable: the schema is live on main" in done.output
    assert "The tables that differ: orders." in done.output
    assert "orders" in tables(emulator, "main")
    [request] = deploy_requests(emulator)
    assert (request["number"], request["branch"], request["into_branch"]) == (1, "pr-7", "main")
    assert request["deployment_state"] == "complete_pending_revert"

    emulator.clear_requests()
    again = ansible.run(play).succeeded(changed=0)
    assert "Deploy request #1 from pr-7 into main is revertable" in again.output
    assert emulator.writes() == []
    assert len(deploy_requests(emulator)) == 1

    # the revert window: skipped in check mode (no write), then for real; then nothing more to do
    skip = role_play(tmp_path, "schema_change", role_vars(world, schema_change_revert_window="skip"), name="skip.yml")
    emulator.clear_requests()
    ansible.run(skip, check=True, diff=True).succeeded(changed=1)
    assert emulator.writes() == []
    skipped = ansible.run(skip).succeeded(changed=1)
    assert "Deploy request #1 from pr-7 into main is complete: the schema is live on main." in skipped.output
    assert emulator.writes() == ["POST /v1%s/deploy-requests/1/skip-revert" % DATABASE_PATH]
    emulator.clear_requests()
    ansible.run(skip).succeeded(changed=0)
    assert emulator.writes() == []


def test_schema_change_check_mode_predicts_without_writing(ansible, emulator, world, tmp_path):
    emulator.control("POST", "/branches/%s/%s/pr-7/ddl" % (ORG, DATABASE), dict(statements=[ORDERS]))
    play = role_play(tmp_path, "schema_change", role_vars(world, schema_change_delete_branch=True))

    emulator.clear_requests()
    checked = ansible.run(play, check=True, diff=True).succeeded()
    assert "A deploy request from pr-7 into main would be opened and deployed; the tables that differ: orders." \
        in checked.output
    assert "Branch pr-7 would be deleted." in checked.output
    assert emulator.writes() == [] and deploy_requests(emulator) == []

    # opened, not deployed: then a check run predicts the deploy of the open request
    opened = role_play(tmp_path, "schema_change", role_vars(world, schema_change_deploy=False), name="open.yml")
    done = ansible.run(opened).succeeded(changed=1)
    assert "Deploy request #1 from pr-7 into main is deployable: it can be deployed." in done.output
    assert "orders" not in tables(emulator, "main")
    emulator.clear_requests()
    ansible.run(opened).succeeded(changed=0)
    assert emulator.writes() == []

    predicted = ansible.run(play, check=True, diff=True).succeeded()
    assert "Deploy request #1 from pr-7 into main would be deployed." in predicted.output
    assert "Branch pr-7 would be deleted." in predicted.output
    assert emulator.writes() == []
    assert "orders" not in tables(emulator, "main")


def test_schema_change_gated_deploy_waits_for_its_cutover(ansible, emulator, world, tmp_path):
    gated = role_play(tmp_path, "schema_change", role_vars(world, schema_change_auto_cutover=False))
    waiting = ansible.run(gated).succeeded(changed=3)
    assert "Deploy request #1 from pr-7 into main is awaiting_cutover: the change is ready and waits for its " \
           "cutover; run again with schema_change_cutover=true to apply it." in waiting.output
    assert "orders" not in tables(emulator, "main")

    emulator.clear_requests()
    ansible.run(gated).succeeded(changed=0)
    assert emulator.writes() == []

    cutover = role_play(tmp_path, "schema_change", role_vars(world, schema_change_cutover=True), name="cutover.yml")
    emulator.clear_requests()
    ansible.run(cutover, check=True).succeeded(changed=1)
    assert emulator.writes() == [] and "orders" not in tables(emulator, "main")
    applied = ansible.run(cutover).succeeded(changed=1)
    assert "Deploy request #1 from pr-7 into main is revertable: the schema is live on main" in applied.output
    assert emulator.writes() == ["POST /v1%s/deploy-requests/1/apply-deploy" % DATABASE_PATH]
    assert "orders" in tables(emulator, "main")

    emulator.clear_requests()
    ansible.run(cutover).succeeded(changed=0)
    assert emulator.writes() == []


def test_schema_change_deletes_the_branch_when_asked(ansible, emulator, world, tmp_path):
    play = role_play(tmp_path, "schema_change", role_vars(world, schema_change_delete_branch=True),
                     after=facts(1, "revertable", ["orders"]))
    done = ansible.run(play).succeeded(changed=4)  # the DDL, opened, deployed, the branch deleted
    assert "is revertable: the schema is live on main" in done.output and "Branch pr-7 was deleted." in done.output
    assert "orders" in tables(emulator, "main")
    assert [b["name"] for b in emulator.list(DATABASE_PATH + "/branches")] == ["main"]

    # the branch is gone: its deploy request is reported, the DDL tasks do not run
    play = role_play(tmp_path, "schema_change", role_vars(world, schema_change_delete_branch=True),
                     name="again.yml", after=facts(1, "revertable", []))
    emulator.clear_requests()
    again = ansible.run(play).succeeded(changed=0)
    assert "Deploy request #1 from pr-7 into main is revertable" in again.output
    assert "Branch pr-7 no longer exists: the DDL tasks did not run." in again.output
    assert emulator.writes() == []


def test_schema_change_opens_nothing_for_a_branch_without_a_change(ansible, emulator, world, tmp_path):
    play = role_play(tmp_path, "schema_change", role_vars(world, without=["schema_change_ddl_tasks"]),
                     after=facts(None, "no_changes", []))
    ran = ansible.run(play).succeeded(changed=0)
    assert "Branch pr-7 holds no schema change against main (their schemas match): no deploy request was opened." \
        in ran.output
    assert emulator.writes() == [] and deploy_requests(emulator) == []


def test_schema_change_stops_on_a_lint_error(ansible, emulator, world, tmp_path):
    play = role_play(tmp_path, "schema_change", role_vars(world, table="events", statement=NO_KEY))
    failed = ansible.run(play).failed("is in state 'error': its deploy check failed, with 1 lint error: table 'events' "
                                      "of keyspace 'app': NO_UNIQUE_KEY")
    assert failed.elapsed < 60
    assert "events" not in tables(emulator, "main")


def test_schema_change_playbook(ansible, emulator, world, tmp_path):
    branch("pr-9", emulator)
    extra_vars = role_vars(world, schema_change_pr=9, schema_change_delete_branch=True,
                           without=["schema_change_branch"])

    emulator.clear_requests()
    ansible.run("planetscale.cloud.schema_change", extra_vars=extra_vars, check=True).succeeded(changed=0)
    assert emulator.writes() == []

    done = ansible.run("planetscale.cloud.schema_change", extra_vars=extra_vars).succeeded(changed=4)
    assert "Deploy request #1 from pr-9 into main is revertable" in done.output
    assert "orders" in tables(emulator, "main")
    assert sorted(b["name"] for b in emulator.list(DATABASE_PATH + "/branches")) == ["main", "pr-7"]

    emulator.clear_requests()
    ansible.run("planetscale.cloud.schema_change", extra_vars=extra_vars).succeeded(changed=0)
    assert emulator.writes() == []


def test_schema_change_playbook_needs_its_variables(ansible, emulator):
    ansible.run("planetscale.cloud.schema_change", extra_vars=dict(schema_change_database="app")).failed(
        "Set schema_change_database, and schema_change_pr (the pull request's number) or schema_change_branch.")
    assert emulator.requests() == []


@pytest.mark.parametrize("more, refusal, message", [
    (dict(schema_change_branch="main", schema_change_into_branch="pr-7"), "Refuse to deploy from a production branch",
     'Branch \\"main\\" of database \\"app\\" is a production branch; schema_change deploys the change of a '
     'development branch'),
    (dict(schema_change_branch="main", schema_change_into_branch="main"), "Refuse to deploy a branch into itself",
     'schema_change_branch and schema_change_into_branch are both \\"main\\"'),
    (dict(schema_change_branch="pr-404"), "Stop when there is neither the branch nor a deploy request from it",
     'Branch \\"pr-404\\" of database \\"app\\" does not exist, and no deploy request from it into \\"main\\" was '
     'found.'),
])
def test_schema_change_refuses(ansible, emulator, world, tmp_path, more, refusal, message):
    refused = ansible.run(role_play(tmp_path, "schema_change", role_vars(world, **more))).failed(message)
    assert [task.name for task in refused.failures()] == [ROLE + refusal]
    assert emulator.writes() == []


def test_schema_change_refuses_a_missing_ddl_tasks_file_before_any_request(ansible, emulator, world, tmp_path):
    play = role_play(tmp_path, "schema_change", role_vars(world, schema_change_ddl_tasks="nowhere/migrate.yml"))
    emulator.clear_requests()
    refused = ansible.run(play).failed('schema_change_ddl_tasks is \\"nowhere/migrate.yml\\", and %s is not a file.'
                                       % (tmp_path / "nowhere" / "migrate.yml"))
    assert [task.name for task in refused.failures()] == [ROLE + "Refuse a DDL tasks file that is not there"]
    assert emulator.requests() == []


@pytest.mark.parametrize("more, message", [
    (dict(schema_change_revert_window="revert"),
     "value of schema_change_revert_window must be one of: keep, skip, got: revert"),
    (dict(schema_change_wait_timeout="soon"), "unable to convert to int"),
    (dict(without=["schema_change_database"]), "missing required arguments: schema_change_database"),
])
def test_schema_change_argument_specs_reject_bad_input(ansible, emulator, world, tmp_path, more, message):
    emulator.clear_requests()
    ansible.run(role_play(tmp_path, "schema_change", role_vars(world, **more))).failed(
        "Validation of arguments failed", message)
    assert emulator.requests() == []
