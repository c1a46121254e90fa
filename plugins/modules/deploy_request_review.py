#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: deploy_request_review
short_description: Approve or comment on a deploy request, once per reviewer
version_added: 0.2.0
description:
  - Ensures that the reviewer the credentials act for has approved a deploy request, or has left a comment on it.
  - Idempotent per reviewer. O(action=approve) sends nothing when this reviewer has approved the request already
    (whatever the text of that approval). O(action=comment) sends nothing when this reviewer has left a comment
    with the same O(body) (surrounding white space aside). Reviews by others never count.
  - The reviewer is identified by the C(actor) of the review records. With an OAuth access token, the reviewer is the
    user that C(GET /user) names, so the token needs the C(read_user) scope; without it the task fails before any
    write. With a service token, the reviewer is the token (its reviews' C(actor.id) is O(service_token_id)) and,
    where C(GET /user) answers for the token, also the user it names.
  - A review whose record names no author cannot be told to be this reviewer's or another's. When it is the one the
    task asks for (an approval, or a comment with the same O(body)), the module posts nothing, reports no change and
    warns with its ID, rather than review twice.
  - When the answer to the review is lost, the module reads the reviews again and does not post twice.
  - A database that requires approval for deploys deploys a request only once it is approved.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  database:
    description: The name of the database.
    type: str
    required: true
  number:
    description: The number of the deploy request.
    type: int
    required: true
  action:
    description:
      - V(approve) approves the deploy request; V(comment) leaves the comment O(body).
    type: str
    choices: [approve, comment]
    default: approve
  body:
    description:
      - The text of the review. Required with O(action=comment), where it tells one comment from another.
      - With O(action=approve), the text sent with a new approval; it is not compared with an existing one.
    type: str
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.resource
seealso:
  - module: planetscale.cloud.deploy_request
  - module: planetscale.cloud.deploy_request_info
"""

EXAMPLES = r"""
- name: Find the open deploy request of the branch add-orders
  planetscale.cloud.deploy_request_info:
    organization: acme
    database: app
    state: open
    branch: add-orders
  register: opened

- name: Approve it
  planetscale.cloud.deploy_request_review:
    organization: acme
    database: app
    number: "{{ opened.deploy_requests[0].number }}"
    body: Reviewed in pull request 1234.

- name: Leave a comment once, however often the play runs
  planetscale.cloud.deploy_request_review:
    organization: acme
    database: app
    number: "{{ opened.deploy_requests[0].number }}"
    action: comment
    body: The migration adds an index online; no downtime expected.
"""

RETURN = r"""
review:
  description:
    - The review of this reviewer that the task asked for, found or posted. In check mode, when it would be
      posted, the fields known before posting it.
  returned: success
  type: dict
  contains:
    id:
      description: The ID of the review.
      type: str
    state:
      description: V(approved) or V(commented).
      type: str
      sample: approved
    body:
      description: The text of the review.
      type: str
    html_body:
      description: The text of the review in HTML.
      type: str
    actor:
      description: Who reviewed (C(id), C(display_name), C(avatar_url)).
      type: dict
    created_at:
      description: When the review was posted (ISO 8601).
      type: str
    updated_at:
      description: When the review was last updated (ISO 8601).
      type: str
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import Module, ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION
from ansible_collections.planetscale.cloud.plugins.module_utils.settle import write_and_settle

STATES = dict(approve="approved", comment="commented")
UNREADABLE_USER = (401, 403, 404)


def reviewer_ids(client, service_token_id=None):
    """The actor IDs that are the credential's own: the service token's ID, and the user GET /user names.

    The platform records a service token as the actor of what it does; where GET /user answers for the token (the
    user it acts for), that user's reviews count as the token's too, and GET /user refused (as the published API
    documents it for service tokens) leaves the token's ID alone. An OAuth access token acts for the user GET /user
    names: one that cannot read it (no read_user scope) cannot tell its own reviews from others', so the module
    refuses before writing.
    """
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


class DeployRequestReview(Module):
    """One approval, or one comment of a given text, per reviewer; a review found is never posted again."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        database=dict(type="str", required=True),
        number=dict(type="int", required=True),
        action=dict(type="str", choices=["approve", "comment"], default="approve"),
        body=dict(type="str"),
    )
    path_options = ("database",)
    must_exist = ("database", ("number", "deploy request"))

    def validate(self):
        super().validate()
        if self.params["number"] < 1:
            raise ModuleFailure("number must be a deploy request's number, 1 or more, not %s." % self.params["number"])
        if self.params["action"] == "comment" and not (self.params["body"] or "").strip():
            raise ModuleFailure("body is required with action comment: the text of the comment.")

    def run(self):
        action, body = self.params["action"], self.params["body"]
        url = self.org_path("databases", self.params["database"], "deploy-requests", self.params["number"], "reviews")
        reviews = list(self.client.paginate(url))
        ids = reviewer_ids(self.client, self.params.get("service_token_id"))  # None with an access token (validate)
        found = own_review(reviews, ids, action, body)
        unattributed = None if found else unattributed_review(reviews, action, body)
        if unattributed is not None:  # maybe this reviewer's: not posted again, and said so
            found = unattributed
            self.ctx.warn(unattributed_warning(found, action, "Deploy request #%s of database %r" % (
                self.params["number"], self.params["database"])))
        review, changed = found, found is None
        if found is None and self.ctx.check_mode:
            review = dict(state=STATES[action], body=body) if body is not None else dict(state=STATES[action])
        elif found is None:
            known = [r.get("id") for r in reviews]

            def find():
                again = list(self.client.paginate(url))
                return own_review(again, ids, action, body) or unattributed_review(again, action, body, known)
            review = post_review(self.client, url, action, body, find=find)
        result = dict(changed=changed, review=review)
        if self.ctx.diff:
            result["diff"] = dict(before=view(found), after=view(review))
        return result


def view(review):
    """A review as the diff shows it: its state and text."""
    return dict((key, review[key]) for key in ("state", "body") if (review or {}).get(key) is not None)


def main():
    run_module(DeployRequestReview)


if __name__ == "__main__":
    main()
