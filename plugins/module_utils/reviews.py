# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The reviews of a deploy request, and who "this reviewer" is.

A review record names its author in actor (id, display_name, avatar_url). The credential's reviewer is
identified by actor.id (or another ID field of the author, where a record has one; never a display name):

- an OAuth access token acts for a user: GET /user names that user. A token that cannot read it (no
  read_user scope) cannot tell its own reviews from others', so the module refuses before writing.
- a service token: the platform records the token as the actor of what it does, so its reviews are those
  whose actor.id is the service token's ID; where GET /user answers for the token (the user it acts for),
  that user's reviews count as the token's too. GET /user refused (as the published API documents it for
  service tokens) leaves the token's ID alone.

A review whose record names no author (recorded answers of the platform carry no actor) cannot be told to be
this reviewer's or another's: when it is what the task asks for, the task posts nothing and warns, since
posting could review twice.
"""

from __future__ import annotations

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError

UNREADABLE_USER = (401, 403, 404)


def reviewer_ids(client, service_token_id=None):
    """The actor IDs that are the credential's own: the service token's ID, and the user GET /user names."""
    ids = set([service_token_id]) if service_token_id else set()
    try:
        user = client.get("/user")
    except ApiError as error:
        if error.status not in UNREADABLE_USER:
            raise
        if not ids:
            raise ModuleFailure(
                "The access token cannot read the user it acts for (GET /user answered HTTP %s), so the module cannot "
                "tell this reviewer's reviews from others' and would review twice: give the token the read_user "
                "scope." % error.status, status=error.status, error=error.as_dict())
        return ids
    if isinstance(user, dict) and user.get("id"):
        ids.add(user["id"])
    return ids
