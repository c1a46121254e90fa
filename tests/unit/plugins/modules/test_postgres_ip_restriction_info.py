# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.postgres_ip_restriction_info import \
    PostgresIpRestrictionInfo

DATABASE = "/v1/organizations/acme/databases/shop"
CIDRS = DATABASE + "/cidrs"
NOT_FOUND = (404, dict(code="not_found", message="Not Found"))
NOT_POSTGRES = (422, dict(code="unprocessable", message="Not a PostgreSQL database"))

MODULE = PostgresIpRestrictionInfo  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="shop", service_token_id="svc", service_token="s3cret")


def restriction(rid, role="", schema=""):
    return dict(id=rid, role=role, schema=schema, cidrs=["203.0.113.0/24"], description=None)


def page(items, next_page=None):
    return (200, dict(type="list", next_page=next_page, data=items))


def test_every_page_is_read_in_check_mode_too(server, run):
    server.script = [page([restriction("r%d" % n, role="r%d" % n) for n in range(100)], next_page=2),
                     page([restriction("last")])]
    result = run(check_mode=True)
    assert result["changed"] is False and len(result["ip_restrictions"]) == 101
    assert [r["query"]["page"] for r in server.requests] == [["1"], ["2"]]
    assert all(r["path"] == CIDRS and r["method"] == "GET" for r in server.requests)


def test_role_and_schema_select_and_an_empty_one_means_every_role_or_schema(server, run):
    listed = page([restriction("all"), restriction("app", role="app"), restriction("app-s", role="app", schema="s"),
                   dict(restriction("null"), role=None, schema=None)])
    server.script = [listed]
    assert [r["id"] for r in run(role="app")["ip_restrictions"]] == ["app", "app-s"]
    server.script = [listed]
    assert [r["id"] for r in run(role="", schema="")["ip_restrictions"]] == ["all", "null"]
    server.script = [listed]
    assert [r["id"] for r in run(schema="s")["ip_restrictions"]] == ["app-s"]


def test_id_reads_one_and_a_missing_one_is_an_empty_list(server, run):
    server.script = [(200, restriction("a"))]
    assert [r["id"] for r in run(id="a")["ip_restrictions"]] == ["a"]
    assert server.requests[0]["path"] == CIDRS + "/a"
    server.requests.clear()
    server.script = [NOT_FOUND, page([])]
    assert run(id="gone") == dict(changed=False, ip_restrictions=[])
    assert [r["path"] for r in server.requests] == [CIDRS + "/gone", CIDRS]


def test_a_missing_database_is_a_sentence(server, run):
    server.script = [NOT_FOUND, NOT_FOUND]
    with pytest.raises(ModuleFailure) as caught:
        run()
    assert caught.value.msg.endswith("Check that organization 'acme' and database 'shop' exist and that the "
                                     "credentials can see them.")
    assert [r["path"] for r in server.requests] == [CIDRS, DATABASE]


@pytest.mark.parametrize("args", [dict(), dict(id="a")])
def test_a_mysql_database_is_a_sentence(server, run, args):
    server.script = [NOT_POSTGRES, (200, dict(name="shop", kind="mysql"))]
    with pytest.raises(ModuleFailure) as caught:
        run(**args)
    assert caught.value.msg.startswith("Database 'shop' is a MySQL database: IP restrictions are for PostgreSQL")
    assert caught.value.result["status"] == 422


def test_a_refusal_for_a_postgresql_database_stands(server, run):
    server.script = [NOT_POSTGRES, (200, dict(name="shop", kind="postgresql"))]
    with pytest.raises(ModuleFailure) as caught:
        run()
    assert "Not a PostgreSQL database" in caught.value.msg and "is a MySQL database" not in caught.value.msg


def test_a_database_that_cannot_be_a_name_is_refused_before_any_request(server, run):
    with pytest.raises(ModuleFailure) as caught:
        run(database="app?x")
    assert caught.value.msg == "database must be a name, not 'app?x'." and server.requests == []
