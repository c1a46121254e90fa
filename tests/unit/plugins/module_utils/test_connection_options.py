# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The connection options every module shares, checked before any request."""

from __future__ import annotations

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import Module, ModuleFailure, TaskContext
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS


class Probe(Module):
    option_sets = (CREDENTIALS, CONNECTION)

    def run(self):
        return dict(sent=self.client.get("/user"))


def params(server_url, **changes):
    values = dict(api_url=server_url, api_timeout=5, api_retries=0, validate_certs=True, ca_path=None,
                  access_token="t", service_token_id=None, service_token=None)
    values.update(changes)
    return values


def test_a_ca_path_that_is_not_a_file_is_a_sentence_before_any_request(server, tmp_path):
    missing = str(tmp_path / "missing-ca.pem")
    with pytest.raises(ModuleFailure) as failure:
        Probe(params(server.url, ca_path=missing), TaskContext()).execute()
    assert failure.value.msg == "ca_path %s is not a readable file." % missing
    assert server.requests == []


def test_a_ca_path_that_is_a_directory_is_refused_too(server, tmp_path):
    with pytest.raises(ModuleFailure):
        Probe(params(server.url, ca_path=str(tmp_path)), TaskContext()).execute()
    assert server.requests == []
