# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The built artifact, installed into an empty path (the fixture installed), and its demo playbook run by name
(ansible-playbook planetscale.cloud.demo) as a new user runs it: first with the collection alone, then with
ansible.mysql installed beside it (make db-collections), then as a dry run of a change."""

from __future__ import annotations

import json
import os

from conftest import mode
from harness import DB_COLLECTIONS_PATH, demo_vars

COLLECTION = os.path.join("ansible_collections", "planetscale", "cloud")


def test_the_installed_demo_without_ansible_mysql_then_with_it_and_as_a_dry_run(ansible, emulator, tmp_path,
                                                                                installed):
    collection = os.path.join(installed, COLLECTION)
    for shipped in ("playbooks/demo.yml", "playbooks/audit.yml", "playbooks/templates/audit_report.md.j2",
                    "roles/branch_environment/meta/argument_specs.yml", "roles/oauth_session/tasks/main.yml",
                    "meta/execution-environment.yml", "meta/ee-requirements.txt", "docs/docsite/extra-docs.yml"):
        assert os.path.isfile(os.path.join(collection, shipped)), shipped
    for left_out in ("tests", "hack", "Makefile", "requirements"):
        assert not os.path.exists(os.path.join(collection, left_out)), left_out

    emulator.seed(reports=dict(branch="main", count=3))
    output = tmp_path / "demo"
    extra_vars = demo_vars(emulator, output)

    # The collection alone: the demo says which collection the schema change needs and runs without it. The output
    # directory, the team, the branch, its password and connection file, the tokens and their file, the report and
    # its JSON, the access review and its JSON (11).
    alone = ansible.run("planetscale.cloud.demo", extra_vars=extra_vars, collections_path=installed)
    alone.succeeded(changed=11)
    assert "it needs the collection ansible.mysql, which is not installed. Install it with `ansible-galaxy " \
           "collection install ansible.mysql`" in alone.output
    for said in ("Acting as admin@acme.test in organization acme.",
                 "app can use us-east, us-west, eu-west, ap-northeast; its default region is us-east.",
                 "Engineering has 4 members:",
                 "Branch demo-preview of database app is ready.",
                 "everyone has 260 members",
                 "main has 3 query-pattern reports",
                 "The access token is active until"):
        assert said in alone.output, said
    assert os.path.join(collection, "roles", "branch_environment", "") in alone.output  # the installed copy's role
    assert "demo-orders" not in [branch["name"] for branch in emulator.list(
        "/organizations/acme/databases/app/branches")]
    assert mode(output) == "0o700"
    assert mode(output / "preview-connection.json") == "0o600" and mode(output / "oauth-token.json") == "0o600"
    report = (output / "audit.md").read_text()
    assert "## Teams (3)" in report and "## Query-pattern reports of branch main (3)" in report
    assert len(json.loads((output / "audit.json").read_text())["query_pattern_reports"]) == 3
    assert "## Service tokens (1)" in (output / "audit-access.md").read_text()
    assert mode(output / "audit-access.md") == "0o600" and mode(output / "audit-access.json") == "0o600"

    # ansible.mysql installed: the schema change, the development branch, its password and file, the table made
    # through its connection, the deploy request opened, deployed and its revert window skipped, the reader's
    # password of production and its file (8); the report on the deploy and its JSON (2); the audit's and the access
    # review's reports and JSON, which now list the new branch and passwords (4)
    with_mysql = os.pathsep.join((installed, DB_COLLECTIONS_PATH))
    schema = ansible.run("planetscale.cloud.demo", extra_vars=extra_vars, collections_path=with_mysql)
    schema.succeeded(changed=14)
    assert "The orders table, made on demo-orders through its own connection, is live on main (deploy request #1," \
           " complete): a reader of main counts 0 rows in it." in schema.output
    # the report after the deploy (and its JSON), on what the demo's own reader ran on main since
    deployed = json.loads((output / "deploy-1-report.json").read_text())
    assert [(change["table_name"], change["operation_name"]) for change in deployed["operations"]] == [
        ("orders", "CREATE")]
    assert [query["normalized_sql"] for query in deployed["queries"] if "orders" in query["normalized_sql"]], \
        deployed["queries"]
    assert mode(output / "deploy-1-report.md") == "0o600"
    assert "ansible-galaxy collection install" not in schema.output

    # Then a dry run that changes two variables predicts exactly those two changes: every other task of the demo,
    # run again, would change nothing (each module's no-op sends no write: its integration target proves it).
    emulator.clear_requests()
    change = dict(extra_vars, demo_team_description="Reviewed in a dry run", demo_oauth_min_ttl=7200)
    checked = ansible.run("planetscale.cloud.demo", extra_vars=change, check=True, diff=True,
                          collections_path=with_mysql)
    checked.succeeded(changed=2)  # the team, the token refresh
    assert '+    "description": "Reviewed in a dry run",' in checked.output
    assert "the tokens would be refreshed" in checked.output
    assert emulator.writes() == []

    secrets = json.loads((output / "preview-connection.json").read_text())["password"], \
        json.loads((output / "oauth-token.json").read_text())["refresh_token"], \
        json.loads((output / "demo-orders-migrate.json").read_text())["password"], \
        json.loads((output / "main-reader.json").read_text())["password"]
    ansible.assert_no_secret(*secrets)
