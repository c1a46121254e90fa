# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import json

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.webhook_info import WebhookInfo

HOOKS = "/v1/organizations/acme/databases/shop/webhooks"
SECRET = "whsec-unit-info-1a2b3c4d"
NOT_FOUND = (404, dict(code="not_found", message="Not Found"))


MODULE = WebhookInfo  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="shop", service_token_id="svc", service_token="s3cret")


def hook(hid, url=None):
    return dict(id=hid, url=url or "https://hooks.example.com/%s" % hid, secret=SECRET, enabled=True,
                events=["branch.ready"])


def page(items, next_page=None):
    return (200, dict(type="list", next_page=next_page, data=items))


def test_every_page_is_read_and_no_secret_is_returned(server, run):
    server.script = [page([hook("h%d" % n) for n in range(100)], next_page=2), page([hook("last")])]
    result = run(check_mode=True)
    assert result["changed"] is False and len(result["webhooks"]) == 101
    assert [r["query"]["page"] for r in server.requests] == [["1"], ["2"]]
    assert all(r["path"] == HOOKS for r in server.requests)
    assert SECRET not in json.dumps(result) and "secret" not in result["webhooks"][0]


def test_return_secret_returns_each_secret(server, run):
    server.script = [page([hook("a"), hook("b")])]
    assert [h["secret"] for h in run(return_secret=True)["webhooks"]] == [SECRET, SECRET]


def test_url_selects_the_webhooks_of_that_url(server, run):
    server.script = [page([hook("a"), hook("b", url="https://x.example.com/"), hook("c")])]
    assert [h["id"] for h in run(url="https://x.example.com/")["webhooks"]] == ["b"]


def test_id_reads_one_and_a_missing_one_is_an_empty_list(server, run):
    server.script = [(200, hook("a"))]
    result = run(id="a")
    assert [h["id"] for h in result["webhooks"]] == ["a"] and "secret" not in result["webhooks"][0]
    assert server.requests[0]["path"] == HOOKS + "/a"
    server.requests.clear()
    server.script = [NOT_FOUND, page([])]
    assert run(id="gone") == dict(changed=False, webhooks=[])
    assert [r["path"] for r in server.requests] == [HOOKS + "/gone", HOOKS]


def test_a_missing_database_is_a_sentence(server, run):
    server.script = [NOT_FOUND, NOT_FOUND]
    with pytest.raises(ModuleFailure) as caught:
        run(id="gone")
    assert caught.value.msg.endswith("Check that organization 'acme' and database 'shop' exist and that the "
                                     "credentials can see them.")


def test_a_url_that_is_not_one_is_refused_before_any_request(server, run):
    with pytest.raises(ModuleFailure) as caught:
        run(url="not a url")
    assert caught.value.msg.startswith("url must be an absolute http or https URL") and server.requests == []


def test_a_zero_time_is_null_and_a_real_time_is_kept(server, run):
    """A webhook that has sent nothing has last_sent_at 0001-01-01T00:00:00.000Z on the platform (recorded)."""
    server.script = [page([dict(hook("a"), last_sent_at="0001-01-01T00:00:00.000Z"),
                           dict(hook("b"), last_sent_at="2026-02-03T04:05:06.000Z")])]
    assert [h["last_sent_at"] for h in run()["webhooks"]] == [None, "2026-02-03T04:05:06.000Z"]
