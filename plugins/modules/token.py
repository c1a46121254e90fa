#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: token
short_description: Obtain, refresh or keep valid an OAuth access token
version_added: 0.1.0
description:
  - Exchanges an authorization code for an access token and a refresh token, or refreshes them,
    at the token endpoint of the OAuth server (O(auth_url)).
  - Refresh tokens rotate. Each refresh returns a new refresh token and ends the old one. Save the
    returned RV(token) where the next run finds it.
  - With O(min_ttl), the module keeps a token valid. It first asks the OAuth server about
    O(access_token) and refreshes only if that token is no longer active or has less than
    O(min_ttl) seconds to live, so a run with a healthy token reports no change and sends no
    request to the token endpoint.
  - With O(application_id), the grant goes to the deprecated application-token endpoint of the
    resource API, authenticated with a service token. Ansible shows a deprecation warning; drop
    O(application_id) to use the standard token endpoint.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
extends_documentation_fragment:
  - planetscale.cloud.api.oauth
  - planetscale.cloud.api.service_token
  - planetscale.cloud.api.connection
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
    support: full
    details:
      - Nothing is sent to a token endpoint. With O(min_ttl), the token's introspection (a read) is
        asked as usual, so RV(ignore:changed) is a true prediction.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in diff mode).
    support: none
  action_group:
    description: Use C(group/planetscale.cloud.all) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - planetscale.cloud.all
options:
  grant_type:
    description:
      - V(authorization_code) exchanges O(code) for tokens; V(refresh_token) refreshes O(refresh_token).
    type: str
    required: true
    choices: [authorization_code, refresh_token]
  code:
    description:
      - The authorization code the OAuth server gave the O(redirect_uri) of the application.
      - Required with O(grant_type=authorization_code). A code works once.
    type: str
  redirect_uri:
    description:
      - The redirect URI of the authorization request that produced O(code).
      - Required with O(grant_type=authorization_code); ignored when refreshing.
    type: str
  refresh_token:
    description:
      - The refresh token of the latest token. Required with O(grant_type=refresh_token).
    type: str
  access_token:
    description:
      - The access token to keep valid; used only with O(min_ttl).
      - If not set, the environment variable E(PLANETSCALE_ACCESS_TOKEN) is used.
    type: str
  min_ttl:
    description:
      - Keep O(access_token) valid for at least this many seconds more; refresh only if it lives less
        or is no longer active. Needs O(grant_type=refresh_token) and O(access_token).
      - Without it, every run refreshes.
    type: int
  application_id:
    description:
      - The ID of the OAuth application. Sends the grant to the deprecated application-token endpoint
        of the resource API, with O(organization), O(service_token_id) and O(service_token).
      - Deprecated by the platform; without it the module uses the standard token endpoint.
    type: str
  organization:
    description:
      - The organization that owns the OAuth application; used only with O(application_id).
      - If not set, the environment variable E(PLANETSCALE_ORG) is used.
    type: str
notes:
  - RV(token) holds new secrets by design. Put C(no_log=true) on the task, and keep the token where
    only the next play reads it (a fact, a vault, a secret store).
  - The service token options and O(api_url) serve only the deprecated application-token endpoint.
  - An answer without an access token and a refresh token (the platform issues both with every grant) fails the task,
    so that a saved token is never replaced by nothing.
  - When the answer to a grant is lost (a dropped connection, a timeout, HTTP 500, 502 or 504), the grant
    is sent once more. If the first request was applied, the code or refresh token is used up and the
    tokens it issued are lost; the task then fails and says so.
seealso:
  - module: planetscale.cloud.token_info
"""

EXAMPLES = r"""
- name: Exchange the authorization code for tokens
  planetscale.cloud.token:
    client_id: "{{ oauth_client_id }}"
    client_secret: "{{ oauth_client_secret }}"
    grant_type: authorization_code
    code: "{{ code_from_the_redirect }}"
    redirect_uri: http://127.0.0.1:8976/oauth/callback
  register: issued
  no_log: true

- name: Keep the token for the next play of this run
  ansible.builtin.set_fact:
    planetscale_oauth: "{{ issued.token }}"
  no_log: true

- name: Use it for the resource modules
  module_defaults:
    group/planetscale.cloud.all:
      access_token: "{{ planetscale_oauth.access_token }}"
  block:
    - name: Show who the token acts for
      planetscale.cloud.user_info:

- name: Keep the access token valid for 10 more minutes, refreshing only when needed
  planetscale.cloud.token:
    client_id: "{{ oauth_client_id }}"
    client_secret: "{{ oauth_client_secret }}"
    grant_type: refresh_token
    refresh_token: "{{ planetscale_oauth.refresh_token }}"
    access_token: "{{ planetscale_oauth.access_token }}"
    min_ttl: 600
  register: kept
  no_log: true

- name: Save the tokens; after a refresh the old refresh token no longer works
  ansible.builtin.set_fact:
    planetscale_oauth: "{{ planetscale_oauth | combine(kept.token) }}"
  no_log: true
"""

RETURN = r"""
token:
  description:
    - The tokens. Secrets by design; see the notes.
    - When O(min_ttl) found the current token valid, only its lifetime and scopes; combine them with the saved
      token, as the examples do.
  returned: unless in check mode and something would be sent to a token endpoint
  type: dict
  contains:
    access_token:
      description: The new access token.
      type: str
      returned: when tokens were issued
    refresh_token:
      description: The new refresh token. The one passed in no longer works.
      type: str
      returned: when tokens were issued
    token_type:
      description: The type of the access token.
      type: str
      sample: Bearer
    expires_in:
      description: Seconds the access token lives from when it was issued (or checked).
      type: int
      sample: 3600
    expires_at:
      description: When the access token expires, in ISO 8601 UTC, on the OAuth server's clock.
      type: str
      sample: "2026-11-22T01:02:03Z"
    scope:
      description: The scopes granted, space-separated as the server sent them.
      type: str
      sample: read_user read_organization
    scopes:
      description:
        - The scopes granted, as a list.
        - With O(application_id), the names of the record's accesses.
      type: list
      elements: str
      sample: [read_user, read_organization]
token_record:
  description:
    - The OAuth token record the deprecated application-token endpoint answered, including the plain
      C(token) and C(plain_text_refresh_token).
  returned: when O(application_id) is set and tokens were issued
  type: dict
msg:
  description: Why the token was or was not refreshed, or what check mode would have done.
  returned: with O(min_ttl), and in check mode
  type: str
"""

import time

from ansible.module_utils.basic import env_fallback
from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.grants import (
    GRANT_FIELDS, ISSUED_FIELDS, RECORD_FIELDS, TOKEN_PATH, application_token_hint, grant_form, issued_token,
    recorded_token, require_tokens, token_hint)
from ansible_collections.planetscale.cloud.plugins.module_utils.oauth import OAuthModule, http_date, server_now
from ansible_collections.planetscale.cloud.plugins.module_utils.options import (
    ACCESS_TOKEN, CONNECTION, OAUTH, SERVICE_TOKEN)

KEPT_FIELDS = ("token_type", "expires_in", "expires_at", "scope", "scopes")


def refresh_reason(info, min_ttl):
    """Why the described token needs a refresh to live min_ttl more seconds, or None if it does not."""
    if not info.get("active"):
        return "The access token is not active (expired, revoked or unknown)"
    if info.get("expires_in") is None:
        return "The OAuth server did not say when the access token expires"
    if info["expires_in"] < min_ttl:
        return "The access token lives %s more seconds, less than min_ttl %s" % (info["expires_in"], min_ttl)
    return None


def kept_token(info):
    """The token result when the current token is kept: its lifetime and scopes (the caller has the secrets)."""
    return dict((key, info.get(key)) for key in KEPT_FIELDS)


APPLICATION_TOKEN_DEPRECATED = (
    "The application-token endpoint (application_id) is deprecated by the platform: drop application_id, organization "
    "and the service token to use the standard OAuth token endpoint at auth_url.")


def check_mode_message(grant_type, reason=None):
    """What a check run says instead of sending a grant; reason: why a refresh is due (min_ttl)."""
    what = ("the code would be exchanged for tokens" if grant_type == "authorization_code"
            else "the tokens would be refreshed")
    if reason:
        return "%s: %s (check mode: nothing was sent to the token endpoint)." % (reason, what)
    return "Check mode: %s; nothing was sent to the token endpoint." % what


def check_grant(params):
    """Refuse, before any request, grant options the argument spec cannot judge."""
    grant = params["grant_type"]
    if not params["client_id"] or not params["client_secret"]:
        raise ModuleFailure("client_id and client_secret of the OAuth application are required: set them, or "
                            "PLANETSCALE_CLIENT_ID and PLANETSCALE_CLIENT_SECRET.")
    # required_if lets an option given as null through: a null counts as blank here
    blank = [name for name in GRANT_FIELDS[grant] if not (params[name] or "").strip()]
    if blank:
        raise ModuleFailure("%s must be set and not empty with grant_type %s." % (" and ".join(blank), grant))
    wrong = "refresh_token" if grant == "authorization_code" else "code"
    if params[wrong] is not None:
        raise ModuleFailure("%s cannot be used with grant_type %s." % (wrong, grant))
    if params["min_ttl"] is not None and (grant != "refresh_token" or params["min_ttl"] < 0
                                          or not params["access_token"].strip()):
        raise ModuleFailure("min_ttl keeps access_token valid by refreshing it: it needs grant_type refresh_token, "
                            "a non-empty access_token and 0 or more seconds.")
    missing = [name for name in ("organization", "service_token_id", "service_token") if not params[name]]
    if params["application_id"] is not None and missing:
        raise ModuleFailure("The deprecated application-token endpoint (application_id) belongs to the resource "
                            "API and needs organization, service_token_id and service_token (or PLANETSCALE_ORG, "
                            "PLANETSCALE_SERVICE_TOKEN_ID and PLANETSCALE_SERVICE_TOKEN); missing: %s."
                            % ", ".join(missing))


class Token(OAuthModule):
    """A grant always issues new tokens (changed); with min_ttl only a dying token is refreshed. A grant is sent to the
    OAuth server, or to the deprecated application-token endpoint."""

    option_sets = (OAUTH, ACCESS_TOKEN, SERVICE_TOKEN, CONNECTION)
    argument_spec = dict(
        grant_type=dict(type="str", required=True, choices=list(GRANT_FIELDS)),
        code=dict(type="str", no_log=True),
        redirect_uri=dict(type="str"),
        refresh_token=dict(type="str", no_log=True),
        min_ttl=dict(type="int"),
        application_id=dict(type="str"),
        organization=dict(type="str", fallback=(env_fallback, ["PLANETSCALE_ORG"])))
    required_if = [["grant_type", grant, fields] for grant, fields in GRANT_FIELDS.items()]
    required_by = dict(min_ttl="access_token")
    path_options = ("application_id",)

    def validate(self):
        super().validate()
        check_grant(self.params)

    def run(self):
        params = self.params
        if params["application_id"] is not None:
            self.ctx.deprecate(APPLICATION_TOKEN_DEPRECATED, version="1.0.0", collection_name="planetscale.cloud")
        reason = None
        if params["min_ttl"] is not None:
            info = self.read_token_info(params["access_token"])
            reason = refresh_reason(info, params["min_ttl"])
            if reason is None:
                return dict(token=kept_token(info), msg="The access token lives %s more seconds, at least min_ttl %s: "
                            "nothing was refreshed." % (info["expires_in"], params["min_ttl"]))
        if self.ctx.check_mode:
            return dict(changed=True, msg=check_mode_message(params["grant_type"], reason))
        result = self.grant_at_application() if params["application_id"] else self.grant()
        if reason:
            result["msg"] = reason + ": refreshed."
        return dict(result, changed=True)

    def grant(self):
        sent = time.time()
        body = self.send_grant(lambda: self.client.post(TOKEN_PATH, data=grant_form(self.params), any_json=True))
        require_tokens(body, ISSUED_FIELDS, "POST " + TOKEN_PATH, self.params["grant_type"],
                       "auth_url is the platform's OAuth server")
        return dict(token=issued_token(body, http_date(self.client.server_date) or sent))

    def grant_at_application(self):
        params = self.params
        api = self.make_client(params["api_url"], "%s:%s" % (params["service_token_id"], params["service_token"]))
        try:
            url = self.org_path("oauth-applications", params["application_id"], "token")
            record = self.send_grant(lambda: api.post(url, json=grant_form(params), any_json=True))
            require_tokens(record, RECORD_FIELDS, "POST " + url, params["grant_type"],
                           "api_url is the platform's API")
            return dict(token=recorded_token(record, server_now(api)), token_record=record)
        finally:
            api.close()

    def urls_in_use(self):
        return super().urls_in_use() + (["api_url"] if self.params.get("application_id") else [])

    def oauth_hint(self, error):
        if error.path == TOKEN_PATH:
            return token_hint(error, self.params["grant_type"], self.lost_answer)
        if error.path.endswith("/token") and self.params["application_id"]:
            return application_token_hint(error, self.params["grant_type"], self.params["organization"],
                                          self.params["application_id"], self.lost_answer)
        return super().oauth_hint(error)


def main():
    run_module(Token)


if __name__ == "__main__":
    main()
