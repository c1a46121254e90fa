# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The tokens the OAuth applications of an organization hold, as the oauth_application_info and
oauth_application_token modules return and show them.

The platform's reads of such a token (the list, and one by id) still carry the token's access token and refresh token
in plain text (token, plain_text_refresh_token), though the published description says only a create shows them.
So a token is never passed on as the API answers it: token_record() builds a new record of the fields named in
TOKEN_FIELDS alone, and a secret the answer carries, under those names or any other, reaches no result, diff or
message. A field the platform adds later is left out until it is named here.
"""

from __future__ import annotations

TOKEN_FIELDS = ("id", "name", "display_name", "avatar_url", "created_at", "updated_at", "expires_at", "last_used_at",
                "actor_id", "actor_display_name", "actor_type", "service_token_accesses", "oauth_accesses_by_resource")


def token_record(record):
    """A token record of the fields of TOKEN_FIELDS the answer has, and nothing else; None stays None."""
    if record is None:
        return None
    return dict((key, record[key]) for key in TOKEN_FIELDS if key in record)


def tokens_path(module, application_id, *segments):
    """The path of an OAuth application's tokens (or, with segments, of one) in the module's organization."""
    return module.org_path("oauth-applications", application_id, "tokens", *segments)
