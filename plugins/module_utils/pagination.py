# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Lists of the API walked to their end: page-based lists (paginate) and cursor lists (paginate_cursor).

Pagination is a part of Client (its base class): it sends each page with Client.get and names a wrong
answer with Client.wrong_answer. Once the first page of a page-based list says how many pages there are
(total_pages or total_count), the others are read PARALLEL_PAGES at a time by a few threads that share
the Client's requests Session: its connection pool (HTTPAdapter pool_maxsize >= PARALLEL_PAGES) gives
each request in flight a connection of its own. When the server asks one of them to wait (429 or 503
with Retry-After, or a transient status's backoff), the client's retry (_Retry.sleep) closes the
list's Gate until then, and every thread waits at the gate before its next request, so the server is
not asked again by the others while it said to wait. A list whose first page says it has more than
MAX_PAGES pages fails at once, and the pages read side by side are begun a few at a time, so memory
holds a few pages beside the items read.
"""

from __future__ import annotations

import hashlib
import json as json_module
import math
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor

from ansible_collections.planetscale.cloud.plugins.module_utils.errors import bounded, json_kind

PAGE_SIZE = 100
PARALLEL_PAGES = 10  # pages of a list read at a time once its first page tells how many there are
MAX_PAGES = 10000  # a list longer than this many pages is a server that never ends
CURSOR_FIELDS = ("has_next", "has_prev", "cursor_start", "cursor_end")
_END = object()

_THREAD = threading.local()


class Gate:
    """A time before which no request of the list is sent."""

    def __init__(self):
        self._lock = threading.Lock()
        self._opens = 0.0
        self.holds = 0  # times a thread closed the gate (for tests)
        self.waits = []  # (thread name, seconds) of each wait at a closed gate (for tests)

    def hold(self, seconds):
        """Close the gate for seconds from now (a later opening already set wins)."""
        with self._lock:
            self.holds += 1
            self._opens = max(self._opens, time.monotonic() + max(seconds, 0.0))

    def wait(self):
        """Return when the gate is open."""
        while True:
            with self._lock:
                remaining = self._opens - time.monotonic()
            if remaining <= 0:
                return
            self.waits.append((threading.current_thread().name, remaining))
            time.sleep(remaining)


def current_gate():
    """The gate of the list this thread is reading, or None outside a side-by-side read."""
    return getattr(_THREAD, "gate", None)


def read_side_by_side(read, numbers, workers, gate=None):
    """Yield (number, read(number)) in the order of numbers, read by at most workers threads at a time.

    Reads are begun lazily, at most 2 * workers ahead of the one yielded next, so a long list never has all
    its pages scheduled, nor more than that many held, at once. The first failure (in the order of numbers)
    is raised once every thread has stopped; the reads not yet begun are then not begun, as when the caller
    stops early (closes the generator).
    """
    gate = gate or Gate()

    def one(number):
        _THREAD.gate = gate
        try:
            gate.wait()
            return read(number)
        finally:
            _THREAD.gate = None

    numbers = iter(numbers)
    executor = ThreadPoolExecutor(max_workers=max(1, workers))
    pending = deque()
    try:
        for number in numbers:
            pending.append((number, executor.submit(one, number)))
            if len(pending) >= 2 * workers:
                break
        while pending:
            number, future = pending.popleft()
            result = future.result()
            following = next(numbers, _END)
            if following is not _END:
                pending.append((following, executor.submit(one, following)))
            yield number, result
    finally:
        for dummy, future in pending:
            future.cancel()
        executor.shutdown(wait=True)


class Pagination:
    """The walks of Client through a list; they need its get(), wrong_answer(), last and debug."""

    def _page(self, url_path, query):
        """One envelope of a list: a JSON object whose data is a list of JSON objects."""
        page = self.get(url_path, params=dict(query))
        data = page.get("data")
        if not isinstance(data, list):
            raise self.wrong_answer("the answer has no data list (it has %s)" % (
                "data: %s" % json_kind(data) if "data" in page else "no data key"))
        wrong = [item for item in data if not isinstance(item, dict)]
        if wrong:
            raise self.wrong_answer("the data list holds %s where records (JSON objects) were expected"
                                    % json_kind(wrong[0]))
        return page, data

    def _unrepeated(self, seen, data, what, last=None):
        """Refuse a page whose items are those of an earlier page: a server that would answer it forever.

        last: the request to name (as Client.last), where other threads may be sending the list's other pages."""
        if not data:
            return
        digest = hashlib.sha256(json_module.dumps(data, sort_keys=True, default=str).encode()).hexdigest()
        if digest in seen:
            raise self.wrong_answer("%s repeats the items of an earlier page; stopped reading the list, which "
                                    "would never end" % what, last)
        seen.add(digest)
        if len(seen) > MAX_PAGES:
            raise self.wrong_answer("the list goes on past %d pages; stopped reading it" % MAX_PAGES, last)

    def paginate(self, url_path, params=None, limit=None):
        """Yield every item of a page-based list to its end (at most limit items).

        Follows next_page where the envelope has the key; a lean envelope without it continues only
        while pages come back full (per_page items), and never past total_pages or total_count.
        A page number or a page of items that repeats, or a next_page past total_pages, is an ApiError.
        When the first page tells how many pages there are, the others are read PARALLEL_PAGES at a
        time, and kept only if they fit together as the walk one after another would have read them
        (else the list is walked that way).
        """
        query = dict(params or {})
        query["per_page"] = min(PAGE_SIZE, limit) if limit else PAGE_SIZE
        query["page"] = 1
        page, data = self._page(url_path, query)
        seen = set()
        self._unrepeated(seen, data, "page 1")
        first_seen, count = set(seen), 0
        for item in data:
            yield item
            count += 1
            if limit and count >= limit:
                return
        number = self._next_page(page, data, 1, query["per_page"], count)
        if number is not None:
            self._within_cap(page, query["per_page"], limit)
        pages = self._page_count(page, data, query["per_page"]) if number == 2 else None
        last = min(pages, int(math.ceil(limit / float(query["per_page"])))) if pages and limit else pages
        if last is not None and last > 2:
            items = self._side_by_side(url_path, query, page, last, last < pages, count, seen)
            if items is not None:
                for item in items:
                    yield item
                    count += 1
                    if limit and count >= limit:
                        return
                return
            seen = first_seen
        requested = set([1])
        while number is not None:
            if number in requested:
                raise self.wrong_answer("next_page %s names a page already read; stopped reading the list, which "
                                        "would never end" % number)
            query["page"] = number
            requested.add(number)
            page, data = self._page(url_path, query)
            self._unrepeated(seen, data, "page %s" % number)
            for item in data:
                yield item
                count += 1
                if limit and count >= limit:
                    return
            number = self._next_page(page, data, number, query["per_page"], count)

    def _within_cap(self, first, per_page, limit):
        """Refuse at once a list whose first page says it goes on past MAX_PAGES pages (where a limit does not
        stop it before): a server whose list never ends, told before a page more is asked for."""
        size = _count(first.get("per_page")) or per_page
        total_count = _count(first.get("total_count"))
        by_count = int(math.ceil(total_count / float(size))) if total_count else 0
        claimed = max(_count(first.get("total_pages")) or 0, by_count)
        needed = min(claimed, int(math.ceil(limit / float(per_page)))) if limit else claimed
        if needed > MAX_PAGES:
            raise self.wrong_answer("the list goes on past %d pages (page 1 says it has %d); stopped reading it" % (
                MAX_PAGES, claimed))

    @staticmethod
    def _page_count(page, data, per_page):
        """The pages of the list as its first page tells them; None where it does not tell, or says two things."""
        size = _count(page.get("per_page")) or per_page
        pages, total_count = _count(page.get("total_pages")), _count(page.get("total_count"))
        counted = int(math.ceil(total_count / float(size))) if total_count else None
        if len(data) != size or size != per_page or (pages and counted and pages != counted):
            return None
        return pages or counted

    def _side_by_side(self, url_path, query, first, last, capped, count, seen):
        """The items of pages 2 to last, read PARALLEL_PAGES at a time, in the API's order.

        None (and a note in the debug output) where the pages do not fit together as the walk one after
        another would have read them: other totals than the first page's, a page that says the list ends
        elsewhere, an item (by id) on two pages; as when the list changed while the pages were read.
        capped: last is where a limit stops the list, not its end.
        """
        def read(number):
            return self._page(url_path, dict(query, page=number))

        totals = dict((key, first.get(key)) for key in ("total_pages", "total_count"))
        ids = set(item.get("id") for item in first["data"])
        items = []
        # within a read side by side (the inventory's, one list per database), the pages share its gate
        pages = read_side_by_side(read, range(2, last + 1), PARALLEL_PAGES, current_gate())
        try:
            for number, (page, data) in pages:
                self._unrepeated(seen, data, "page %s" % number, ("GET", url_path, 200))
                count += len(data)
                following = self._next_page(page, data, number, query["per_page"], count)
                expected = number + 1 if number < last or capped else None
                problem = None
                if dict((key, page.get(key)) for key in totals) != totals:
                    problem = "page %s gives other totals than page 1" % number
                elif following != expected:
                    problem = "page %s is followed by %s, not %s" % (number, following, expected)
                elif any(item.get("id") in ids for item in data if item.get("id") is not None):
                    problem = "page %s repeats an item of an earlier page" % number
                if problem:
                    self.debug("GET %s: the pages read side by side do not fit together (%s); reading the list again "
                               "one page after another" % (url_path, problem))
                    return None
                ids.update(item.get("id") for item in data)
                items.extend(data)
        finally:
            pages.close()  # a page that does not fit (or fails) stops the reads not yet begun
            self.last = ("GET", url_path, 200)
        return items

    def _next_page(self, page, data, number, per_page, count):
        """The number of the page after this one, or None at the end of the list."""
        total = _count(page.get("total_pages"))
        if "next_page" in page:
            following = page["next_page"]
            if following in (None, False, "", 0) or not data:
                return None
            following = _count(following)
            if following is None:
                raise self.wrong_answer("next_page %s is not a page number" % bounded(repr(page["next_page"]), 50))
            if total is not None and following > total:
                raise self.wrong_answer("next_page %s is past total_pages %s; stopped reading the list" % (
                    following, total))
            return following
        size = _count(page.get("per_page")) or per_page
        total_count = _count(page.get("total_count"))
        if len(data) < size or (total is not None and number >= total) or (
                total_count is not None and count >= total_count):
            return None
        return number + 1

    def paginate_cursor(self, url_path, params=None, limit=None, starting_after=None, ending_before=None,
                        pages=None):
        """Yield every item of a cursor list from the given cursor to its end (at most limit items).

        Walks forward (has_next/cursor_end) unless ending_before is given, then backward
        (has_prev/cursor_start). A bare {"data": [...]} continues from its last (first) item's id
        only while pages come back full. When pages is a list, each envelope's cursor fields are
        appended (filled in from the items where the envelope lacks them). A cursor or a page of
        items that repeats is an ApiError.
        """
        forward = ending_before is None
        name, more, end = (("starting_after", "has_next", "cursor_end") if forward
                           else ("ending_before", "has_prev", "cursor_start"))
        cursor = starting_after if forward else ending_before
        query = dict(params or {})
        sent, seen, count = set(), set(), 0
        while True:
            size = min(PAGE_SIZE, limit - count) if limit else PAGE_SIZE  # never read past the cap
            query.update({"limit": size})
            if cursor:
                query[name] = cursor
                sent.add(cursor)
            page, data = self._page(url_path, query)
            self._unrepeated(seen, data, "the page after cursor %r" % cursor if cursor else "the first page")
            fields = _cursor_fields(page, data, full=len(data) >= size, behind=bool(cursor), forward=forward)
            if pages is not None:
                pages.append(fields)
            for item in data:
                yield item
                count += 1
                if limit and count >= limit:
                    return
            if not fields[more] or not data:
                return
            cursor = fields[end]
            if not cursor:
                raise self.wrong_answer("the page says more follow but gives no %s, and its items have no id to "
                                        "continue from" % end)
            if cursor in sent:
                raise self.wrong_answer("%s %r repeats a cursor already read; stopped reading the list, which "
                                        "would never end" % (end, cursor))


def _count(value):
    """A positive whole number the envelope gives (an int, or a string of digits), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    return value if isinstance(value, int) and value > 0 else None


def _cursor_fields(page, data, full, behind, forward):
    """The cursor fields of an envelope, filled in from its items where it lacks them.

    full: the page holds as many items as were asked for; behind: the page was read from a cursor.
    """
    fields = dict((key, page.get(key)) for key in CURSOR_FIELDS)
    if data:
        if fields["cursor_start"] in (None, ""):
            fields["cursor_start"] = data[0].get("id")
        if fields["cursor_end"] in (None, ""):
            fields["cursor_end"] = data[-1].get("id")
    ahead, back = ("has_next", "has_prev") if forward else ("has_prev", "has_next")
    if ahead not in page:
        fields[ahead] = bool(data) and full
    if back not in page:
        fields[back] = behind
    return fields
