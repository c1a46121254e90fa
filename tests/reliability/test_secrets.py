# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secrets: every run of this suite is captured at -vvvv and searched (the secret watch of the
harness, on every run); here, every integration target runs at -vvvv too, and failures with
bad credentials are checked never to echo them.

A secret is any value the emulator issued (service tokens, client secrets, OAuth access and
refresh tokens, password plain texts, found by their prefixes) or a test passed (the wrong
credentials below, codes, tokens). It may show only in the result of a task without no_log
that returns it by design (a password's plain_text, a token's access and refresh tokens).
"""

from __future__ import annotations

import os

import pytest

from harness import FQCN, NO_LOG_MASK, ROOT, Emulator, module_defaults, play

TARGETS = os.path.join(ROOT, "tests", "integration", "targets")
WRONG_SERVICE_TOKEN = "pscale_tkn_wrongwrongwrongwrongwrongwrong00"
WRONG_ACCESS_TOKEN = "pscale_oauth_wrongwrongwrongwrongwrongwrongwrong0"
WRONG_REFRESH_TOKEN = "pscale_ref_wrongwrongwrongwrongwrongwrongwrong00"
WRONG_CLIENT_SECRET = "pscale_app_secret_wrongwrongwrongwrongwrong000"
WRONG_CODE = "wrongcodewrongcodewrongcodewrongcode0000"
BEARER = dict(service_token="{{ omit }}", service_token_id="{{ omit }}")


def _targets():
    return sorted(name for name in os.listdir(TARGETS) if os.path.isfile(os.path.join(TARGETS, name, "tasks", "main.yml")))


@pytest.fixture(scope="module")
def integration_emulator(workdir, watch):
    """An emulator started as the integration harness starts it (default settings)."""
    emulator = Emulator(workdir, ready_delay=2.0, name="integration").start()
    world = emulator.world
    watch.learn(world["service_token"]["token"], world["forbidden_service_token"]["token"],
                world["oauth_application"]["client_secret"])
    yield emulator
    emulator.stop()


@pytest.mark.parametrize("target", _targets())
def test_an_integration_target_at_vvvv_shows_no_secret(integration_emulator, ansible, tmp_path, target):
    emulator = integration_emulator
    emulator.reset()
    # The variables hack/integration.sh passes, and output_dir as ansible-test gives it.
    extra_vars = dict(planetscale_api_url=emulator.api_url, planetscale_auth_url=emulator.url,
                      planetscale_emulator_url=emulator.url, planetscale_world=emulator.world,
                      output_dir=str(tmp_path))
    playbook = [dict(name="integration target %s" % target, hosts="localhost", gather_facts=False,
                     roles=[target])]
    run = ansible.run("integration target %s at -vvvv" % target, playbook, extra_vars, timeout=900,
                      env=dict(ANSIBLE_ROLES_PATH=TARGETS))
    # The watch has searched the output already (the test fails on a leak); the target must have run whole.
    assert run.rc == 0 and run.recap["localhost"]["failed"] == 0, "target %s failed: %s" % (target, run.log_path)


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
    run = ansible.run("bad credentials, in_process=%s" % in_process, [play(tasks, defaults=module_defaults())],
                      dict(wrong=wrong), emulator=emulator, in_process=in_process, env=environment)
    results = [task for task in run.tasks if task.name.startswith("Fail with a bad credential")]
    assert len(results) == len(tasks) and all(task.failed for task in results), run.log_path
    assert {400, 401, 403} <= set(task.result.get("status") for task in results)
    for task in results:
        # A message that echoed a no_log value would show Ansible's mask instead of it.
        assert NO_LOG_MASK not in task.result["msg"] and "*****" not in task.result["msg"], task
        assert not any(value in task.result["msg"] for value in wrong.values()), task
    # The watch has searched the whole output for every value in wrong: the test fails on a leak.
