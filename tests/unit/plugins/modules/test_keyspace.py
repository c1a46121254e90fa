# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""keyspace: a keyspace of a branch created with its shards, cluster size and extra replicas, waited for until ready,
resized in place by one resize request (the capacity machine branch shares), and deleted, except the default one."""

from __future__ import annotations

import json

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure, TaskContext
from ansible_collections.planetscale.cloud.plugins.modules.keyspace import Keyspace

ORG = "/v1/organizations/acme"
LIST = ORG + "/databases/app/branches/main/keyspaces"
URL = LIST + "/sharded"
MODULE = Keyspace
ARGS = dict(organization="acme", database="app", branch="main", name="sharded", service_token_id="svc",
            service_token="s3cret")
SKUS = [dict(name="PS_10"), dict(name="PS_20"), dict(name="PS_640", enabled=False)]


def keyspace(**fields):
    return dict(dict(id="k1", name="sharded", shards=2, sharded=True, cluster_name="PS_10", extra_replicas=0,
                     ready=True, default=False), **fields)


def lean(**fields):
    """A keyspace as the platform's answers carry it (../shared/reference/README.md)."""
    return dict(dict(type="Keyspace", id="k1", name="sharded", shards=2, sharded=True,
                     created_at="2026-01-01T00:00:00Z", updated_at="2026-01-01T00:00:00Z"), **fields)


def page(*items):
    return dict(data=list(items), current_page=1, next_page=None)


class Platform:
    """Answers by method and path: the keyspace (None: missing), its resize requests (newest first), its rollout
    status and the cluster sizes; a write answers what write() gives (default 204) and is recorded."""

    def __init__(self, server, record, resizes=(), write=None, polls=None, rollouts=None, url=URL):
        self.record, self.resizes, self.url = record, list(resizes), url
        self.write = write or (lambda request: (204, b""))
        self.polls = polls or {}  # request id -> the states each GET of it answers in turn
        self.rollouts = rollouts or ["complete"]  # the states each GET of the rollout status answers in turn
        server.default = self

    def __call__(self, request):
        path, method = request["path"], request["method"]
        if method != "GET":
            return self.write(request)
        if path == ORG + "/cluster-size-skus":
            return 200, SKUS
        if path == self.url:
            return (200, self.record) if self.record is not None else (404, dict(code="not_found", message="Not Found"))
        if path == URL + "/resizes":
            return 200, page(*self.resizes)
        if path == URL + "/rollout-status":
            state = self.rollouts.pop(0) if len(self.rollouts) > 1 else self.rollouts[0]
            return 200, dict(name="sharded", state=state, shards=[dict(name="-80", state=state)])
        rid = path.rpartition("/")[2]
        states = self.polls.get(rid) or ["completed"]
        return 200, dict(id=rid, state=states.pop(0) if len(states) > 1 else states[0])


def writes(server):
    return [(r["method"], r["path"][len(LIST):], json.loads(r["body"]) if r["body"] else None)
            for r in server.requests if r["method"] != "GET"]


@pytest.mark.parametrize("status", [200, 201])
def test_a_new_keyspace_is_created_and_waited_for_until_its_rollout_is_complete(server, run, sleeps, status):
    """The spec answers a create 200, planetscale-go's test 201; the lean record says nothing of readiness, so the
    rollout status does."""
    platform = Platform(server, None, rollouts=["in_progress", "complete"])

    def write(request):
        platform.record = lean()
        return status, lean()
    platform.write = write
    result = run(shards=2, cluster_size="SIZE_10", extra_replicas=1, diff=True)
    assert result["changed"] is True
    assert writes(server) == [("POST", "", dict(name="sharded", cluster_size="PS_10", shards=2, extra_replicas=1))]
    assert result["keyspace"]["ready"] is True and result["rollout_status"]["state"] == "complete"
    assert result["capacity"] == dict(cluster_size="PS_10", extra_replicas=1) and result["resize_requests"] == []
    assert result["diff"]["after"] == dict(name="sharded", shards=2, cluster_size="PS_10", extra_replicas=1)
    assert len(sleeps) == 1  # in_progress, then complete


def test_check_mode_predicts_a_new_keyspace_without_a_write(server, run):
    Platform(server, None)
    result = run(shards=2, cluster_size="PS_10", check_mode=True, diff=True)
    assert result["changed"] is True and writes(server) == []
    assert result["keyspace"] == dict(name="sharded", shards=2, sharded=True, cluster_name="PS_10", ready=False,
                                      default=False)
    assert result["diff"] == dict(before={}, after=dict(name="sharded", shards=2, cluster_size="PS_10"))


def test_a_keyspace_as_declared_is_no_write(server, run):
    Platform(server, keyspace())
    result = run(shards=2, cluster_size="PS_10", extra_replicas=0)
    assert result["changed"] is False and writes(server) == []
    assert ORG + "/cluster-size-skus" not in [r["path"] for r in server.requests]  # no resize: the size is not read


def test_a_resize_is_one_put_waited_for_until_completed_with_its_diff(server, run, sleeps):
    platform = Platform(server, keyspace(), polls=dict(r9=["resizing", "completed"]))

    def write(request):
        platform.record = keyspace(cluster_name="PS_20", extra_replicas=1)
        return 200, dict(id="r9", state="pending")
    platform.write = write
    result = run(cluster_size="PS_20", extra_replicas=1, diff=True)
    assert result["changed"] is True
    assert writes(server) == [("PUT", "/sharded/resizes", dict(cluster_size="PS_20", extra_replicas=1))]
    assert [r["state"] for r in result["resize_requests"]] == ["completed"]
    assert result["diff"]["before"] == dict(name="sharded", shards=2, cluster_size="PS_10", extra_replicas=0)
    assert result["diff"]["after"] == dict(name="sharded", shards=2, cluster_size="PS_20", extra_replicas=1)
    assert result["capacity"] == dict(cluster_size="PS_20", extra_replicas=1)


def test_check_mode_predicts_a_resize_without_a_write(server, run):
    Platform(server, keyspace())
    result = run(cluster_size="PS_20", check_mode=True)
    assert result["changed"] is True and result["capacity"] == dict(cluster_size="PS_20") and writes(server) == []


def test_a_lean_record_has_the_size_of_its_newest_completed_resize_and_unknown_is_not_compared(server, run):
    Platform(server, lean(), resizes=[dict(id="r2", state="canceled", cluster_name="PS_40"),
                                      dict(id="r1", state="completed", cluster_name="PS_20")])
    ctx = TaskContext()
    result = run(cluster_size="PS_20", extra_replicas=2, ctx=ctx)
    assert result["changed"] is False and writes(server) == []
    assert result["capacity"] == dict(cluster_size="PS_20")
    assert ctx.warnings == ["Keyspace 'sharded' of branch 'main' of database 'app' states no extra replicas and has "
                            "no completed resize request that tells it, so extra_replicas is not compared and nothing "
                            "is sent for it."]


@pytest.mark.parametrize("size", ["PS_30", "PS_640"])
def test_a_size_the_organization_may_not_use_is_refused_before_any_write(server, run, size):
    Platform(server, keyspace())
    with pytest.raises(ModuleFailure) as caught:
        run(cluster_size=size, check_mode=True)
    assert caught.value.msg == ("cluster_size %s is not a MySQL cluster size organization 'acme' may use: one of "
                                "PS_10, PS_20." % size)
    assert writes(server) == []


def test_a_canceled_resize_ends_the_task_at_once_naming_the_state(server, run, sleeps):
    Platform(server, keyspace(), write=lambda request: (200, dict(id="r9", state="pending")),
             polls=dict(r9=["canceled"]))
    with pytest.raises(ModuleFailure) as caught:
        run(extra_replicas=1)
    assert caught.value.msg == ("Resize request 'r9' of keyspace 'sharded' of branch 'main' of database 'app' ended in "
                                "state 'canceled': the keyspace keeps what it had before; see why on the platform and "
                                "run the task again.")
    assert caught.value.result["request"]["state"] == "canceled"


def test_a_resize_made_elsewhere_is_refused_without_wait(server, run):
    Platform(server, keyspace(), resizes=[dict(id="r5", state="pending")])
    with pytest.raises(ModuleFailure) as caught:
        run(extra_replicas=1, wait=False)
    assert caught.value.msg.startswith("Keyspace 'sharded' of branch 'main' of database 'app' is in the middle of a "
                                       "resize request 'r5' of it, made elsewhere (pending)")
    assert writes(server) == []


def test_cancel_pending_cancels_the_resize_that_has_not_started(server, run):
    platform = Platform(server, keyspace(), resizes=[dict(id="r5", state="pending")])

    def write(request):
        platform.resizes = [dict(id="r5", state="canceled")]
        return 204, b""
    platform.write = write
    result = run(cancel_pending=True)
    assert result["changed"] is True and writes(server) == [("DELETE", "/sharded/resizes", None)]
    assert [r["id"] for r in result["canceled_requests"]] == ["r5"]


@pytest.mark.parametrize("check_mode", [False, True])
@pytest.mark.parametrize("record", [keyspace(name="app", default=True), lean(name="app")])
def test_the_default_keyspace_is_not_deleted(server, run, check_mode, record):
    """Named after the database: the platform's lean records do not say default."""
    Platform(server, record, url=LIST + "/app")
    with pytest.raises(ModuleFailure) as caught:
        run(name="app", state="absent", check_mode=check_mode)
    assert caught.value.msg == ("Keyspace 'app' of branch 'main' of database 'app' is the default keyspace of the "
                                "branch, which keeps it as long as it exists: delete the branch to remove it.")
    assert writes(server) == []


def test_delete_and_delete_again(server, run):
    platform = Platform(server, keyspace())

    def write(request):
        platform.record = None
        return 204, b""
    platform.write = write
    assert run(state="absent")["changed"] is True
    assert run(state="absent")["changed"] is False
    assert writes(server) == [("DELETE", "/sharded", None)]


def test_a_lost_create_answer_is_read_back_and_never_sent_twice(server, run, sleeps):
    platform = Platform(server, None)

    def write(request):
        platform.record = keyspace()
        return "drop"
    platform.write = write
    result = run(shards=2, cluster_size="PS_10")
    assert result["changed"] is True and result["keyspace"]["id"] == "k1"
    assert [method for method, _path, _body in writes(server)] == ["POST"]


def test_other_shards_fail_naming_them(server, run):
    Platform(server, keyspace())
    with pytest.raises(ModuleFailure) as caught:
        run(shards=4)
    assert caught.value.msg == ("Keyspace 'sharded' of branch 'main' of database 'app' has shards 2, not 4: shards can "
                                "only be set when the keyspace is created; delete it first to create it again.")


@pytest.mark.parametrize("args, message", [
    (dict(shards=0), "shards must be 1 or more, not 0."),
    (dict(extra_replicas=-1), "extra_replicas must be 0 or more, not -1."),
    (dict(cluster_size="PS 10"), "cluster_size must be a cluster size name such as PS_10 or PS_10_AWS_ARM (see "
                                 "planetscale.cloud.cluster_size_info), not 'PS 10'."),
])
def test_bad_input_is_a_sentence_before_any_request(server, run, args, message):
    with pytest.raises(ModuleFailure) as caught:
        run(**args)
    assert caught.value.msg == message and server.requests == []


def test_a_new_keyspace_needs_a_cluster_size(server, run):
    Platform(server, None)
    with pytest.raises(ModuleFailure) as caught:
        run(shards=2)
    assert caught.value.msg == ("cluster_size is required to create keyspace 'sharded' of branch 'main' of database "
                                "'app', which does not exist.")
    assert writes(server) == []


def settled(strategy="available", **flags):
    return dict(replication_durability_constraints=dict(strategy=strategy), vreplication_flags=dict(
        dict(optimize_inserts=True, allow_no_blob_binlog_row_image=False, vplayer_batching=False), **flags))


def test_settings_that_differ_are_one_patch_with_their_diff(server, run):
    """The settings given are sent when one differs; the answer's strategy (maximum, as the platform's PATCH answers
    say) is not taken for what was sent."""
    platform = Platform(server, keyspace(**settled()))

    def write(request):
        platform.record = keyspace(**settled("lag", vplayer_batching=True))
        return 200, lean(replication_durability_constraints=dict(strategy="maximum"))
    platform.write = write
    result = run(replication_durability_strategy="lag", diff=True,
                 vreplication_flags=dict(vplayer_batching=True, optimize_inserts=True))
    assert result["changed"] is True
    assert writes(server) == [("PATCH", "/sharded", dict(replication_durability_constraints=dict(strategy="lag"),
                                                         vreplication_flags=dict(vplayer_batching=True,
                                                                                 optimize_inserts=True)))]
    assert result["diff"]["before"] == dict(name="sharded", shards=2, replication_durability_strategy="available",
                                            vreplication_flags=dict(vplayer_batching=False, optimize_inserts=True))
    assert result["diff"]["after"] == dict(name="sharded", shards=2, replication_durability_strategy="lag",
                                           vreplication_flags=dict(vplayer_batching=True, optimize_inserts=True))
    assert result["keyspace"]["replication_durability_constraints"] == dict(strategy="lag")
    server.requests.clear()
    again = run(replication_durability_strategy="lag", vreplication_flags=dict(vplayer_batching=True))
    assert again["changed"] is False and writes(server) == []


def test_check_mode_predicts_the_settings_without_a_write(server, run):
    Platform(server, keyspace(**settled()))
    result = run(vreplication_flags=dict(optimize_inserts=False), check_mode=True)
    assert result["changed"] is True and writes(server) == []
    assert result["keyspace"]["vreplication_flags"]["optimize_inserts"] is False


def test_a_lean_record_cannot_tell_the_settings_so_they_are_sent_with_a_warning(server, run):
    platform = Platform(server, lean(ready=True))
    platform.write = lambda request: (200, lean())
    ctx = TaskContext()
    result = run(replication_durability_strategy="always", ctx=ctx)
    assert result["changed"] is True
    assert writes(server) == [("PATCH", "/sharded", dict(replication_durability_constraints=dict(strategy="always")))]
    assert ctx.warnings == ["Keyspace 'sharded' of branch 'main' of database 'app' does not state its "
                            "replication_durability_strategy, so the task cannot tell whether it already has the value "
                            "given: it sends it and reports a change."]


def test_a_lost_update_answer_is_read_back_and_never_sent_twice(server, run, sleeps):
    platform = Platform(server, keyspace(**settled()))

    def write(request):
        platform.record = keyspace(**settled("lag"))
        return "drop"
    platform.write = write
    assert run(replication_durability_strategy="lag")["changed"] is True
    assert [method for method, _path, _body in writes(server)] == ["PATCH"]


def test_a_lost_update_answer_a_lean_record_cannot_settle_fails_without_sending_again(server, run, sleeps):
    platform = Platform(server, lean(ready=True))
    platform.write = lambda request: "drop"
    with pytest.raises(ModuleFailure, match="The answer to the update of keyspace 'sharded' .* was lost .* nothing "
                                            "was sent again"):
        run(vreplication_flags=dict(vplayer_batching=True))
    assert [method for method, _path, _body in writes(server)] == ["PATCH"]


def test_a_strategy_the_platform_does_not_publish_is_refused_before_any_request(server, run):
    assert "replication_durability_strategy" in " ".join(
        run.validate(replication_durability_strategy="maximum").error_messages)
    assert server.requests == []


def test_the_settings_sent_outlast_the_wait_on_a_lean_record(server, run):
    """Waited for until ready (the lean record does not say), the keyspace still shows the settings sent."""
    platform = Platform(server, lean())
    platform.write = lambda request: (200, lean())
    result = run(replication_durability_strategy="lag", diff=True)
    assert result["diff"]["after"]["replication_durability_strategy"] == "lag"
    assert result["keyspace"]["replication_durability_constraints"] == dict(strategy="lag")
    assert result["rollout_status"]["state"] == "complete"
