# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.schema_recommendation_info import SchemaRecommendationInfo

MODULE = SchemaRecommendationInfo  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="shop", service_token_id="svc", service_token="s3cret")
LIST = "/v1/organizations/acme/databases/shop/schema-recommendations"
NOT_FOUND = (404, dict(code="not_found", message="Not Found"))


def rec(number, state="open"):
    return dict(id="r%d" % number, number=number, state=state, recommendation_type="new_index")


def page(items, next_page=None):
    return (200, dict(type="list", next_page=next_page, data=items))


def test_every_page_is_read(server, run):
    server.script = [page([rec(n) for n in range(1, 101)], next_page=2), page([rec(101, "dismissed")])]
    result = run(check_mode=True)
    assert result["changed"] is False and [r["number"] for r in result["schema_recommendations"]][-2:] == [100, 101]
    assert [r["query"]["page"] for r in server.requests] == [["1"], ["2"]]
    assert all(r["path"] == LIST and "state" not in r["query"] for r in server.requests)


@pytest.mark.parametrize("state, kept", [("open", [1]), ("closed", [2, 3, 4])])
def test_state_is_asked_of_the_api_and_held_to(server, run, state, kept):
    """The filter goes to the API; a record of another state in its answer is left out all the same."""
    server.script = [page([rec(1), rec(2, "applied"), rec(3, "dismissed"), rec(4, "stale")])]
    assert [r["number"] for r in run(state=state)["schema_recommendations"]] == kept
    assert server.requests[0]["query"]["state"] == [state]


def test_number_reads_one_and_a_missing_one_is_an_empty_list(server, run):
    server.script = [(200, rec(7))]
    assert [r["number"] for r in run(number=7)["schema_recommendations"]] == [7]
    assert server.requests[0]["path"] == LIST + "/7"
    server.requests.clear()
    server.script = [NOT_FOUND, page([])]
    assert run(number=8) == dict(changed=False, schema_recommendations=[])
    assert [r["path"] for r in server.requests] == [LIST + "/8", LIST]


def test_number_with_a_state_it_is_not_in_is_an_empty_list(server, run):
    server.script = [(200, rec(7, "applied"))]
    assert run(number=7, state="open")["schema_recommendations"] == []


def test_a_missing_database_is_a_sentence(server, run):
    server.script = [NOT_FOUND]
    with pytest.raises(ModuleFailure) as caught:
        run()
    assert caught.value.msg.endswith("Check that organization 'acme' and database 'shop' exist and that the "
                                     "credentials can see them.")


def test_a_number_below_one_is_refused_before_any_request(server, run):
    with pytest.raises(ModuleFailure) as caught:
        run(number=0)
    assert caught.value.msg == "number must be a schema recommendation's number, 1 or more, not 0."
    assert server.requests == []
