# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the token and token_info modules share: the OAuth server, the expiry arithmetic,
and for each error of the token endpoint a sentence that says what to do next.

Lifetimes are measured on the server's clock where it tells it (the Date header of its
answer), so a controller whose clock is off neither keeps a dying token nor refreshes a
healthy one.
"""

from __future__ import annotations

import time

from ansible_collections.planetscale.cloud.plugins.module_utils.base import Module, ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils import timestamps
from ansible_collections.planetscale.cloud.plugins.module_utils.options import AUTH_URL, CONNECTION
from ansible_collections.planetscale.cloud.plugins.module_utils.settle import write_and_settle
from ansible_collections.planetscale.cloud.plugins.module_utils.timestamps import iso8601

TOKEN_PATH = "/oauth/token"
TOKEN_INFO_PATH = "/oauth/token/info"
GRANT_FIELDS = dict(authorization_code=("code", "redirect_uri"), refresh_token=("refresh_token",))
INFO_FIELDS = ("scope", "client_id", "token_type", "exp", "iat", "sub")
KEPT_FIELDS = ("token_type", "expires_in", "expires_at", "scope", "scopes")
# The tokens an answer must hold: the platform issues a refresh token with every grant, the code's included.
ISSUED_FIELDS = ("access_token", "refresh_token")
RECORD_FIELDS = ("token", "plain_text_refresh_token")  # the deprecated application-token endpoint's
JSON_TYPES = ((bool, "boolean"), (str, "string"), ((int, float), "number"), (list, "list"))

AUTHORIZE_AGAIN = "send the user through the OAuth application's authorization step again"
HINTS = {
    "invalid_client": "The OAuth server refused the client (invalid client): check client_id and client_secret (or "
                      "PLANETSCALE_CLIENT_ID and PLANETSCALE_CLIENT_SECRET) against the OAuth application's "
                      "settings, and create a new client secret there if it was lost.",
    "invalid_request": "The OAuth server refused the request as incomplete or malformed (invalid request): check "
                       "grant_type, and that code and redirect_uri (authorization_code) or refresh_token "
                       "(refresh_token) are not empty.",
    "unauthorized_client": "The OAuth application may not use this grant_type (unauthorized client): allow it in the "
                           "application's settings.",
    "unsupported_grant_type": "The OAuth server does not offer this grant_type (unsupported grant type): check that "
                              "auth_url is the platform's OAuth server.",
    "invalid_scope": "The scope asked for is unknown or beyond the OAuth application's (invalid scope): "
                     + AUTHORIZE_AGAIN + " with the scopes the application has.",
}
INVALID_GRANT = {
    "authorization_code": "The authorization code was refused (invalid grant): a code works once, for minutes, and "
                          "only with the redirect_uri of its authorization request; " + AUTHORIZE_AGAIN
                          + " and exchange the new code once, with that redirect_uri.",
    "refresh_token": "The refresh token was refused (invalid grant): each refresh returns a new refresh token and "
                     "ends the old one, and a revoked authorization ends them all; pass the refresh_token saved from "
                     "the latest token, or if that was lost, " + AUTHORIZE_AGAIN + ".",
}
OUTCOME_UNKNOWN = {
    "authorization_code": "The OAuth server may have redeemed the code before the answer was lost, which uses it "
                          "up: run the task once more, and if that fails with an invalid grant, "
                          + AUTHORIZE_AGAIN + ".",
    "refresh_token": "The OAuth server may have issued new tokens before the answer was lost, which ends this "
                     "refresh token: run the task once more, and if that fails with an invalid grant, "
                     + AUTHORIZE_AGAIN + ".",
}
LOST_THEN_REFUSED = {
    "authorization_code": "The answer to the first request was lost after it was sent, and sending the code again "
                          "was refused: the first request redeemed the code, so its tokens were issued but never "
                          "received; " + AUTHORIZE_AGAIN + " and exchange the new code.",
    "refresh_token": "The answer to the first request was lost after it was sent, and sending the refresh token "
                     "again was refused: the first request used it up and issued new tokens that were never "
                     "received; " + AUTHORIZE_AGAIN + ".",
}
NO_TOKEN = {
    "authorization_code": "The code may be used up: run the task once more, and if that fails with an invalid grant, "
                          + AUTHORIZE_AGAIN + ".",
    "refresh_token": "Keep the refresh token you have and run the task once more; if that fails with an invalid "
                     "grant, " + AUTHORIZE_AGAIN + ".",
}
INFO_UNAUTHORIZED = "The OAuth server wants a bearer access token: check access_token (or PLANETSCALE_ACCESS_TOKEN)."


# Expiry arithmetic ------------------------------------------------------------------------------

def parse_iso8601(text):
    """The Unix timestamp of an ISO 8601 time such as 2026-11-22T01:02:03.000Z (UTC without an offset), or None.

    Fractions of a second are dropped: an expiry read a little early is the safe side.
    """
    moment = timestamps.parse_iso8601(text)
    return None if moment is None else float(int(moment.timestamp()))


def http_date(text):
    """The Unix timestamp of an HTTP Date header, or None."""
    moment = timestamps.parse_http_date(text)
    return None if moment is None else int(moment.timestamp())


def server_now(client):
    """The time of the client's last answer on the server's clock, else the controller's.

    The Date header counts whole seconds, so its second is over: a lifetime measured from it is
    never overstated.
    """
    date = http_date(client.server_date)
    return time.time() if date is None else date + 1


def seconds_left(expires, now):
    """Whole seconds from now until expires, never below zero; None when the expiry is unknown."""
    if expires is None:
        return None
    return max(0, int(expires - now))


def scopes_of(scope):
    return scope.split() if isinstance(scope, str) else []


def _number(value):
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def issued_token(body, now):
    """The token result for an answer of the token endpoint that arrived at now."""
    expires_in = _number(body.get("expires_in"))
    scope = body.get("scope")
    return dict(access_token=body.get("access_token"), refresh_token=body.get("refresh_token"),
                token_type=body.get("token_type") or "Bearer", expires_in=expires_in,
                expires_at=iso8601(None if expires_in is None else now + expires_in),
                scope=scope, scopes=scopes_of(scope))


def recorded_token(record, now):
    """The token result for the OAuth token record of the deprecated application-token endpoint.

    The record names no scope: its accesses stand for the scopes.
    """
    expires = parse_iso8601(record.get("expires_at"))
    scopes = []
    for access in record.get("service_token_accesses") or []:
        name = access.get("access") if isinstance(access, dict) else None
        if name and name not in scopes:
            scopes.append(name)
    return dict(access_token=record.get("token"), refresh_token=record.get("plain_text_refresh_token"),
                token_type="Bearer", expires_in=seconds_left(expires, now), expires_at=iso8601(expires),
                scope=" ".join(scopes), scopes=scopes)


def described_info(info, now):
    """The introspection record as token_info returns it: with scopes, expires_at and expires_in added."""
    if not isinstance(info, dict) or info.get("active") is not True:
        return dict(active=False)
    described = dict(active=True)
    described.update((key, info.get(key)) for key in INFO_FIELDS)
    exp = _number(info.get("exp"))
    described.update(scopes=scopes_of(info.get("scope")), expires_at=iso8601(exp), expires_in=seconds_left(exp, now))
    return described


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


def missing_tokens(body, fields):
    """The fields of a token answer that hold no token (absent, empty or not text); all if it is not an object."""
    if not isinstance(body, dict):
        return list(fields)
    return [name for name in fields if not (isinstance(body.get(name), str) and body[name].strip())]


def require_tokens(body, fields, where, grant_type, server):
    """Raise ModuleFailure unless the answer of a grant holds every token of fields.

    A success without a token must not pass for one: whoever keeps the result would replace the
    only refresh token they have with nothing. The sentence names the missing fields, never a value;
    server says where the answer should have come from ("auth_url is the platform's OAuth server").
    """
    missing = missing_tokens(body, fields)
    if not missing:
        return
    if body is None:
        shape = "an empty answer"
    elif not isinstance(body, dict):
        shape = "a JSON %s instead of an object" % next(
            (name for kind, name in JSON_TYPES if isinstance(body, kind)), "value")
    else:
        shape = "an answer without %s" % " and ".join(missing)
    raise ModuleFailure("%s succeeded with %s, which is no token: the task fails so that the token you keep is not "
                        "replaced. Check that %s. %s" % (where, shape, server, NO_TOKEN[grant_type]))


def grant_form(params):
    """The fields of a grant request, for the form of the token endpoint or the deprecated JSON body."""
    fields = ("grant_type", "client_id", "client_secret") + GRANT_FIELDS[params["grant_type"]]
    return dict((name, params[name]) for name in fields)


# What to do about an error -----------------------------------------------------------------------

def token_hint(error, grant_type, lost=False):
    """What to do about a failed request to the token endpoint (RFC 6749 errors), or None.

    lost: the grant was sent again because the answer to the first request was lost.
    """
    if lost and error.code == "invalid_grant":
        return LOST_THEN_REFUSED[grant_type]
    if error.outcome_unknown:
        return OUTCOME_UNKNOWN[grant_type]
    if error.code == "invalid_grant":
        return INVALID_GRANT[grant_type]
    if error.code in HINTS:
        return HINTS[error.code]
    if error.status == 401:
        return HINTS["invalid_client"]
    if error.status == 400:
        return HINTS["invalid_request"]
    return None


def application_token_hint(error, grant_type, organization, application_id, lost=False):
    """What to do about a failed request to the deprecated application-token endpoint, or None."""
    if lost and error.status == 422 and error.code != "invalid_params":
        return LOST_THEN_REFUSED[grant_type]
    if error.outcome_unknown:
        return OUTCOME_UNKNOWN[grant_type]
    if error.status == 401:
        return ("The resource API did not accept the service token: check service_token_id and service_token "
                "(or PLANETSCALE_SERVICE_TOKEN_ID and PLANETSCALE_SERVICE_TOKEN).")
    if error.status == 403:
        return ("Check that client_id and client_secret are those of the OAuth application %r, and that the "
                "service token may use the OAuth applications of organization %r." % (application_id, organization))
    if error.status == 404:
        return ("Check that organization %r and its OAuth application %r exist and that the service token can "
                "see them." % (organization, application_id))
    if error.status == 422 and error.code != "invalid_params":
        return INVALID_GRANT[grant_type]
    if error.status in (400, 422):
        return HINTS["invalid_request"]
    return None


class OAuthModule(Module):
    """A module of the OAuth server at auth_url; it needs none of the resource API's credentials."""

    option_sets = (AUTH_URL, CONNECTION)
    lost_answer = False  # a grant was sent again because the answer to the first request was lost

    def send_grant(self, send):
        """Send a grant; when its answer is lost, send it once more. If the first request was not applied
        the second is the grant; if it was, its tokens are lost either way and the refusal says so."""
        def cannot_be_read_back(error):  # pylint: disable=unused-argument
            self.lost_answer = True
            return None
        return write_and_settle(send, read_back=cannot_be_read_back, attempts=2)[0]

    @property
    def client(self):
        """The client of the OAuth server, without an Authorization header (the token endpoint takes none)."""
        if self._client is None:
            self._client = self.make_client(self.params["auth_url"])
        return self._client

    def read_token_info(self, access_token):
        """The introspection of access_token, its lifetime measured on the server's clock."""
        client = self.make_client(self.params["auth_url"], "Bearer %s" % access_token)
        try:
            info = client.get(TOKEN_INFO_PATH)
            return described_info(info, server_now(client))
        finally:
            client.close()

    def explain(self, error):
        hint = self.oauth_hint(error)
        return "%s %s" % (error, hint) if hint else super().explain(error)

    def oauth_hint(self, error):
        """The sentence for an error of the OAuth server, or None for the shared hints."""
        if error.path == TOKEN_INFO_PATH and error.status == 401:
            return INFO_UNAUTHORIZED
        return None


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


class Grants:
    """The token module's requests: a grant at the OAuth server, or at the deprecated application-token endpoint."""

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
