# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A team of 5,000 members listed end to end on both paths: the emulator's full envelope tells the
number of pages, so the client reads them ten at a time. Every page is asked for once, the list
comes back whole and in the API's order; with the lean envelope (no totals) the same list is walked
one page after another. Counted in the emulator's request log, never timed."""

from __future__ import annotations

from collections import Counter

import pytest

from harness import module_defaults, play, task

MEMBERS = 5000


def _list(emulator, ansible, in_process, label):
    team = emulator.seed(teams=dict(count=1, prefix="large"))["teams"][0]
    emulator.seed(team_members=dict(team=team, count=MEMBERS))
    expected = [member["id"] for member in emulator.list("/organizations/%s/teams/%s/members" % (
        emulator.world["organization"], team))]
    emulator.clear_requests()
    run = ansible.run([play([task("List the members", "team_member_info", register="listed", team=team)],
                            defaults=module_defaults())], emulator=emulator, in_process=in_process, timeout=300,
                      label="%s, in_process=%s" % (label, in_process))
    run.without_failures()
    pages = [entry["query"] for entry in emulator.requests() if entry["path"].endswith("/members")]
    return run.result("List the members").result["members"], expected, pages


def _page_numbers(queries):
    return [int(query["page"]) for query in queries]


@pytest.mark.parametrize("in_process", [True, False], ids=["in_process", "module"])
def test_5000_members_come_back_whole_in_order_each_page_asked_once(emulator, ansible, in_process):
    members, expected, queries = _list(emulator, ansible, in_process, "5,000 members")
    assert len(expected) == MEMBERS
    assert [member["id"] for member in members] == expected
    numbers = _page_numbers(queries)
    assert numbers[0] == 1 and Counter(numbers) == Counter(range(1, 51))  # 50 pages, each once


def test_a_lean_envelope_is_walked_one_page_after_another(emulator, ansible):
    emulator.settings(list_envelope="no_totals")
    members, expected, queries = _list(emulator, ansible, True, "5,000 members, lean envelope")
    assert [member["id"] for member in members] == expected
    assert _page_numbers(queries) == list(range(1, 51))
