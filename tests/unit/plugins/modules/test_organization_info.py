# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.organization_info import OrganizationInfo

MODULE = OrganizationInfo  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", service_token_id="svc", service_token="s3cret")


def org(name="acme"):
    return dict(id="o-" + name, name=name, billing_email="billing@%s.test" % name, idp_managed_roles=False,
                invoice_budget_amount="0")


def test_reads_the_organization(server, run):
    server.script = [(200, org())]
    result = run(check_mode=True)
    assert result == dict(changed=False, organization=org())
    assert [r["path"] for r in server.requests] == ["/v1/organizations/acme"]


def test_all_organizations_reads_every_page_of_the_list(server, run):
    server.script = [(200, org()), (200, dict(type="list", next_page=2, data=[org("o%d" % n) for n in range(100)])),
                     (200, dict(type="list", next_page=None, data=[org("last")]))]
    result = run(all_organizations=True)
    assert len(result["organizations"]) == 101 and result["organizations"][-1]["name"] == "last"
    assert [r["path"] for r in server.requests] == ["/v1/organizations/acme"] + ["/v1/organizations"] * 2


def test_a_missing_organization_is_a_sentence(server, run):
    server.script = [(404, dict(code="not_found", message="Not Found"))]
    with pytest.raises(ModuleFailure) as caught:
        run()
    assert caught.value.msg.endswith("Check that organization 'acme' exists and that the credentials can see it.")
