# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Concurrency: 20 forks at once, each ensuring its own branch and password; then 20 forks
ensuring the same team (with members) and the same branch, and once more.

What is true, and asserted: every task succeeds; nothing exists twice; each fork sends at
most one create of a resource, and exactly one create of each is applied. For the shared
team and branch, the forks that lose the race (the platform answers 422, the name is taken)
read what the winner made and continue from it: the winner reports changed, a loser reports
changed only if it still had to add a member, and no member is added twice. The second round
changes nothing and sends no write.

Password names are not unique, so the platform refuses no duplicate: forks ensuring the same
password each create one. Each then reads the passwords of that name again; the oldest stays, and
every other fork deletes the one it made and returns the oldest, without a secret and unchanged.
One password remains, the one fork that made it returns its secret, and a later run changes nothing.
"""

from __future__ import annotations

from collections import Counter

import pytest

from harness import FQCN, REVEALS, module_defaults, play

# The emulator answers this file as the real platform does when it is lean: bare {"data": [...]} lists,
# cluster_rate_name, "type" keys (conftest.response_shapes).
LEAN_SHAPES = True
FORKS = 20
HOSTS = tuple("fork%02d" % n for n in range(1, FORKS + 1))
OWN_BRANCH = "Ensure the fork's own branch"
OWN_PASSWORD = "Ensure the fork's own password"
SHARED_TEAM = "Ensure the shared team"
SHARED_BRANCH = "Ensure the shared branch"
SHARED_PASSWORD = "Ensure the shared password " + REVEALS
PASSWORD_FORKS = 8


def _writes(log, method, suffix):
    """(all, applied) requests of that method whose path ends with suffix."""
    sent = [e for e in log if e["method"] == method and e["path"].endswith(suffix)]
    return sent, [e for e in sent if e["status"] is not None and e["status"] < 300]


@pytest.fixture
def fast_branches(emulator):
    emulator.settings(ready_delay=0.5)
    return emulator


def test_20_forks_each_ensure_their_own_branch_and_password(fast_branches, ansible, figures):
    emulator = fast_branches
    tasks = [
        {"name": OWN_BRANCH,
         FQCN + "branch": dict(database="app", name="own-{{ inventory_hostname }}", parent_branch="main")},
        {"name": OWN_PASSWORD, "no_log": True,
         FQCN + "password": dict(database="app", branch="main", name="own-{{ inventory_hostname }}", role="reader")},
    ]
    run = ansible.run([play(tasks, hosts="all", defaults=module_defaults())], emulator=emulator, hosts=HOSTS,
                      forks=FORKS, label="20 forks, own resources")
    run.without_failures()
    assert all(task.changed for task in run.tasks) and len(run.tasks) == 2 * FORKS

    log = emulator.requests()
    branches = Counter(b["name"] for b in emulator.list("/organizations/acme/databases/app/branches"))
    passwords = Counter(p["name"] for p in emulator.list("/organizations/acme/databases/app/branches/main/passwords"))
    figures["duplicates"] += sum(n - 1 for n in list(branches.values()) + list(passwords.values()) if n > 1)
    assert sorted(name for name in branches if name.startswith("own-")) == ["own-" + host for host in HOSTS]
    assert sorted(name for name in passwords if name.startswith("own-")) == ["own-" + host for host in HOSTS]
    assert max(branches.values()) == max(passwords.values()) == 1
    # One write each: a create per fork and resource, nothing else.
    assert [e["method"] for e in log if e["method"] != "GET"] == ["POST"] * (2 * FORKS)


@pytest.mark.parametrize("in_process", [True, False], ids=["in_process", "module"])
def test_20_forks_ensure_the_same_team_and_branch(fast_branches, ansible, figures, in_process):
    emulator = fast_branches
    users = emulator.world["users"]
    tasks = [
        {"name": SHARED_TEAM,
         FQCN + "team": dict(name="Shared", description="One team for all forks",
                             members=[users[0]["id"], users[1]["email"]])},
        {"name": SHARED_BRANCH, FQCN + "branch": dict(database="app", name="shared", parent_branch="main")},
    ]
    playbook = [play(tasks, hosts="all", defaults=module_defaults())]
    run = ansible.run(playbook, emulator=emulator, hosts=HOSTS, forks=FORKS, in_process=in_process,
                      label="20 forks, shared resources, in_process=%s" % in_process)
    run.without_failures()
    assert len(run.tasks) == 2 * FORKS
    log = emulator.requests()

    teams = [t for t in emulator.list("/organizations/acme/teams") if t["name"].lower() == "shared"]
    branches = [b for b in emulator.list("/organizations/acme/databases/app/branches") if b["name"] == "shared"]
    figures["duplicates"] += max(0, len(teams) - 1) + max(0, len(branches) - 1)
    assert len(teams) == 1 and len(branches) == 1
    members = emulator.list("/organizations/acme/teams/%s/members" % teams[0]["slug"])
    assert sorted(m["user"]["id"] for m in members) == sorted([users[0]["id"], users[1]["id"]])

    team_creates, team_created = _writes(log, "POST", "/teams")
    member_adds, members_added = _writes(log, "POST", "/members")
    branch_creates, branch_created = _writes(log, "POST", "/branches")
    assert len(team_creates) <= FORKS and len(team_created) == 1
    assert len(member_adds) <= 2 * FORKS and len(members_added) == 2
    assert len(branch_creates) <= FORKS and len(branch_created) == 1
    assert [e for e in log if e["method"] in ("PATCH", "DELETE")] == []
    # The fork whose create was applied reports changed; so may a fork that added a member; no one else.
    assert [t.changed for t in run.results(SHARED_BRANCH)].count(True) == 1
    assert 1 <= [t.changed for t in run.results(SHARED_TEAM)].count(True) <= 3

    if not in_process:
        return  # the second round proves the modules' rules, the same on both paths
    emulator.clear_requests()
    again = ansible.run(playbook, emulator=emulator, hosts=HOSTS, forks=FORKS, in_process=in_process,
                        label="20 forks, shared resources again, in_process=%s" % in_process)
    again.without_failures()
    assert not any(task.changed for task in again.tasks)
    assert [e for e in emulator.requests() if e["method"] != "GET"] == []


@pytest.mark.parametrize("in_process", [True, False], ids=["in_process", "module"])
def test_forks_ensuring_the_same_password_leave_one(emulator, ansible, figures, in_process):
    """The module path starts the forks less at once, so some read the name while others delete their extra ones."""
    hosts = HOSTS[:PASSWORD_FORKS]
    tasks = [{"name": SHARED_PASSWORD,
              FQCN + "password": dict(database="app", branch="main", name="shared", role="reader", ttl=3600)}]
    playbook = [play(tasks, hosts="all", defaults=module_defaults())]
    run = ansible.run(playbook, emulator=emulator, hosts=hosts, forks=PASSWORD_FORKS, in_process=in_process,
                      label="%d forks, the same password, in_process=%s" % (PASSWORD_FORKS, in_process))
    run.without_failures()
    passwords = [p for p in emulator.list("/organizations/acme/databases/app/branches/main/passwords")
                 if p["name"] == "shared"]
    figures["duplicates"] += max(0, len(passwords) - 1)
    assert len(passwords) == 1, [p["id"] for p in passwords]
    results = [t.result for t in run.results(SHARED_PASSWORD)]
    assert len(results) == PASSWORD_FORKS
    assert set(r["password"]["id"] for r in results) == {passwords[0]["id"]}
    # The fork whose password stayed made it and holds its secret; the others report what a later run would.
    makers = [r for r in results if r["changed"]]
    assert len(makers) == 1 and makers[0]["connection"]["password"].startswith("pscale_pw_")
    assert all("connection" not in r and "plain_text" not in r["password"] for r in results if not r["changed"])
    log = emulator.requests()
    creates = [e for e in log if e["method"] == "POST" and e["path"].endswith("/main/passwords")]
    deletes = [e for e in log if e["method"] == "DELETE"]
    assert len(deletes) == len(creates) - 1  # each fork deletes at most the one it made

    emulator.clear_requests()
    again = ansible.run(playbook, emulator=emulator, hosts=hosts, forks=PASSWORD_FORKS, in_process=in_process,
                        label="%d forks, the same password again, in_process=%s" % (PASSWORD_FORKS, in_process))
    again.without_failures()
    assert not any(task.changed for task in again.tasks) and len(again.tasks) == PASSWORD_FORKS
    assert [e for e in emulator.requests() if e["method"] != "GET"] == []
