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
from ansible_collections.planetscale.cloud.plugins.module_utils.settle import write_and_settle

STATES = dict(approve="approved", comment="commented")
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


def actor_id(review):
    """The ID of a review's author: actor.id, or an ID field beside it where a record names the author so; None when
    the record names no author (the platform's recorded answers carry no actor). A display name is not an identity
    (two people may share one), so it never counts."""
    actor = review.get("actor") if isinstance(review.get("actor"), dict) else {}
    user = review.get("user") if isinstance(review.get("user"), dict) else {}
    return next((value for value in (actor.get("id"), review.get("actor_id"), user.get("id"), review.get("user_id"))
                 if value), None)


def same_text(one, other):
    return (one or "").strip() == (other or "").strip()


def asked_for(review, action, body):
    """Whether a review is what the action asks for: an approval for approve, a comment with the same text for
    comment."""
    return review.get("state") == STATES[action] and (action == "approve" or same_text(review.get("body"), body))


def own_review(reviews, ids, action, body):
    """The review of this reviewer that the action asks for: any approval of theirs for approve, a comment of
    theirs with the same text for comment; or None."""
    return next((review for review in reviews if actor_id(review) in ids and asked_for(review, action, body)), None)


def unattributed_review(reviews, action, body, known=()):
    """A review the action asks for whose record names no author (and whose ID is not in known), or None: it may be
    this reviewer's, so posting another could review twice."""
    return next((review for review in reviews if actor_id(review) is None and asked_for(review, action, body) and
                 review.get("id") not in known), None)


def unattributed_warning(review, action, where):
    """The warning of a task that posts nothing because a review it asks for names no author."""
    what = "an approval" if action == "approve" else "a comment with the same text"
    return ("%s has %s (review %s) whose record names no author, so the module cannot tell whether it is this "
            "reviewer's; it posted none, rather than review twice. If it is someone else's, review the deploy request "
            "in the platform's web application." % (where, what, review.get("id")))


def post_review(client, url, action, body, find):
    """Post the review once: after a lost answer, find() reads the reviews again and a review found there is
    the one sent (the reviewer had none before), so nothing is posted twice."""
    payload = dict(state=STATES[action])
    if body is not None:
        payload["body"] = body

    def read_back(error):  # pylint: disable=unused-argument
        found = find()
        return None if found is None else (found, True)
    review, dummy = write_and_settle(lambda: client.post(url, json=payload), read_back=read_back)
    return review
