# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Persistent failure: an API that answers 503 for ever, or more slowly than api_timeout, and a
branch that never becomes ready. Each task fails within the bound the documentation gives
(api_retries + 1 attempts of api_timeout seconds, waits of at most 30 s each, 60 s when
Retry-After asks, 120 s in all; wait_timeout for a branch), with a sentence that names the
endpoint; nothing hangs.
"""

from __future__ import annotations

import pytest

from harness import FQCN, module_defaults, play

RETRIES = 2
CREATE_ATTEMPTS = 3  # a create read back and found not applied is sent again, three times in all
TIMEOUT = 1
SLACK = 1.0  # seconds beyond what a task that fails nothing takes on the same path (BASELINE, in the same run)
BASELINE = "Read the regions, which nothing slows down"

# What each case runs: (module, arguments, the endpoint its failure names).
CASES = {
    "user_info": ("user_info", {}, "GET /user"),
    "branch_info": ("branch_info", dict(database="app"), "GET /organizations/acme/databases/app/branches"),
    "branch": ("branch", dict(database="app", name="never", parent_branch="main"),
               "POST /organizations/acme/databases/app/branches"),
    "password": ("password", dict(database="app", branch="main", name="never"),
                 "POST /organizations/acme/databases/app/branches/main/passwords"),
    "team": ("team", dict(name="Never"), "POST /organizations/acme/teams"),
    "token_info": ("token_info", dict(access_token="{{ access_token }}"), "GET /oauth/token/info"),
    "token": ("token", dict(grant_type="refresh_token", refresh_token="{{ refresh_token }}"), "POST /oauth/token"),
}


def documented_bound(retries, timeout, retry_after=None):
    """The longest one request may take by the documentation of api_timeout and api_retries."""
    each = 30.0 if retry_after is None else min(60.0, retry_after)
    return (retries + 1) * timeout + min(120.0, retries * each)


def expected_bound(retries, timeout, retry_after=None):
    """The same bound for the backoff the client uses (0.5 s doubling, with jitter below it)."""
    waits = sum(min(30.0, 0.5 * 2 ** n) if retry_after is None else retry_after for n in range(retries))
    return (retries + 1) * timeout + waits


def _tokens(emulator, ansible):
    """Tokens for the token modules, obtained before any fault is set."""
    tokens = emulator.tokens()
    ansible.watch.learn(tokens["access_token"], tokens["refresh_token"])
    return tokens


def _run(emulator, ansible, tokens, label, case, in_process=True):
    module, args, _endpoint = CASES[case]
    defaults = module_defaults(api_retries=RETRIES, api_timeout=TIMEOUT)
    title = "%s against %s" % (module, label)
    tasks = [{"name": BASELINE, FQCN + "region_info": dict(database="app")}, {"name": title, FQCN + module: args}]
    run = ansible.run([play(tasks, defaults=defaults)],
                      dict(access_token=tokens["access_token"], refresh_token=tokens["refresh_token"]),
                      emulator=emulator, in_process=in_process, timeout=120,
                      label="%s %s in_process=%s" % (label, case, in_process))
    assert not run.result(BASELINE).failed
    # The task's own seconds, without what any task costs on this path (a module process, for one).
    return run, run.result(title), run.seconds[title]["localhost"] - run.seconds[BASELINE]["localhost"]


def _assert_failed_naming(task, endpoint):
    assert task.failed, task
    msg = task.result["msg"]
    assert msg.startswith(endpoint + " failed"), msg
    assert msg.endswith("."), msg
    assert "Traceback" not in msg and "object at 0x" not in msg, msg


@pytest.mark.parametrize("case", sorted(CASES))
def test_503_for_ever_fails_within_the_bound_naming_the_endpoint(emulator, ansible, figures, case):
    module, _args, endpoint = CASES[case]
    method, path = endpoint.split(" ", 1)
    tokens = _tokens(emulator, ansible)
    # Only the request the case is about fails for ever; reads before it succeed.
    emulator.faults(dict(method=method, path="^(/v1)?%s$" % path, status=503, retry_after=1))
    _done, task, seconds = _run(emulator, ansible, tokens, "503 for ever", case)
    faults = len([entry for entry in emulator.requests() if entry["fault"]])
    figures["faults_injected"] += faults
    figures["faults_reported"] += faults
    _assert_failed_naming(task, endpoint)
    assert "HTTP 503" in task.result["msg"] and task.result["status"] == 503
    attempts = [e for e in emulator.requests() if e["method"] == method and e["fault"]]
    # A read is retried api_retries times. A 503 after a POST may follow a write the platform applied:
    # a create is read back and sent again only when it was not applied (three times in all), and a
    # grant, which cannot be read back, is sent once more.
    sent = dict(GET=RETRIES + 1, POST=2 if module == "token" else CREATE_ATTEMPTS)[method]
    assert len(attempts) == sent
    assert (sent - 1) * 1 - SLACK <= seconds <= expected_bound(sent - 1, 0, retry_after=1) + SLACK
    assert seconds <= documented_bound(RETRIES, TIMEOUT, retry_after=1)


# every case in-process; one through the module path proves its adapter
SLOW_CASES = [pytest.param(case, True, id="%s-in_process" % case) for case in ("user_info", "branch", "token_info", "token")]
SLOW_CASES.append(pytest.param("user_info", False, id="user_info-module"))


@pytest.mark.parametrize("case,in_process", SLOW_CASES)
def test_a_server_slower_than_api_timeout_fails_within_the_bound_naming_the_endpoint(
        emulator, ansible, figures, case, in_process):
    module, _args, endpoint = CASES[case]
    method, path = endpoint.split(" ", 1)
    tokens = _tokens(emulator, ansible)
    emulator.faults(dict(method=method, path="^(/v1)?%s$" % path, delay=TIMEOUT + 2))
    _done, task, seconds = _run(emulator, ansible, tokens, "a slow server", case, in_process)
    faults = len([entry for entry in emulator.requests() if entry["fault"]])
    figures["faults_injected"] += faults
    figures["faults_reported"] += faults
    _assert_failed_naming(task, endpoint)
    assert "no answer within %s seconds (api_timeout)" % TIMEOUT in task.result["msg"]
    if method == "POST" and case != "token":  # a write that may have been applied says so
        assert task.result["msg"].endswith("running the task again reads what exists and continues from there.")
    assert seconds <= expected_bound(RETRIES, TIMEOUT) + SLACK
    assert seconds <= documented_bound(RETRIES, TIMEOUT)


def test_a_branch_that_never_becomes_ready_fails_after_wait_timeout(emulator, ansible):
    emulator.settings(ready_delay=3600)
    title = "Create a branch that never becomes ready"
    task = {"name": title, FQCN + "branch": dict(database="app", name="slow", parent_branch="main", wait_timeout=3)}
    run = ansible.run([play([task], defaults=module_defaults())], emulator=emulator, label="branch never ready")
    result = run.result(title)
    assert result.failed
    assert result.result["msg"] == ("Branch 'slow' of database 'app' was not ready after 3 seconds (state 'pending'); "
                                    "raise wait_timeout or set wait to false.")
    assert result.result["changed"] is True  # the branch was created: the failure says so
    assert 3 <= run.seconds[title]["localhost"] <= 3 + SLACK
