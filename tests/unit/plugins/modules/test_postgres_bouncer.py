# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import json

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure, TaskContext
from ansible_collections.planetscale.cloud.plugins.modules.postgres_bouncer import PostgresBouncer

URL = "/v1/organizations/acme/databases/pgapp/branches/main/bouncers"
NOT_FOUND = (404, {"code": "not_found", "message": "Not Found"})
LABEL = "bouncer 'pool' of branch 'main' of database 'pgapp'"

MODULE = PostgresBouncer  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="pgapp", branch="main", name="pool", service_token_id="svc",
            service_token="s3cret")


def param(name, value, **fields):
    return dict(dict(name=name, namespace="pgbouncer", value=value, parameter_type="integer", min=1, max=10000,
                     options=[], immutable=False), **fields)


def bouncer(size="PGB_5", target="primary", replicas=1, pool="20", mode="transaction"):
    return dict(id="b1", name="pool", sku=dict(name=size), target=target, replicas_per_cell=replicas,
                parameters=[param("default_pool_size", pool),
                            param("pool_mode", mode, parameter_type="select",
                                  options=["session", "transaction", "statement"])])


def resize(state, rid="r1", **fields):
    return dict(dict(id=rid, state=state), **fields)


def page(*items):
    return (200, dict(type="list", next_page=None, data=list(items)))


def methods(server):
    return [(r["method"], r["path"]) for r in server.requests]


def verbs(server):
    return [r["method"] for r in server.requests]


def body(server, index):
    return json.loads(server.requests[index]["body"])


def test_create_sends_name_target_size_and_replicas_and_returns_the_connection(server, run):
    server.script = [NOT_FOUND, (200, bouncer("PGB_10", "replica", 2))]
    result = run(target="replica", size="PGB_10", replicas_per_cell=2)
    assert result["changed"] is True and result["bouncer"]["sku"]["name"] == "PGB_10"
    assert result["connection"] == dict(port=6432, username_suffix="|pool")
    assert methods(server) == [("GET", URL + "/pool"), ("POST", URL)]
    assert body(server, 1) == dict(name="pool", target="replica", bouncer_size="PGB_10", replicas_per_cell=2)
    assert "resize_request" not in result


def test_the_same_task_again_writes_nothing(server, run):
    server.script = [(200, bouncer("PGB_10", "replica", 2, pool="50"))]
    result = run(target="replica", size="PGB_10", replicas_per_cell=2, parameters=dict(default_pool_size=50))
    assert result["changed"] is False and methods(server) == [("GET", URL + "/pool")]


def test_check_mode_predicts_a_create_and_writes_nothing(server, run):
    server.script = [NOT_FOUND]
    result = run(check_mode=True, diff=True, size="PGB_20", parameters=dict(pool_mode="session"))
    assert result["changed"] is True and methods(server) == [("GET", URL + "/pool")]
    assert result["bouncer"]["sku"]["name"] == "PGB_20" and result["bouncer"]["target"] == "primary"
    assert result["diff"] == dict(before={}, after=dict(target="primary", size="PGB_20", replicas_per_cell=1,
                                                        parameters=dict(pool_mode="session")))


def test_a_change_is_one_resize_request_waited_for_until_completed(server, run, sleeps):
    server.script = [(200, bouncer()), page(resize("completed", "r0")), (200, resize("pending")),
                     page(resize("resizing")), page(resize("completed")), (200, bouncer("PGB_20", pool="50"))]
    result = run(size="PGB_20", parameters=dict(default_pool_size="50"), diff=True)
    assert result["changed"] is True and result["bouncer"]["sku"]["name"] == "PGB_20"
    assert result["resize_request"]["state"] == "completed"
    assert methods(server)[2] == ("PATCH", URL + "/pool/resizes")
    assert body(server, 2) == dict(bouncer_size="PGB_20", parameters=dict(pgbouncer=dict(default_pool_size="50")))
    assert verbs(server).count("PATCH") == 1
    assert result["diff"] == dict(before=dict(target="primary", size="PGB_5", replicas_per_cell=1,
                                              parameters=dict(default_pool_size="20")),
                                  after=dict(target="primary", size="PGB_20", replicas_per_cell=1,
                                             parameters=dict(default_pool_size="50")))


def test_check_mode_predicts_a_resize_and_sends_nothing(server, run):
    server.script = [(200, bouncer())]
    result = run(check_mode=True, target="replica_az_affinity")
    assert result["changed"] is True and result["bouncer"]["target"] == "replica_az_affinity"
    assert methods(server) == [("GET", URL + "/pool")]


def test_a_canceled_resize_fails_the_task_at_once(server, run, sleeps):
    server.script = [(200, bouncer()), page(), (200, resize("pending")), page(resize("canceled"))]
    with pytest.raises(ModuleFailure) as caught:
        run(replicas_per_cell=3)
    assert caught.value.msg == ("Resize request 'r1' of %s ended in state 'canceled': the bouncer keeps what it had "
                                "before; see why on the platform and run the task again." % LABEL)
    assert caught.value.result["changed"] is True and caught.value.result["resize_request"]["state"] == "canceled"
    assert sleeps == [1.0]


def test_parameters_of_a_new_bouncer_are_one_resize_after_the_create(server, run, sleeps):
    server.script = [NOT_FOUND, (200, bouncer()), page(), (200, resize("pending")), page(resize("completed")),
                     (200, bouncer(mode="session"))]
    result = run(parameters=dict(pool_mode="session"))
    assert result["changed"] is True
    assert verbs(server) == ["GET", "POST", "GET", "PATCH", "GET", "GET"]
    assert body(server, 1) == dict(name="pool")
    assert body(server, 3) == dict(parameters=dict(pgbouncer=dict(pool_mode="session")))


@pytest.mark.parametrize("parameters, sentence", [
    (dict(pool_size=10), "parameters: Bouncer 'pool' of branch 'main' of database 'pgapp' has no PgBouncer parameter "
                         "'pool_size'; it has default_pool_size, pool_mode."),
    (dict(pool_mode="never"), "parameters: pool_mode takes one of session, transaction, statement, not 'never'."),
    (dict(default_pool_size=0), "parameters: default_pool_size takes 1 to 10000, not 0."),
])
def test_a_parameter_the_bouncer_does_not_take_is_refused_before_any_write(server, run, parameters, sentence):
    server.script = [(200, bouncer())]
    with pytest.raises(ModuleFailure) as caught:
        run(parameters=parameters)
    assert caught.value.msg == sentence and methods(server) == [("GET", URL + "/pool")]


def test_a_lost_answer_of_the_resize_is_read_back_and_not_sent_twice(server, run, sleeps):
    server.script = [(200, bouncer()), page(), "drop", page(resize("pending")), page(resize("completed")),
                     (200, bouncer("PGB_40"))]
    result = run(size="PGB_40", api_retries=0)
    assert result["changed"] is True and result["bouncer"]["sku"]["name"] == "PGB_40"
    assert verbs(server).count("PATCH") == 1


def test_a_resize_running_elsewhere_is_waited_for_first_and_then_nothing_differs(server, run, sleeps):
    server.script = [(200, bouncer()), page(resize("resizing", "r9")), page(resize("completed", "r9")),
                     (200, bouncer("PGB_40"))]
    result = run(size="PGB_40")
    assert result["changed"] is False and "PATCH" not in verbs(server)


def test_without_wait_the_request_is_returned_at_once(server, run, sleeps):
    server.script = [(200, bouncer()), page(), (200, resize("pending"))]
    result = run(size="PGB_40", wait=False)
    assert result["changed"] is True and result["resize_request"]["state"] == "pending"
    assert result["bouncer"]["sku"]["name"] == "PGB_40" and len(server.requests) == 3 and sleeps == []


def test_delete_and_delete_again(server, run):
    server.script = [(200, bouncer()), (204, b"")]
    assert run(state="absent")["changed"] is True
    assert methods(server) == [("GET", URL + "/pool"), ("DELETE", URL + "/pool")]
    server.requests.clear()
    server.script = [NOT_FOUND]
    assert run(state="absent")["changed"] is False and methods(server) == [("GET", URL + "/pool")]


@pytest.mark.parametrize("args, sentence", [
    (dict(name="Read Pool"), "name must be a bouncer name: 1 to 63 lower-case letters, digits and '-', starting with "
                             "a letter or digit; not 'Read Pool'."),
    (dict(replicas_per_cell=0), "replicas_per_cell must be 1 or more, not 0."),
    (dict(parameters=dict(default_pool_size=None)), "parameters must map PgBouncer parameter names to values (text, "
                                                    "numbers or booleans), for example {default_pool_size: 50}; "
                                                    "'default_pool_size' is not such an entry."),
])
def test_bad_input_fails_before_any_request(server, run, args, sentence):
    with pytest.raises(ModuleFailure) as caught:
        run(**args)
    assert caught.value.msg == sentence and server.requests == []


def test_a_lost_answer_of_a_resize_that_completed_meanwhile_is_not_sent_again(server, run, sleeps):
    """The PATCH was applied and the request completed before the read-back: the bouncer has it all, so the newest
    request is the answer and nothing is sent again."""
    server.script = [(200, bouncer()), page(), "drop", page(resize("completed")), (200, bouncer("PGB_40")),
                     page(resize("completed")), (200, bouncer("PGB_40"))]
    result = run(size="PGB_40", api_retries=0)
    assert result["changed"] is True and result["resize_request"]["state"] == "completed"
    assert verbs(server).count("PATCH") == 1


# ------------------------------------------------------------------- one shape of parameters with branch (issue 44)


def test_the_nested_form_branch_takes_is_taken_as_the_names_alone(server, run, sleeps):
    """branch takes {pgbouncer: {name: value}}; the bouncer refused that form. Both send the same request."""
    server.script = [(200, bouncer()), page(), (200, resize("pending")), page(resize("completed")),
                     (200, bouncer(mode="session"))]
    result = run(parameters=dict(pgbouncer=dict(pool_mode="session")), diff=True)
    assert result["changed"] is True
    assert body(server, 2) == dict(parameters=dict(pgbouncer=dict(pool_mode="session")))
    assert result["diff"]["after"]["parameters"] == dict(pool_mode="session")


def test_the_nested_form_of_what_the_bouncer_has_is_no_change(server, run):
    server.script = [(200, bouncer(pool="50"))]
    assert run(parameters=dict(pgbouncer=dict(default_pool_size=50)))["changed"] is False


@pytest.mark.parametrize("parameters, sentence", [
    (dict(pgconf=dict(work_mem=64)), "parameters of a bouncer are those of the namespace pgbouncer, for example "
                                     "{pgbouncer: {default_pool_size: 50}}; pgconf is another namespace."),
    (dict(pgbouncer=dict(pool_mode="session"), default_pool_size=50),
     "parameters must map a namespace to parameter names and their values, for example {pgconf: {work_mem: 8192}}; "
     "'default_pool_size' is not such a mapping."),
])
def test_another_namespace_or_a_mix_of_forms_fails_before_any_request(server, run, parameters, sentence):
    with pytest.raises(ModuleFailure) as caught:
        run(parameters=parameters)
    assert caught.value.msg == sentence and server.requests == []


# ------------------------------------------------------------------- a parameter whose change restarts the bouncer


def restarting_bouncer(pool="20"):
    record = bouncer(pool=pool)
    record["parameters"].append(param("listen_backlog", "128", restart=True))
    return record


def test_a_parameter_that_restarts_the_bouncer_is_refused_without_allow_restart(server, run):
    server.script = [(200, restarting_bouncer())]
    with pytest.raises(ModuleFailure) as caught:
        run(parameters=dict(pgbouncer=dict(listen_backlog=256, default_pool_size=30)))
    assert caught.value.msg == ("Bouncer 'pool' of branch 'main' of database 'pgapp': changing listen_backlog restarts "
                                "the bouncer, which drops its connections; set allow_restart: true to accept the "
                                "restart, or leave it out of parameters.")
    assert methods(server) == [("GET", URL + "/pool")]


def test_check_mode_names_it_and_allow_restart_sends_it(server, run, sleeps):
    server.script = [(200, restarting_bouncer())]
    ctx = TaskContext(check_mode=True)
    result = run(ctx=ctx, parameters=dict(listen_backlog=256))
    assert result["changed"] is True and result["restart_parameters"] == ["listen_backlog"]
    assert ctx.warnings == ["Bouncer 'pool' of branch 'main' of database 'pgapp': changing listen_backlog would "
                            "restart the bouncer, which drops its connections; the task needs allow_restart: true to "
                            "do it."]
    server.requests.clear()
    server.script = [(200, restarting_bouncer()), page(), (200, resize("pending")), page(resize("completed")),
                     (200, restarting_bouncer())]
    result = run(parameters=dict(listen_backlog=256, default_pool_size=20), allow_restart=True)
    assert body(server, 2) == dict(parameters=dict(pgbouncer=dict(listen_backlog="256", default_pool_size="20")))
    assert result["restart_parameters"] == ["listen_backlog"]


def test_cancel_pending_cancels_the_resize_that_has_not_started_then_sends_what_differs(server, run, sleeps):
    server.script = [(200, bouncer()), page(resize("pending", "r7")), (204, b""), page(resize("canceled", "r7")),
                     (200, resize("pending", "r8")), page(resize("completed", "r8")), (200, bouncer("PGB_10"))]
    result = run(cancel_pending=True, size="PGB_10")
    assert result["changed"] is True and result["canceled_requests"] == [resize("pending", "r7")]
    assert methods(server)[2] == ("DELETE", URL + "/pool/resizes")
    assert methods(server)[4] == ("PATCH", URL + "/pool/resizes") and verbs(server).count("DELETE") == 1


def test_cancel_pending_in_check_mode_sends_nothing_and_with_none_pending_is_no_change(server, run):
    server.script = [(200, bouncer()), page(resize("pending", "r7"))]
    result = run(cancel_pending=True, check_mode=True)
    assert result["changed"] is True and result["canceled_requests"] == [resize("pending", "r7")]
    assert verbs(server) == ["GET", "GET"]
    server.requests.clear()
    server.script = [(200, bouncer()), page(resize("completed", "r7"))]
    result = run(cancel_pending=True)
    assert result["changed"] is False and result["canceled_requests"] == [] and verbs(server) == ["GET", "GET"]


def test_cancel_pending_of_a_resize_already_resizing_fails_naming_it(server, run):
    server.script = [(200, bouncer()), page(resize("resizing", "r7"))]
    with pytest.raises(ModuleFailure, match="^Resize request 'r7' of %s is resizing, and the platform cancels" % LABEL):
        run(cancel_pending=True)
    assert verbs(server) == ["GET", "GET"]
