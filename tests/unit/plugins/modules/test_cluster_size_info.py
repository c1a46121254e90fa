# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest


from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.cluster_size_info import ClusterSizeInfo

SKUS = "/v1/organizations/acme/cluster-size-skus"


MODULE = ClusterSizeInfo  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", service_token_id="svc", service_token="s3cret")


def size(name, enabled=True):
    return dict(name=name, display_name=name.replace("_", "-"), enabled=enabled, cpu="1", ram=1, rate=None)


def test_the_array_the_api_answers_is_returned_and_nothing_is_sent_by_default(server, run):
    server.script = [(200, [size("PS_10"), size("PS_640", enabled=False)])]
    result = run(check_mode=True)
    assert result == dict(changed=False, cluster_sizes=[size("PS_10"), size("PS_640", enabled=False)])
    assert [r["path"] for r in server.requests] == [SKUS] and server.requests[0]["query"] == {}


def test_the_filters_are_sent_as_the_api_names_them(server, run):
    server.script = [(200, [])]
    run(engine="postgresql", rates=True, region="eu-west", database="shop")
    assert server.requests[0]["query"] == dict(engine=["postgresql"], rates=["true"], region=["eu-west"],
                                               database=["shop"])


@pytest.mark.parametrize("enabled, names", [(True, ["PS_10"]), (False, ["PS_640"])])
def test_enabled_keeps_the_sizes_the_organization_may_or_may_not_use(server, run, enabled, names):
    server.script = [(200, [size("PS_10"), size("PS_640", enabled=False)])]
    assert [s["name"] for s in run(enabled=enabled)["cluster_sizes"]] == names


def test_a_bare_data_envelope_is_taken_too(server, run):
    server.script = [(200, dict(data=[size("PS_10")]))]
    assert run()["cluster_sizes"] == [size("PS_10")]


@pytest.mark.parametrize("answer, found", [({}, "an object"), ("x", "a string"), ([1, 2], "a list of other things"),
                                           (None, "null")])
def test_an_answer_of_another_shape_is_a_sentence(server, run, answer, found):
    server.script = [(200, answer)]
    with pytest.raises(ModuleFailure) as caught:
        run()
    assert caught.value.msg.startswith("GET /organizations/acme/cluster-size-skus")
    assert "the answer is %s" % found in caught.value.msg
    assert caught.value.msg.endswith("where a list of cluster sizes was expected.")


@pytest.mark.parametrize("args, message", [
    (dict(region="../x"), "region must be a name, not '../x'."),
    (dict(database=" "), "database must be a name, not ' '."),
])
def test_bad_input_fails_before_any_request(server, run, args, message):
    with pytest.raises(ModuleFailure) as caught:
        run(**args)
    assert caught.value.msg == message and server.requests == []


def test_engine_is_a_choice(run):
    assert "engine" in run.validate(engine="oracle").errors.msg


DATABASES = "/v1/organizations/acme/databases/"


@pytest.mark.parametrize("record, engine", [(dict(name="pgapp", kind="postgresql"), "postgresql"),
                                            (dict(name="app", kind="mysql"), "mysql")])
def test_a_database_without_engine_lists_the_sizes_of_its_engine(server, run, record, engine):
    """Issue 44: the sizes of a PostgreSQL database came back as MySQL's unless engine was given."""
    server.script = [(200, record), (200, [size("PS_10")])]
    run(database=record["name"])
    assert [r["path"] for r in server.requests] == [DATABASES + record["name"], SKUS]
    assert server.requests[1]["query"] == dict(engine=[engine], database=[record["name"]])


def test_a_database_record_without_kind_takes_that_of_its_default_branch(server, run):
    server.script = [(200, dict(name="pgapp", default_branch="main")), (200, dict(name="main", kind="postgresql")),
                     (200, [])]
    run(database="pgapp")
    assert [r["path"] for r in server.requests] == [DATABASES + "pgapp", DATABASES + "pgapp/branches/main", SKUS]
    assert server.requests[2]["query"]["engine"] == ["postgresql"]


def test_an_engine_given_is_sent_and_the_database_is_not_read(server, run):
    server.script = [(200, [])]
    run(database="pgapp", engine="mysql")
    assert [r["path"] for r in server.requests] == [SKUS]


def test_a_database_that_does_not_exist_fails_with_the_api_s_answer(server, run):
    server.script = [(404, dict(code="not_found", message="Database not found"))]
    with pytest.raises(ModuleFailure) as caught:
        run(database="nope")
    assert caught.value.result["status"] == 404 and "Database not found" in caught.value.msg
    assert len(server.requests) == 1
