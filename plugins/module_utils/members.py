# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the organization_member modules share: which membership a user ID or an e-mail address names."""

from __future__ import annotations


def names_member(membership, wanted):
    """Whether an organization membership is the one wanted names: an e-mail address (in any case), a user ID or
    a membership ID."""
    user = membership.get("user") or {}
    wanted = wanted.strip()
    if "@" in wanted:
        return (user.get("email") or "").lower() == wanted.lower()
    return wanted in (membership.get("id"), user.get("id"))
