# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unknown outcomes: every create, update and delete of the resource modules, and both token
grants, with its first request applied and then answered 500, 502 or 504 or dropped (and,
for contrast, dropped before it was applied). Afterwards exactly one of each resource exists,
every task reports what happened (changed, the resource as it is, a secret that works), and
a grant whose tokens were lost fails with a sentence that says so. A credential (password, service
token, Postgres role) whose create answer was lost is never deleted: nothing tells it from one
another run made with the same credential, so the task returns it without its secret and a
warning names it and how to get a secret; a create lost before it was applied, while another
client made one of the same name and fields, with the same credential or another, takes that one
and deletes nothing.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time

import pytest

from harness import REVEALS, HarnessError, module_defaults, play, task

# The emulator answers this file as the real platform does when it is lean: bare {"data": [...]} lists,
# cluster_rate_name, "type" keys (conftest.response_shapes).
LEAN_SHAPES = True
MODES = {
    "committed-500": dict(status=500, after_commit=True),
    "committed-502": dict(status=502, after_commit=True),
    "committed-503": dict(status=503, after_commit=True),
    "committed-504": dict(status=504, after_commit=True),
    "committed-drop": dict(drop=True, after_commit=True),
    "dropped-before": dict(drop=True),
}
ORG_PATH = "^/v1/organizations/acme"
DB_PATH = ORG_PATH + "/databases/app"
PG_DB_PATH = ORG_PATH + "/databases/pgapp"  # a PostgreSQL database


def _faults_met(emulator, run, rules, figures):
    """After a run under one fault per write: every write met its fault, the run failed nowhere and every task
    reported a change; the fault rules are cleared and the request log (with the faults marked) is returned."""
    fired = [rule for rule in emulator.control("GET", "/faults")["rules"] if rule["remaining"] == 0]
    log = emulator.requests()
    emulator.control("DELETE", "/faults")
    figures["faults_injected"] += len([entry for entry in log if entry["fault"]])
    figures["writes_with_unknown_outcome"] += len(fired)

    run.without_failures()
    figures["faults_survived"] += len([entry for entry in log if entry["fault"]])
    assert len(fired) == len(rules), "every write met its fault"
    assert all(step.changed for step in run.tasks)
    return log


def _taken_or_made(result, key, secret, remedy, mode, creates, deletes):
    """A credential's create whose answer was lost: applied (committed), the task returns the one it finds without
    its secret, with a warning that names its id and the remedy, and sends no second create; not applied, the create
    is sent again and the task returns the secret. Nothing is deleted either way."""
    record, warnings = result[key], result.get("warnings") or []
    if mode.startswith("committed"):
        assert secret not in record and "connection" not in result
        named = [w for w in warnings if "with id %s appeared" % record["id"] in w]
        assert len(named) == 1 and remedy in named[0] and "returns it without its secret" in named[0], warnings
        assert (len(creates), len(deletes)) == (1, 0)
    else:
        assert str(record[secret]).startswith("pscale_") and not warnings
        assert (len(creates), len(deletes)) == (2, 0)


def _setup(emulator):
    """Resources that the playbook updates and deletes, created beforehand so their ids are known."""
    world = emulator.world
    base = "/organizations/acme/databases/app/branches"
    emulator.api("POST", base, dict(name="uo-gone", parent_branch="main"))
    updated = emulator.api("POST", base + "/main/passwords", dict(name="uo-update", ttl=3600))
    gone = emulator.api("POST", base + "/main/passwords", dict(name="uo-gone"))
    emulator.api("POST", "/organizations/acme/teams", dict(name="uo-team"))
    emulator.api("POST", "/organizations/acme/teams/uo-team/members", dict(user_id=world["users"][0]["id"]))
    emulator.api("POST", "/organizations/acme/teams", dict(name="uo-gone"))
    emulator.advance(5)  # the branch is ready
    return updated, gone


def _rules(mode, updated, gone, world):
    fault = MODES[mode]
    targets = [
        ("POST", DB_PATH + "/branches$"),
        ("POST", PG_DB_PATH + "/branches$"),
        ("DELETE", DB_PATH + "/branches/uo-gone$"),
        ("POST", DB_PATH + "/branches/main/passwords$"),
        ("PATCH", DB_PATH + "/branches/main/passwords/%s$" % updated["id"]),
        ("POST", DB_PATH + "/branches/main/passwords/%s/renew$" % updated["id"]),
        ("DELETE", DB_PATH + "/branches/main/passwords/%s$" % gone["id"]),
        ("POST", ORG_PATH + "/teams$"),
        ("PATCH", ORG_PATH + "/teams/uo-team$"),
        ("POST", ORG_PATH + "/teams/uo-team/members$"),
        ("DELETE", ORG_PATH + "/teams/uo-team/members/%s$" % world["users"][0]["id"]),
        ("DELETE", ORG_PATH + "/teams/uo-gone$"),
    ]
    return [dict(fault, method=method, path=path, times=1) for method, path in targets]


def _resource_play(emulator):
    users = emulator.world["users"]
    return play([
        task("Create branch uo-new", "branch", database="app", name="uo-new", parent_branch="main"),
        task("Create PostgreSQL branch uo-pg", "branch", database="pgapp", name="uo-pg", parent_branch="main",
             major_version="18"),
        task("Delete branch uo-gone", "branch", database="app", name="uo-gone", state="absent"),
        task("Create password uo-new " + REVEALS, "password", database="app", branch="main", name="uo-new",
             ttl=3600, role="reader"),
        task("Change the CIDRs of password uo-update", "password", database="app", branch="main",
             name="uo-update", cidrs=["10.1.0.0/16"]),
        task("Renew password uo-update " + REVEALS, "password", database="app", branch="main",
             name="uo-update", renew=True),
        task("Delete password uo-gone", "password", database="app", branch="main", name="uo-gone",
             state="absent"),
        task("Create team uo-new", "team", name="uo-new"),
        task("Change team uo-team", "team", team="uo-team", description="changed", members=[users[1]["id"]],
             purge_members=True),
        task("Delete team uo-gone", "team", team="uo-gone", state="absent"),
    ], defaults=module_defaults())


# every mode, each module's class run in this process (harness.direct); the execution paths are proven once per
# kind of write by test_each_kind_of_write_with_an_unknown_outcome_end_to_end
WRITE_CASES = sorted(MODES)


@pytest.mark.parametrize("mode", WRITE_CASES)
def test_each_write_with_an_unknown_outcome_leaves_one_resource_and_reports_the_truth(
        emulator, direct, figures, mode):
    world = emulator.world
    updated, gone = _setup(emulator)
    rules = _rules(mode, updated, gone, world)
    emulator.clear_requests()
    emulator.faults(*rules)
    run = direct.run([_resource_play(emulator)], emulator=emulator,
                     label="unknown outcomes %s" % mode)
    log = _faults_met(emulator, run, rules, figures)

    # Branches: the new one once, ready; the deleted one gone.
    branches = [b["name"] for b in emulator.list("/organizations/acme/databases/app/branches")]
    assert sorted(branches) == ["main", "uo-new"]
    created = run.result("Create branch uo-new").result["branch"]
    assert created["name"] == "uo-new" and created["ready"] is True
    # On PostgreSQL: once, of the major version asked for (a create-only setting, so a second create would
    # not have been noticed by comparing).
    pg_branches = emulator.list("/organizations/acme/databases/pgapp/branches")
    assert sorted(b["name"] for b in pg_branches) == ["main", "uo-pg"]
    assert [b["major_version"] for b in pg_branches if b["name"] == "uo-pg"] == ["18"]
    created = run.result("Create PostgreSQL branch uo-pg").result["branch"]
    assert (created["name"], created["kind"], created["ready"]) == ("uo-pg", "postgresql", True)

    # Passwords: exactly one uo-new, whose returned secret and id are the ones that exist.
    passwords = emulator.list("/organizations/acme/databases/app/branches/main/passwords")
    named = dict((name, [p for p in passwords if p["name"] == name]) for name in ("uo-new", "uo-update", "uo-gone"))
    figures["duplicates"] += sum(max(0, len(found) - 1) for found in named.values())
    assert [len(named[name]) for name in ("uo-new", "uo-update", "uo-gone")] == [1, 1, 0]
    new = run.result("Create password uo-new " + REVEALS).result
    assert new["password"]["id"] == named["uo-new"][0]["id"]
    assert named["uo-update"][0]["id"] == updated["id"] and named["uo-update"][0]["cidrs"] == ["10.1.0.0/16"]
    renewed = run.result("Renew password uo-update " + REVEALS).result
    assert renewed["password"]["plain_text"] not in (None, updated["plain_text"])
    # A create whose answer was lost made a password whose secret nobody has, but another run sharing the credential
    # could have made it: it is returned without a secret, never deleted, and a warning names it and the remedy.
    creates = [e for e in log if e["method"] == "POST" and e["path"].endswith("/main/passwords")]
    deletes = [e for e in log if e["method"] == "DELETE" and "/main/passwords/" in e["path"]
               and not e["path"].endswith(gone["id"])]
    _taken_or_made(new, "password", "plain_text", "renew it (renew=true)", mode, creates, deletes)

    # Teams: uo-new once, uo-team changed, uo-gone gone.
    teams = dict((t["slug"], t) for t in emulator.list("/organizations/acme/teams"))
    assert "uo-gone" not in teams and "uo-new" in teams
    assert [t["name"].lower() for t in teams.values()].count("uo-new") == 1
    assert teams["uo-team"]["description"] == "changed"
    members = emulator.list("/organizations/acme/teams/uo-team/members")
    assert [m["user"]["id"] for m in members] == [world["users"][1]["id"]]


# Each kind of write end to end, on both execution paths ----------------------------------------------

E2E_MODE = "committed-502"


@pytest.mark.parametrize("in_process", [True, False], ids=["in_process", "module"])
def test_each_kind_of_write_with_an_unknown_outcome_end_to_end(emulator, ansible, watch, figures, in_process):
    """Through ansible-playbook, once per kind of write, each applied and answered 502: a plain create, update and
    delete (a team) are read back and reported changed; a credential shown once (a password) is returned without
    its secret, with the warning that names it; a token grant fails with the sentence that says its tokens were
    lost. The modules' rules for every write and mode are proven in this process by the tests above."""
    emulator.api("POST", "/organizations/acme/teams", dict(name="uo-team"))
    emulator.api("POST", "/organizations/acme/teams", dict(name="uo-gone"))
    tokens = emulator.tokens()
    watch.learn(tokens["access_token"], tokens["refresh_token"])
    fault = MODES[E2E_MODE]
    rules = [dict(fault, method=method, path=path, times=1) for method, path in (
        ("POST", ORG_PATH + "/teams$"), ("PATCH", ORG_PATH + "/teams/uo-team$"), ("DELETE", ORG_PATH + "/teams/uo-gone$"),
        ("POST", DB_PATH + "/branches/main/passwords$"), ("POST", "^/oauth/token$"))]
    emulator.clear_requests()
    emulator.faults(*rules)
    grant = "Refresh at the token endpoint " + REVEALS
    run = ansible.run([play([
        task("Create team uo-new", "team", name="uo-new"),
        task("Change team uo-team", "team", team="uo-team", description="changed"),
        task("Delete team uo-gone", "team", team="uo-gone", state="absent"),
        task("Create password uo-new " + REVEALS, "password", database="app", branch="main", name="uo-new",
             ttl=3600, role="reader"),
        dict(task(grant, "token", grant_type="refresh_token", refresh_token="{{ refresh_token }}"),
             ignore_errors=True),
    ], defaults=module_defaults())], dict(refresh_token=tokens["refresh_token"]), emulator=emulator,
        in_process=in_process, label="each kind of write, %s, in_process=%s" % (E2E_MODE, in_process))
    log = emulator.requests()
    fired = [rule for rule in emulator.control("GET", "/faults")["rules"] if rule["remaining"] == 0]
    emulator.clear_faults()
    figures["faults_injected"] += len([entry for entry in log if entry["fault"]])
    figures["writes_with_unknown_outcome"] += len(fired)
    assert len(fired) == len(rules), "every write met its fault"
    assert run.rc == 0 and run.recap["localhost"]["ignored"] == 1, run.log_path
    writes = [step for step in run.tasks if step.name != grant]
    assert [step.name for step in run.failures()] == [grant] and all(step.changed for step in writes), run.log_path
    figures["faults_survived"] += len(writes)
    figures["faults_reported"] += 1

    teams = dict((t["slug"], t) for t in emulator.list("/organizations/acme/teams"))
    assert "uo-gone" not in teams and teams["uo-team"]["description"] == "changed"
    assert [t["name"] for t in teams.values()].count("uo-new") == 1
    passwords = [p for p in emulator.list("/organizations/acme/databases/app/branches/main/passwords")
                 if p["name"] == "uo-new"]
    created = run.result("Create password uo-new " + REVEALS).result
    creates = [e for e in log if e["method"] == "POST" and e["path"].endswith("/main/passwords")]
    assert [p["id"] for p in passwords] == [created["password"]["id"]]
    _taken_or_made(created, "password", "plain_text", "renew it (renew=true)", E2E_MODE, creates, [])
    refused = run.result(grant).result
    assert "answer" in refused["msg"] and "lost" in refused["msg"] and "token" not in refused, refused


# Schema changes ---------------------------------------------------------------------------------


def _schema_setup(emulator):
    """uo-dr carries a new table for a deploy request; uo-prod is a development branch to promote; uo-held's gated
    deploy waits for its cutover (to cancel) and uo-failed's deploy ended in complete_error (to complete). A lock holds
    every cutover until it is forced (cutover_blocked). Each step of a check or a deploy takes 0.3 seconds."""
    emulator.settings(deploy_check_delay=0.3, deploy_step_delay=0.3)
    base = "/organizations/acme/databases/app/branches"
    requests = "/organizations/acme/databases/app/deploy-requests"
    for name in ("uo-dr", "uo-prod", "uo-held", "uo-failed"):
        emulator.api("POST", base, dict(name=name, parent_branch="main"))
    emulator.advance(5)  # the branches are ready
    for branch, table in (("uo-dr", "orders"), ("uo-held", "held"), ("uo-failed", "ledger")):
        emulator.ddl("app", branch, ["CREATE TABLE %s (id bigint NOT NULL, PRIMARY KEY (id))" % table])
    held = emulator.api("POST", requests, dict(branch="uo-held", into_branch="main", auto_cutover=False))
    failed = emulator.api("POST", requests, dict(branch="uo-failed", into_branch="main"))
    emulator.advance(5)  # checked: ready
    emulator.api("POST", requests + "/%d/deploy" % held["number"])
    emulator.settings(deploy_fail_state="complete_error")  # taken when a deploy is queued
    emulator.api("POST", requests + "/%d/deploy" % failed["number"])
    emulator.settings(deploy_fail_state=None, cutover_blocked=True)
    emulator.advance(5)  # uo-held waits in pending_cutover, uo-failed's deploy has failed
    states = [emulator.api("GET", requests + "/%d" % r["number"])["deployment_state"] for r in (held, failed)]
    assert states == ["pending_cutover", "complete_error"], states


SCHEMA_WRITES = [
    ("POST", DB_PATH + "/deploy-requests$"),
    ("POST", DB_PATH + "/deploy-requests/[0-9]+/reviews$"),
    ("POST", DB_PATH + "/deploy-requests/[0-9]+/deploy$"),
    ("POST", DB_PATH + "/deploy-requests/[0-9]+/skip-revert$"),
    ("PATCH", DB_PATH + "/deploy-requests/[0-9]+/throttler$"),
    ("POST", DB_PATH + "/deploy-requests/[0-9]+/force-cutover$"),
    ("POST", DB_PATH + "/deploy-requests/[0-9]+/cancel$"),
    ("POST", DB_PATH + "/deploy-requests/[0-9]+/complete-deploy$"),
    ("POST", DB_PATH + "/branches/uo-prod/promote$"),
    ("POST", DB_PATH + "/branches/uo-prod/safe-migrations$"),
    ("PATCH", DB_PATH + "/branches/uo-dr$"),
]


@pytest.mark.parametrize("mode", WRITE_CASES)
def test_each_schema_change_write_with_an_unknown_outcome_is_applied_once(emulator, direct, figures, mode):
    _schema_setup(emulator)
    rules = [dict(MODES[mode], method=method, path=path, times=1) for method, path in SCHEMA_WRITES]
    emulator.clear_requests()
    emulator.faults(*rules)
    number = "{{ opened.deploy_request.number }}"
    run = direct.run([play([
        task("Open the deploy request from uo-dr", "deploy_request", register="opened", database="app",
             branch="uo-dr", into_branch="main", notes="Adds orders", throttle_ratio=40),
        task("Approve it", "deploy_request_review", database="app", number=number),
        task("Deploy it, force the cutover the lock holds and skip the revert window", "deploy_request",
             database="app", number=number, state="deployed", force_cutover=True, revert_window="skip"),
        task("Promote uo-prod with safe migrations", "branch", database="app", name="uo-prod", production=True,
             safe_migrations=True),
        task("Protect uo-dr", "branch", database="app", name="uo-dr", deletion_protected=True),
        task("Cancel the deploy of uo-held", "deploy_request", database="app", branch="uo-held", state="cancelled"),
        task("Complete the errored deploy of uo-failed", "deploy_request", database="app", branch="uo-failed",
             state="deployed", complete_errored=True),
    ], defaults=module_defaults())], emulator=emulator,
        label="schema-change unknown outcomes %s" % mode)
    log = _faults_met(emulator, run, rules, figures)

    requests = emulator.list("/organizations/acme/databases/app/deploy-requests")
    figures["duplicates"] += max(0, len(requests) - 3)
    assert sorted((r["branch"], r["deployment_state"]) for r in requests) == [
        ("uo-dr", "complete"), ("uo-failed", "complete"), ("uo-held", "complete_cancel")]
    number = next(r["number"] for r in requests if r["branch"] == "uo-dr")
    deployed = run.result("Deploy it, force the cutover the lock holds and skip the revert window").result
    assert deployed["deploy_request"]["number"] == number
    assert deployed["deploy_request"]["deployment"]["force_cutover_requested_at"]
    throttler = emulator.api("GET", "/organizations/acme/databases/app/deploy-requests/%d/throttler" % number)
    assert [c["ratio"] for c in throttler["configurations"]] == [40]
    assert run.result("Cancel the deploy of uo-held").result["deploy_request"]["deployment_state"] == (
        "complete_cancel")
    assert run.result("Complete the errored deploy of uo-failed").result["deploy_request"]["deployment_state"] == (
        "complete")
    reviews = emulator.list("/organizations/acme/databases/app/deploy-requests/%d/reviews" % number)
    assert [review["state"] for review in reviews] == ["approved"]
    # A POST applied but unanswered is read back, never sent again; one lost before it arrived is sent again (a lost
    # safe-migrations POST as a PUT of the wanted value). (The PATCHes are idempotent: the client may send them again as
    # they are; the end state shows each applied.)
    sent = dict((path, len([e for e in log if e["method"] in (method, "PUT") and re.search(path, e["path"])]))
                for method, path in SCHEMA_WRITES if method == "POST")
    expected = 1 if mode.startswith("committed") else 2
    assert dict((path, count) for path, count in sent.items() if count != expected) == {}
    tables = [table["name"] for table in emulator.api(
        "GET", "/organizations/acme/databases/app/branches/main/schema")["data"]]
    assert "orders" in tables and "ledger" in tables and "held" not in tables
    branches = dict((b["name"], b) for b in emulator.list("/organizations/acme/databases/app/branches"))
    assert branches["uo-prod"]["production"] is True and branches["uo-prod"]["safe_migrations"] is True
    assert branches["uo-dr"]["deletion_protected"] is True


# Capacity changes (issue 33) ---------------------------------------------------------------------


CAPACITY_WRITES = [
    ("PATCH", DB_PATH + "/branches/main/cluster$"),
    ("PUT", DB_PATH + "/branches/main/resizes$"),
    ("PATCH", PG_DB_PATH + "/branches/main/changes$"),
]


@pytest.mark.parametrize("mode", WRITE_CASES)
def test_each_capacity_write_with_an_unknown_outcome_makes_one_request(emulator, direct, figures, mode):
    """A change whose answer was lost is found among the branch's requests (pending, or already done) and waited
    for; asked again it would update the pending one, never make a second, and the branch ends with it once."""
    emulator.settings(change_step_delay=0.3)
    rules = [dict(MODES[mode], method=method, path=path, times=1) for method, path in CAPACITY_WRITES]
    emulator.clear_requests()
    emulator.faults(*rules)
    run = direct.run([play([
        task("Resize main of app", "branch", database="app", name="main", cluster_size="PS_80"),
        task("Change the VTGates of main of app", "branch", database="app", name="main",
             vtgate=dict(size="VTG_10", count=2)),
        task("Give main of pgapp a replica and a parameter", "branch", database="pgapp", name="main", replicas=1,
             parameters=dict(pgconf=dict(work_mem=8192))),
    ], defaults=module_defaults())], emulator=emulator,
        label="capacity unknown outcomes %s" % mode)
    _faults_met(emulator, run, rules, figures)

    base = "/organizations/acme/databases/%s/branches/main/"
    changes = emulator.list(base % "app" + "changes")
    resizes = emulator.list(base % "app" + "resizes")
    pg_changes = emulator.list(base % "pgapp" + "changes")
    figures["duplicates"] += max(0, len(changes) - 1) + max(0, len(resizes) - 1) + max(0, len(pg_changes) - 1)
    assert [(c["state"], c["cluster_name"]) for c in changes] == [("completed", "PS_80")]
    assert [(r["state"], r["vtgate_size"], r["vtgate_count"]) for r in resizes] == [("completed", "VTG_10", 2)]
    assert [(c["state"], c["parameters"]) for c in pg_changes] == [("completed", dict(pgconf=dict(work_mem="8192")))]
    # the platform's completed change requests carry no replicas (the lean shapes): what the branch has
    assert emulator.control("GET", "/branches/acme/pgapp/main/capacity")["replicas"] == 1
    for name in ("Resize main of app", "Change the VTGates of main of app",
                 "Give main of pgapp a replica and a parameter"):
        assert [r["state"] for r in run.result(name).result["change_requests"]] in ([], ["completed"])


# PgBouncers (issue 34) ---------------------------------------------------------------------------

BOUNCERS_PATH = PG_DB_PATH + "/branches/main/bouncers"


@pytest.mark.parametrize("mode", WRITE_CASES)
def test_each_bouncer_write_with_an_unknown_outcome_is_applied_once(emulator, direct, figures, mode):
    """A bouncer's create, resize and delete whose answers were lost: one bouncer made, one resize request (found
    running or ended, and waited for), the deleted one gone; every task reports the change."""
    emulator.settings(change_step_delay=0.3)
    base = "/organizations/acme/databases/pgapp/branches/main/bouncers"
    for name in ("uo-resize", "uo-gone"):
        emulator.api("POST", base, dict(name=name))
    targets = [("POST", BOUNCERS_PATH + "$"), ("PATCH", BOUNCERS_PATH + "/uo-resize/resizes$"),
               ("DELETE", BOUNCERS_PATH + "/uo-gone$")]
    rules = [dict(MODES[mode], method=method, path=path, times=1) for method, path in targets]
    emulator.clear_requests()
    emulator.faults(*rules)
    where = dict(database="pgapp", branch="main")
    run = direct.run([play([
        task("Create bouncer uo-new", "postgres_bouncer", name="uo-new", size="PGB_10", target="replica", **where),
        task("Resize bouncer uo-resize", "postgres_bouncer", name="uo-resize", size="PGB_20",
             parameters=dict(default_pool_size=60), **where),
        task("Delete bouncer uo-gone", "postgres_bouncer", name="uo-gone", state="absent", **where),
    ], defaults=module_defaults())], emulator=emulator,
        label="bouncer unknown outcomes %s" % mode)
    _faults_met(emulator, run, rules, figures)

    bouncers = dict((b["name"], b) for b in emulator.list(base))
    assert sorted(bouncers) == ["uo-new", "uo-resize"]
    assert (bouncers["uo-new"]["sku"]["name"], bouncers["uo-new"]["target"]) == ("PGB_10", "replica")
    resizes = emulator.list(base + "/uo-resize/resizes")
    figures["duplicates"] += max(0, len(resizes) - 1)
    assert [(r["state"], r["sku"]["name"], r["parameters"]) for r in resizes] == [
        ("completed", "PGB_20", dict(pgbouncer=dict(default_pool_size="60")))]
    assert bouncers["uo-resize"]["sku"]["name"] == "PGB_20"
    assert run.result("Resize bouncer uo-resize").result["resize_request"]["state"] == "completed"


# Schema recommendations -------------------------------------------------------------------------

DISMISS = DB_PATH + "/schema-recommendations/1/dismiss$"


@pytest.mark.parametrize("mode", WRITE_CASES)
def test_a_dismissal_with_an_unknown_outcome_is_read_back_and_applied_once(
        emulator, direct, figures, mode):
    """A dismissal applied but unanswered is read back and found dismissed (a second ask, if the transport made one,
    is refused and read back too); one lost before it arrived is sent again. The recommendation ends dismissed with
    the task's reason, and the task reports the change."""
    rules = [dict(MODES[mode], method="POST", path=DISMISS, times=1)]
    emulator.clear_requests()
    emulator.faults(*rules)
    run = direct.run([play([
        task("Dismiss schema recommendation 1", "schema_recommendation", database="app", number=1,
             reason="uo: reports read users by id only"),
    ], defaults=module_defaults())], emulator=emulator,
        label="schema recommendation unknown outcomes %s" % mode)
    log = _faults_met(emulator, run, rules, figures)
    found = emulator.api("GET", "/organizations/acme/databases/app/schema-recommendations/1")
    assert found["state"] == "dismissed"
    assert emulator.control("GET", "/schema-recommendations/acme/app/1/dismissal")["reason"] == (
        "uo: reports read users by id only")
    assert run.result("Dismiss schema recommendation 1").result["schema_recommendation"]["state"] == "dismissed"
    sent = [e for e in log if e["method"] == "POST" and re.search(DISMISS, e["path"])]
    dismissed = [e for e in sent if e["status"] == 200]
    figures["duplicates"] += max(0, len(dismissed) - 1)
    # a 503 the transport may resend (its retries of a Retry-After), and that second ask is refused and read back
    assert len(dismissed) <= 1 and len(sent) in ({2} if mode == "dropped-before" else {1, 2} if mode.endswith("503")
                                                 else {1})


# Query-pattern reports (issue 47) ---------------------------------------------------------------------

REPORTS_PATH = DB_PATH + "/branches/main/query-patterns"


@pytest.mark.parametrize("mode", WRITE_CASES)
def test_each_query_pattern_report_write_with_an_unknown_outcome_is_applied_once(
        emulator, direct, figures, tmp_path, mode):
    """A report's create and delete whose answers were lost: one new report, the one downloaded (whole, 0600); the
    deleted one gone; both tasks report the change. A create applied but unanswered is found among the reports made in
    the time of the request (not one made before it), never sent again, and a warning names it; one lost before it
    arrived is sent again. A delete applied but unanswered is read back: gone is done."""
    base = "/organizations/acme/databases/app/branches/main/query-patterns"
    emulator.settings(report_delay=0)  # a report is completed when it is made
    report = emulator.api("POST", base)  # made seconds before the task's: never taken for it
    emulator.advance(5)
    dest = str(tmp_path / "query-patterns.csv.gz")
    rules = [dict(MODES[mode], method=method, path=path, times=1) for method, path in (
        ("POST", REPORTS_PATH + "$"), ("DELETE", REPORTS_PATH + "/%s$" % report["id"]))]
    emulator.clear_requests()
    emulator.faults(*rules)
    run = direct.run([play([
        task("Download a new query-pattern report of main", "query_pattern_report", database="app", branch="main",
             dest=dest),
        task("Delete a query-pattern report of main", "query_pattern_report", database="app", branch="main",
             id=report["id"], state="absent"),
    ], defaults=module_defaults())], emulator=emulator, label="query-pattern report unknown outcomes %s" % mode)
    log = _faults_met(emulator, run, rules, figures)

    reports = emulator.api("GET", base)["data"]
    made = run.result("Download a new query-pattern report of main").result
    figures["duplicates"] += max(0, len(reports) - 1)
    assert [r["id"] for r in reports] == [made["report"]["id"]] and made["downloaded"] is True
    with open(dest, "rb") as handle:
        assert handle.read(2) == b"\x1f\x8b"  # gzip
    assert os.stat(dest).st_mode & 0o777 == 0o600
    creates = [e for e in log if e["method"] == "POST" and e["path"].endswith("/main/query-patterns")]
    taken = [w for w in made.get("warnings") or [] if "report %r, made meanwhile, is taken" % reports[0]["id"] in w]
    assert (len(creates), len(taken)) == ((1, 1) if mode.startswith("committed") else (2, 0))
    assert run.result("Delete a query-pattern report of main").result["report"]["id"] == report["id"]


# Token grants -----------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_grant_whose_answer_was_lost_is_retried_once_and_reports_the_truth(emulator, direct, watch, figures, mode):
    world = emulator.world
    app = world["oauth_application"]
    tokens = emulator.tokens()
    watch.learn(tokens["access_token"], tokens["refresh_token"])
    code = emulator.code()
    watch.learn(code)
    emulator.clear_requests()
    fault = MODES[mode]
    emulator.faults(dict(fault, method="POST", path="^/oauth/token$", times=1),
                    dict(fault, method="POST", path="/oauth-applications/%s/token$" % app["id"], times=1))
    tasks = [
        dict(task("Refresh at the token endpoint " + REVEALS, "token", grant_type="refresh_token",
                  refresh_token="{{ refresh_token }}"), ignore_errors=True),
        dict(task("Exchange a code at the application endpoint " + REVEALS, "token", grant_type="authorization_code",
                  code="{{ code }}", redirect_uri=app["redirect_uri"], application_id=app["id"], organization="acme",
                  service_token_id="{{ world.service_token.id }}", service_token="{{ world.service_token.token }}",
                  api_url="{{ api_url }}"), ignore_errors=True),
    ]
    run = direct.run([play(tasks, defaults=module_defaults())], dict(refresh_token=tokens["refresh_token"], code=code),
                     emulator=emulator, label="lost grant %s" % mode)
    log = emulator.requests()
    emulator.control("DELETE", "/faults")
    figures["faults_injected"] += len([entry for entry in log if entry["fault"]])
    figures["writes_with_unknown_outcome"] += 2
    grants = [e for e in log if e["method"] == "POST"]
    assert len(grants) == 4, "each grant is sent twice: once lost, once again"

    for name in ("Refresh at the token endpoint " + REVEALS, "Exchange a code at the application endpoint " + REVEALS):
        outcome = run.result(name)
        result = outcome.result
        if mode == "dropped-before":  # nothing was applied: the retry is the grant
            assert not outcome.failed and result["changed"]
            watch.learn_from(result)
            figures["faults_survived"] += 1
        else:
            figures["faults_reported"] += 1  # applied, answer lost: the tokens exist but nobody has them; the retry is refused
            assert outcome.failed and not result["changed"]
            assert "answer" in result["msg"] and "lost" in result["msg"], result["msg"]
            assert "authoriz" in result["msg"], result["msg"]
            assert "Traceback" not in result["msg"]


# Webhooks ---------------------------------------------------------------------------------------

HOOK = "http://127.0.0.1:9/uo"  # nothing listens there: deliveries fail quickly, and the delivery log shows them


def _webhook_setup(emulator):
    base = "/organizations/acme/databases/app/webhooks"
    kept = emulator.api("POST", base, dict(url=HOOK + "/kept", events=["branch.ready"]))
    gone = emulator.api("POST", base, dict(url=HOOK + "/gone"))
    return kept, gone


@pytest.mark.parametrize("mode", WRITE_CASES)
def test_each_webhook_write_with_an_unknown_outcome_is_applied_once(emulator, direct, watch, figures, mode):
    kept, gone = _webhook_setup(emulator)
    watch.learn(kept["secret"], gone["secret"])
    hooks = DB_PATH + "/webhooks"
    writes = [("POST", hooks + "$"), ("PATCH", hooks + "/%s$" % kept["id"]),
              ("POST", hooks + "/%s/test$" % kept["id"]), ("DELETE", hooks + "/%s$" % gone["id"])]
    rules = [dict(MODES[mode], method=method, path=path, times=1) for method, path in writes]
    emulator.clear_requests()
    emulator.faults(*rules)
    run = direct.run([play([
        task("Create webhook uo-new", "webhook", database="app", url=HOOK + "/new", events=["deploy_request.opened"]),
        task("Change webhook uo-kept", "webhook", database="app", url=HOOK + "/kept", enabled=False,
             events=["deploy_request.opened", "branch.ready"]),
        task("Test webhook uo-kept", "webhook", database="app", url=HOOK + "/kept", send_test=True),
        task("Delete webhook uo-gone", "webhook", database="app", url=HOOK + "/gone", state="absent"),
    ], defaults=module_defaults())], emulator=emulator,
        label="webhook unknown outcomes %s" % mode)
    log = _faults_met(emulator, run, rules, figures)
    found = emulator.list("/organizations/acme/databases/app/webhooks")
    watch.learn(*[hook["secret"] for hook in found])  # none may show in the output: no task asked for it
    figures["duplicates"] += max(0, len(found) - 2)
    assert sorted((h["url"], h["enabled"], sorted(h["events"])) for h in found) == [
        (HOOK + "/kept", False, ["branch.ready", "deploy_request.opened"]),
        (HOOK + "/new", True, ["deploy_request.opened"])]
    new = [hook for hook in found if hook["url"] == HOOK + "/new"][0]
    assert run.result("Create webhook uo-new").result["webhook"]["id"] == new["id"]
    # A create applied but unanswered is read back by URL, never sent again; one lost before it arrived is sent again.
    creates = [e for e in log if e["method"] == "POST" and re.search(hooks + "$", e["path"])]
    assert len(creates) == (1 if mode.startswith("committed") else 2)
    # A test cannot be read back: it is asked for again, and the platform's refusal (one test in 20 seconds) of the
    # second ask shows that the lost one was sent. One test delivery either way.
    tests = [e for e in log if e["method"] == "POST" and e["path"].endswith("/%s/test" % kept["id"])]
    assert len(tests) == 2
    deliveries = [d for d in emulator.control("GET", "/webhook-deliveries") if d["event"] == "webhook.test"]
    assert [d["url"] for d in deliveries] == [HOOK + "/kept"]


# Who may connect and the throttler: IP restrictions of a PostgreSQL database, a database's throttler -----------


@pytest.mark.parametrize("mode", WRITE_CASES)
def test_each_ip_restriction_and_throttler_write_with_an_unknown_outcome_is_applied_once(emulator, direct, figures,
                                                                                         mode):
    cidrs = "/organizations/acme/databases/pgapp/cidrs"
    kept = emulator.api("POST", cidrs, dict(role="uo-kept", cidrs=["10.0.0.0/8"]))
    gone = emulator.api("POST", cidrs, dict(role="uo-gone", cidrs=["10.0.0.0/8"]))
    writes = [("POST", PG_DB_PATH + "/cidrs$"), ("PATCH", PG_DB_PATH + "/cidrs/%s$" % kept["id"]),
              ("DELETE", PG_DB_PATH + "/cidrs/%s$" % gone["id"]), ("PATCH", DB_PATH + "/throttler$")]
    rules = [dict(MODES[mode], method=method, path=path, times=1) for method, path in writes]
    emulator.clear_requests()
    emulator.faults(*rules)
    run = direct.run([play([
        task("Restrict role uo-new", "postgres_ip_restriction", database="pgapp", role="uo-new",
             cidrs=["127.0.0.0/8"]),
        task("Change the networks of uo-kept", "postgres_ip_restriction", database="pgapp", role="uo-kept",
             cidrs=["10.0.0.0/8", "192.168.0.0/16"]),
        task("Lift the restriction of uo-gone", "postgres_ip_restriction", database="pgapp", role="uo-gone",
             state="absent"),
        task("Throttle the migrations of app", "database_throttler", database="app", ratio=30),
    ], defaults=module_defaults())], emulator=emulator,
        label="network unknown outcomes %s" % mode)
    log = _faults_met(emulator, run, rules, figures)
    found = emulator.list(cidrs)
    figures["duplicates"] += max(0, len(found) - 2)
    assert sorted((entry["role"], sorted(entry["cidrs"])) for entry in found) == [
        ("uo-kept", ["10.0.0.0/8", "192.168.0.0/16"]), ("uo-new", ["127.0.0.0/8"])]
    new = [entry for entry in found if entry["role"] == "uo-new"][0]
    assert run.result("Restrict role uo-new").result["ip_restriction"]["id"] == new["id"]
    # A create applied but unanswered is read back by role and schema, never sent again; one lost before it arrived
    # is sent again.
    creates = [e for e in log if e["method"] == "POST" and e["path"].endswith("/cidrs")]
    assert len(creates) == (1 if mode.startswith("committed") else 2)
    throttler = emulator.api("GET", "/organizations/acme/databases/app/throttler")
    assert throttler["configurations"] == [dict(keyspace_name="app", ratio=30)]
    assert run.result("Throttle the migrations of app").result["throttler"]["configurations"] == \
        throttler["configurations"]


# Access: service tokens and organization members ------------------------------------------------


def _access_setup(emulator):
    """A token whose accesses the playbook changes, one it deletes; the members it changes and removes."""
    tokens = "/organizations/acme/service-tokens"
    updated = emulator.api("POST", tokens, dict(name="uo-update"))
    emulator.api("POST", "%s/%s/access" % (tokens, updated["id"]), dict(database="app",
                                                                        access=["read_branch", "delete_branch"]))
    gone = emulator.api("POST", tokens, dict(name="uo-gone"))
    users = emulator.world["users"]
    return updated, gone, users[3], users[4]


def _oauth_grant(emulator, watch):
    """A token the seeded OAuth application holds to the organization, granted outside Ansible: (its record's id, its
    access token). The platform's reads of the token carry its secrets: the watch knows them."""
    app = "/organizations/acme/oauth-applications/%s/tokens" % emulator.world["oauth_application"]["id"]
    held = set(t["id"] for t in emulator.list(app))
    granted = emulator.tokens()
    watch.learn(granted["access_token"], granted["refresh_token"])
    made = [t["id"] for t in emulator.list(app) if t["id"] not in held]
    assert len(made) == 1, made
    return made[0], granted["access_token"]


@pytest.mark.parametrize("mode", WRITE_CASES)
def test_each_access_write_with_an_unknown_outcome_leaves_one_token_and_reports_the_truth(
        emulator, direct, watch, figures, mode):
    updated, gone, promoted, removed = _access_setup(emulator)
    watch.learn(updated["token"], gone["token"])
    app_id = emulator.world["oauth_application"]["id"]
    revoked, access_token = _oauth_grant(emulator, watch)
    rules = [dict(MODES[mode], method=method, path=path, times=1) for method, path in (
        ("POST", ORG_PATH + "/service-tokens$"),
        ("POST", ORG_PATH + "/service-tokens/%s/access$" % updated["id"]),
        ("DELETE", ORG_PATH + "/service-tokens/%s/access$" % updated["id"]),
        ("DELETE", ORG_PATH + "/service-tokens/%s$" % gone["id"]),
        ("PATCH", ORG_PATH + "/members/%s$" % promoted["id"]),
        ("DELETE", ORG_PATH + "/members/%s$" % removed["id"]),
        ("DELETE", ORG_PATH + "/oauth-applications/%s/tokens/%s$" % (app_id, revoked)),
    )]
    emulator.clear_requests()
    emulator.faults(*rules)
    run = direct.run([play([
        task("Create service token uo-new " + REVEALS, "service_token", name="uo-new",
             accesses=[dict(database="app", access=["read_branch"])]),
        task("Change the accesses of uo-update", "service_token", name="uo-update", purge_accesses=True,
             accesses=[dict(database="app", access=["read_branch", "create_branch"])]),
        task("Delete service token uo-gone", "service_token", name="uo-gone", state="absent"),
        task("Make a member an administrator", "organization_member", member=promoted["email"], role="admin"),
        task("Remove a member", "organization_member", member=removed["email"], state="absent"),
        task("Revoke an OAuth token", "oauth_application_token", application_id=app_id, id=revoked,
             state="absent"),
    ], defaults=module_defaults())], emulator=emulator,
        label="access unknown outcomes %s" % mode)
    log = _faults_met(emulator, run, rules, figures)

    # Tokens: exactly one uo-new, the one the task returned; a create whose answer was lost made a token nobody holds
    # the secret of, which is returned without it (never deleted: another run could share the credential).
    tokens = emulator.list("/organizations/acme/service-tokens")
    named = dict((name, [t for t in tokens if t["name"] == name]) for name in ("uo-new", "uo-update", "uo-gone"))
    figures["duplicates"] += sum(max(0, len(found) - 1) for found in named.values())
    assert [len(named[name]) for name in ("uo-new", "uo-update", "uo-gone")] == [1, 1, 0]
    result = run.result("Create service token uo-new " + REVEALS).result
    new = result["service_token"]
    assert new["id"] == named["uo-new"][0]["id"]
    assert new["accesses"] == [dict(database="app", access=["read_branch"])]
    creates = [e for e in log if e["method"] == "POST" and e["path"].endswith("/service-tokens")]
    deletes = [e for e in log if e["method"] == "DELETE" and re.search("/service-tokens/[^/]+$", e["path"])
               and not e["path"].endswith(gone["id"])]
    _taken_or_made(result, "service_token", "token", "delete it (state=absent with its id) and run the task again",
                   mode, creates, deletes)
    assert sorted(a["access"] for a in named["uo-update"][0]["service_token_accesses"]) == [
        "create_branch", "read_branch"]

    # Members: promoted once, removed once.
    members = dict((m["user"]["id"], m["role"]) for m in emulator.list("/organizations/acme/members"))
    assert members[promoted["id"]] == "admin" and removed["id"] not in members

    # The OAuth token: revoked, the task returns it (without its secrets: the watch), its access token refused.
    assert revoked not in [t["id"] for t in emulator.list(
        "/organizations/acme/oauth-applications/%s/tokens" % app_id)]
    assert run.result("Revoke an OAuth token").result["oauth_token"]["id"] == revoked
    with pytest.raises(HarnessError, match="answered 401"):
        emulator.call("GET", emulator.api_url + "/organizations", headers={"Authorization": "Bearer " + access_token})


# The organization's settings -------------------------------------------------------------------------


@pytest.mark.parametrize("mode", WRITE_CASES)
def test_an_organization_change_with_an_unknown_outcome_is_reported_as_it_is(emulator, direct, figures, mode):
    """The settings end as asked and the task reports them; the audit log shows the change (a resend of the same
    PATCH by the transport is the same change); the same task again sends no write."""
    rules = [dict(MODES[mode], method="PATCH", path=ORG_PATH + "$", times=1)]
    wanted = dict(billing_email="uo@acme.test", invoice_budget_amount=700, idp_managed_roles=True)
    change = task("Change the organization's settings", "organization", **wanted)
    emulator.clear_requests()
    emulator.faults(*rules)
    run = direct.run([play([change], defaults=module_defaults())], emulator=emulator,
                     label="organization unknown outcomes %s" % mode)
    log = _faults_met(emulator, run, rules, figures)
    found = emulator.api("GET", "/organizations/acme")
    assert (found["billing_email"], found["invoice_budget_amount"], found["idp_managed_roles"]) == (
        "uo@acme.test", "700", True)
    reported = run.result("Change the organization's settings").result["organization"]
    assert (reported["billing_email"], reported["invoice_budget_amount"], reported["idp_managed_roles"]) == (
        "uo@acme.test", "700", True)
    updates = [e for e in emulator.api("GET", "/organizations/acme/audit-log")["data"]
               if e["audit_action"] == "organization.updated"]
    patches = [e for e in log if e["method"] == "PATCH"]
    assert 1 <= len(updates) <= len(patches) and {e["target_display_name"] for e in updates} == {"acme"}

    emulator.clear_requests()
    again = direct.run([play([change], defaults=module_defaults())], emulator=emulator,
                       label="organization again %s" % mode).without_failures()
    assert not again.tasks[0].changed and [e for e in emulator.requests() if e["method"] != "GET"] == []


# Postgres roles -------------------------------------------------------------------------------------

PG_PATH = ORG_PATH + "/databases/pgapp/branches/main/roles"


def _role_connection(role):
    """The connection details of a role the API answered with its secret."""
    return dict(kind="postgresql", host=role["access_host_url"], username=role["username"], password=role["password"],
                database=role["database_name"])


def _role_setup(emulator):
    base = "/organizations/acme/databases/pgapp/branches/main/roles"
    roles = dict((name, emulator.api("POST", base, dict(name=name, **body))) for name, body in (
        ("uo-update", dict(ttl=3600)), ("uo-reset", {}), ("uo-gone", dict(inherited_roles=["postgres"])),
        ("uo-heir", {}), ("uo-hand", dict(inherited_roles=["postgres"]))))
    # tables the role to delete and the role to reassign make through their own connections: uo-heir owns them after
    emulator.login(_role_connection(roles["uo-gone"]), "CREATE TABLE made_by_gone (id bigint PRIMARY KEY)")
    emulator.login(_role_connection(roles["uo-hand"]), "CREATE TABLE made_by_hand (id bigint PRIMARY KEY)")
    return roles


def _role_play(roles):
    where = dict(database="pgapp", branch="main")
    return play([
        task("Create role uo-new " + REVEALS, "postgres_role", name="uo-new", inherited_roles=["pg_read_all_data"],
             **where),
        task("Rename role uo-update", "postgres_role", id=roles["uo-update"]["id"], name="uo-renamed", **where),
        task("Renew role uo-renamed " + REVEALS, "postgres_role", name="uo-renamed", renew=True, **where),
        task("Reset role uo-reset " + REVEALS, "postgres_role", name="uo-reset", reset=True, **where),
        task("Delete role uo-gone", "postgres_role", name="uo-gone", state="absent",
             successor=roles["uo-heir"]["username"], **where),
        task("Hand the objects of uo-hand to uo-heir", "postgres_role", name="uo-hand",
             reassign_objects_to=roles["uo-heir"]["username"], **where),
    ], defaults=module_defaults())


@pytest.mark.parametrize("mode", WRITE_CASES)
def test_each_role_write_with_an_unknown_outcome_leaves_one_role_and_a_secret_that_works(
        emulator, direct, figures, mode):
    roles = _role_setup(emulator)
    targets = [("POST", PG_PATH + "$"), ("PATCH", PG_PATH + "/%s$" % roles["uo-update"]["id"]),
               ("POST", PG_PATH + "/%s/renew$" % roles["uo-update"]["id"]),
               ("POST", PG_PATH + "/%s/reset$" % roles["uo-reset"]["id"]),
               ("DELETE", PG_PATH + "/%s$" % roles["uo-gone"]["id"]),
               ("POST", PG_PATH + "/%s/reassign$" % roles["uo-hand"]["id"])]
    rules = [dict(MODES[mode], method=method, path=path, times=1) for method, path in targets]
    emulator.clear_requests()
    emulator.faults(*rules)
    run = direct.run([_role_play(roles)], emulator=emulator,
                     label="role unknown outcomes %s" % mode)
    log = _faults_met(emulator, run, rules, figures)
    listed = emulator.list("/organizations/acme/databases/pgapp/branches/main/roles")
    names = [r["name"] for r in listed]
    figures["duplicates"] += max(0, names.count("uo-new") - 1)
    assert sorted(names) == ["postgres", "uo-hand", "uo-heir", "uo-new", "uo-renamed", "uo-reset"]
    # Every secret a task returned logs in: a lost renewal or reset was sent again (the answer held the only copy of
    # the secret); the lost create's role is returned without its secret, never deleted (see _taken_or_made).
    new = run.result("Create role uo-new " + REVEALS).result
    assert new["role"]["id"] == next(r["id"] for r in listed if r["name"] == "uo-new")
    made = [] if mode.startswith("committed") else ["Create role uo-new"]
    for name in made + ["Renew role uo-renamed", "Reset role uo-reset"]:
        connection = run.result(name + " " + REVEALS).result["connection"]
        assert emulator.login(connection, "SELECT current_user") == [[(connection["username"],)]]
    reset = run.result("Reset role uo-reset " + REVEALS).result["connection"]["password"]
    assert reset != roles["uo-reset"]["password"]
    creates = [e for e in log if e["method"] == "POST" and e["path"].endswith("/pgapp/branches/main/roles")]
    deletes = [e for e in log if e["method"] == "DELETE" and not e["path"].endswith(roles["uo-gone"]["id"])]
    _taken_or_made(new, "role", "password", "reset it (reset=true)", mode, creates, deletes)
    owner = "SELECT tableowner FROM pg_tables WHERE tablename IN ('made_by_gone', 'made_by_hand')"
    assert emulator.login(_role_connection(roles["uo-heir"]), owner) == [[(roles["uo-heir"]["username"],)] * 2]
    # A reassignment cannot be read back (the API does not tell what a role owns): it is sent again after a lost answer,
    # and the second hands over nothing the first did not; the role is kept.
    reassigns = [e for e in log if e["method"] == "POST" and e["path"].endswith("/reassign")]
    assert len(reassigns) == 2


# A create lost before it was applied, while another client made the same credential ---------------------------------

HELD = 2  # seconds the emulator holds the lost create before it drops the connection: the other client creates then
STRANGER_CASES = dict(
    password=dict(path=DB_PATH + "/branches/main/passwords$", list="/databases/app/branches/main/passwords",
                  args=dict(database="app", branch="main", role="reader", ttl=3600), body=dict(role="reader", ttl=3600),
                  key="password", secret="plain_text", remedy="renew it (renew=true)",
                  connection=lambda made: dict(kind="mysql", host=made["access_host_url"], username=made["username"],
                                               password=made["plain_text"], database="app")),
    service_token=dict(path=ORG_PATH + "/service-tokens$", list="/service-tokens", args={}, body={},
                       key="service_token", secret="token",
                       remedy="delete it (state=absent with its id) and run the task again", connection=None),
    postgres_role=dict(path=PG_PATH + "$", list="/databases/pgapp/branches/main/roles",
                       args=dict(database="pgapp", branch="main", inherited_roles=["pg_read_all_data"]),
                       body=dict(inherited_roles=["pg_read_all_data"]), key="role", secret="password",
                       remedy="reset it (reset=true)", connection=_role_connection),
)


def _another_client(emulator):
    """Another member of the organization, signed in through the OAuth application: another credential and actor."""
    world = emulator.world
    app, user = world["oauth_application"], world["users"][0]
    code = emulator.control("POST", "/oauth/authorization-codes", dict(
        client_id=app["client_id"], redirect_uri=app["redirect_uri"], user_id=user["id"]))["code"]
    tokens = emulator.call("POST", emulator.url + "/oauth/token", form=dict(
        grant_type="authorization_code", code=code, redirect_uri=app["redirect_uri"], client_id=app["client_id"],
        client_secret=app["client_secret"]))
    return user["id"], "Bearer " + tokens["access_token"], tokens["access_token"]


def _the_same_credential(emulator):
    """Another pipeline that shares the task's service token: the same credential and actor (the user it acts for)."""
    token = emulator.world["service_token"]
    return emulator.api("GET", "/user")["id"], "%s:%s" % (token["id"], token["token"]), token["token"]


def _when_requested(emulator, method, path, act):
    """A thread that runs act() once the request log shows a request of method and path (held by its fault's delay);
    its answer (or its exception) lands in the list returned."""
    outcome = []

    def wait_then_act():
        deadline = time.monotonic() + 60
        try:
            while time.monotonic() < deadline:
                if any(e["method"] == method and re.search(path, e["path"]) for e in emulator.requests()):
                    outcome.append(act())
                    return
                time.sleep(0.05)
            outcome.append(AssertionError("the request %s %s never came" % (method, path)))
        except (HarnessError, OSError) as error:  # the test reports it
            outcome.append(error)
    thread = threading.Thread(target=wait_then_act, daemon=True)
    thread.start()
    return thread, outcome


# the case (two pipelines, one service token), and another credential
STRANGER_RUNS = [pytest.param(kind, same, id="%s-%s" % (kind, "same-credential" if same else "another-credential"))
                 for kind in sorted(STRANGER_CASES) for same in (True, False)]


@pytest.mark.parametrize("kind,same", STRANGER_RUNS)
def test_a_create_lost_before_it_was_applied_never_deletes_another_runs_same_credential(
        emulator, direct, watch, kind, same):
    """Whether the other run used the task's own credential or another, nothing tells its record from one the lost
    create made: the task takes it without its secret, names it in a warning with the remedy, and deletes nothing, so
    the other run's application keeps its credential."""
    case = STRANGER_CASES[kind]
    actor, authorization, secret = (_the_same_credential if same else _another_client)(emulator)
    watch.learn(secret)
    listed = "/organizations/acme" + case["list"]
    emulator.clear_requests()
    emulator.faults(dict(MODES["dropped-before"], delay=HELD, method="POST", path=case["path"], times=1))
    thread, outcome = _when_requested(emulator, "POST", case["path"], lambda: emulator.call(
        "POST", emulator.api_url + listed, dict(case["body"], name="uo-lost"),
        headers={"Authorization": authorization}))
    title = "Create %s uo-lost %s" % (kind, REVEALS)
    run = direct.run([play([task(title, kind, name="uo-lost", **case["args"])], defaults=module_defaults())],
                     emulator=emulator, label="lost create and a stranger %s" % kind)
    thread.join(60)
    assert len(outcome) == 1 and isinstance(outcome[0], dict), outcome
    stranger = outcome[0]
    watch.learn(stranger[case["secret"]])  # the other run's secret shows nowhere: not in the result, not in a warning
    run.without_failures()
    emulator.clear_faults()

    # The other run's credential is the only one of the name, and the task returns it without a secret.
    found = [r for r in emulator.list(listed) if r["name"] == "uo-lost"]
    step = run.result(title)
    taken = step.result[case["key"]]
    assert [r["id"] for r in found] == [stranger["id"]] and taken["id"] == stranger["id"]
    assert case["secret"] not in taken and "connection" not in step.result and step.changed is True
    assert (stranger.get("actor") or {}).get("id", stranger.get("actor_id")) == actor
    if case["connection"]:  # the other run's application still connects with the secret it holds
        connection = case["connection"](dict(found[0], **stranger))  # a lean create answer lacks the user name
        assert emulator.login(connection, "SELECT 1") == [[(1,)]]
    # ...a warning names it and the remedy, without a secret...
    warnings = [w for w in step.result.get("warnings") or [] if stranger["id"] in w]
    assert len(warnings) == 1 and "returns it without its secret" in warnings[0] and case["remedy"] in warnings[0]
    assert stranger[case["secret"]] not in warnings[0]
    # ...and nothing was deleted or created again: the lost create and the other run's.
    log = emulator.requests()
    assert len([e for e in log if e["method"] == "POST" and re.search(case["path"], e["path"])]) == 2
    assert not [e for e in log if e["method"] == "DELETE"]


# Keyspaces and their VSchema (issue 46) ------------------------------------------------------------

KEYSPACES_PATH = DB_PATH + "/branches/main/keyspaces"
KEYSPACE_WRITES = [("POST", KEYSPACES_PATH + "$"), ("PUT", KEYSPACES_PATH + "/uo-resize/resizes$"),
                   ("DELETE", KEYSPACES_PATH + "/uo-gone$"), ("PATCH", KEYSPACES_PATH + "/uo-resize/vschema$")]


@pytest.mark.parametrize("mode", WRITE_CASES)
def test_each_keyspace_write_with_an_unknown_outcome_is_applied_once(emulator, direct, figures, mode):
    """A keyspace's create, resize and delete, and a VSchema, whose answers were lost: one keyspace made, one resize
    request (found running or ended, and waited for), the deleted one gone, the VSchema set; every task reports the
    change."""
    base = "/organizations/acme/databases/app/branches/main/keyspaces"
    emulator.settings(change_step_delay=0, ready_delay=0)
    for name in ("uo-resize", "uo-gone"):
        emulator.api("POST", base, dict(name=name, cluster_size="PS_10"))
    # a completed resize, so that the size is known in the lean shapes too (their records state none)
    emulator.api("PUT", base + "/uo-resize/resizes", dict(extra_replicas=1))
    emulator.settings(change_step_delay=0.3)
    rules = [dict(MODES[mode], method=method, path=path, times=1) for method, path in KEYSPACE_WRITES]
    emulator.clear_requests()
    emulator.faults(*rules)
    where = dict(database="app", branch="main")
    run = direct.run([play([
        task("Create keyspace uo-new", "keyspace", name="uo-new", shards=2, cluster_size="PS_10", **where),
        task("Resize keyspace uo-resize", "keyspace", name="uo-resize", cluster_size="PS_20", **where),
        task("Delete keyspace uo-gone", "keyspace", name="uo-gone", state="absent", **where),
        task("Route uo-resize explicitly", "vschema", keyspace="uo-resize",
             vschema=dict(require_explicit_routing=True), **where),
    ], defaults=module_defaults())], emulator=emulator, label="keyspace unknown outcomes %s" % mode)
    _faults_met(emulator, run, rules, figures)

    keyspaces = dict((k["name"], k) for k in emulator.list(base))
    assert sorted(keyspaces) == ["app", "uo-new", "uo-resize"] and keyspaces["uo-new"]["shards"] == 2
    resizes = [r for r in emulator.list(base + "/uo-resize/resizes") if r["cluster_name"] == "PS_20"]
    figures["duplicates"] += max(0, len(resizes) - 1)
    assert [r["state"] for r in resizes] == ["completed"]
    # none when the request had ended before the read-back found it (the keyspace has the size: applied)
    assert [r["state"] for r in run.result("Resize keyspace uo-resize").result["resize_requests"]] in (
        [], ["completed"])
    assert json.loads(emulator.api("GET", base + "/uo-resize/vschema")["raw"]) == dict(require_explicit_routing=True)


# MoveTables workflows (issue 46) ------------------------------------------------------------------

WORKFLOWS_PATH = DB_PATH + "/workflows"
WORKFLOW_WRITES = [("POST", WORKFLOWS_PATH + "$")] + [
    ("PATCH", WORKFLOWS_PATH + "/[0-9]+/%s$" % action)
    for action in ("verify-data", "switch-replicas", "switch-primaries", "cutover", "complete")]


@pytest.mark.parametrize("mode", WRITE_CASES)
def test_each_workflow_write_with_an_unknown_outcome_is_applied_once(emulator, direct, figures, mode):
    """Each action of the ladder whose answer was lost is read back (its state moved on), never counted twice: one
    workflow, each action once in the tasks' results, the moved rows in the target keyspace."""
    base = "/organizations/acme/databases/app"
    emulator.settings(ready_delay=0, workflow_copy_delay=0.3, workflow_step_delay=0.3)
    emulator.api("POST", base + "/branches/main/keyspaces", dict(name="uo-ks", shards=2, cluster_size="PS_10"))
    emulator.api("DELETE", base + "/branches/main/safe-migrations")  # so that the control API's DDL reaches main
    emulator.ddl("app", "main", ["CREATE TABLE uo_orders (id bigint NOT NULL PRIMARY KEY, total int)",
                                 "INSERT INTO uo_orders VALUES (1, 10), (2, 20), (3, 30)"])
    rules = [dict(MODES[mode], method=method, path=path, times=1) for method, path in WORKFLOW_WRITES]
    emulator.clear_requests()
    emulator.faults(*rules)
    run = direct.run([play([
        task("Move uo_orders", "workflow", database="app", name="uo-move", source_keyspace="app",
             target_keyspace="uo-ks", tables=["uo_orders"], phase="replicas_switched"),
        task("Complete uo-move", "workflow", database="app", name="uo-move", phase="completed"),
    ], defaults=module_defaults())], emulator=emulator, label="workflow unknown outcomes %s" % mode)
    log = _faults_met(emulator, run, rules, figures)

    workflows = emulator.list(base + "/workflows")
    figures["duplicates"] += max(0, len(workflows) - 1)
    assert [(w["name"], w["state"]) for w in workflows] == [("uo-move", "completed")]
    # a create applied but unanswered is found by its name, never sent again; one lost before it arrived is sent again
    posts = [e for e in log if e["method"] == "POST" and re.search(WORKFLOW_WRITES[0][1], e["path"])]
    assert len(posts) == (1 if mode.startswith("committed") else 2)
    # an action resent after a lost answer meets the platform's refusal (not allowed in the state it moved to), which
    # the module reads back: each action is the task's once
    assert run.result("Move uo_orders").result["actions"] == ["create", "verify-data", "switch-replicas"]
    assert run.result("Complete uo-move").result["actions"] == ["switch-primaries", "cutover", "complete"]
    passwords = base + "/branches/main/passwords"
    made = emulator.api("POST", passwords, dict(name="uo-count", role="readwriter"))
    password = dict(emulator.api("GET", passwords + "/" + made["id"]), **made)  # a lean create lacks the user name
    assert emulator.login(dict(host=password["access_host_url"], username=password["username"],
                               password=password["plain_text"], database="uo-ks"),
                          "SELECT COUNT(*) FROM uo_orders") == [[(3,)]]
