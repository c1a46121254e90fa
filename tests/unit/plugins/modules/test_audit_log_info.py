# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import datetime

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure, TaskContext
from ansible_collections.planetscale.cloud.plugins.modules.audit_log_info import AuditLogInfo

LOG = "/v1/organizations/acme/audit-log"

MODULE = AuditLogInfo  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", service_token_id="svc", service_token="s3cret")


def event(eid, action="service_token.created", at="2026-11-20T10:00:00.000Z"):
    return dict(id=eid, audit_action=action, action=action.split(".")[-1], created_at=at, actor_display_name="ci",
                target_display_name="deployer")


def page(items, has_next=False, has_prev=False):
    return (200, dict(type="list", has_next=has_next, has_prev=has_prev,
                      cursor_start=items[0]["id"] if items else None, cursor_end=items[-1]["id"] if items else None,
                      data=items))


def test_every_page_is_read_through_the_cursor(server, run):
    server.script = [page([event("e%d" % n) for n in range(100)], has_next=True), page([event("last")])]
    result = run(check_mode=True)
    assert result["changed"] is False and len(result["events"]) == 101
    assert all(r["path"] == LOG for r in server.requests)
    assert [r["query"].get("starting_after") for r in server.requests] == [None, ["e99"]]
    assert [r["query"]["limit"] for r in server.requests] == [["100"], ["100"]]
    assert result["cursor"] == dict(has_next=False, has_prev=False, cursor_start="last", cursor_end="last")


def test_events_keep_the_matching_actions_wildcards_included(server, run):
    server.script = [page([event("a", "service_token.created"), event("b", "team.created"),
                           event("c", "database_branch_password.deleted"), event("d", "service_token.deleted")])]
    result = run(events=["service_token.*", "*.deleted"])
    assert [e["id"] for e in result["events"]] == ["a", "c", "d"]
    server.script = [page([event("a", "service_token.created"), event("b", "team.created")])]
    assert [e["id"] for e in run(events=["team.created"])["events"]] == ["b"]


def test_whole_action_names_are_filtered_by_the_platform_and_only_their_pages_read(server, run):
    """filters[]=audit_action:<action>, repeatable, as the platform's Go client and CLI send it; the module's own
    filter stays as a safety net (an event of another action that comes back anyway is left out)."""
    server.script = [page([event("a", "service_token.created"), event("b", "team.created")], has_next=True),
                     page([event("c", "service_token.deleted")])]
    result = run(events=["service_token.created", "service_token.deleted"])
    assert [e["id"] for e in result["events"]] == ["a", "c"]
    assert [r["query"]["filters[]"] for r in server.requests] == [
        ["audit_action:service_token.created", "audit_action:service_token.deleted"]] * 2
    assert server.requests[1]["query"]["starting_after"] == ["b"]


def test_a_wildcard_is_filtered_here_and_no_filter_is_sent(server, run):
    server.script = [page([event("a", "service_token.created"), event("b", "team.created")])]
    assert [e["id"] for e in run(events=["service_token.*", "team.deleted"])["events"]] == ["a"]
    server.script = [page([event("a")])]
    run()
    assert all("filters[]" not in r["query"] for r in server.requests)


def test_the_window_keeps_events_between_since_and_until_and_stops_at_the_first_older_one(server, run):
    newest = [event("n%d" % n, at="2026-11-25T00:%02d:%02d.000Z" % divmod(n, 60)) for n in range(100)]
    server.script = [page(newest, has_next=True),
                     page([event("in", at="2026-11-10T00:00:00.000Z"), event("old", at="2026-10-31T23:59:59.000Z"),
                           event("older", at="2026-10-01T00:00:00.000Z")], has_next=True),
                     page([event("never-read")])]
    result = run(since="2026-11-01T00:00:00Z", until="2026-11-24T00:00:00Z")
    assert [e["id"] for e in result["events"]] == ["in"]
    assert len(server.requests) == 2  # the third page is older still: not read


def test_since_takes_a_duration_back_from_now(server, run):
    now = datetime.datetime.now(datetime.timezone.utc)
    recent = (now - datetime.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    old = (now - datetime.timedelta(days=3)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    server.script = [page([event("recent", at=recent), event("old", at=old)])]
    assert [e["id"] for e in run(since="2d")["events"]] == ["recent"]


def test_limit_counts_the_events_the_filters_keep(server, run):
    server.script = [page([event("a", "team.created"), event("b"), event("c"), event("d")])]
    assert [e["id"] for e in run(events=["service_token.created"], limit=2)["events"]] == ["b", "c"]
    assert server.requests[0]["query"]["limit"] == ["100"]
    server.requests.clear()
    server.script = [page([event("a"), event("b")], has_next=True)]
    assert [e["id"] for e in run(limit=2)["events"]] == ["a", "b"]
    assert server.requests[0]["query"]["limit"] == ["2"] and len(server.requests) == 1


def test_ending_before_walks_backward_and_never_stops_at_since(server, run):
    server.script = [page([event("x", at="2026-10-01T00:00:00.000Z"), event("y")], has_prev=False)]
    result = run(ending_before="z", since="2026-11-01T00:00:00Z")
    assert [e["id"] for e in result["events"]] == ["y"]
    assert server.requests[0]["query"]["ending_before"] == ["z"]


def test_events_the_window_cannot_place_are_returned_and_counted_in_one_warning(server, run):
    """A missing, unreadable or unplaceable time (year 1 moved before it by its offset) is no reason to drop an event."""
    missing = event("missing")
    del missing["created_at"]
    server.script = [page([event("in", at="2026-11-20T00:00:00.000Z"), missing, event("null", at=None),
                           event("garbled", at="yesterday"),
                           event("year-1", at="0001-01-01T00:00:00+01:00"), event("other", "team.created", at=None),
                           event("old", at="2026-10-01T00:00:00.000Z"), event("never-read")])]
    ctx = TaskContext()
    result = run(ctx=ctx, since="2026-11-01T00:00:00Z", until="2026-12-01T00:00:00Z", events=["service_token.*"])
    assert [e["id"] for e in result["events"]] == ["in", "missing", "null", "garbled", "year-1"]
    assert ctx.warnings == ["4 of the events returned (IDs missing, null, garbled, year-1) have no created_at time "
                            "the module can read, so since and until cannot place them: they are returned rather than "
                            "dropped."]
    server.script = [page([event("in"), event("year-1", at="0001-01-01T00:00:00+01:00")])]
    ctx = TaskContext()
    assert [e["id"] for e in run(ctx=ctx)["events"]] == ["in", "year-1"] and ctx.warnings == []  # no window


@pytest.mark.parametrize("args, message", [
    (dict(since="yesterday"), "since must be an ISO 8601 time such as 2026-11-01T00:00:00Z or a duration back from "
                              "now such as 30d, 12h, 45m or 90s, not 'yesterday'."),
    (dict(until="2026-13-01T00:00:00Z"), "until: '2026-13-01T00:00:00Z' is not a date and time from 0001-01-01 to "
                                         "9999-12-31 in UTC."),
    (dict(until="0001-01-01T00:00:00+01:00"), "until: '0001-01-01T00:00:00+01:00' is not a date and time from "
                                              "0001-01-01 to 9999-12-31 in UTC."),
    (dict(since="9999-12-31T23:30:00-01:00"), "since: '9999-12-31T23:30:00-01:00' is not a date and time"),
    (dict(since="3000000d"), "since: 3000000d reaches back before the year 1; give a shorter duration or an ISO 8601 "
                             "time."),
    (dict(until="99999999999999999999s"), "until: 99999999999999999999s reaches back before the year 1"),
    (dict(since="2026-11-02T00:00:00Z", until="2026-11-01T00:00:00Z"),
     "since (2026-11-02T00:00:00Z) is after until (2026-11-01T00:00:00Z): no event can be in that window."),
    (dict(events=[" "]), "events must not hold an empty action."),
    (dict(limit=0), "limit must be 1 or more, not 0."),
])
def test_bad_input_is_refused_before_any_request(server, run, args, message):
    with pytest.raises(ModuleFailure) as caught:
        run(**args)
    assert caught.value.msg.startswith(message) and server.requests == []


def test_a_missing_organization_is_a_sentence(server, run):
    server.script = [(404, dict(code="not_found", message="Not Found"))]
    with pytest.raises(ModuleFailure) as caught:
        run()
    assert caught.value.msg.endswith("Check that organization 'acme' exists and that the credentials can see it.")
