# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A missing organization, or half a service token, is a sentence that names the option and its environment
variable, before any request, on both paths a task takes: the module process (run_module, AnsibleModule) and the
in-process action plugin. Not Ansible's stock "missing required arguments" or "parameters are required together"."""

from __future__ import annotations

import io
import json
from contextlib import contextmanager, redirect_stdout
from types import SimpleNamespace
from unittest import mock

import pytest
from ansible.module_utils import basic

from ansible_collections.planetscale.cloud.plugins.action.user_info import ActionModule
from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.modules.database_info import DatabaseInfo

try:
    from ansible.module_utils.testing import patch_module_args
except ImportError:  # ansible-core before 2.19
    @contextmanager
    def patch_module_args(args):
        with mock.patch.object(basic, "_ANSIBLE_ARGS", json.dumps(dict(ANSIBLE_MODULE_ARGS=args)).encode()):
            yield

SECRET = "pscale_tkn_s3cret-missing"
VARIABLES = ("PLANETSCALE_ORG", "PLANETSCALE_SERVICE_TOKEN_ID", "PLANETSCALE_SERVICE_TOKEN", "PLANETSCALE_ACCESS_TOKEN",
             "PLANETSCALE_API_URL")
NO_ORGANIZATION = ("No organization was given: set organization (in the task, or in module_defaults for "
                   "group/planetscale.cloud.all) or the environment variable PLANETSCALE_ORG to the name of the "
                   "organization.")
NO_SECRET = ("service_token_id is set but service_token is not, and a service token needs both: set service_token "
             "(or the environment variable PLANETSCALE_SERVICE_TOKEN) to the token's secret.")
NO_ID = ("service_token is set but service_token_id is not, and a service token needs both: set service_token_id "
         "(or the environment variable PLANETSCALE_SERVICE_TOKEN_ID) to the token's ID.")


def module_process(args):
    """database_info as a module process runs it at -vvv: its result, as AnsibleModule prints it."""
    output = io.StringIO()
    with patch_module_args(dict(args, _ansible_verbosity=3)), redirect_stdout(output):
        with pytest.raises(SystemExit):
            run_module(DatabaseInfo)
    return json.loads(output.getvalue().strip().splitlines()[-1])


def in_process(args):
    """database_info as its action plugin runs it on the controller."""
    action = ActionModule.__new__(ActionModule)
    action._task = SimpleNamespace(args=dict(args), check_mode=False, diff=False, action="planetscale.cloud.database_info",
                                   collections=[], async_val=0)
    action._compute_environment_string = lambda raw_environment_out: None
    return action._in_process_result({})


PATHS = [module_process, in_process]
CASES = [
    # (the task's options, the environment, the sentence)
    (dict(service_token_id="id1", service_token=SECRET), {}, NO_ORGANIZATION),
    (dict(service_token_id="id1", service_token=SECRET), dict(PLANETSCALE_ORG=""), NO_ORGANIZATION),
    (dict(service_token_id="id1", service_token=SECRET, organization=" "), {}, NO_ORGANIZATION),
    (dict(organization="acme", service_token_id="id1"), {}, NO_SECRET),
    (dict(organization="acme"), dict(PLANETSCALE_SERVICE_TOKEN_ID="id1"), NO_SECRET),
    (dict(organization="acme", service_token=SECRET), {}, NO_ID),
    (dict(), dict(PLANETSCALE_ORG="acme", PLANETSCALE_SERVICE_TOKEN=SECRET), NO_ID),
]


@pytest.mark.parametrize("path", PATHS, ids=lambda path: path.__name__)
@pytest.mark.parametrize("args, environ, sentence", CASES, ids=[
    "no-organization", "blank-PLANETSCALE_ORG", "blank-organization", "id-without-secret",
    "id-without-secret-from-the-environment", "secret-without-id", "secret-without-id-from-the-environment"])
def test_a_missing_setting_is_a_sentence_naming_the_option_and_its_variable_before_any_request(
        server, monkeypatch, path, args, environ, sentence):
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    result = path(dict(args, api_url=server.url + "/v1", api_retries=0))
    assert result["failed"] is True
    assert result["msg"] == sentence
    assert "exception" not in result  # no Python traceback under the sentence (-vvv prints one)
    assert SECRET not in json.dumps(result)
    assert server.requests == []


@pytest.mark.parametrize("path", PATHS, ids=lambda path: path.__name__)
def test_the_organization_from_the_environment_still_serves(server, monkeypatch, path):
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PLANETSCALE_ORG", "acme")
    server.script = [(200, dict(type="list", current_page=1, next_page=None, data=[]))]
    result = path(dict(service_token_id="id1", service_token=SECRET, api_url=server.url + "/v1", api_retries=0))
    assert not result.get("failed") and result["databases"] == []
    assert [r["path"] for r in server.requests] == ["/v1/organizations/acme/databases"]
