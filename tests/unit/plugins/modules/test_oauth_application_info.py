# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import json

from ansible_collections.planetscale.cloud.plugins.module_utils.oauth_tokens import TOKEN_FIELDS
from ansible_collections.planetscale.cloud.plugins.modules.oauth_application_info import OAuthApplicationInfo

URL = "/v1/organizations/acme/oauth-applications"

MODULE = OAuthApplicationInfo  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", service_token_id="svc", service_token="s3cret")


def application(number, name="CLI", tokens=1):
    return dict(id="app%d" % number, name=name, client_id="client-%d" % number, client_secret="leaked-client-secret",
                redirect_uri="https://cli.example.test/callback", scopes="read_databases", tokens=tokens,
                created_at="2026-01-14T10:19:23Z", mcp_tool_groups=None)


def token(number):
    """A token as the platform's reads answer it: with its secrets, and a field the module does not know."""
    return dict(id="tk%d" % number, name=None, display_name="CLI (Ada)", token="leaked-access-%d" % number,
                plain_text_refresh_token="leaked-refresh-%d" % number, refresh_secret="leaked-new-field",
                created_at="2026-01-14T10:19:23Z", last_used_at=None, expires_at=None, actor_id=None,
                actor_display_name="Ada", actor_type="User", service_token_accesses=None,
                oauth_accesses_by_resource=dict(database={}))


def bare(*items):
    return (200, dict(data=list(items)))


def test_every_application_with_its_tokens_and_never_a_secret(server, run):
    server.script = [bare(application(1), application(2, "Deployer", tokens=2)), bare(token(1)),
                     bare(token(2), token(3))]
    result = run()
    assert "leaked" not in json.dumps(result)
    first, second = result["oauth_applications"]
    assert (first["id"], first["client_id"], first["token_count"], second["token_count"]) == ("app1", "client-1", 1, 2)
    assert [found["id"] for found in second["tokens"]] == ["tk2", "tk3"]
    assert set(first["tokens"][0]) == set(token(1)) - {"token", "plain_text_refresh_token", "refresh_secret"}
    assert set(first["tokens"][0]) < set(TOKEN_FIELDS) and first["tokens"][0]["actor_display_name"] == "Ada"
    assert [r["path"] for r in server.requests] == [URL, URL + "/app1/tokens", URL + "/app2/tokens"]


def test_one_by_id_by_name_and_without_tokens(server, run):
    server.script = [(200, application(1)), bare(token(1))]
    assert [found["id"] for found in run(id="app1")["oauth_applications"]] == ["app1"]
    assert server.requests[0]["path"] == URL + "/app1"

    server.requests.clear()
    server.script = [bare(application(1), application(2, "Deployer"))]
    result = run(name="Deployer", tokens=False)
    assert [found["id"] for found in result["oauth_applications"]] == ["app2"]
    assert "tokens" not in result["oauth_applications"][0] and len(server.requests) == 1


def test_an_application_that_does_not_exist_is_an_empty_list(server, run):
    server.script = [(404, dict(code="not_found")), bare()]
    assert run(id="gone") == dict(changed=False, oauth_applications=[])
    assert server.requests[1]["path"] == URL and server.requests[1]["query"]["per_page"] == ["1"]
