# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.postgres_extension_info import PostgresExtensionInfo

BRANCH = "/v1/organizations/acme/databases/pgshop/branches/main"
EXTENSIONS = BRANCH + "/extensions"
REFUSED = (422, dict(code="unprocessable", message="Cluster extensions are for PostgreSQL branches"))


MODULE = PostgresExtensionInfo  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="pgshop", branch="main", service_token_id="svc", service_token="s3cret")


def extension(name, available=True, loader="create_extension"):
    return dict(id="e-" + name, name=name, available=available, loader=loader, internal=False, parameters=[],
                unavailable_reason=None if available else "Not on this PostgreSQL version")


CATALOGUE = [extension("pg_stat_statements", loader="shared_preload_libraries"), extension("pgcrypto"),
             extension("postgis", available=False)]


def test_every_extension_the_api_answers_is_returned(server, run):
    server.script = [(200, CATALOGUE)]
    assert run(check_mode=True) == dict(changed=False, extensions=CATALOGUE)
    assert [(r["method"], r["path"]) for r in server.requests] == [("GET", EXTENSIONS)]


@pytest.mark.parametrize("args, names", [
    (dict(available=True), ["pg_stat_statements", "pgcrypto"]),
    (dict(available=False), ["postgis"]),
    (dict(name=["postgis", "pgcrypto"]), ["pgcrypto", "postgis"]),
    (dict(name="pgcrypto", available=False), []),
])
def test_the_filters_select_among_every_extension(server, run, args, names):
    server.script = [(200, CATALOGUE)]
    assert [e["name"] for e in run(**args)["extensions"]] == names


def test_a_mysql_branch_is_a_sentence(server, run):
    server.script = [REFUSED, (200, dict(name="main", kind="mysql"))]
    with pytest.raises(ModuleFailure) as caught:
        run()
    assert caught.value.msg == ("Branch 'main' of database 'pgshop' is a MySQL (Vitess) branch: only PostgreSQL "
                                "branches have extensions.")
    assert caught.value.result["status"] == 422


def test_a_forbidden_answer_is_not_taken_for_a_mysql_branch(server, run):
    server.script = [(403, dict(code="forbidden", message="Forbidden"))]
    with pytest.raises(ModuleFailure) as caught:
        run()
    assert "lack access" in caught.value.msg and len(server.requests) == 1


def test_an_answer_of_another_shape_is_a_sentence(server, run):
    server.script = [(200, dict(type="list"))]
    with pytest.raises(ModuleFailure) as caught:
        run()
    assert caught.value.msg.endswith("the answer is an object where a list of extensions was expected.")


def test_bad_input_fails_before_any_request(server, run):
    with pytest.raises(ModuleFailure) as caught:
        run(name=[""])
    assert caught.value.msg == "name must not hold an empty name; leave it out to return every one."
    assert server.requests == []
