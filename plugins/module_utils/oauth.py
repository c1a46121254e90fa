# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the token and token_info modules share: the OAuth server (OAuthModule) and the expiry arithmetic.

Lifetimes are measured on the server's clock where it tells it (the Date header of its
answer), so a controller whose clock is off neither keeps a dying token nor refreshes a
healthy one.
"""

from __future__ import annotations

import time

from ansible_collections.planetscale.cloud.plugins.module_utils import timestamps
from ansible_collections.planetscale.cloud.plugins.module_utils.base import Module
from ansible_collections.planetscale.cloud.plugins.module_utils.options import AUTH_URL, CONNECTION
from ansible_collections.planetscale.cloud.plugins.module_utils.settle import write_and_settle
from ansible_collections.planetscale.cloud.plugins.module_utils.timestamps import iso8601

TOKEN_INFO_PATH = "/oauth/token/info"
INFO_FIELDS = ("scope", "client_id", "token_type", "exp", "iat", "sub")

INFO_UNAUTHORIZED = "The OAuth server wants a bearer access token: check access_token (or PLANETSCALE_ACCESS_TOKEN)."


# Expiry arithmetic ------------------------------------------------------------------------------


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


def described_info(info, now):
    """The introspection record as token_info returns it: with scopes, expires_at and expires_in added."""
    if not isinstance(info, dict) or info.get("active") is not True:
        return dict(active=False)
    described = dict(active=True)
    described.update((key, info.get(key)) for key in INFO_FIELDS)
    exp = _number(info.get("exp"))
    described.update(scopes=scopes_of(info.get("scope")), expires_at=iso8601(exp), expires_in=seconds_left(exp, now))
    return described


# The modules of the OAuth server ---------------------------------------------------------------


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
