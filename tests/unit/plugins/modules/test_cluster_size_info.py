# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest

from ansible.module_utils.common.arg_spec import ModuleArgumentSpecValidator

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure, TaskContext
from ansible_collections.planetscale.cloud.plugins.modules.cluster_size_info import ClusterSizeInfo

SKUS = "/v1/organizations/acme/cluster-size-skus"


def validate(**args):
    args = dict(dict(organization="acme", service_token_id="svc", service_token="s3cret",
                     api_url="http://127.0.0.1:9/v1", api_retries=0), **args)
    spec = ClusterSizeInfo.spec()
    spec.pop("supports_check_mode")
    return ModuleArgumentSpecValidator(**spec).validate(args)


def run(server, check_mode=False, **args):
    validation = validate(api_url=server.url + "/v1", **args)
    assert not validation.error_messages
    return ClusterSizeInfo(validation.validated_parameters, TaskContext(check_mode=check_mode)).execute()


def size(name, enabled=True):
    return dict(name=name, display_name=name.replace("_", "-"), enabled=enabled, cpu="1", ram=1, rate=None)


def test_the_array_the_api_answers_is_returned_and_nothing_is_sent_by_default(server):
    server.script = [(200, [size("PS_10"), size("PS_640", enabled=False)])]
    result = run(server, check_mode=True)
    assert result == dict(changed=False, cluster_sizes=[size("PS_10"), size("PS_640", enabled=False)])
    assert [r["path"] for r in server.requests] == [SKUS] and server.requests[0]["query"] == {}


def test_the_filters_are_sent_as_the_api_names_them(server):
    server.script = [(200, [])]
    run(server, engine="postgresql", rates=True, region="eu-west", database="shop")
    assert server.requests[0]["query"] == dict(engine=["postgresql"], rates=["true"], region=["eu-west"],
                                               database=["shop"])


@pytest.mark.parametrize("enabled, names", [(True, ["PS_10"]), (False, ["PS_640"])])
def test_enabled_keeps_the_sizes_the_organization_may_or_may_not_use(server, enabled, names):
    server.script = [(200, [size("PS_10"), size("PS_640", enabled=False)])]
    assert [s["name"] for s in run(server, enabled=enabled)["cluster_sizes"]] == names


def test_a_bare_data_envelope_is_taken_too(server):
    server.script = [(200, dict(data=[size("PS_10")]))]
    assert run(server)["cluster_sizes"] == [size("PS_10")]


@pytest.mark.parametrize("answer, found", [({}, "an object"), ("x", "a string"), ([1, 2], "a list of other things"),
                                           (None, "null")])
def test_an_answer_of_another_shape_is_a_sentence(server, answer, found):
    server.script = [(200, answer)]
    with pytest.raises(ModuleFailure) as caught:
        run(server)
    assert caught.value.msg.startswith("GET /organizations/acme/cluster-size-skus")
    assert "the answer is %s" % found in caught.value.msg
    assert caught.value.msg.endswith("where a list of cluster sizes was expected.")


@pytest.mark.parametrize("args, message", [
    (dict(region="../x"), "region must be a name, not '../x'."),
    (dict(database=" "), "database must be a name, not ' '."),
])
def test_bad_input_fails_before_any_request(server, args, message):
    with pytest.raises(ModuleFailure) as caught:
        run(server, **args)
    assert caught.value.msg == message and server.requests == []


def test_engine_is_a_choice():
    assert "engine" in validate(engine="oracle").errors.msg
