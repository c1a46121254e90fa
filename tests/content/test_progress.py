# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a task that waits shows at -v: a line for each state the wait sees (settle.Waiter, TaskContext.progress),
as it happens in-process and when the task ends on the module path, whose result keeps no trace of them."""

from __future__ import annotations

import re

import pytest

from harness.collection import play

CREATE = dict(name="Create a branch and wait until it is ready",
              **{"planetscale.cloud.branch": dict(database="app", name="waits", parent_branch="main")})
LINE = re.compile(r"^<localhost> Waiting for branch 'waits' of database 'app' to be ready: '(\w+)' after (\d+) s\.$",
                  re.MULTILINE)


@pytest.mark.parametrize("in_process", [True, False], ids=["in_process", "module"])
def test_a_wait_shows_a_line_per_state_at_v(ansible, in_process):
    run = ansible.run([play([CREATE])], in_process=in_process, verbosity=1).succeeded(changed=1)
    states = [state for state, _seconds in LINE.findall(run.output)]
    assert states[0] != "ready" and states[-1] == "ready" and len(states) == len(set(states)), run.output
    assert [int(seconds) for _state, seconds in LINE.findall(run.output)] == sorted(
        int(seconds) for _state, seconds in LINE.findall(run.output))
    assert "waited" not in run.result(CREATE["name"]).result  # shown, not left in the result


def test_without_v_a_wait_shows_nothing(ansible):
    run = ansible.run([play([CREATE])]).succeeded(changed=1)
    assert not LINE.search(run.output) and "Waiting for" not in run.output
