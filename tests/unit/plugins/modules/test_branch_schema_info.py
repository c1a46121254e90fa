# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.branch_schema_info import BranchSchemaInfo

BRANCH = "/v1/organizations/acme/databases/shop/branches/dev"
TABLES = [dict(name="orders", raw="CREATE TABLE `orders` (`id` bigint NOT NULL, PRIMARY KEY (`id`))", html="<pre/>"),
          dict(name="logs", raw="CREATE TABLE `logs` (`line` text)", html="<pre/>")]


def lint_error(table, keyspace="shop"):
    return dict(lint_error="NO_UNIQUE_KEY", subject_type="table", keyspace_name=keyspace, table_name=table,
                error_description="no key", docs_url="https://docs.example/keys")


def page(items, next_page=None):
    return (200, dict(type="list", current_page=1, next_page=next_page, data=items))


MODULE = BranchSchemaInfo  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="shop", branch="dev", service_token_id="svc", service_token="s3cret")


def test_the_schema_and_every_page_of_lint_errors(server, run):
    server.script = [(200, dict(data=TABLES)), page([lint_error("logs")], next_page=2), page([lint_error("events")])]
    result = run()
    assert result == dict(changed=False, schema=TABLES, lint_errors=[lint_error("logs"), lint_error("events")])
    assert [r["path"][len(BRANCH):] for r in server.requests] == ["/schema", "/schema/lint", "/schema/lint"]
    assert [r["query"].get("page") for r in server.requests[1:]] == [["1"], ["2"]]
    assert server.requests[0]["query"] == {}


def test_a_keyspace_narrows_the_schema_request_and_the_lint_errors(server, run):
    server.script = [(200, dict(data=TABLES[:1])), page([lint_error("logs"), lint_error("t", keyspace="other")])]
    result = run(keyspace="shop")
    assert server.requests[0]["query"] == dict(keyspace=["shop"])
    assert result["lint_errors"] == [lint_error("logs")]


def test_check_mode_reads_the_same(server, run):
    server.script = [(200, dict(data=TABLES)), page([])]
    assert run(check_mode=True) == dict(changed=False, schema=TABLES, lint_errors=[])


def test_a_branch_without_lint_returns_its_schema_and_says_why_there_are_no_lint_errors(server, run):
    server.script = [(200, dict(data=TABLES)), (404, dict(code="not_found", message="Not Found"))]
    result = run()
    assert result == dict(changed=False, schema=TABLES, lint_errors=[], lint_note=(
        "The platform has no schema lint for branch 'dev' of database 'shop' (its schema lint answered 404); lint is "
        "a MySQL feature of the platform."))
    assert [r["path"][len(BRANCH):] for r in server.requests] == ["/schema", "/schema/lint"]


def test_another_refusal_of_the_lint_still_fails(server, run):
    server.script = [(200, dict(data=TABLES)), (403, dict(code="forbidden", message="Forbidden"))]
    with pytest.raises(ModuleFailure, match="schema/lint failed with HTTP 403"):
        run()


def test_a_missing_branch_fails_with_a_hint(server, run):
    server.script = [(404, dict(code="not_found", message="Not Found"))]
    with pytest.raises(ModuleFailure) as caught:
        run()
    assert caught.value.msg == ("GET /organizations/acme/databases/shop/branches/dev/schema failed with HTTP 404: "
                                "not_found, Not Found. Check that organization 'acme', database 'shop' and branch "
                                "'dev' exist and that the credentials can see them.")


def test_an_answer_without_a_list_of_tables_is_a_sentence(server, run):
    server.script = [(200, dict(tables=[]))]
    with pytest.raises(ModuleFailure, match="the answer has no data list of tables"):
        run()


def test_a_missing_keyspace_is_named_in_the_hint(server, run):
    server.script = [(404, dict(code="not_found", message="Keyspace not found"))]
    with pytest.raises(ModuleFailure) as caught:
        run(keyspace="other")
    assert caught.value.msg.endswith("Check that organization 'acme', database 'shop', branch 'dev' and keyspace 'other' "
                                     "exist and that the credentials can see them.")


@pytest.mark.parametrize("args, message", [(dict(branch=".."), "branch must be a name, not '..'."),
                                           (dict(database="a/b"), "database must be a name, not 'a/b'.")])
def test_bad_input_fails_before_any_request(server, run, args, message):
    with pytest.raises(ModuleFailure) as caught:
        run(**args)
    assert caught.value.msg == message and server.requests == []
