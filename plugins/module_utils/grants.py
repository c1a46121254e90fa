# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A grant of the token module: the form it sends to the OAuth server's token endpoint (or to the deprecated
application-token endpoint), the tokens its answer must hold, their lifetime on the server's clock, and what to do
when it is refused.

A grant spends what it is sent (a code works once, a refresh ends the refresh token), so every sentence here says
whether the tokens may have been issued and never received.
"""

from __future__ import annotations

from ansible_collections.planetscale.cloud.plugins.module_utils import timestamps
from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.oauth import _number, scopes_of, seconds_left
from ansible_collections.planetscale.cloud.plugins.module_utils.timestamps import iso8601

TOKEN_PATH = "/oauth/token"

GRANT_FIELDS = dict(authorization_code=("code", "redirect_uri"), refresh_token=("refresh_token",))

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


def parse_iso8601(text):
    """The Unix timestamp of an ISO 8601 time such as 2026-11-22T01:02:03.000Z (UTC without an offset), or None.

    Fractions of a second are dropped: an expiry read a little early is the safe side.
    """
    moment = timestamps.parse_iso8601(text)
    return None if moment is None else float(int(moment.timestamp()))


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
