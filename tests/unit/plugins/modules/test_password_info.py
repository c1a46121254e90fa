# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest


from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.password_info import PasswordInfo

SECRET = "pscale_tkn_very_secret_value"
PLAIN_TEXT = "pscale_pw_the_password_itself"
PATH = "/v1/organizations/acme/databases/shop/branches/main/passwords"


MODULE = PasswordInfo  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="shop", branch="main", service_token_id="svc", service_token=SECRET)


def password(name, number=0, **fields):
    return dict(dict(id="pw%d" % number, name=name, role="reader", cidrs=None, expired=False,
                     expires_at=None, last_used_at=None), **fields)


def page(items, next_page=None):
    return (200, dict(type="list", current_page=1, next_page=next_page, data=items))


def test_name_sends_the_search_and_keeps_exact_matches_only(server, run):
    server.script = [page([password("app", 1), password("app-server", 2), password("my-app", 3),
                           password("App", 4), password("app", 5)])]
    result = run(name="app")
    assert [p["id"] for p in result["passwords"]] == ["pw1", "pw5"]
    assert server.requests[0]["path"] == PATH
    assert server.requests[0]["query"]["q"] == ["app"]


def test_name_that_only_prefixes_others_gives_an_empty_list(server, run):
    server.script = [page([password("app-server", 1), password("app-worker", 2)])]
    assert run(name="app")["passwords"] == []


def test_every_page_is_read_with_the_largest_page_size(server, run):
    server.script = [page([password("a", n) for n in range(100)], next_page=2),
                     page([password("a", n) for n in range(100, 150)], next_page=3),
                     page([])]
    result = run()
    assert [p["id"] for p in result["passwords"]] == ["pw%d" % n for n in range(150)]
    assert [r["query"]["page"] for r in server.requests] == [["1"], ["2"], ["3"]]
    assert all(r["query"]["per_page"] == ["100"] for r in server.requests)
    assert "q" not in server.requests[0]["query"]


def test_name_filter_reads_every_page(server, run):
    server.script = [page([password("app-server", 1), password("app", 2)], next_page=2),
                     page([password("app", 3)])]
    assert [p["id"] for p in run(name="app")["passwords"]] == ["pw2", "pw3"]
    assert len(server.requests) == 2


def test_plain_text_is_dropped_from_every_password(server, run):
    server.script = [page([password("app", 1, plain_text=PLAIN_TEXT), password("db", 2, plain_text=None)])]
    result = run()
    assert all("plain_text" not in p for p in result["passwords"])
    assert PLAIN_TEXT not in repr(result)
    assert result["passwords"][0]["role"] == "reader"  # the other fields are kept


def test_limit_caps_the_exact_matches_and_stops_reading(server, run):
    server.script = [page([password("app-server", 1), password("app", 2), password("app", 3)], next_page=2),
                     page([password("app", 4)])]
    result = run(name="app", limit=1)
    assert [p["id"] for p in result["passwords"]] == ["pw2"]
    assert len(server.requests) == 1


def test_check_mode_gives_the_same_result_and_never_changed(server, run):
    server.default = page([password("app", 1)])
    assert run(check_mode=True) == run()
    assert run()["changed"] is False


@pytest.mark.parametrize("name", ["", "  "])
def test_empty_name_fails_before_any_request(server, run, name):
    with pytest.raises(ModuleFailure) as caught:
        run(name=name)
    assert "name must not be empty" in caught.value.msg
    assert server.requests == []


def test_missing_branch_names_what_to_check(server, run):
    server.script = [(404, dict(code="not_found", message="Not Found"))]
    with pytest.raises(ModuleFailure) as caught:
        run(branch="gone")
    assert caught.value.result["status"] == 404
    assert "GET /organizations/acme/databases/shop/branches/gone/passwords failed with HTTP 404" in caught.value.msg
    assert "branch 'gone'" in caught.value.msg
    assert SECRET not in repr(caught.value.result) + caught.value.msg
