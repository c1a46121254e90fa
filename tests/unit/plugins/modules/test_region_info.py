# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.region_info import RegionInfo

ORGANIZATION = "/v1/organizations/acme/regions"
DATABASE = "/v1/organizations/acme/databases/shop/regions"
PUBLIC = "/v1/regions"


MODULE = RegionInfo  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", service_token_id="svc", service_token="s3cret")


def region(slug, **fields):
    return dict(dict(id="r-" + slug, slug=slug, enabled=True, provider="AWS", display_name=slug, location=slug),
                **fields)


def page(items, next_page=None):
    return (200, dict(type="list", next_page=next_page, data=items))


@pytest.mark.parametrize("args, path", [
    (dict(database="shop"), DATABASE),  # what every playbook written before the scopes asks
    (dict(database="shop", scope="database"), DATABASE),
    (dict(), ORGANIZATION),
    (dict(scope="organization"), ORGANIZATION),
    (dict(scope="public"), PUBLIC),
])
def test_the_scope_chooses_the_list(server, run, args, path):
    server.script = [page([region("us-east")])]
    assert run(**args) == dict(changed=False, regions=[region("us-east")])
    assert [r["path"] for r in server.requests] == [path]


def test_the_public_list_needs_no_organization_and_sends_no_credential(server, run):
    """The public list of the platform is read without an organization, and the credentials given are not sent; its
    real answers are a bare {data} whose items carry type and current_default, and no public_ip_addresses."""
    lean = dict(region("us-east", current_default=True), type="Region")
    server.script = [(200, dict(data=[lean]))]
    assert run(scope="public", organization=None)["regions"] == [lean]
    assert "Authorization" not in server.requests[0]["headers"]
    server.script = [(200, dict(data=[]))]
    assert run(scope="public", organization=None, service_token_id=None, service_token=None)["regions"] == []


def test_every_page_of_the_organization_is_read_up_to_the_limit(server, run):
    server.script = [page([region("r%d" % n) for n in range(100)], next_page=2), page([region("last")])]
    assert len(run()["regions"]) == 101
    assert [r["query"]["page"] for r in server.requests] == [["1"], ["2"]]
    server.requests.clear()
    server.script = [page([region("a"), region("b")])]
    assert [r["slug"] for r in run(limit=1)["regions"]] == ["a"]
    assert server.requests[0]["query"]["per_page"] == ["1"]


@pytest.mark.parametrize("args, message", [
    (dict(scope="database"), "scope=database lists the regions of a database: set database to its name, or set scope "
                             "to organization or public."),
    (dict(scope="organization", database="shop"), "database is for scope=database only: the organization's regions "
                                                  "are not a database's; remove database, or set scope to database."),
    (dict(scope="public", database="shop"), "database is for scope=database only: the public regions are not a "
                                            "database's; remove database, or set scope to database."),
    (dict(organization=None), "No organization was given"),
    (dict(service_token=None, service_token_id=None), "No credentials were given"),
])
def test_bad_input_is_a_sentence_before_any_request(server, run, args, message):
    with pytest.raises(ModuleFailure) as caught:
        run(**args)
    assert caught.value.msg.startswith(message)
    assert server.requests == []


def test_a_missing_public_list_names_no_organization(server, run):
    server.script = [(404, dict(code="not_found", message="Not Found"))]
    with pytest.raises(ModuleFailure) as caught:
        run(scope="public")
    assert caught.value.msg == "GET /regions failed with HTTP 404: not_found, Not Found."
