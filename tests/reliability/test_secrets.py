# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secrets: every run of this suite is captured at -vvvv and searched (the secret watch of the
harness, on every run; the integration targets' logs are searched by the same watch where their
pass runs at -vvvv). Here, end to end on both execution paths, one run per kind of secret a module
returns or is given (a Postgres role's password, a service token, a webhook's signing secret; a
password's plain_text and OAuth tokens in test_execution_paths.py), failures with bad credentials
are checked never to echo them, and the in-process path is checked to print what the module path
prints (no_log parity): secret options with and without no_log, at -vvvv, with the invocation key
off (ansible-core's default) and on (ansible_inject_invocation).

A secret is any value the emulator issued (service tokens, client secrets, OAuth access and
refresh tokens, password plain texts, found by their prefixes) or a test passed (the wrong
credentials below, codes, tokens). It may show only in the result of a task without no_log
that returns it by design (a password's plain_text, a token's access and refresh tokens).
"""

from __future__ import annotations

import re

import pytest

from harness import FQCN, NO_LOG_MASK, REVEALS, module_defaults, play, task
from harness.output import printed, task_names

WRONG_SERVICE_TOKEN = "pscale_tkn_wrongwrongwrongwrongwrongwrong00"
WRONG_ACCESS_TOKEN = "pscale_oauth_wrongwrongwrongwrongwrongwrongwrong0"
WRONG_REFRESH_TOKEN = "pscale_ref_wrongwrongwrongwrongwrongwrongwrong00"
WRONG_CLIENT_SECRET = "pscale_app_secret_wrongwrongwrongwrongwrong000"
WRONG_CODE = "wrongcodewrongcodewrongcodewrongcode0000"
BEARER = dict(service_token="{{ omit }}", service_token_id="{{ omit }}")


def _bad_credentials():
    """Tasks that fail because of a credential; none may echo it."""
    api = dict(api_url="{{ api_url }}")
    wrong_service_token = dict(api, service_token_id="{{ world.service_token.id }}", service_token="{{ wrong.service }}")
    forbidden = dict(api, service_token_id="{{ world.forbidden_service_token.id }}",
                     service_token="{{ world.forbidden_service_token.token }}")
    app = "{{ world.oauth_application.%s }}"
    tasks = [
        ("user_info", wrong_service_token),
        ("region_info", dict(wrong_service_token, organization="acme", database="app")),
        ("password", dict(wrong_service_token, organization="acme", database="app", branch="main", name="x")),
        ("team", dict(forbidden, organization="acme", name="Forbidden")),
        ("branch_info", dict(forbidden, organization="acme", database="app")),
        ("user_info", dict(api, access_token="{{ wrong.access }}", **BEARER)),
        ("token_info", dict(access_token="{{ wrong.access }}", fail_if_inactive=True)),
        ("token", dict(grant_type="refresh_token", refresh_token="{{ wrong.refresh }}")),
        ("token", dict(grant_type="refresh_token", refresh_token="{{ wrong.refresh }}", client_secret="{{ wrong.client }}")),
        ("token", dict(grant_type="authorization_code", code="{{ wrong.code }}", redirect_uri=app % "redirect_uri")),
        ("token", dict(grant_type="authorization_code", code="{{ wrong.code }}", redirect_uri=app % "redirect_uri",
                       application_id=app % "id", organization="acme", **wrong_service_token)),
    ]
    return [{"name": "Fail with a bad credential %d (%s)" % (n, module), FQCN + module: args, "ignore_errors": True}
            for n, (module, args) in enumerate(tasks)]


@pytest.mark.parametrize("in_process", [True, False], ids=["in_process", "module"])
def test_failures_with_bad_credentials_never_echo_them(emulator, ansible, watch, in_process):
    wrong = dict(service=WRONG_SERVICE_TOKEN, access=WRONG_ACCESS_TOKEN, refresh=WRONG_REFRESH_TOKEN,
                 client=WRONG_CLIENT_SECRET, code=WRONG_CODE)
    watch.learn(*wrong.values())
    tasks = _bad_credentials()
    # The same wrong service token once more, from the environment ansible-playbook runs in. (Not the
    # task keyword environment: Ansible itself shows its values at -vvv when a module runs as a process.)
    tasks.append({"name": "Fail with a bad credential from the environment",
                  FQCN + "user_info": dict(api_url="{{ api_url }}", **BEARER), "ignore_errors": True})
    environment = dict(PLANETSCALE_SERVICE_TOKEN_ID=emulator.world["service_token"]["id"],
                       PLANETSCALE_SERVICE_TOKEN=WRONG_SERVICE_TOKEN)
    run = ansible.run([play(tasks, defaults=module_defaults())], dict(wrong=wrong), emulator=emulator,
                      in_process=in_process, env=environment, label="bad credentials, in_process=%s" % in_process)
    results = [task for task in run.tasks if task.name.startswith("Fail with a bad credential")]
    assert len(results) == len(tasks) and all(task.failed for task in results), run.log_path
    assert {400, 401, 403} <= set(task.result.get("status") for task in results)
    for task in results:
        # A message that echoed a no_log value would show Ansible's mask instead of it.
        assert NO_LOG_MASK not in task.result["msg"] and "*****" not in task.result["msg"], task
        assert not any(value in task.result["msg"] for value in wrong.values()), task
    # The watch has searched the whole output for every value in wrong: the test fails on a leak.


# A Postgres role's secret: only in the result of the task that issued it -------------------------------


@pytest.mark.parametrize("in_process", [True, False], ids=["in_process", "module"])
def test_a_role_secret_shows_only_in_the_result_of_the_task_that_issued_it(emulator, ansible, watch, in_process):
    where = dict(database="pgapp", branch="main")
    tasks = [
        task("Create role app " + REVEALS, "postgres_role", name="app", ttl=60, **where),
        task("Ensure role app", "postgres_role", name="app", ttl=60, **where),
        task("List the roles", "postgres_role_info", **where),
        task("Reset role app, no_log", "postgres_role", no_log=True, name="app", reset=True, **where),
        task("Ensure role app once more", "postgres_role", name="app", **where),
    ]
    run = ansible.run([play(tasks, defaults=module_defaults())], emulator=emulator, in_process=in_process,
                      label="role secrets, in_process=%s" % in_process).without_failures()
    shown = printed(run.output)
    issuing = [item for item in shown if item.name.startswith("Create role app")]
    assert len(issuing) == 1 and issuing[0].result["changed"] is True
    secret = issuing[0].result["role"]["password"]
    watch.learn(secret)
    assert secret.startswith("pscale_pw_") and issuing[0].result["connection"]["password"] == secret
    # Every secret the emulator issued (the reset's too) shows inside the creating task's printed result only.
    span = issuing[0].span
    places = [match.start() for match in re.finditer("pscale_pw_", run.output)]
    assert places and all(span[0] <= place < span[1] for place in places), run.log_path
    reset = [item for item in shown if item.name.startswith("Reset role app")]
    assert reset and all(item.result.get("censored") == CENSORED for item in reset)


# No_log parity: the in-process path and the module path ------------------------------------------

CENSORED = "the output has been hidden due to the fact that 'no_log: true' was specified for this result"
CLOCK_KEYS = frozenset(("exp", "iat", "expires_in", "expires_at"))  # the token's lifetime, read at different times


def _secret_options():
    """Tasks that pass every secret option (service_token, access_token, client_secret, a code), with and
    without no_log, succeeding and failing."""
    app = "{{ world.oauth_application.%s }}"
    service = dict(api_url="{{ api_url }}", service_token_id="{{ world.service_token.id }}",
                   service_token="{{ world.service_token.token }}")
    exchange = dict(auth_url="{{ auth_url }}", client_id=app % "client_id", client_secret=app % "client_secret",
                    grant_type="authorization_code", code="{{ code }}", redirect_uri=app % "redirect_uri")
    check = dict(auth_url="{{ auth_url }}", access_token="{{ access_token }}")
    refused = dict(api_url="{{ api_url }}", service_token_id="{{ world.service_token.id }}",
                   service_token="{{ wrong_service_token }}")
    return [
        task("Exchange an authorization code for tokens", "token", no_log=True, **exchange),
        task("Read the user with the service token", "user_info", **service),
        task("Read the user with the service token, no_log", "user_info", no_log=True, **service),
        dict(task("Read the user with a service token the platform refuses", "user_info", **refused),
             failed_when=False),
        task("Read the user with the access token", "user_info", api_url="{{ api_url }}",
             access_token="{{ access_token }}"),
        task("Check the access token", "token_info", **check),
        task("Check the access token, no_log", "token_info", no_log=True, **check),
        dict(task("Exchange the used code again, which the OAuth server refuses", "token", **exchange),
             failed_when=False),
        dict(task("Exchange the used code again, no_log", "token", no_log=True, **exchange), failed_when=False),
    ]


@pytest.fixture(scope="module", params=[False, True], ids=["invocation-default", "invocation-injected"])
def both_paths(request, session_emulator, ansible, watch):
    """Per path: the output of the secret options at -vvvv, and the secret values its tasks were given."""
    emulator, outputs = session_emulator, {}
    emulator.reset()  # once: both paths read the same user (a reset dates the seeded records anew)
    for path in ("in_process", "module"):
        world = emulator.world
        secrets = dict(service_token=world["service_token"]["token"], wrong_service_token=WRONG_SERVICE_TOKEN,
                       client_secret=world["oauth_application"]["client_secret"],
                       access_token=emulator.tokens()["access_token"], code=emulator.code())
        watch.learn(*secrets.values())
        extra_vars = dict(code=secrets["code"], access_token=secrets["access_token"],
                          wrong_service_token=WRONG_SERVICE_TOKEN, ansible_inject_invocation=request.param)
        run = ansible.run([play(_secret_options(), name="secret options")], extra_vars, emulator=emulator,
                          in_process=path == "in_process",
                          label="secret options, %s, invocation %s" % (path, request.param))
        outputs[path] = run.output, secrets
    return outputs, request.param


def _shown(output):
    """Each task's name, with the status and result it printed (the clock-dependent values blanked)."""
    results = printed(output)
    return [(name, [(shown.status, _blank_clock(shown.result)) for shown in results if shown.name == name])
            for name in task_names(output)]


def _blank_clock(value):
    if isinstance(value, dict):
        return dict((k, "<clock>" if k in CLOCK_KEYS else _blank_clock(v)) for k, v in value.items())
    if isinstance(value, list):
        return [_blank_clock(v) for v in value]
    return value


@pytest.mark.parametrize("path", ["in_process", "module"])
def test_no_secret_option_value_is_shown_at_vvvv(both_paths, path):
    output, secrets = both_paths[0][path]
    assert "TASK [Read the user with the access token]" in output
    shown = [name for name, value in secrets.items() if value in output]
    assert shown == []


def test_the_in_process_path_prints_what_the_module_path_prints(both_paths):
    by_path, _inject = both_paths
    in_process, module = _shown(by_path["in_process"][0]), _shown(by_path["module"][0])
    assert [name for name, _results in in_process] == [name for name, _results in module]
    for (name, results), (_name, module_results) in zip(in_process, module):
        assert len(results) == 1, (name, results)
        assert (name, results) == (name, module_results)


def test_the_results_are_masked_not_missing(both_paths):
    by_path, inject = both_paths
    for path in ("in_process", "module"):
        tasks = dict((name, results[0][1]) for name, results in _shown(by_path[path][0]))
        assert tasks["Read the user with the service token"]["user"]["email"]
        assert tasks["Read the user with the service token, no_log"]["censored"] == CENSORED
        assert tasks["Exchange the used code again, no_log"]["censored"] == CENSORED
        refused = tasks["Read the user with a service token the platform refuses"]
        assert refused["status"] == 401 and "HTTP 401" in refused["msg"]
        assert "invalid_grant" in tasks["Exchange the used code again, which the OAuth server refuses"]["msg"]
        if inject:
            assert refused["invocation"]["module_args"]["service_token"] == NO_LOG_MASK
            exchange = tasks["Exchange the used code again, which the OAuth server refuses"]
            assert exchange["invocation"]["module_args"]["client_secret"] == NO_LOG_MASK
            assert tasks["Check the access token"]["invocation"]["module_args"]["access_token"] == NO_LOG_MASK


# Webhook secrets: every read of a webhook carries its signing secret ------------------------------------------


@pytest.mark.parametrize("in_process", [True, False], ids=["in_process", "module"])
def test_a_webhook_secret_shows_in_no_run_that_did_not_ask_for_it(emulator, ansible, watch, in_process):
    hooks = "/organizations/acme/databases/app/webhooks"
    url = "http://127.0.0.1:9/secrets"
    before = [emulator.api("POST", hooks, dict(url="%s/%s" % (url, name), events=["branch.ready"]))
              for name in ("kept", "gone")]
    watch.learn(*[hook["secret"] for hook in before])
    hook = dict(database="app")
    tasks = [
        task("Create a webhook", "webhook", url=url + "/new", events=["deploy_request.opened"], **hook),
        task("Change one in check mode", "webhook", url=url + "/kept", enabled=False, **hook),
        task("Change one", "webhook", url=url + "/kept", enabled=False, events=["branch.ready", "branch.sleeping"],
             **hook),
        task("Test it", "webhook", url=url + "/kept", send_test=True, **hook),
        dict(task("Test it again too soon", "webhook", url=url + "/kept", send_test=True, api_retries=0, **hook),
             ignore_errors=True),
        task("List the webhooks", "webhook_info", **hook),
        task("Read one by id", "webhook_info", id=before[0]["id"], **hook),
        task("Read the secrets, no_log", "webhook_info", no_log=True, register="secrets", return_secret=True, **hook),
        dict(task("The secrets were returned", "webhook", no_log=True, register="one", url=url + "/kept",
                  return_secret=True, **hook)),
        {"name": "They are the webhooks' secrets", "ansible.builtin.assert": {"that": [
            "secrets.webhooks | map(attribute='secret') | select('truthy') | list | length == 3",
            "one.webhook.secret in secrets.webhooks | map(attribute='secret')"]}},
        task("Delete one", "webhook", url=url + "/gone", state="absent", **hook),
    ]
    tasks[1]["check_mode"] = True
    for entry in tasks[:5] + tasks[-1:]:
        entry["diff"] = True
    run = ansible.run([play(tasks, defaults=module_defaults())], emulator=emulator, in_process=in_process,
                      label="webhook secrets, in_process=%s" % in_process)
    assert run.rc == 0 and run.recap["localhost"]["failed"] == 0, run.log_path
    assert run.result("Test it again too soon").failed
    found = emulator.list(hooks)
    assert sorted(h["url"] for h in found) == [url + "/kept", url + "/new"]
    watch.learn(*[h["secret"] for h in found])  # searched again in the run's output: the test fails on a leak
    assert not any(h["secret"] in run.output for h in found + before)


# A service token's secret ---------------------------------------------------------------------------


@pytest.mark.parametrize("in_process", [True, False], ids=["in_process", "module"])
def test_a_service_tokens_secret_shows_only_in_the_result_of_the_task_that_created_it(emulator, ansible, in_process):
    creating = "Create service token shown %s" % REVEALS
    tasks = [
        task(creating, "service_token", register="shown", name="shown",
             accesses=[dict(database="app", access=["read_branch"])]),
        task("Ensure service token shown, with an access more", "service_token", name="shown",
             accesses=[dict(database="app", access=["create_branch"])]),
        task("Create service token hidden", "service_token", no_log=True, register="hidden", name="hidden"),
        task("List the service tokens", "service_token_info"),
    ]
    run = ansible.run([play(tasks, defaults=module_defaults())], emulator=emulator, in_process=in_process,
                      label="service token secrets, in_process=%s" % in_process)
    secret = run.result(creating).result["service_token"]["token"]
    assert secret.startswith("pscale_tkn_")
    places = []
    start = run.output.find(secret)
    while start >= 0:
        places.append(next((shown.name for shown in run.printed() if shown.span[0] <= start < shown.span[1]), None))
        start = run.output.find(secret, start + 1)
    assert places and set(places) == {creating}, places
    for name in ("Ensure service token shown, with an access more", "List the service tokens"):
        assert "pscale_tkn_" not in str(run.result(name).result), name
    assert run.result("Create service token hidden").result.get("censored") == CENSORED
    # The watch has searched the whole output: any other token secret (by its prefix) anywhere else fails the test.
