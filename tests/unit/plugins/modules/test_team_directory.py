# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The team module's Directory: users found by ID or e-mail address, the organization listed at most once."""

from __future__ import annotations

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.team import Directory

ADA = dict(id="u-ada", email="Ada@Example.com")
GRACE = dict(id="u-grace", email="grace@example.com")


def directory():
    listed = []

    def list_members():
        listed.append(1)
        return [dict(user=ADA), dict(user=GRACE), dict(user=dict(id="u-sso")), dict(user=None)]
    found = Directory(list_members, "acme")
    found.listed = listed
    return found


def test_an_id_needs_no_lookup():
    users = directory()
    assert users.user("u-x") == dict(id="u-x")
    assert users.listed == []


def test_an_address_among_the_near_users_needs_no_lookup():
    users = directory()
    assert users.user("ada@example.com", near=[ADA]) is ADA
    assert users.listed == []


def test_addresses_are_looked_up_once_case_insensitively_and_members_without_one_are_skipped():
    users = directory()
    assert users.user("ADA@example.com") == ADA
    assert users.user("grace@example.com") == GRACE
    assert users.listed == [1]
    assert users.email("u-grace") == "grace@example.com" and users.email("u-unknown") == "u-unknown"


def test_an_unknown_address_is_a_sentence():
    with pytest.raises(ModuleFailure) as failure:
        directory().user("nobody@example.com")
    assert failure.value.msg == ("No member of organization 'acme' has the e-mail address 'nobody@example.com'; "
                                 "invite them first.")
