# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.read_only_region_info import ReadOnlyRegionInfo

REGIONS = "/v1/organizations/acme/databases/shop/read-only-regions"
NOT_FOUND = (404, dict(code="not_found", message="Not Found"))


MODULE = ReadOnlyRegionInfo  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="shop", service_token_id="svc", service_token="s3cret")


def replica(slug, ready=True):
    return dict(id="ro-" + slug, display_name=slug, ready=ready, ready_at=None, region=dict(slug=slug, enabled=True))


def page(items, next_page=None):
    return (200, dict(type="list", next_page=next_page, data=items))


def test_every_page_is_read(server, run):
    server.script = [page([replica("r%d" % n) for n in range(100)], next_page=2), page([replica("eu-west")])]
    result = run(check_mode=True)
    assert result["changed"] is False and len(result["read_only_regions"]) == 101
    assert [(r["path"], r["query"]["page"]) for r in server.requests] == [(REGIONS, ["1"]), (REGIONS, ["2"])]


@pytest.mark.parametrize("args, ids", [
    (dict(region="eu-west"), ["ro-eu-west"]),
    (dict(ready=False), ["ro-ap-south"]),
    (dict(ready=True), ["ro-eu-west", "ro-us-west"]),
    (dict(region="ap-south", ready=True), []),
])
def test_region_and_ready_select(server, run, args, ids):
    server.script = [page([replica("eu-west"), replica("ap-south", ready=False), replica("us-west")])]
    assert [r["id"] for r in run(**args)["read_only_regions"]] == ids
    assert all(set(r["query"]) == {"page", "per_page"} for r in server.requests)  # selected here, not sent


def test_a_record_without_a_region_is_not_selected_by_region(server, run):
    server.script = [page([dict(id="odd", ready=True, region=None), replica("eu-west")])]
    assert [r["id"] for r in run(region="eu-west")["read_only_regions"]] == ["ro-eu-west"]


def test_a_database_without_read_only_regions_is_an_empty_list(server, run):
    server.script = [page([])]
    assert run() == dict(changed=False, read_only_regions=[])


def test_a_missing_database_is_the_not_found_sentence(server, run):
    server.script = [NOT_FOUND]
    with pytest.raises(ModuleFailure) as caught:
        run()
    assert caught.value.msg.endswith("Check that organization 'acme' and database 'shop' exist and that the "
                                     "credentials can see them.")


@pytest.mark.parametrize("args, message", [
    (dict(database="a/b"), "database must be a name, not 'a/b'."),
    (dict(region=" "), "region must be a name, not ' '."),
])
def test_bad_input_fails_before_any_request(server, run, args, message):
    with pytest.raises(ModuleFailure) as caught:
        run(**args)
    assert caught.value.msg == message and server.requests == []
