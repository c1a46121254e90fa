# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Lists in every shape the platform answers (full, lean and bare envelopes; cursor lists), walked to
their end without an extra request, and stopped with a sentence where a server would never end."""

from __future__ import annotations

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils import pagination as pagination_module
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError, Client

# After the scripted answers, a refusal: a client that keeps asking ends here instead of looping forever.
EXHAUSTED = (400, {"code": "script_exhausted", "message": "the test server has no more pages"})


def make_client(server):
    server.default = EXHAUSTED
    return Client(server.url + "/v1", authorization="svc:secret", retries=0)


def records(first, count):
    return [{"id": "r%d" % n} for n in range(first, first + count)]


def pages_asked(server):
    return [r["query"].get("page", [None])[0] for r in server.requests]


def walk(server, **kwargs):
    return [item["id"] for item in make_client(server).paginate("/teams", **kwargs)]


def ids(first, count):
    return [item["id"] for item in records(first, count)]


# Page-based lists ---------------------------------------------------------------------------

def test_a_lean_envelope_without_current_page_or_totals_is_walked_by_next_page(server):
    server.script = [(200, {"type": "list", "next_page": 2, "prev_page": None, "data": records(0, 100)}),
                     (200, {"type": "list", "next_page": 3, "prev_page": 1, "data": records(100, 100)}),
                     (200, {"type": "list", "next_page": None, "prev_page": 2, "data": records(200, 7)})]
    assert walk(server) == ids(0, 207)
    assert pages_asked(server) == ["1", "2", "3"]


@pytest.mark.parametrize("totals", [dict(total_pages=500), dict(total_count=50000), dict(total_pages=500, total_count=7)])
def test_a_list_whose_first_page_says_it_goes_on_past_the_cap_fails_at_once(server, monkeypatch, totals):
    # the cap made small so that the client from before, which read every page it was told of, fails in a moment
    monkeypatch.setattr(pagination_module, "MAX_PAGES", 50)
    server.script = [(200, dict(data=records(0, 100), per_page=100, next_page=2, **totals))]
    with pytest.raises(ApiError) as caught:
        walk(server)
    assert str(caught.value) == ("GET /teams failed with HTTP 200: the list goes on past 50 pages (page 1 says it "
                                 "has 500); stopped reading it.")
    assert pages_asked(server) == ["1"]


def test_a_limit_within_the_cap_reads_a_list_that_says_it_goes_on_past_it(server):
    server.script = [(200, dict(data=records(0, 100), per_page=100, total_pages=10000000, next_page=2)),
                     (200, dict(data=records(100, 100), per_page=100, total_pages=10000000, next_page=3))]
    assert walk(server, limit=150) == ids(0, 150)
    assert pages_asked(server) == ["1", "2"]


def test_a_bare_list_continues_while_pages_come_back_full(server):
    server.script = [(200, {"data": records(0, 100)}), (200, {"data": records(100, 100)}),
                     (200, {"data": records(200, 3)})]
    assert walk(server) == ids(0, 203)
    assert pages_asked(server) == ["1", "2", "3"]


def test_a_bare_list_stops_at_a_short_first_page(server):
    server.script = [(200, {"data": records(0, 99)})]
    assert walk(server) == ids(0, 99)
    assert len(server.requests) == 1


def test_a_bare_list_whose_last_page_is_full_ends_at_the_empty_page(server):
    server.script = [(200, {"data": records(0, 100)}), (200, {"data": []})]
    assert walk(server) == ids(0, 100)
    assert len(server.requests) == 2


def test_a_bare_list_counts_a_page_as_full_by_the_per_page_the_server_says(server):
    server.script = [(200, {"per_page": 25, "data": records(0, 25)}), (200, {"per_page": 25, "data": records(25, 4)})]
    assert walk(server) == ids(0, 29)
    assert len(server.requests) == 2


@pytest.mark.parametrize("totals", [dict(total_pages=2), dict(total_count=200)])
def test_totals_end_a_list_without_next_page_without_an_extra_request(server, totals):
    server.script = [(200, dict(totals, data=records(0, 100))), (200, dict(totals, data=records(100, 100)))]
    assert walk(server) == ids(0, 200)
    assert len(server.requests) == 2


def test_a_bare_list_with_a_cap_reads_no_page_past_it(server):
    server.script = [(200, {"data": records(0, 10)})]
    assert walk(server, limit=10) == ids(0, 10)
    assert len(server.requests) == 1


def test_a_repeated_next_page_stops_with_a_sentence(server):
    server.script = [(200, {"next_page": 2, "data": records(0, 100)}), (200, {"next_page": 2, "data": records(100, 100)})]
    with pytest.raises(ApiError) as caught:
        walk(server)
    assert str(caught.value) == ("GET /teams failed with HTTP 200: next_page 2 names a page already read; stopped "
                                 "reading the list, which would never end.")
    assert len(server.requests) == 2


def test_a_server_that_answers_every_page_alike_is_stopped(server):
    server.default = (200, {"data": records(0, 100)})  # ignores the page asked for
    client = Client(server.url + "/v1", retries=0)
    with pytest.raises(ApiError, match="page 2 repeats the items of an earlier page; stopped reading the list"):
        list(client.paginate("/teams"))
    assert len(server.requests) == 2


def test_a_next_page_past_total_pages_stops_with_a_sentence(server):
    server.script = [(200, {"next_page": 2, "total_pages": 2, "data": records(0, 100)}),
                     (200, {"next_page": 3, "total_pages": 2, "data": records(100, 100)})]
    with pytest.raises(ApiError, match="next_page 3 is past total_pages 2; stopped reading the list"):
        walk(server)
    assert len(server.requests) == 2


def test_an_empty_page_ends_the_list_whatever_next_page_says(server):
    server.script = [(200, {"next_page": 2, "data": records(0, 100)}), (200, {"next_page": 3, "data": []})]
    assert walk(server) == ids(0, 100)
    assert len(server.requests) == 2


@pytest.mark.parametrize("body, said", [
    ({}, "the answer has no data list (it has no data key)"),
    ({"data": None}, "the answer has no data list (it has data: null)"),
    ({"data": {"id": "x"}}, "the answer has no data list (it has data: an object)"),
    ({"data": ["r1"]}, "the data list holds a string where records (JSON objects) were expected"),
    ([{"id": "r1"}], "the answer was a list where a JSON object was expected"),
])
def test_a_list_answer_of_the_wrong_shape_is_a_sentence_naming_the_endpoint(server, body, said):
    server.script = [(200, body)]
    with pytest.raises(ApiError) as caught:
        walk(server)
    assert str(caught.value) == "GET /teams failed with HTTP 200: %s." % said


def test_a_next_page_that_is_no_number_is_a_sentence(server):
    server.script = [(200, {"next_page": "https://elsewhere/page/2", "data": records(0, 1)})]
    with pytest.raises(ApiError, match="next_page 'https://elsewhere/page/2' is not a page number"):
        walk(server)


# Cursor lists -------------------------------------------------------------------------------

def cursor_walk(server, pages=None, **kwargs):
    return [item["id"] for item in make_client(server).paginate_cursor("/reports", pages=pages, **kwargs)]


def test_a_bare_cursor_list_continues_from_the_last_id_while_pages_are_full(server):
    server.script = [(200, {"data": records(0, 100)}), (200, {"data": records(100, 2)})]
    pages = []
    assert cursor_walk(server, pages=pages) == ids(0, 102)
    assert [r["query"] for r in server.requests] == [{"limit": ["100"]}, {"limit": ["100"], "starting_after": ["r99"]}]
    assert pages == [dict(has_next=True, has_prev=False, cursor_start="r0", cursor_end="r99"),
                     dict(has_next=False, has_prev=True, cursor_start="r100", cursor_end="r101")]


def test_a_bare_cursor_list_with_a_short_page_ends_there(server):
    server.script = [(200, {"data": records(0, 3)})]
    assert cursor_walk(server) == ids(0, 3)
    assert len(server.requests) == 1


def test_a_bare_cursor_list_walks_backward_from_the_first_id(server):
    server.script = [(200, {"data": records(50, 2)})]
    pages = []
    assert cursor_walk(server, pages=pages, ending_before="r52", limit=2) == ids(50, 2)
    assert pages == [dict(has_next=True, has_prev=True, cursor_start="r50", cursor_end="r51")]


def test_an_envelope_with_has_next_but_no_cursor_continues_from_the_last_id(server):
    server.script = [(200, {"has_next": True, "data": records(0, 2)}), (200, {"has_next": False, "data": records(2, 1)})]
    assert cursor_walk(server) == ids(0, 3)
    assert server.requests[1]["query"]["starting_after"] == ["r1"]


def test_a_repeated_cursor_stops_with_a_sentence(server):
    page = (200, {"has_next": True, "cursor_start": "a", "cursor_end": "b", "data": [{"id": "a"}, {"id": "b"}]})
    again = (200, {"has_next": True, "cursor_start": "c", "cursor_end": "b", "data": [{"id": "c"}]})
    server.script = [page, again]
    with pytest.raises(ApiError) as caught:
        cursor_walk(server)
    assert str(caught.value) == ("GET /reports failed with HTTP 200: cursor_end 'b' repeats a cursor already read; "
                                 "stopped reading the list, which would never end.")
    assert len(server.requests) == 2


def test_a_cursor_given_by_the_caller_that_comes_back_is_a_repeat(server):
    server.script = [(200, {"has_next": True, "cursor_end": "x", "data": [{"id": "x"}]})]
    with pytest.raises(ApiError, match="cursor_end 'x' repeats a cursor already read"):
        cursor_walk(server, starting_after="x")
    assert len(server.requests) == 1


def test_a_cursor_list_without_ids_cannot_continue_silently(server):
    server.script = [(200, {"has_next": True, "data": [{"name": "no id"}]})]
    with pytest.raises(ApiError, match="the page says more follow but gives no cursor_end, and its items have no id"):
        list(make_client(server).paginate_cursor("/reports"))


# The walks in their simplest form: the full envelope of a page list and of a cursor list.

def numbered(numbers):
    return [{"id": "r%d" % n} for n in numbers]


def page(items, number, last):
    return (200, {"type": "list", "current_page": number, "next_page": None if number == last else number + 1,
                  "prev_page": number - 1 or None, "data": items})


def test_paginate_follows_next_page_to_the_end_with_the_largest_page(server):
    server.script = [page(numbered(range(100)), 1, 3), page(numbered(range(100, 200)), 2, 3),
                     page(numbered([200]), 3, 3)]
    items = list(make_client(server).paginate("/teams", params={"q": "a"}))
    assert items == numbered(range(201))
    assert [r["query"]["page"] for r in server.requests] == [["1"], ["2"], ["3"]]
    assert all(r["query"]["per_page"] == ["100"] and r["query"]["q"] == ["a"] for r in server.requests)


def test_paginate_stops_at_the_cap_without_reading_more_pages(server):
    server.script = [page(numbered(range(100)), 1, 3), page(numbered(range(100, 200)), 2, 3)]
    assert list(make_client(server).paginate("/teams", limit=150)) == numbered(range(150))
    assert len(server.requests) == 2


def test_paginate_small_cap_asks_for_a_small_page(server):
    server.script = [page(numbered(range(5)), 1, 9)]
    assert list(make_client(server).paginate("/teams", limit=5)) == numbered(range(5))
    assert server.requests[0]["query"]["per_page"] == ["5"]


def cursor_page(ids, has_next):
    return (200, {"type": "list", "has_next": has_next, "has_prev": False, "cursor_start": ids[0],
                  "cursor_end": ids[-1], "data": [{"id": i} for i in ids]})


def test_cursor_pagination_follows_cursor_end(server):
    server.script = [cursor_page(["a", "b"], True), cursor_page(["c"], False)]
    pages = []
    items = list(make_client(server).paginate_cursor("/reports", pages=pages))
    assert [i["id"] for i in items] == ["a", "b", "c"]
    assert server.requests[0]["query"] == {"limit": ["100"]}
    assert server.requests[1]["query"] == {"limit": ["100"], "starting_after": ["b"]}
    assert pages[-1]["has_next"] is False


def test_cursor_pagination_cap_never_reads_past_it(server):
    server.script = [cursor_page(["a", "b"], True), cursor_page(["c"], True)]
    items = list(make_client(server).paginate_cursor("/reports", limit=3))
    assert [i["id"] for i in items] == ["a", "b", "c"]
    assert server.requests[0]["query"]["limit"] == ["3"]
    assert server.requests[1]["query"]["limit"] == ["1"]


def test_cursor_pagination_walks_backward_from_ending_before(server):
    server.script = [(200, {"has_next": True, "has_prev": True, "cursor_start": "m", "cursor_end": "n",
                            "data": [{"id": "m"}, {"id": "n"}]}),
                     (200, {"has_next": True, "has_prev": False, "cursor_start": "k", "cursor_end": "l",
                            "data": [{"id": "k"}, {"id": "l"}]})]
    items = list(make_client(server).paginate_cursor("/reports", ending_before="o"))
    assert [i["id"] for i in items] == ["m", "n", "k", "l"]
    assert server.requests[1]["query"] == {"limit": ["100"], "ending_before": ["m"]}
