# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Page-based lists whose first page tells their length, read PARALLEL_PAGES pages at a time: every page
once, the items in the API's order, a rate limit holding every thread, and the walk one page after
another where the pages do not fit together. Counted at a real server, never timed."""

from __future__ import annotations

import itertools
import logging
import threading
import time

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils import pagination as pagination_module
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError, Client
from ansible_collections.planetscale.cloud.plugins.module_utils.pagination import PARALLEL_PAGES, read_side_by_side


class Listing:
    """A list of `size` records served by page, as the emulator's full envelope (or a leaner one)."""

    def __init__(self, size, envelope="full", delay=0.0, gather=None):
        self.ids = ["r%d" % n for n in range(size)]
        self.envelope = envelope
        self.delay = delay
        # gather: hold the first requests until this many are in flight at once (at most 10 s), so that a
        # slow start of a thread on a busy machine cannot hide how many the client sends side by side
        self.gather = gather
        self.lock = threading.Lock()
        self.gathered = threading.Condition(self.lock)
        self.in_flight = self.most_in_flight = 0
        self.special = {}  # page -> list of answers to give before the ordinary one

    def __call__(self, request):
        number = int(request["query"]["page"][0])
        per_page = int(request["query"]["per_page"][0])
        with self.lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
            special = self.special.get(number)
            answer = special.pop(0) if special else None
            if self.gather and number > 1:
                self.gathered.notify_all()
                self.gathered.wait_for(lambda: self.most_in_flight >= self.gather, timeout=10)
        try:
            if answer is not None:
                return answer(request) if callable(answer) else answer
            time.sleep(self.delay)
            data = [{"id": i} for i in self.ids[(number - 1) * per_page:number * per_page]]
            body = dict(data=data)
            if self.envelope in ("full", "count"):
                body.update(total_count=len(self.ids), per_page=per_page)
            if self.envelope == "full":
                body.update(current_page=number, total_pages=-(-len(self.ids) // per_page),
                            next_page=number + 1 if number * per_page < len(self.ids) else None)
            return 200, body
        finally:
            with self.lock:
                self.in_flight -= 1


def serve(server, listing):
    server.default = listing
    return listing


def pages_asked(server):
    return [int(r["query"]["page"][0]) for r in server.requests]


def walk(server, notes=None, retries=0, **kwargs):
    client = Client(server.url + "/v1", authorization="svc:secret", retries=retries,
                    debug=(notes.append if notes is not None else None))
    try:
        return [item["id"] for item in client.paginate("/members", **kwargs)]
    finally:
        client.close()


@pytest.mark.parametrize("envelope", ["full", "count"])
def test_a_list_that_tells_its_length_is_read_a_few_pages_at_a_time_each_once_in_order(server, envelope, caplog):
    pages = 2 * PARALLEL_PAGES  # more pages after the first than are read at a time
    listing = serve(server, Listing(100 * pages, envelope, gather=PARALLEL_PAGES))
    with caplog.at_level(logging.WARNING, logger="urllib3"):
        assert walk(server) == listing.ids
    assert not [r for r in caplog.records if "pool is full" in r.getMessage()]  # no connection thrown away
    assert sorted(pages_asked(server)) == list(range(1, pages + 1))
    assert pages_asked(server)[0] == 1
    assert listing.most_in_flight == PARALLEL_PAGES
    assert server.connections <= PARALLEL_PAGES  # each thread its own connection, kept in the pool


@pytest.mark.parametrize("envelope", ["no_totals", "bare"])
def test_a_list_that_does_not_tell_its_length_is_walked_one_page_after_another(server, envelope):
    listing = serve(server, Listing(1000, envelope))
    assert walk(server) == listing.ids
    assert pages_asked(server) == list(range(1, 12))  # the bare walk ends at the empty page 11
    assert listing.most_in_flight == 1
    assert server.connections == 1


def test_a_5000_member_list_costs_50_pages(server):
    listing = serve(server, Listing(5000))
    assert walk(server) == listing.ids
    assert sorted(pages_asked(server)) == list(range(1, 51))


def test_a_limit_reads_no_page_past_it(server):
    serve(server, Listing(1000))
    assert walk(server, limit=250) == ["r%d" % n for n in range(250)]
    assert sorted(pages_asked(server)) == [1, 2, 3]


def test_a_list_of_two_pages_is_read_one_after_another(server):
    listing = serve(server, Listing(150, delay=0.05))
    assert walk(server) == listing.ids
    assert pages_asked(server) == [1, 2]


def shifted(listing, number):
    """The answer to page number after a record was inserted at the front of the list: one item moves over."""
    def answer(request):
        per_page = int(request["query"]["per_page"][0])
        ids = ["new"] + listing.ids
        return 200, dict(data=[{"id": i} for i in ids[(number - 1) * per_page:number * per_page]],
                         total_count=len(listing.ids), total_pages=-(-len(listing.ids) // per_page),
                         current_page=number, per_page=per_page, next_page=number + 1)
    return answer


def test_pages_that_shifted_while_read_are_read_again_one_after_another_and_nothing_repeats(server):
    listing = serve(server, Listing(500))
    listing.special[3] = [shifted(listing, 3)]  # page 3 repeats the last item of page 2
    notes = []
    assert walk(server, notes=notes) == listing.ids
    asked = pages_asked(server)
    assert sorted(asked[:5]) == [1, 2, 3, 4, 5] and asked[5:] == [2, 3, 4, 5]
    assert len(notes) == 1 and "page 3 repeats an item of an earlier page" in notes[0]
    assert "secret" not in notes[0]


def test_pages_whose_totals_changed_while_read_are_read_again(server):
    listing = serve(server, Listing(500))
    listing.special[4] = [(200, dict(data=[{"id": "r%d" % n} for n in range(300, 400)], total_count=499,
                                     total_pages=5, current_page=4, per_page=100, next_page=5))]
    notes = []
    assert walk(server, notes=notes) == listing.ids
    assert len(server.requests) == 9
    assert "page 4 gives other totals than page 1" in notes[0]


def test_a_page_that_ends_the_list_early_sends_the_walk_back_to_one_page_after_another(server):
    listing = serve(server, Listing(500))
    listing.special[3] = [(200, dict(data=[{"id": "r%d" % n} for n in range(200, 300)], total_count=500,
                                     total_pages=5, current_page=3, per_page=100, next_page=None))]
    notes = []
    assert walk(server, notes=notes) == listing.ids
    assert "page 3 is followed by None, not 4" in notes[0]


def test_a_server_that_answers_every_page_alike_is_stopped_as_in_the_walk(server):
    server.default = (200, dict(data=[{"id": "r%d" % n} for n in range(100)], total_count=500, total_pages=5,
                                per_page=100))
    with pytest.raises(ApiError, match="page 2 repeats the items of an earlier page; stopped reading the list"):
        walk(server)


def test_a_failed_page_fails_the_list_with_its_sentence(server):
    listing = serve(server, Listing(500))
    listing.special[4] = [(404, {"code": "not_found", "message": "Not Found"})]
    with pytest.raises(ApiError) as caught:
        walk(server)
    assert str(caught.value) == "GET /members failed with HTTP 404: not_found, Not Found."


def test_a_rate_limit_holds_every_thread_at_the_gate(server, monkeypatch):
    gates = []
    real_gate = pagination_module.Gate

    def recorded_gate():
        gate = real_gate()
        gates.append(gate)
        return gate

    monkeypatch.setattr(pagination_module, "Gate", recorded_gate)
    # more pages than threads, so that every thread has a page to read after its first, which answers
    # after the 429 has closed the gate (Retry-After 1 s) and before it opens
    pages = 2 * PARALLEL_PAGES + 1
    listing = serve(server, Listing(100 * pages, delay=0.3))
    listing.special[3] = [(429, {"code": "rate_limited", "message": "slow down"}, {"Retry-After": "1"})]
    assert walk(server, retries=2) == listing.ids
    asked = pages_asked(server)
    assert sorted(asked) == sorted(list(range(1, pages + 1)) + [3])  # page 3 twice, every other page once
    gate, = gates
    assert gate.holds == 1
    waiting = set(name for name, seconds in gate.waits)
    assert len(waiting) >= 2  # the thread that was refused, and at least one other before its next page


def test_the_pages_of_a_list_read_within_a_read_side_by_side_wait_at_its_gate(server, monkeypatch):
    """Issue 49: the inventory reads each database's branches side by side; where one of those lists is long, its
    pages are read side by side within, and a rate limit on one of them holds every read at the one gate."""
    gates = []
    real_gate = pagination_module.Gate

    def recorded_gate():
        gate = real_gate()
        gates.append(gate)
        return gate

    monkeypatch.setattr(pagination_module, "Gate", recorded_gate)
    listing = serve(server, Listing(300))
    listing.special[3] = [(429, {"code": "rate_limited", "message": "slow down"}, {"Retry-After": "1"})]
    client = Client(server.url + "/v1", authorization="svc:secret", retries=2)
    try:
        found = list(read_side_by_side(lambda name: [item["id"] for item in client.paginate("/members")], ["one"], 2))
    finally:
        client.close()
    assert found == [("one", listing.ids)]
    gate, = gates  # the outer read's, which the list's pages share
    assert gate.holds == 1


def test_pages_read_side_by_side_are_begun_a_few_at_a_time_and_no_more_once_the_reader_stops():
    begun = []

    def numbers():  # as many pages as a list may claim
        for number in itertools.count(2):
            begun.append(number)
            yield number

    reads = read_side_by_side(lambda number: number * 10, numbers(), 3)
    assert list(itertools.islice(reads, 5)) == [(number, number * 10) for number in range(2, 7)]
    reads.close()
    assert len(begun) <= 5 + 2 * 3  # the pages read, and at most twice the threads' number ahead of them
