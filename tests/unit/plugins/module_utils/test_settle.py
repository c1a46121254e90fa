# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one write-and-settle helper and the one waiter."""

from __future__ import annotations

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import Module, ModuleFailure, TaskContext
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError
from ansible_collections.planetscale.cloud.plugins.module_utils.settle import ATTEMPTS, Waiter, write_and_settle


def lost(retry_after=None):
    return ApiError("POST", "/things", 502, outcome_unknown=True, retry_after=retry_after)


def scripted(*outcomes):
    """send(): each call takes the next outcome, raising it when it is an exception."""
    calls = []

    def send():
        outcome = outcomes[len(calls)]
        calls.append(outcome)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome
    send.calls = calls
    return send


def test_a_write_that_succeeds_is_sent_once(sleeps):
    send = scripted(dict(id="a"))
    assert write_and_settle(send, read_back=pytest.fail) == (dict(id="a"), True)
    assert len(send.calls) == 1 and sleeps == []


def test_a_lost_answer_that_was_applied_is_read_back_not_sent_again(sleeps):
    send = scripted(lost(), dict(id="twice"))
    assert write_and_settle(send, read_back=lambda error: (dict(id="a"), True)) == (dict(id="a"), True)
    assert len(send.calls) == 1 and sleeps == []


def test_a_lost_answer_that_was_not_applied_is_sent_again_after_the_servers_retry_after(sleeps):
    send = scripted(lost(retry_after=7), dict(id="a"))
    assert write_and_settle(send, read_back=lambda error: None) == (dict(id="a"), True)
    assert len(send.calls) == 2 and sleeps == [7]


def test_without_retry_after_the_wait_grows(sleeps):
    send = scripted(lost(), lost(), dict(id="a"))
    write_and_settle(send, read_back=lambda error: None)
    assert len(sleeps) == 2 and 0.25 <= sleeps[0] <= 0.5 and 0.5 <= sleeps[1] <= 1.0


def test_the_attempts_are_bounded_and_the_last_error_is_raised(sleeps):
    send = scripted(*[lost() for dummy in range(ATTEMPTS + 1)])
    with pytest.raises(ApiError) as raised:
        write_and_settle(send, read_back=lambda error: None)
    assert raised.value.outcome_unknown
    assert len(send.calls) == ATTEMPTS and len(sleeps) == ATTEMPTS - 1


@pytest.mark.parametrize("retries, sends", [(0, ATTEMPTS), (2, ATTEMPTS), (5, 6), (9, 10)])
def test_a_write_proven_not_applied_is_sent_as_often_as_the_users_api_retries_allow(sleeps, retries, sends):
    errors = [lost() for dummy in range(sends + 1)]
    for error in errors:
        error.resends = retries  # what the client that sent it sets
    send = scripted(*errors)
    with pytest.raises(ApiError):
        write_and_settle(send, read_back=lambda error: None)
    assert len(send.calls) == sends and len(sleeps) == sends - 1


def test_attempts_bound_a_write_whatever_api_retries_allows(sleeps):
    errors = [lost() for dummy in range(4)]
    for error in errors:
        error.resends = 9
    send = scripted(*errors)
    with pytest.raises(ApiError):
        write_and_settle(send, attempts=2)
    assert len(send.calls) == 2


def test_a_write_that_cannot_be_read_back_is_sent_again_as_is(sleeps):
    send = scripted(lost(retry_after=2), dict(token="t"))
    assert write_and_settle(send, attempts=2) == (dict(token="t"), True)
    assert sleeps == [2]


def test_each_attempt_sends_what_read_back_found_still_missing(sleeps):
    wanted = dict(description="new", name="x")
    state = dict(name="x", description="old")
    sent = []

    def send():
        changes = dict((k, v) for k, v in wanted.items() if state.get(k) != v)
        sent.append(changes)
        if len(sent) == 1:
            state.update(changes)  # applied, then the answer is lost
            raise lost()
        return dict(state, **changes)

    def read_back(error):
        return (dict(state), True) if state == wanted else None
    assert write_and_settle(send, read_back=read_back) == (wanted, True)
    assert sent == [dict(description="new")]


@pytest.mark.parametrize("status", [409, 422])
def test_a_conflict_that_another_writer_resolved_is_their_write(status, sleeps):
    send = scripted(ApiError("POST", "/things", status, code="unprocessable"))
    assert write_and_settle(send, on_conflict=lambda error: (dict(id="theirs"), False)) == (dict(id="theirs"), False)


def test_a_conflict_with_nothing_to_show_for_it_is_raised(sleeps):
    send = scripted(ApiError("POST", "/things", 422, code="unprocessable", message="name is taken"))
    with pytest.raises(ApiError):
        write_and_settle(send, on_conflict=lambda error: None)
    assert len(send.calls) == 1


@pytest.mark.parametrize("status", [400, 401, 403, 404, 500])
def test_any_other_refusal_is_raised_at_once_without_reading(status, sleeps):
    send = scripted(ApiError("POST", "/things", status))
    with pytest.raises(ApiError):
        write_and_settle(send, read_back=pytest.fail, on_conflict=pytest.fail)
    assert sleeps == []


# The waiter ----------------------------------------------------------------------------------------

def reader(*states):
    values = list(states)
    return lambda: dict(state=values.pop(0) if len(values) > 1 else values[0])


def waiter(**kwargs):
    return Waiter("branch 'dev' to be ready", done=lambda b: b["state"] == "ready", state=lambda b: b["state"],
                  key="branch", **kwargs)


def test_the_waiter_returns_once_done_and_waits_longer_each_time(sleeps):
    wait = waiter()
    assert wait.wait(reader("pending", "pending", "pending", "ready"), timeout=60) == dict(state="ready")
    assert sleeps == [1.0, 1.5, 2.25] and wait.reads == 4


def test_a_value_in_hand_is_judged_before_the_first_read(sleeps):
    wait = waiter()
    assert wait.wait(reader("ready"), timeout=60, current=dict(state="pending")) == dict(state="ready")
    assert wait.reads == 1 and sleeps == [1.0]


def test_the_intervals_stop_growing(sleeps):
    waiter(longest=3.0).wait(reader(*["pending"] * 6 + ["ready"]), timeout=600)
    assert max(sleeps) == 3.0


def test_the_timeout_fails_with_the_last_state_and_what_to_do(sleeps):
    with pytest.raises(ModuleFailure) as failure:
        waiter().wait(reader("pending"), timeout=10, changed=True)
    assert failure.value.msg == ("Waited 10 seconds for branch 'dev' to be ready; the last state was 'pending'. Raise "
                                 "wait_timeout, or set wait to false and check later.")
    assert failure.value.result == dict(changed=True, branch=dict(state="pending"))
    assert sleeps[:4] == [1.0, 1.5, 2.25, 3.375] and sum(sleeps) <= 10  # the last wait ends at the timeout


def test_a_state_that_cannot_get_there_ends_the_wait_at_once(sleeps):
    wait = waiter(failed=lambda b: "The deploy failed." if b["state"] == "error" else None)
    with pytest.raises(ModuleFailure) as failure:
        wait.wait(reader("pending", "error", "ready"), timeout=600)
    assert failure.value.msg == "The deploy failed."
    assert failure.value.result == dict(branch=dict(state="error")) and wait.reads == 2


def test_a_zero_timeout_reads_once(sleeps):
    with pytest.raises(ModuleFailure):
        waiter().wait(reader("pending"), timeout=0)
    assert sleeps == []


class Waits(Module):
    """A task whose module waits: the waiter tells the running task's context (base.progress)."""

    option_sets = ()

    def __init__(self, ctx, wait, read, **arguments):
        super().__init__({}, ctx)
        self.waiting = wait, read, arguments

    def run(self):
        wait, read, arguments = self.waiting
        return dict(branch=wait.wait(read, **arguments))


def test_a_wait_tells_the_task_each_state_it_sees_change_with_the_seconds(sleeps):
    ctx = TaskContext()
    Waits(ctx, waiter(), reader("pending", "pending", "resizing", "resizing", "ready"), timeout=60).execute()
    assert ctx.waited == ["Waiting for branch 'dev' to be ready: 'pending' after 0 s.",
                          "Waiting for branch 'dev' to be ready: 'resizing' after 2 s.",  # 1.0 + 1.5
                          "Waiting for branch 'dev' to be ready: 'ready' after 8 s."]  # + 2.25 + 3.375


def test_a_wait_over_at_its_first_look_says_nothing(sleeps):
    ctx = TaskContext()
    Waits(ctx, waiter(), reader("pending"), timeout=60, current=dict(state="ready")).execute()
    assert ctx.waited == [] and sleeps == []


def test_a_failed_wait_has_told_its_states_and_outside_a_task_nothing_is_told(sleeps):
    ctx = TaskContext()
    with pytest.raises(ModuleFailure):
        Waits(ctx, waiter(), reader("pending"), timeout=3).execute()
    assert ctx.waited == ["Waiting for branch 'dev' to be ready: 'pending' after 0 s."]
    assert waiter().wait(reader("pending", "ready"), timeout=60) == dict(state="ready")  # no task: no one to tell
    assert ctx.waited == ["Waiting for branch 'dev' to be ready: 'pending' after 0 s."]
