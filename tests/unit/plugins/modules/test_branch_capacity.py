# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""branch changes a branch's capacity in place: cluster size, replicas, storage, parameters (one change request on
PostgreSQL), cluster size and VTGates (PATCH .../cluster, PUT .../resizes on MySQL), each waited for."""

from __future__ import annotations

import json

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure, TaskContext
from ansible_collections.planetscale.cloud.plugins.modules.branch import Branch

ORG = "/v1/organizations/acme"
URL = ORG + "/databases/shop/branches/dev"
MODULE = Branch
ARGS = dict(organization="acme", database="shop", name="dev", service_token_id="svc", service_token="s3cret")
SKUS = dict(mysql=[dict(name="PS_10"), dict(name="PS_20"), dict(name="PS_640", enabled=False)],
            postgresql=[dict(name="PS_5"), dict(name="PS_10"), dict(name="PS_20")])
PARAMETERS = [
    dict(namespace="pgconf", name="work_mem", parameter_type="integer", value="4096", min=64, max=2147483647),
    dict(namespace="pgconf", name="log_statement", parameter_type="select", value="none",
         options=["none", "ddl", "mod", "all"], min=0, max=0),
    dict(namespace="pgconf", name="wal_level", parameter_type="select", value="logical", immutable=True,
         options=["replica", "logical"], min=0, max=0),
    dict(namespace="pgconf", name="random_page_cost", parameter_type="float", value="4", min=0, max=1e10),
    dict(namespace="patroni", name="synchronous_mode", parameter_type="boolean", value="false", min=0, max=0),
    dict(namespace="pgconf", name="max_connections", parameter_type="integer", value="100", min=25, max=5000,
         restart=True),
]


def branch(kind="mysql", **fields):
    return dict(dict(id="b1", name="dev", parent_branch="main", state="ready", ready=True, kind=kind,
                     cluster_name="PS_10", has_replicas=False, vtgate_size="VTG_5", vtgate_count=1,
                     vtgate_autoscaling=False, vtgate_max_count=1, vtgate_target_cpu_utilization=None), **fields)


def page(*items):
    return dict(data=list(items), current_page=1, next_page=None)


class Platform:
    """Answers by method and path: the branch, its lists of requests, the SKUs and parameters; writes answer what
    the test gives and are recorded."""

    def __init__(self, server, record, changes=(), resizes=(), write=None, polls=None, skus=None):
        self.record, self.lists = record, dict(changes=list(changes), resizes=list(resizes))
        self.skus = skus or SKUS
        self.write = write or (lambda request: (204, b""))
        self.polls = polls or {}  # request id -> the states each GET of it answers in turn
        server.default = self

    def __call__(self, request):
        path, method = request["path"], request["method"]
        if method != "GET":
            return self.write(request)
        if path == URL:
            return 200, self.record
        if path == ORG + "/cluster-size-skus":
            return 200, self.skus[request["query"]["engine"][0]]
        if path == URL + "/parameters":
            return 200, PARAMETERS
        tail = path[len(URL) + 1:]
        if tail in self.lists:
            return 200, page(*self.lists[tail])
        rid = tail.rpartition("/")[2]
        states = self.polls.get(rid) or ["completed"]
        return 200, dict(id=rid, state=states.pop(0) if len(states) > 1 else states[0])


def writes(server):
    return [(r["method"], r["path"][len(URL):], json.loads(r["body"]) if r["body"] else None)
            for r in server.requests if r["method"] != "GET"]


def done(rid="r1", **fields):
    return dict(dict(id=rid, state="completed", replicas=0, minimum_storage_bytes=10 * 1024**3), **fields)


# ------------------------------------------------------------------- MySQL: cluster size and VTGates


def test_a_mysql_branch_is_resized_by_patch_cluster_and_the_request_is_waited_for(server, run, sleeps):
    platform = Platform(server, branch(), polls=dict(r9=["pending", "resizing", "completed"]))

    def write(request):
        platform.lists["changes"].insert(0, dict(id="r9", state="pending"))
        return 204, b""
    platform.write = write
    result = run(cluster_size="SIZE_20", diff=True)
    assert result["changed"] is True
    assert writes(server) == [("PATCH", "/cluster", dict(cluster_size="PS_20"))]
    assert result["change_requests"][0]["state"] == "completed"
    assert result["capacity"] == dict(cluster_size="PS_20")
    assert result["diff"]["before"]["cluster_size"] == "PS_10" and result["diff"]["after"]["cluster_size"] == "PS_20"
    assert len(sleeps) == 3  # pending as listed, then read pending, resizing, completed


@pytest.mark.parametrize("size", ["PS_10", "SIZE_10"])
def test_the_size_it_has_is_no_write(server, run, size):
    Platform(server, branch(), changes=[done()])
    result = run(cluster_size=size)
    assert result["changed"] is False and writes(server) == []


@pytest.mark.parametrize("size", ["PS_30", "PS_640"])
def test_an_unknown_or_disabled_size_is_refused_before_any_write(server, run, size):
    Platform(server, branch())
    with pytest.raises(ModuleFailure) as caught:
        run(cluster_size=size)
    assert caught.value.msg == ("cluster_size %s is not a MySQL cluster size organization 'acme' may use: one of "
                                "PS_10, PS_20." % size)
    assert writes(server) == []


# the forms the platform lists (../shared/reference/README.md), as a bare JSON array
REAL_SKUS = dict(mysql=[dict(name=name) for name in ("PS_DEV", "PS_10", "PS_20", "M7_160_D_METAL_460")],
                 postgresql=[dict(name=name) for name in ("PS_DEV_AWS_X86", "PS_10_AWS_ARM", "PS_20_AWS_ARM",
                                                          "PS_5_GCP_X86", "M1_10_AWS_AMD_D_METAL_10")])


@pytest.mark.parametrize("kind, size, write", [
    ("postgresql", "PS_20_AWS_ARM", "/changes"), ("postgresql", "PS_DEV_AWS_X86", "/changes"),
    ("postgresql", "PS_5_GCP_X86", "/changes"), ("postgresql", "M1_10_AWS_AMD_D_METAL_10", "/changes"),
    ("mysql", "PS_DEV", "/cluster"), ("mysql", "M7_160_D_METAL_460", "/cluster"),
])
def test_a_size_the_platform_lists_for_the_engine_is_taken(server, run, kind, size, write):
    """Issue 43: every size but SIZE_n and PS_n was refused before any request; PS_10_AWS_ARM and PS_20_AWS_ARM were
    one size (both end in ARM)."""
    Platform(server, branch(kind, cluster_name="PS_10_AWS_ARM" if kind == "postgresql" else "PS_10"),
             changes=[done()], skus=REAL_SKUS, write=lambda request: (200, dict(id="c1", state="pending")))
    result = run(cluster_size=size)
    assert result["changed"] is True and result["capacity"] == dict(cluster_size=size)
    assert writes(server) == [("PATCH", write, dict(cluster_size=size))]


def test_a_real_size_the_branch_has_is_no_write_and_the_list_is_not_read(server, run):
    """A size is checked against the platform's list only when the task would resize with it: the size the branch
    has passes even where the list does not name it (a size the organization may no longer pick)."""
    Platform(server, branch("postgresql", cluster_name="PS_10_AWS_ARM"), changes=[done()],
             skus=dict(postgresql=[], mysql=[]))
    assert run(cluster_size="PS_10_AWS_ARM")["changed"] is False
    assert writes(server) == [] and ORG + "/cluster-size-skus" not in [r["path"] for r in server.requests]


def test_a_size_of_the_other_engine_is_refused_naming_those_of_the_engine(server, run):
    Platform(server, branch("postgresql", cluster_name="PS_10_AWS_ARM"), skus=REAL_SKUS)
    with pytest.raises(ModuleFailure) as caught:
        run(cluster_size="PS_20")
    assert caught.value.msg == ("cluster_size PS_20 is not a PostgreSQL cluster size organization 'acme' may use: one "
                                "of PS_DEV_AWS_X86, PS_10_AWS_ARM, PS_20_AWS_ARM, PS_5_GCP_X86, M1_10_AWS_AMD_D_METAL_10.")
    assert writes(server) == []


def recorded(record, *keys):
    """A record as the platform writes it, without the keys it does not carry."""
    return dict((key, value) for key, value in record.items() if key not in keys)


VTGATE_KEYS = ("vtgate_size", "vtgate_name", "vtgate_count", "vtgate_autoscaling", "vtgate_max_count",
               "vtgate_target_cpu_utilization")


@pytest.mark.parametrize("check_mode", [False, True])
def test_vtgates_a_real_branch_has_are_those_of_its_newest_completed_resize(server, run, check_mode):
    """Issue 43: the platform's branch records carry no vtgate_* fields; the newest completed resize says what the
    branch has (vtgate_name is the size the PUT takes, vtgate_size the platform's own name)."""
    resize = dict(id="z2", state="completed", vtgate_name="VTG_320", vtgate_size="vg.c1.large", vtgate_count=1,
                  vtgate_autoscaling=False, vtgate_max_count=1, vtgate_target_cpu_utilization=0)
    Platform(server, recorded(branch(), *VTGATE_KEYS),
             resizes=[resize, dict(resize, id="z1", vtgate_name="VTG_10", vtgate_count=4)])
    result = run(check_mode=check_mode, vtgate=dict(size="VTG_320", count=1))
    assert result["changed"] is False and writes(server) == []
    assert result["capacity"] == dict(vtgate=dict(size="VTG_320", count=1))


def test_a_real_branch_without_a_completed_resize_has_unknown_vtgates_which_are_sent(server, run):
    Platform(server, recorded(branch(), *VTGATE_KEYS), write=lambda request: (200, dict(id="z1", state="pending")))
    assert run(vtgate=dict(count=2))["changed"] is True
    assert writes(server) == [("PUT", "/resizes", dict(vtgate_count=2))]


def test_vtgate_settings_are_one_put_of_those_that_differ(server, run):
    Platform(server, branch(), write=lambda request: (200, dict(id="z1", state="pending")))
    result = run(vtgate=dict(size="VTG_10", count=1, max_count=4, autoscaling=True, target_cpu_utilization=60))
    assert result["changed"] is True
    assert writes(server) == [("PUT", "/resizes", dict(vtgate_size="VTG_10", vtgate_max_count=4,
                                                       vtgate_autoscaling=True, vtgate_target_cpu_utilization=60))]
    assert result["capacity"]["vtgate"] == dict(size="VTG_10", count=1, max_count=4, autoscaling=True,
                                                target_cpu_utilization=60)


def test_vtgate_settings_it_has_are_no_write(server, run):
    Platform(server, branch(vtgate_name="VTG_10", vtgate_size="vg.c1.nano", vtgate_count=2))
    assert run(vtgate=dict(size="VTG_10", count=2))["changed"] is False
    assert writes(server) == []


# ------------------------------------------------------------------- PostgreSQL: one change request


def test_replicas_parameters_and_storage_go_in_one_change_request(server, run):
    Platform(server, branch("postgresql"), changes=[done()],
             write=lambda request: (200, dict(id="c1", state="pending")))
    result = run(cluster_size="PS_20", replicas=2, parameters=dict(pgconf=dict(work_mem=8192, log_statement="none")),
                 storage=dict(minimum_bytes=10 * 1024**3, maximum_bytes=200 * 1024**3), diff=True)
    assert writes(server) == [("PATCH", "/changes", dict(
        cluster_size="PS_20", replicas=2, parameters=dict(pgconf=dict(work_mem="8192")),
        storage=dict(maximum_storage_bytes=200 * 1024**3)))]
    assert result["changed"] is True and result["change_requests"] == [dict(id="c1", state="completed")]
    assert result["diff"]["before"]["parameters"] == dict(pgconf=dict(work_mem="4096", log_statement="none"))
    assert result["diff"]["after"]["parameters"] == dict(pgconf=dict(work_mem="8192", log_statement="none"))
    assert result["diff"]["before"]["replicas"] == 0 and result["diff"]["after"]["replicas"] == 2


def test_what_the_branch_has_is_no_write(server, run):
    """The replica count and storage are those of the newest completed change request; a request that ended
    canceled since does not count."""
    Platform(server, branch("postgresql", has_replicas=True),
             changes=[dict(id="c3", state="canceled", replicas=5), done("c2", replicas=2)])
    result = run(replicas=2, parameters=dict(pgconf=dict(work_mem="4096", random_page_cost=4.0),
                                             patroni=dict(synchronous_mode=False)),
                 storage=dict(minimum_bytes=10 * 1024**3))
    assert result["changed"] is False and writes(server) == []


@pytest.mark.parametrize("check_mode", [False, True])
def test_replicas_of_a_real_branch_are_those_its_record_states(server, run, check_mode):
    """Issue 43: the platform's branch says replicas: 1 and its completed change requests carry no replicas; the
    module took 2 (has_replicas) and asked for 1 on every run."""
    Platform(server, branch("postgresql", has_replicas=True, replicas=1),
             changes=[recorded(done("c2"), "replicas"), done("c1", replicas=2)])
    result = run(check_mode=check_mode, replicas=1)
    assert result["changed"] is False and writes(server) == [] and result["capacity"] == dict(replicas=1)


def test_replicas_another_count_than_the_branch_states_are_changed(server, run):
    Platform(server, branch("postgresql", has_replicas=True, replicas=1), changes=[recorded(done(), "replicas")],
             write=lambda request: (200, dict(id="c9", state="pending")))
    result = run(replicas=2, diff=True)
    assert writes(server) == [("PATCH", "/changes", dict(replicas=2))]
    assert result["diff"]["before"]["replicas"] == 1 and result["diff"]["after"]["replicas"] == 2


def test_a_branch_without_a_completed_request_has_two_replicas_when_it_has_replicas(server, run):
    Platform(server, branch("postgresql", has_replicas=True))
    assert run(replicas=2)["changed"] is False


def test_check_mode_predicts_without_a_write(server, run):
    Platform(server, branch("postgresql"), changes=[done()])
    result = run(check_mode=True, diff=True, replicas=2, parameters=dict(pgconf=dict(work_mem=8192)))
    assert result["changed"] is True and writes(server) == []
    assert result["capacity"] == dict(replicas=2, parameters=dict(pgconf=dict(work_mem="8192")))
    assert result["diff"]["after"]["replicas"] == 2


@pytest.mark.parametrize("parameters, problem", [
    (dict(pgconf=dict(work_mem=10)), "pgconf.work_mem takes 64 to 2147483647, not 10"),
    (dict(pgconf=dict(work_mem="lots")), "pgconf.work_mem takes an integer, not 'lots'"),
    (dict(pgconf=dict(no_such=1)), "pgconf.no_such is not a parameter of the branch"),
    (dict(other=dict(work_mem=1)), "other.work_mem is not a parameter of the branch"),
    (dict(pgconf=dict(log_statement="some")), "pgconf.log_statement takes one of none, ddl, mod, all, not 'some'"),
    (dict(pgconf=dict(wal_level="replica")), "pgconf.wal_level is immutable: the platform sets it"),
    (dict(patroni=dict(synchronous_mode="maybe")), "patroni.synchronous_mode takes true or false, not 'maybe'"),
])
def test_a_parameter_the_platform_would_refuse_is_a_sentence_before_any_write(server, run, parameters, problem):
    Platform(server, branch("postgresql"))
    with pytest.raises(ModuleFailure) as caught:
        run(parameters=parameters)
    assert caught.value.msg == ("parameters: %s; see planetscale.cloud.postgres_parameter_info for the branch's "
                                "parameters and their ranges." % problem)
    assert writes(server) == []


@pytest.mark.parametrize("parameters", [dict(pgconf=8192), dict(pgconf=dict(work_mem=[1])), dict(pgconf={})])
def test_parameters_of_another_shape_fail_before_any_request(server, run, parameters):
    with pytest.raises(ModuleFailure, match="parameters must map a namespace to parameter names and their values"):
        run(parameters=parameters)
    assert server.requests == []


@pytest.mark.parametrize("kind, args, named", [
    ("mysql", dict(replicas=2), "replicas is only for PostgreSQL branches"),
    ("mysql", dict(replicas=2, parameters=dict(pgconf=dict(work_mem=64))),
     "replicas and parameters are only for PostgreSQL branches"),
    ("mysql", dict(storage=dict(autoscaling=True)), "storage is only for PostgreSQL branches"),
    ("postgresql", dict(vtgate=dict(count=2)), "vtgate is only for MySQL branches"),
])
def test_options_of_the_other_engine_are_a_sentence_before_any_write(server, run, kind, args, named):
    Platform(server, branch(kind))
    with pytest.raises(ModuleFailure) as caught:
        run(**args)
    assert caught.value.msg.startswith(named + ", and branch 'dev' of database 'shop' is a ")
    assert writes(server) == []


def test_a_canceled_request_ends_the_task_at_once_naming_the_state(server, run, sleeps):
    Platform(server, branch("postgresql"), write=lambda request: (200, dict(id="c1", state="pending")),
             polls=dict(c1=["canceled"]))
    with pytest.raises(ModuleFailure) as caught:
        run(replicas=2)
    assert caught.value.msg == ("Change request 'c1' of branch 'dev' of database 'shop' ended in state 'canceled': "
                                "the branch keeps what it had before; see why on the platform and run the task again.")
    assert caught.value.result["changed"] is True and caught.value.result["request"]["state"] == "canceled"
    assert len(sleeps) == 1


def test_without_wait_the_request_is_returned_as_it_is(server, run, sleeps):
    Platform(server, branch("postgresql"), write=lambda request: (200, dict(id="c1", state="pending")))
    result = run(replicas=2, wait=False)
    assert result["changed"] is True and result["change_requests"] == [dict(id="c1", state="pending")]
    assert sleeps == []


def test_a_request_made_elsewhere_is_waited_for_first(server, run, sleeps):
    platform = Platform(server, branch("postgresql"), changes=[dict(id="x1", state="resizing", replicas=2)],
                        polls=dict(x1=["resizing", "completed"]),
                        write=lambda request: (200, dict(id="c1", state="completed")))
    original = platform.__call__

    def answer(request):  # once x1 completed, the list shows it so
        if request["path"].endswith("/changes/x1") and platform.polls["x1"] == ["completed"]:
            platform.lists["changes"] = [done("x1", replicas=2)]
        return original(request)
    server.default = answer
    result = run(replicas=3)
    assert writes(server) == [("PATCH", "/changes", dict(replicas=3))]
    assert result["changed"] is True


def test_a_request_made_elsewhere_is_refused_without_wait(server, run):
    Platform(server, branch("postgresql"), changes=[dict(id="x1", state="pending")])
    with pytest.raises(ModuleFailure) as caught:
        run(replicas=3, wait=False)
    assert caught.value.msg == ("Branch 'dev' of database 'shop' is in the middle of a change request 'x1' of it, "
                                "made elsewhere (pending): set wait to true to wait for it to complete first, or run "
                                "the task again once it has.")
    assert writes(server) == []


def test_a_lost_answer_is_read_back_and_never_sent_twice(server, run, sleeps):
    """The PATCH was applied but its answer lost: the request it made is found running and waited for."""
    platform = Platform(server, branch("postgresql"), changes=[done()])

    def lost(request):
        platform.lists["changes"].insert(0, dict(id="c1", state="pending"))
        return "drop"
    platform.write = lost
    result = run(replicas=2)
    assert [w[0] for w in writes(server)] == ["PATCH"]
    assert result["changed"] is True and result["change_requests"] == [dict(id="c1", state="completed")]


def test_a_lost_answer_of_a_write_not_applied_is_sent_again(server, run, sleeps):
    answers = ["drop", (200, dict(id="c1", state="completed"))]
    Platform(server, branch("postgresql"), changes=[done()], write=lambda request: answers.pop(0))
    result = run(replicas=2)
    assert [w[0] for w in writes(server)] == ["PATCH", "PATCH"]
    assert result["changed"] is True


def test_a_new_branch_takes_its_capacity_once_ready(server, run, sleeps):
    created = []

    def answer(request):
        if request["method"] == "POST":
            created.append(True)
            return 201, branch("postgresql", state="pending", ready=False)
        if request["path"] == URL and not created:
            return 404, dict(code="not_found", message="Not Found")
        if request["path"] == ORG + "/databases/shop/branches/main":
            return 200, branch("postgresql", name="main")
        if request["method"] == "PATCH":
            return 200, dict(id="c1", state="completed")
        return platform(request)
    platform = Platform(server, branch("postgresql"))
    server.default = answer
    result = run(parent_branch="main", replicas=1)
    assert [w[:2] for w in writes(server)] == [("POST", ""), ("PATCH", "/changes")]
    assert result["changed"] is True and result["capacity"] == dict(replicas=1)


def test_check_mode_of_a_new_branch_predicts_its_capacity(server, run):
    def answer(request):
        if request["path"] == URL:
            return 404, dict(code="not_found", message="Not Found")
        if request["path"] == ORG + "/databases/shop/branches/main":
            return 200, branch("postgresql", name="main")
        if request["path"] == ORG + "/databases/shop/branches/main/parameters":
            return 200, PARAMETERS
        return platform(request)
    platform = Platform(server, branch("postgresql"))
    server.default = answer
    result = run(check_mode=True, parent_branch="main", replicas=1, parameters=dict(pgconf=dict(work_mem=128)))
    assert result["changed"] is True and writes(server) == []
    assert result["capacity"] == dict(replicas=1, parameters=dict(pgconf=dict(work_mem="128")))


def test_a_negative_replica_count_fails_before_any_request(server, run):
    with pytest.raises(ModuleFailure, match=r"^replicas must be 0 or more, not -1\.$"):
        run(replicas=-1)
    assert server.requests == []


def test_no_warning_about_cluster_size_any_more(server, run):
    Platform(server, branch(), changes=[done()])
    ctx = TaskContext()
    run(ctx=ctx, cluster_size="PS_10")
    assert ctx.warnings == []


def test_a_refusal_because_the_request_it_made_is_resizing_is_waited_for(server, run, sleeps):
    """The transport sends a PUT again after a lost answer (PUT is idempotent); if the request it made has started
    resizing meanwhile, the platform refuses the second with 422: that request is the answer, waited for."""
    platform = Platform(server, branch(), polls=dict(z1=["resizing", "completed"]))

    def refused(request):
        platform.lists["resizes"] = [dict(id="z1", state="resizing")]
        return 422, dict(code="unprocessable", message="Branch 'dev' has a resize request resizing (z1): wait for "
                                                       "it to complete before asking for another")
    platform.write = refused
    result = run(vtgate=dict(count=2))
    assert [w[0] for w in writes(server)] == ["PUT"]
    assert result["changed"] is True and result["change_requests"] == [dict(id="z1", state="completed")]


def test_a_refusal_with_nothing_running_stands(server, run):
    Platform(server, branch(), write=lambda request: (422, dict(code="invalid_params", message="vtgate_count: no")))
    with pytest.raises(ModuleFailure, match="vtgate_count: no"):
        run(vtgate=dict(count=2))
    assert [w[0] for w in writes(server)] == ["PUT"]


def test_storage_the_branch_has_unknown_is_sent_and_a_204_is_no_change(server, run):
    """Without a completed change request the branch's storage is unknown: it is sent, and the platform's 204 (no
    changes to apply) makes the task report no change."""
    Platform(server, branch("postgresql"), write=lambda request: (204, b""))
    result = run(storage=dict(autoscaling=True))
    assert writes(server) == [("PATCH", "/changes", dict(storage=dict(storage_autoscaling=True)))]
    assert result["changed"] is False and result["change_requests"] == []


@pytest.mark.parametrize("check_mode", [True, False])
def test_iops_the_branch_record_states_are_no_change_in_check_mode_either(server, run, check_mode):
    """Issue 43: without a completed change request, check mode said changed for the IOPS the branch has (its record
    states them, cluster_iops) and the run then said ok."""
    Platform(server, branch("postgresql", cluster_iops=3000), write=lambda request: (204, b""))
    result = run(check_mode=check_mode, storage=dict(iops=3000))
    assert result["changed"] is False and writes(server) == []
    assert result["capacity"] == dict(storage=dict(iops=3000))


@pytest.mark.parametrize("storage, message", [
    (dict(iops=50), "storage.iops must be 100 to 64000, not 50."),
    (dict(iops=64001), "storage.iops must be 100 to 64000, not 64001."),
    (dict(throughput_mibs=124), "storage.throughput_mibs must be 125 to 4000, not 124."),
    (dict(minimum_bytes=-1), "storage.minimum_bytes must be 0 or more, not -1."),
    (dict(maximum_bytes=-5), "storage.maximum_bytes must be 0 or more, not -5."),
    (dict(minimum_bytes=20, maximum_bytes=10),
     "storage.minimum_bytes must be no more than storage.maximum_bytes, not 20 above 10."),
])
@pytest.mark.parametrize("check_mode", [True, False])
def test_storage_the_platform_refuses_is_a_sentence_before_any_request(server, run, storage, message, check_mode):
    """Issue 43: these were sent, and refused by the platform; the ranges are the module's documented ones."""
    Platform(server, branch("postgresql"))
    with pytest.raises(ModuleFailure) as caught:
        run(check_mode=check_mode, storage=storage)
    assert caught.value.msg == message and server.requests == []


def test_the_parameters_are_read_once_a_task_when_nothing_runs(server, run):
    """check() reads the branch's parameters to check the values given; what the branch has is taken from that read,
    not from a second one."""
    Platform(server, branch("postgresql"), changes=[done()])
    result = run(parameters=dict(pgconf=dict(work_mem=4096)))
    assert result["changed"] is False and writes(server) == []
    assert [r["path"] for r in server.requests].count(URL + "/parameters") == 1


# ------------------------------------------------------------------- a parameter whose change restarts PostgreSQL


RESTART_REFUSED = ("Branch 'dev' of database 'shop': changing pgconf.max_connections restarts PostgreSQL, which drops "
                   "its connections; set allow_restart: true to accept the restart, or leave it out of parameters.")


def test_a_restart_without_allow_restart_fails_before_any_write(server, run):
    """Issue 44: max_connections was changed, restarting the server, without a word. The deletion protection the
    task also changes is not written either: the refusal comes first."""
    Platform(server, branch("postgresql"), changes=[done()])
    with pytest.raises(ModuleFailure) as caught:
        run(parameters=dict(pgconf=dict(max_connections=200, work_mem=8192)), deletion_protected=True)
    assert caught.value.msg == RESTART_REFUSED and writes(server) == []


@pytest.mark.parametrize("allow_restart", [False, True])
def test_check_mode_names_the_parameters_that_restart(server, run, allow_restart):
    Platform(server, branch("postgresql"), changes=[done()])
    ctx = TaskContext(check_mode=True, diff=True)
    result = run(ctx=ctx, allow_restart=allow_restart, parameters=dict(pgconf=dict(max_connections=200, work_mem=64)))
    assert result["changed"] is True and writes(server) == []
    assert result["restart_parameters"] == ["pgconf.max_connections"]
    assert result["diff"]["after"]["restart_parameters"] == ["pgconf.max_connections"]
    assert "restart_parameters" not in result["diff"]["before"]
    assert ctx.warnings == ["Branch 'dev' of database 'shop': changing pgconf.max_connections would restart PostgreSQL, "
                            "which drops its connections%s." % (
                                "" if allow_restart else "; the task needs allow_restart: true to do it")]


def test_allow_restart_sends_the_change_and_names_the_restart(server, run, sleeps):
    Platform(server, branch("postgresql"), changes=[done()], write=lambda request: (200, dict(id="c1", state="pending")))
    ctx = TaskContext()
    result = run(ctx=ctx, allow_restart=True, parameters=dict(pgconf=dict(max_connections=200)))
    assert writes(server) == [("PATCH", "/changes", dict(parameters=dict(pgconf=dict(max_connections="200"))))]
    assert result["changed"] is True and result["restart_parameters"] == ["pgconf.max_connections"]
    assert ctx.warnings == []


def test_a_restart_parameter_at_its_value_or_others_alone_need_no_consent(server, run):
    """Only a parameter that differs is judged, from the parameters read once to check the values."""
    Platform(server, branch("postgresql"), changes=[done()], write=lambda request: (200, dict(id="c1", state="done")))
    result = run(parameters=dict(pgconf=dict(max_connections="100", work_mem=8192)), wait=False)
    assert result["restart_parameters"] == [] and result["changed"] is True
    assert [r["path"] for r in server.requests].count(URL + "/parameters") == 1


# ------------------------------------------------------------------- cancel_pending


def test_cancel_pending_cancels_the_request_that_has_not_started(server, run):
    Platform(server, branch("postgresql"), changes=[dict(id="x1", state="pending"), done()])
    result = run(cancel_pending=True)
    assert writes(server) == [("DELETE", "/resizes", None)]
    assert result["changed"] is True and result["canceled_requests"] == [dict(id="x1", state="pending")]


def test_cancel_pending_of_a_mysql_branch_reads_both_lists_and_check_mode_writes_nothing(server, run):
    Platform(server, branch("mysql"), changes=[done()], resizes=[dict(id="v1", state="queued")])
    result = run(cancel_pending=True, check_mode=True)
    assert writes(server) == [] and result["changed"] is True
    assert result["canceled_requests"] == [dict(id="v1", state="queued")]


def test_cancel_pending_without_a_pending_request_is_no_change(server, run):
    Platform(server, branch("postgresql"), changes=[dict(id="x1", state="canceled"), done()])
    result = run(cancel_pending=True)
    assert writes(server) == [] and result["changed"] is False and result["canceled_requests"] == []


def test_cancel_pending_of_a_request_already_resizing_is_a_sentence(server, run):
    Platform(server, branch("postgresql"), changes=[dict(id="x1", state="resizing")])
    with pytest.raises(ModuleFailure) as caught:
        run(cancel_pending=True)
    assert caught.value.msg == ("Change request 'x1' of branch 'dev' of database 'shop' is resizing, and the platform "
                                "cancels a request only before it starts resizing: wait for it to complete, or leave "
                                "cancel_pending out.")
    assert writes(server) == []


def test_a_lost_answer_of_the_cancel_is_read_back_and_not_sent_again(server, run, sleeps):
    platform = Platform(server, branch("postgresql"), changes=[dict(id="x1", state="pending")])

    def lost(request):
        platform.lists["changes"] = [dict(id="x1", state="canceled")]
        return "drop"
    platform.write = lost
    assert run(cancel_pending=True)["changed"] is True
    assert writes(server) == [("DELETE", "/resizes", None)]


def test_cancel_pending_comes_after_every_refusal_and_what_it_cancels_is_not_waited_for(server, run, sleeps):
    platform = Platform(server, branch("postgresql"), changes=[dict(id="x1", state="pending"), done()],
                        write=lambda request: (204, b"") if request["method"] == "DELETE" else (
                            200, dict(id="c1", state="completed")))
    with pytest.raises(ModuleFailure, match="restarts PostgreSQL"):
        run(cancel_pending=True, parameters=dict(pgconf=dict(max_connections=200)))
    assert writes(server) == []
    result = run(cancel_pending=True, replicas=2)
    assert writes(server) == [("DELETE", "/resizes", None), ("PATCH", "/changes", dict(replicas=2))]
    assert result["changed"] is True and sleeps == [] and platform.polls == {}
