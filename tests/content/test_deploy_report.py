# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The deploy_report role after a real deploy on the emulator: the deploy's schema change, the queries a password of
main ran since then (MariaDB's own statistics, through the emulator's query insights) and the one that failed, the
table sizes; a dry run writes nothing; no secret; a deploy request that has not deployed is a sentence."""

from __future__ import annotations

import json

import pymysql
import pytest

from conftest import mode, role_play

DATABASE = "/organizations/acme/databases/app"


def deployed(emulator):
    """Deploy request #1 of app: add-orders (a new table orders) into main, deployed, its revert window skipped."""
    emulator.settings(deploy_check_delay=0.2, deploy_step_delay=0.2)
    emulator.api("POST", DATABASE + "/branches", dict(name="add-orders", parent_branch="main"))
    emulator.advance(5)
    emulator.ddl("app", "add-orders", ["CREATE TABLE `orders` (`id` bigint unsigned NOT NULL AUTO_INCREMENT, "
                                       "`total` int, PRIMARY KEY (`id`))"])
    number = emulator.api("POST", DATABASE + "/deploy-requests", dict(branch="add-orders", into_branch="main"))["number"]
    emulator.advance(5)
    emulator.api("POST", "%s/deploy-requests/%d/deploy" % (DATABASE, number), {})
    emulator.advance(30)
    emulator.api("POST", "%s/deploy-requests/%d/skip-revert" % (DATABASE, number), {})
    emulator.advance(5)
    return number


def queries_on_main(emulator):
    """What an application does on main after the deploy, through a password of its own: three reads and a
    statement the server refuses. Answers the password's secret."""
    password = emulator.api("POST", DATABASE + "/branches/main/passwords", dict(name="app-after-deploy", role="admin"))
    connection = dict(host=password["access_host_url"], username=password["username"], password=password["plain_text"],
                      database="app")
    emulator.login(connection, "INSERT INTO orders (total) VALUES (10), (20)", "SELECT * FROM orders",
                   "SELECT COUNT(*) FROM users", "SELECT total FROM orders WHERE id = 1")
    with pytest.raises(pymysql.MySQLError):
        emulator.login(connection, "SELECT * FROM invoices")
    return password["plain_text"]


def report_vars(tmp_path, number, **more):
    return dict(deploy_report_organization="acme", deploy_report_database="app", deploy_report_number=number,
                deploy_report_report_path=str(tmp_path / "report.md"), **more)


def test_the_report_after_a_deploy_lists_its_change_the_queries_since_and_their_errors(ansible, emulator, tmp_path):
    number = deployed(emulator)
    secret = queries_on_main(emulator)
    play = role_play(tmp_path, "deploy_report", report_vars(tmp_path, number))
    report_path, json_path = tmp_path / "report.md", tmp_path / "report.json"

    emulator.clear_requests()
    ansible.run(play, check=True).succeeded(changed=2)
    assert emulator.writes() == [] and not report_path.exists() and not json_path.exists()

    run = ansible.run(play).succeeded(changed=2)
    assert emulator.writes() == []
    assert mode(report_path) == "0o600" and mode(json_path) == "0o600"
    report, records = report_path.read_text(), json.loads(json_path.read_text())
    assert (records["number"], records["branch"], records["into_branch"]) == (number, "add-orders", "main")
    assert [(op["table_name"], op["operation_name"]) for op in records["operations"]] == [("orders", "CREATE")]
    ran = dict((query["normalized_sql"], query) for query in records["queries"])
    assert any("orders" in sql and sql.upper().startswith("INSERT") for sql in ran), sorted(ran)
    assert any("count" in sql.lower() and "users" in sql for sql in ran), sorted(ran)
    assert all(query["query_count"] >= 1 for query in records["queries"])
    times = [query["sum_total_duration_millis"] for query in records["queries"]]
    assert times == sorted(times, reverse=True)  # those that used the most time first
    assert sum(error["error_count"] for error in records["errors"]) == 1
    assert "invoices" in records["errors"][0]["error_message"]
    assert sorted(table["name"] for table in records["tables"]) == ["orders", "users"]
    assert "## Schema changes (1)" in report and "## Errors since the deploy (1)" in report
    assert "## The queries that used the most time since the deploy (%d)" % len(records["queries"]) in report
    assert "1 schema change, %d query pattern" % len(records["queries"]) in " ".join(run.output.split())
    ansible.assert_no_secret(secret)
    assert secret not in report and secret not in json_path.read_text()


def test_a_deploy_request_that_has_not_deployed_is_a_sentence(ansible, emulator, tmp_path):
    emulator.api("POST", DATABASE + "/branches", dict(name="add-orders", parent_branch="main"))
    emulator.advance(5)
    emulator.ddl("app", "add-orders", ["CREATE TABLE `orders` (`id` bigint unsigned NOT NULL, PRIMARY KEY (`id`))"])
    number = emulator.api("POST", DATABASE + "/deploy-requests", dict(branch="add-orders", into_branch="main"))["number"]
    emulator.clear_requests()
    ansible.run(role_play(tmp_path, "deploy_report", report_vars(tmp_path, number))).failed(
        "Deploy request #%d of database app has not deployed" % number)
    read = [request["path"] for request in emulator.requests()]
    assert read and all(path.startswith("/v1%s/deploy-requests/%d" % (DATABASE, number)) for path in read), read
    assert not (tmp_path / "report.md").exists()
