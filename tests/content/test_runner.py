# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Roles run through ansible-runner, as AWX runs a job, with the collection installed from the built tarball
(the fixture installed): every job event the runner keeps is searched for every secret the run handled.

AWX (and Automation Platform) hands ansible-runner a private data directory: the project's playbooks in
project/, the inventory in inventory/, the job's extra variables in env/extravars and the credentials'
environment variables in env/envvars; the collection is installed where ANSIBLE_COLLECTIONS_PATH points
(in an execution environment, the image). Each event of the run (a play or task start, a result, the
recap) is written to artifacts/<ident>/job_events/<n>-<uuid>.json, which AWX stores in its database and
shows to everyone who may read the job; the output goes to artifacts/<ident>/stdout. No secret may be
in either: a task that handles one has no_log, which the runner's event callback honours.

The secrets: the service token and the OAuth application's client secret (env/envvars), the
authorization code (env/extravars), the password's plain text and the OAuth access and refresh tokens
the run obtains (read back from the files the run wrote for its owner), and anything with the prefix
of a secret the platform issues (harness.secrets.ISSUED_SECRET).
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml

from harness import DB_COLLECTIONS_PATH
from harness.secrets import ISSUED_SECRET

RUNNER = os.path.join(os.path.dirname(sys.executable), "ansible-runner")

BRANCH_TASKS = os.path.join("ansible_collections", "planetscale", "cloud", "roles", "branch_environment", "tasks",
                            "password.yml")
ROLE_TASKS = os.path.join(os.path.dirname(BRANCH_TASKS), "role.yml")  # the PostgreSQL path
BRANCH_PLAYBOOK = """\
- name: A preview database branch with its own password (as an AWX job template would run it)
  hosts: localhost
  gather_facts: false
  roles:
    - role: planetscale.cloud.branch_environment
      vars:
        branch_environment_database: "{{ database }}"
        branch_environment_name: pr-7
        branch_environment_connection_file: "{{ output_dir }}/pr-7.json"
"""


def _read(path, missing):
    """A file's text (stripped), or missing when there is no such file."""
    if not os.path.exists(path):
        return missing
    with open(path, encoding="utf-8") as handle:
        return handle.read().strip()


class Job:
    """One ansible-runner job: its private data directory, status, rc, events and stdout."""

    def __init__(self, private, done):
        self.private = private
        self.output = done.stdout  # what ansible-runner itself said (with --quiet, only its own errors)
        artifacts = os.path.join(private, "artifacts", "job")
        self.status = _read(os.path.join(artifacts, "status"), "no status (ansible-runner exited %s)" % done.returncode)
        self.rc = int(_read(os.path.join(artifacts, "rc"), "-1"))
        self.events = []  # (file name, its text)
        for path in sorted(glob.glob(os.path.join(private, "artifacts", "job", "job_events", "*.json")),
                           key=lambda name: int(os.path.basename(name).split("-", 1)[0])):
            with open(path, encoding="utf-8") as handle:
                self.events.append((os.path.basename(path), handle.read()))
        self.parsed = [json.loads(text) for name, text in self.events]
        self.stdout = _read(os.path.join(artifacts, "stdout"), "")

    def ran_from(self, collections, role_name="branch_environment"):
        """Whether the tasks of the role that ran are those of the collection installed in collections."""
        role = os.path.join(collections, "ansible_collections", "planetscale", "cloud", "roles", role_name, "")
        paths = [event["event_data"].get("task_path") or "" for event in self.parsed
                 if "/roles/%s/" % role_name in event.get("event_data", {}).get("task_path", "")]
        return bool(paths) and all(path.startswith(role) for path in paths)

    def other_files_with(self, secrets):
        """The files of the private data directory, besides the events and stdout, that hold a secret: the
        job's input (env/), and artifacts/<ident>/command, where ansible-runner records the environment it
        was given (AWX removes the private data directory after the job; it stores only events and stdout)."""
        found = []
        for folder, unused_dirs, files in os.walk(self.private):
            for name in files:
                path = os.path.join(folder, name)
                relative = os.path.relpath(path, self.private)
                if relative.startswith(os.path.join("artifacts", "job", "job_events")) or \
                        relative == os.path.join("artifacts", "job", "stdout"):
                    continue
                with open(path, encoding="utf-8", errors="replace") as handle:
                    text = handle.read()
                if ISSUED_SECRET.search(text) or any(value in text for value in secrets):
                    found.append(relative)
        return sorted(found)

    def task_events(self, task):
        """The events of a task (by name) that carry a result."""
        return [event for event in self.parsed
                if event.get("event_data", {}).get("task") == task and "res" in event.get("event_data", {})]

    def __str__(self):
        return "ansible-runner job in %s: status %s, rc %s\n%s\n%s" % (
            self.private, self.status, self.rc, self.output[-2000:], self.stdout[-6000:])


def run_job(tmp_path, emulator, collections, playbook, extravars, cmdline=None, credentials=None):
    """Run project/<playbook name> through ansible-runner from a private data directory laid out as AWX
    lays it out; the emulator's credentials in env/envvars, as a credential type injects them (credentials: the
    variables to inject instead, as test_automation_platform.py renders the collection's credential types);
    cmdline: ansible-playbook's extra arguments in env/cmdline (AWX writes --diff there for "Show Changes")."""
    private = tmp_path / "job"
    for folder in ("project", "inventory", "env"):
        (private / folder).mkdir(parents=True, exist_ok=True)
    name, text = playbook
    (private / "project" / name).write_text(text)
    (private / "inventory" / "hosts").write_text(
        "localhost ansible_connection=local ansible_python_interpreter=%s\n" % sys.executable)
    (private / "env" / "extravars").write_text(yaml.safe_dump(extravars))
    world = emulator.world
    envvars = dict(PLANETSCALE_API_URL=emulator.api_url, PLANETSCALE_AUTH_URL=emulator.auth_url,
                   PLANETSCALE_ORG=world["organization"],
                   PLANETSCALE_SERVICE_TOKEN_ID=world["service_token"]["id"],
                   PLANETSCALE_SERVICE_TOKEN=world["service_token"]["token"],
                   PLANETSCALE_CLIENT_ID=world["oauth_application"]["client_id"],
                   PLANETSCALE_CLIENT_SECRET=world["oauth_application"]["client_secret"])
    if credentials is not None:
        envvars = dict(credentials)
    envvars.update(
        # the execution environment's collections: this one, and the database modules an image would hold
        ANSIBLE_COLLECTIONS_PATH=os.pathsep.join((collections, DB_COLLECTIONS_PATH)),
        ANSIBLE_COLLECTIONS_SCAN_SYS_PATH="false",
        ANSIBLE_HOME=str(tmp_path / "ansible-home"), ANSIBLE_LOCAL_TEMP=str(tmp_path / "local-tmp"),
        ANSIBLE_REMOTE_TEMP=str(tmp_path / "remote-tmp"), ANSIBLE_RETRY_FILES_ENABLED="false",
        ANSIBLE_LOCALHOST_WARNING="false")
    (private / "env" / "envvars").write_text(yaml.safe_dump(envvars))
    (private / "env" / "settings").write_text(yaml.safe_dump(dict(job_timeout=600, idle_timeout=300)))
    if cmdline:
        (private / "env" / "cmdline").write_text(cmdline)
    # ansible-runner in a process of its own, as AWX starts it: its environment is PATH (for ansible-playbook)
    # and the runner's own needs, none of the caller's ANSIBLE_* or PLANETSCALE_* settings
    bin_dir = os.path.dirname(sys.executable)
    env = dict((k, v) for k, v in os.environ.items()
               if not k.startswith(("ANSIBLE_", "PLANETSCALE_")) and k != "PYTHONPATH")
    env["PATH"] = os.pathsep.join((bin_dir, env.get("PATH", "")))
    if not os.path.exists(RUNNER):
        pytest.fail("No ansible-runner beside %s: `make setup-new` installs it (requirements/new.txt)."
                    % sys.executable)
    done = subprocess.run([RUNNER, "run", str(private), "--playbook", name,
                           "--ident", "job", "--quiet"], env=env, cwd=str(tmp_path), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=900, check=False)
    return Job(str(private), done)


def secret_leaks(job, secrets):
    """Where a secret shows in the job's events (by task) or its stdout: a list of sentences, each with the
    secret cut to its first and last characters."""
    leaks = []

    def found_in(text):
        values = set(value for value in secrets if value in text)
        return sorted(values | set(ISSUED_SECRET.findall(text)))

    for (name, text), event in zip(job.events, job.parsed):
        for value in found_in(text):
            leaks.append("event %s (%s) of task %r: %s...%s" % (
                name, event.get("event"), event.get("event_data", {}).get("task"), value[:12], value[-3:]))
    for where, text in (("stdout", job.stdout), ("ansible-runner's output", job.output)):
        for value in found_in(text):
            leaks.append("%s: %s...%s" % (where, value[:12], value[-3:]))
    return leaks


def handled_secrets(emulator, *files):
    """The secrets of the emulator's world and those the run wrote to its (owner-only) files."""
    found = list(emulator.secrets())
    for path in files:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        found += ISSUED_SECRET.findall(text)
    return found


OAUTH_PLAYBOOK = """\
- name: The user's OAuth session and what its access token may do (as an AWX job template would run it)
  hosts: localhost
  gather_facts: false
  roles:
    - role: planetscale.cloud.oauth_session
      vars:
        oauth_session_code: "{{ code }}"
        oauth_session_redirect_uri: "{{ redirect_uri }}"
        oauth_session_token_file: "{{ output_dir }}/oauth-token.json"
  tasks:
    - name: Ask the OAuth server about the access token
      planetscale.cloud.token_info:
        access_token: "{{ oauth_session_access_token }}"
"""


def test_the_oauth_session_as_an_awx_job_shows_no_secret_in_any_event(emulator, tmp_path, installed):
    """The tokens an authorization code (a secret of the job's extra variables) is exchanged for, kept in a file and
    used: the role's tasks that hold them have no_log, which the runner's events honour; the service token and the
    client secret of the credential's environment show nowhere either."""
    emulator.reset()
    output = tmp_path / "out"
    output.mkdir()
    extravars = dict(code=emulator.code(), redirect_uri=emulator.world["oauth_application"]["redirect_uri"],
                     output_dir=str(output))
    job = run_job(tmp_path, emulator, installed, ("oauth.yml", OAUTH_PLAYBOOK), extravars)
    assert (job.status, job.rc) == ("successful", 0), job

    secrets = handled_secrets(emulator, output / "oauth-token.json") + [extravars["code"]]
    kinds = set(re.match(r"pscale_[a-z]+_", value).group(0) for value in secrets if value.startswith("pscale_"))
    assert {"pscale_tkn_", "pscale_oauth_", "pscale_ref_"} <= kinds  # the run did handle each kind
    assert '"event": "playbook_on_stats"' in job.events[-1][1]
    events = job.task_events("Exchange the code for tokens, or refresh them when the access token lives less than "
                             "oauth_session_min_ttl")
    assert events and all(event["event_data"]["res"].get("censored") for event in events), events
    assert job.task_events("Ask the OAuth server about the access token")
    assert job.ran_from(installed, "oauth_session")
    assert secret_leaks(job, secrets) == []
    assert job.other_files_with(secrets) == ["artifacts/job/command", "env/envvars", "env/extravars"]


def branch_job(tmp_path, emulator, collections, database="app", diff=False):
    emulator.reset()
    output = tmp_path / "out"
    output.mkdir()
    job = run_job(tmp_path, emulator, collections, ("branch.yml", BRANCH_PLAYBOOK),
                  dict(database=database, output_dir=str(output)), cmdline="--diff" if diff else None)
    assert (job.status, job.rc) == ("successful", 0), job
    return job, handled_secrets(emulator, output / "pr-7.json")


@pytest.mark.parametrize("database, tasks", [
    ("app", ("Ensure the password", "Hand back the connection details")),
    ("pgapp", ("Ensure the role", "Hand back the connection details (PostgreSQL)")),
])
def test_a_role_as_an_awx_job_shows_no_secret_in_any_event(emulator, tmp_path, installed, database, tasks):
    """The job as AWX runs it with "Show Changes" (--diff), where the connection file's content would show in the
    diff of the task that writes it (its events are those of the job without --diff, and the diffs)."""
    job, secrets = branch_job(tmp_path, emulator, installed, database, diff=True)
    assert any(value.startswith("pscale_pw_") for value in secrets)
    for task in tasks:  # they ran, and their events are censored
        events = job.task_events(task)
        assert events and all(event["event_data"]["res"].get("censored") for event in events), (task, events)
    assert job.ran_from(installed)
    assert secret_leaks(job, secrets) == []
    assert job.other_files_with(secrets) == ["artifacts/job/command", "env/envvars"]


@pytest.mark.parametrize("tasks_file, tasks, database", [
    (BRANCH_TASKS, ("Ensure the password", "Hand back the connection details",
                    "Write the connection details, readable by their owner only"), "app"),
    (ROLE_TASKS, ("Ensure the role", "Hand back the connection details (PostgreSQL)",
                  "Write the connection details of the role, readable by their owner only"), "pgapp"),
], ids=["mysql", "postgresql"])
def test_the_check_finds_the_secret_of_each_role_task_without_no_log(emulator, tmp_path, installed, tasks_file, tasks,
                                                                     database):
    """A copy of the installed collection whose branch_environment role lost the no_log of each task that handles the
    password's secret: the job's events show it, and the check says where, for each task. The tasks that write the
    connection file show it only in a diff: the job runs with "Show Changes" (--diff)."""
    copy = str(tmp_path / "collections")
    shutil.copytree(installed, copy)
    path = os.path.join(copy, tasks_file)
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    for task in tasks:
        # the task's block: from its "- name:" line to the next task at the same indentation
        match = re.search(r"(?m)^(?P<indent> *)- name: %s\n(?:(?P=indent)  .*\n|\n)*" % re.escape(task), text)
        stripped = re.sub(r"(?m)^ *no_log: .*\n", "", match.group(0))
        assert stripped != match.group(0), "the task %r has no no_log to remove" % task
        text = text[:match.start()] + stripped + text[match.end():]
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)

    job, secrets = branch_job(tmp_path, emulator, copy, database, diff=True)
    assert job.ran_from(copy)
    leaks = secret_leaks(job, secrets)
    print("\n".join(leaks))
    for task in tasks:
        assert any(("of task %r" % task) in leak for leak in leaks), "no_log removed from %r, yet no secret in its " \
            "events: %s" % (task, leaks)
    # in their events only; a diff is also printed (stdout), where the default callback shows it
    printed = ("stdout: ", "ansible-runner's output: ")
    assert all(any(("of task %r" % task) in leak for task in tasks) or leak.startswith(printed) for leak in leaks), \
        leaks
    assert any("pscale_pw_" in leak for leak in leaks)
