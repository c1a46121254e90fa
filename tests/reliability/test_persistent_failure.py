# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Persistent failure: an API that answers 503 for ever, or more slowly than api_timeout, and a
branch that never becomes ready. Each task fails within the bound the documentation gives
(api_retries + 1 attempts of api_timeout seconds, waits of at most 30 s each, 60 s when
Retry-After asks, 120 s in all; wait_timeout for a branch), with a sentence that names the
endpoint; nothing hangs. Each module's class runs in this process (harness.direct), with its real
client; one case runs through ansible-playbook on the module path, where a module process fails the task.

The bound is proven by counts, which a slow machine cannot change: the attempts the emulator
saw (a create read back and found not applied is sent again, three times in all or api_retries + 1; a grant,
which cannot be read back, twice), and the reads of a wait. Time is only bounded from below:
a task took at least the waits it was told to make.
"""

from __future__ import annotations

import pytest

from harness import FQCN, module_defaults, play

RETRIES = 2
CREATE_ATTEMPTS = max(3, RETRIES + 1)  # a create read back and found not applied: three times, or api_retries + 1
TIMEOUT = 1
RETRY_AFTER = 1
WAIT_TIMEOUT = 3
# The reads of a wait of WAIT_TIMEOUT seconds at the most: after 1 s, then 1.5 s more, then what is left.
WAIT_READS = 3

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


def attempts_allowed(module, method):
    """How many times a request is sent at the most: a read api_retries + 1 times; a write that may have been
    applied is read back and sent again only when it was not (three times in all, or api_retries + 1); a grant once more."""
    return dict(GET=RETRIES + 1, POST=2 if module == "token" else CREATE_ATTEMPTS)[method]


def _tokens(emulator, watch):
    """Tokens for the token modules, obtained before any fault is set."""
    tokens = emulator.tokens()
    watch.learn(tokens["access_token"], tokens["refresh_token"])
    return tokens


def _run(emulator, runner, tokens, label, case, in_process=None):
    """The task's result, and the seconds it took: run by the runner (harness.direct, or ansible-playbook on the
    path in_process says)."""
    module, args, _endpoint = CASES[case]
    defaults = module_defaults(api_retries=RETRIES, api_timeout=TIMEOUT)
    title = "%s against %s" % (module, label)
    options = dict(in_process=in_process, timeout=120) if in_process is not None else {}
    run = runner.run([play([{"name": title, FQCN + module: args}], defaults=defaults)],
                     dict(access_token=tokens["access_token"], refresh_token=tokens["refresh_token"]),
                     emulator=emulator, label="%s %s in_process=%s" % (label, case, in_process), **options)
    return run.result(title), run.seconds[title]["localhost"]


def _assert_failed_naming(task, endpoint):
    assert task.failed, task
    msg = task.result["msg"]
    assert msg.startswith(endpoint + " failed"), msg
    assert msg.endswith("."), msg
    assert "Traceback" not in msg and "object at 0x" not in msg, msg


@pytest.mark.parametrize("case", sorted(CASES))
def test_503_for_ever_fails_within_the_bound_naming_the_endpoint(emulator, direct, watch, figures, case):
    module, _args, endpoint = CASES[case]
    method, path = endpoint.split(" ", 1)
    tokens = _tokens(emulator, watch)
    # Only the request the case is about fails for ever; reads before it succeed.
    emulator.faults(dict(method=method, path="^(/v1)?%s$" % path, status=503, retry_after=RETRY_AFTER))
    task, seconds = _run(emulator, direct, tokens, "503 for ever", case)
    faults = len([entry for entry in emulator.requests() if entry["fault"]])
    figures["faults_injected"] += faults
    figures["faults_reported"] += faults
    _assert_failed_naming(task, endpoint)
    assert "HTTP 503" in task.result["msg"] and task.result["status"] == 503
    attempts = [e for e in emulator.requests() if e["method"] == method and e["fault"]]
    # A 503 after a POST may follow a write the platform applied: see attempts_allowed.
    sent = attempts_allowed(module, method)
    assert len(attempts) == sent
    assert seconds >= (sent - 1) * RETRY_AFTER  # it waited as Retry-After said between the attempts


# every case in this process; one through ansible-playbook on the module path proves its adapter
SLOW_CASES = [pytest.param(case, None, id=case) for case in ("user_info", "branch", "token_info", "token")]
SLOW_CASES.append(pytest.param("user_info", False, id="user_info-module"))


@pytest.mark.parametrize("case,in_process", SLOW_CASES)
def test_a_server_slower_than_api_timeout_fails_within_the_bound_naming_the_endpoint(
        emulator, direct, ansible, watch, figures, case, in_process):
    module, _args, endpoint = CASES[case]
    method, path = endpoint.split(" ", 1)
    tokens = _tokens(emulator, watch)
    emulator.faults(dict(method=method, path="^(/v1)?%s$" % path, delay=TIMEOUT + 2))
    task, seconds = _run(emulator, direct if in_process is None else ansible, tokens, "a slow server", case,
                         in_process)
    faults = len([entry for entry in emulator.requests() if entry["fault"]])
    figures["faults_injected"] += faults
    figures["faults_reported"] += faults
    _assert_failed_naming(task, endpoint)
    assert "no answer within %s seconds (api_timeout)" % TIMEOUT in task.result["msg"]
    if method == "POST" and case != "token":  # a write that may have been applied says so
        assert task.result["msg"].endswith("running the task again reads what exists and continues from there.")
    # Each attempt waited api_timeout for its answer, and no more attempts were made than the bound allows.
    attempts = [e for e in emulator.requests() if e["method"] == method and e["fault"]]
    assert len(attempts) == attempts_allowed(module, method)
    assert seconds >= len(attempts) * TIMEOUT


def test_a_branch_that_never_becomes_ready_fails_after_wait_timeout(emulator, direct):
    emulator.settings(ready_delay=3600)
    title = "Create a branch that never becomes ready"
    task = {"name": title, FQCN + "branch": dict(database="app", name="slow", parent_branch="main",
                                                 wait_timeout=WAIT_TIMEOUT)}
    run = direct.run([play([task], defaults=module_defaults())], emulator=emulator, label="branch never ready")
    result = run.result(title)
    assert result.failed
    assert result.result["msg"] == ("Branch 'slow' of database 'app' was not ready after 3 seconds (state 'pending'); "
                                    "raise wait_timeout or set wait to false.")
    assert result.result["changed"] is True  # the branch was created: the failure says so
    assert run.seconds[title]["localhost"] >= WAIT_TIMEOUT
    # The wait ended at wait_timeout: no more reads of the branch after its create than fit in it.
    log = ["%s %s" % (entry["method"], entry["path"].rsplit("/", 1)[-1]) for entry in emulator.requests()]
    reads = log[log.index("POST branches") + 1:]
    assert 1 <= len(reads) <= WAIT_READS and set(reads) == {"GET slow"}, log
