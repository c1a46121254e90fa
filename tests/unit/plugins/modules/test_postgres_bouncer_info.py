# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.postgres_bouncer_info import PostgresBouncerInfo

BRANCH = "/v1/organizations/acme/databases/pgapp/branches/main"
NOT_FOUND = (404, {"code": "not_found", "message": "Not Found"})

MODULE = PostgresBouncerInfo  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="pgapp", branch="main", service_token_id="svc", service_token="s3cret")


def page(*items):
    return (200, dict(type="list", next_page=None, data=list(items)))


def paths(server):
    return [r["path"] for r in server.requests]


def test_every_bouncer_of_the_branch_and_no_resize_requests_unless_asked(server, run):
    server.script = [page(dict(id="b1", name="pool"), dict(id="b2", name="read"))]
    result = run()
    assert result == dict(changed=False, bouncers=[dict(id="b1", name="pool"), dict(id="b2", name="read")])
    assert paths(server) == [BRANCH + "/bouncers"]


def test_the_resize_requests_of_the_branch(server, run):
    server.script = [page(dict(id="b1", name="pool")), page(dict(id="r1", state="pending"))]
    result = run(resize_requests=True)
    assert result["resize_requests"] == [dict(id="r1", state="pending")]
    assert paths(server) == [BRANCH + "/bouncers", BRANCH + "/bouncer-resizes"]


def test_one_bouncer_by_name_with_its_resize_requests(server, run):
    server.script = [(200, dict(id="b1", name="pool")), page(dict(id="r1", state="completed"))]
    result = run(name="pool", resize_requests=True)
    assert result["bouncers"] == [dict(id="b1", name="pool")] and len(result["resize_requests"]) == 1
    assert paths(server) == [BRANCH + "/bouncers/pool", BRANCH + "/bouncers/pool/resizes"]


def test_a_name_no_bouncer_has_is_an_empty_list(server, run):
    server.script = [NOT_FOUND]
    assert run(name="gone", resize_requests=True) == dict(changed=False, bouncers=[], resize_requests=[])
    assert paths(server) == [BRANCH + "/bouncers/gone"]


def test_a_name_with_a_path_character_is_refused_before_any_request(server, run):
    with pytest.raises(ModuleFailure) as caught:
        run(name="../roles")
    assert caught.value.msg == "name must be a name, not '../roles'." and server.requests == []
