# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secret options never show at -vvvv, and the in-process path shows exactly what the module path shows.

playbooks/secrets.yml passes service_token, access_token, client_secret and an authorization
code to tasks with and without no_log, succeeding and failing. It runs at -vvvv once through
each path; the output of each must hold none of those values, and every task's printed result
must be the same on both paths. ansible-core 2.21 made the invocation key (the module's
arguments, secrets masked) a setting, so the test runs with it off (the default) and on.
"""

from __future__ import annotations

import json
import os
import re
import urllib.parse
import urllib.request

import pytest

import run as bench

PLAYBOOK = os.path.join(bench.PLAYBOOKS, "secrets.yml")
WRONG_SERVICE_TOKEN = "pscale_tkn_refusedrefusedrefusedrefused00"
MASK = "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"
CENSORED = "the output has been hidden due to the fact that 'no_log: true' was specified for this result"
RESULT = re.compile(r"^(ok|changed|fatal|failed): \[localhost\](?:: FAILED!)? => (\{.*?^\})$", re.M | re.S)
CLOCK_KEYS = frozenset(("exp", "iat", "expires_in", "expires_at"))  # the token's lifetime, read at different times


def authorization_code(emulator):
    app = emulator.world["oauth_application"]
    return emulator.control("POST", "/oauth/authorization-codes",
                            dict(client_id=app["client_id"], redirect_uri=app["redirect_uri"]))["code"]


def access_token(emulator):
    """A fresh access token, from the OAuth server directly."""
    app = emulator.world["oauth_application"]
    form = urllib.parse.urlencode(dict(grant_type="authorization_code", code=authorization_code(emulator),
                                       redirect_uri=app["redirect_uri"], client_id=app["client_id"],
                                       client_secret=app["client_secret"])).encode()
    with urllib.request.urlopen(emulator.url + "/oauth/token", data=form, timeout=30) as response:
        return json.load(response)["access_token"]


def run_playbook(emulator, runner, in_process, inject_invocation):
    """The playbook's output at -vvvv, and the secret values its tasks were given."""
    app = emulator.world["oauth_application"]
    extra_vars = dict(emulator.base_vars(), bench_auth_url=emulator.url, bench_client_id=app["client_id"],
                      bench_client_secret=app["client_secret"], bench_redirect_uri=app["redirect_uri"],
                      bench_code=authorization_code(emulator), bench_access_token=access_token(emulator),
                      bench_wrong_service_token=WRONG_SERVICE_TOKEN, ansible_inject_invocation=inject_invocation)
    output = runner.run(PLAYBOOK, extra_vars, in_process=in_process, verbosity=4)["output"]
    secrets = dict((name, extra_vars[name]) for name in (
        "bench_service_token", "bench_wrong_service_token", "bench_client_secret", "bench_access_token", "bench_code"))
    return output, secrets


def results(output):
    """Each task's name, status and printed result, with the clock-dependent values blanked."""
    found = []
    for block in re.split(r"^TASK \[", output, flags=re.M)[1:]:
        name = block.split("]", 1)[0]
        match = RESULT.search(block)
        found.append((name, match.group(1), _blank_clock(json.loads(match.group(2)))) if match else (name, None, None))
    return found


def _blank_clock(value):
    if isinstance(value, dict):
        return dict((k, "<clock>" if k in CLOCK_KEYS else _blank_clock(v)) for k, v in value.items())
    if isinstance(value, list):
        return [_blank_clock(v) for v in value]
    return value


@pytest.fixture(scope="module", params=[False, True], ids=["invocation-default", "invocation-injected"])
def outputs(request, emulator, runner):
    return dict((path, run_playbook(emulator, runner, path == "in_process", request.param))
                for path in ("in_process", "module")), request.param


@pytest.mark.parametrize("path", ["in_process", "module"])
def test_no_secret_option_value_is_shown_at_vvvv(outputs, path):
    output, secrets = outputs[0][path]
    assert "TASK [Read the user with the access token]" in output
    shown = [name for name, value in secrets.items() if value in output]
    assert shown == []


def test_the_in_process_path_prints_what_the_module_path_prints(outputs):
    by_path, _inject = outputs
    in_process, module = results(by_path["in_process"][0]), results(by_path["module"][0])
    assert [name for name, _status, _result in in_process] == [name for name, _status, _result in module]
    for (name, status, result), (_name, module_status, module_result) in zip(in_process, module):
        assert (name, status, result) == (name, module_status, module_result)


def test_the_results_are_masked_not_missing(outputs):
    by_path, inject = outputs
    for path in ("in_process", "module"):
        tasks = dict((name, result) for name, _status, result in results(by_path[path][0]))
        assert tasks["Read the user with the service token"]["user"]["email"]
        assert tasks["Read the user with the service token, no_log"]["censored"] == CENSORED
        assert tasks["Exchange the used code again, no_log"]["censored"] == CENSORED
        refused = tasks["Read the user with a service token the platform refuses"]
        assert refused["status"] == 401 and "HTTP 401" in refused["msg"]
        assert "invalid_grant" in tasks["Exchange the used code again, which the OAuth server refuses"]["msg"]
        if inject:
            assert refused["invocation"]["module_args"]["service_token"] == MASK
            exchange = tasks["Exchange the used code again, which the OAuth server refuses"]
            assert exchange["invocation"]["module_args"]["client_secret"] == MASK
            assert tasks["Check the access token"]["invocation"]["module_args"]["access_token"] == MASK
