# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import json

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.database_throttler import DatabaseThrottler

URL = "/v1/organizations/acme/databases/app/throttler"

MODULE = DatabaseThrottler  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="app", service_token_id="svc", service_token="s3cret")


def throttler(keyspaces=("app", "logs"), **ratios):
    return (200, dict(keyspaces=list(keyspaces), configurable=dict(id="d1", name="app"),
                      configurations=[dict(keyspace_name=name, ratio=ratio) for name, ratio in ratios.items()]))


def methods(server):
    return [r["method"] for r in server.requests]


def test_a_ratio_for_every_keyspace_is_set_in_one_request(server, run):
    server.script = [throttler(app=20), throttler(app=30, logs=30)]
    result = run(ratio=30, diff=True)
    assert result["changed"] is True and methods(server) == ["GET", "PATCH"]
    assert server.requests[1]["path"] == URL and json.loads(server.requests[1]["body"]) == dict(ratio=30)
    assert result["diff"] == dict(before=dict(app=20), after=dict(app=30, logs=30))
    assert result["throttler"]["configurations"][1] == dict(keyspace_name="logs", ratio=30)


def test_the_same_ratios_write_nothing(server, run):
    server.script = [throttler(app=30.0, logs=30)]
    assert run(ratio=30)["changed"] is False and methods(server) == ["GET"]
    server.script = [throttler(app=30, logs=5)]
    assert run(keyspaces=[dict(name="logs", ratio=5)])["changed"] is False


def test_a_ratio_differs_while_a_keyspace_has_none_configured(server, run):
    server.script = [throttler(app=30), throttler(app=30, logs=30)]
    assert run(ratio=30)["changed"] is True and methods(server) == ["GET", "PATCH"]


def test_keyspaces_send_only_the_ratios_that_differ(server, run):
    server.script = [throttler(app=20, logs=5), throttler(app=60, logs=5)]
    result = run(keyspaces=[dict(name="app", ratio=60), dict(name="logs", ratio=5)])
    assert result["changed"] is True
    assert json.loads(server.requests[1]["body"]) == dict(configurations=[dict(keyspace_name="app", ratio=60)])


def test_check_mode_writes_nothing_and_predicts(server, run):
    server.script = [throttler(app=20)]
    result = run(check_mode=True, diff=True, keyspaces=[dict(name="logs", ratio=50)])
    assert result["changed"] is True and methods(server) == ["GET"]
    assert result["diff"]["after"] == dict(app=20, logs=50)


def test_a_keyspace_the_database_lacks_fails_before_any_write(server, run):
    server.script = [throttler()]
    with pytest.raises(ModuleFailure) as caught:
        run(keyspaces=[dict(name="other", ratio=5)])
    assert caught.value.msg == "Database 'app' has no keyspace 'other'; its keyspaces are app, logs."
    assert methods(server) == ["GET"]


@pytest.mark.parametrize("args, message", [
    (dict(ratio=96), "The ratio must be from 0 (off) to 95, not 96."),
    (dict(ratio=-1), "The ratio must be from 0 (off) to 95, not -1."),
    (dict(keyspaces=[dict(name="app", ratio=100)]), "The ratio of keyspace 'app' must be from 0 (off) to 95, not 100."),
    (dict(keyspaces=[]), "keyspaces must name at least one keyspace; to set every keyspace, give ratio."),
    (dict(keyspaces=[dict(name="app", ratio=1), dict(name="app", ratio=2)]),
     "keyspaces names app more than once: give each keyspace one ratio."),
    (dict(keyspaces=[dict(name=" ", ratio=1)]), "keyspaces: a keyspace's name must not be empty."),
])
def test_bad_input_fails_before_any_request(server, run, args, message):
    with pytest.raises(ModuleFailure) as caught:
        run(**args)
    assert caught.value.msg == message and server.requests == []


def test_ratio_and_keyspaces_exclude_each_other(run):
    assert "mutually exclusive" in run.validate(ratio=5, keyspaces=[dict(name="app", ratio=5)]).errors.msg


def test_a_write_whose_answer_was_lost_is_read_back_and_not_sent_again(server, run, sleeps):
    server.script = [throttler(app=20), (502, dict(code="bad_gateway")), throttler(app=40)]
    result = run(keyspaces=[dict(name="app", ratio=40)])
    assert result["changed"] is True and methods(server) == ["GET", "PATCH", "GET"]
    assert result["throttler"]["configurations"] == [dict(keyspace_name="app", ratio=40)]
