# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The roles: a run, a second run with changed=0, check mode that writes nothing, their refusals."""

from __future__ import annotations

import json
import os
import re
import textwrap
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pymysql
import pytest

from conftest import mode, role_play
from harness import ROOT

DATABASE = "app"


def branch_vars(tmp_path, **more):
    role_vars = dict(branch_environment_database=DATABASE, branch_environment_name="pr-7",
                     branch_environment_connection_file=str(tmp_path / "pr-7.json"))
    role_vars.update(more)
    return role_vars


def env_lines(path):
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if not line.startswith("#"))


# Compares the facts with the file without showing either: assert prints its fail_msg only.
CHECK_CONNECTION = """
- name: The fact holds the secret written to the file
  ansible.builtin.assert:
    that:
      - branch_environment_connection.password == kept.password
      - branch_environment_connection.username == kept.username
      - branch_environment_password.plain_text is not defined
    fail_msg: the connection fact does not match the connection file
    quiet: true
  vars:
    kept: "{{ lookup('ansible.builtin.file', branch_environment_connection_file) | from_json }}"
"""


def env_connection(lines):
    """The connection details of an env file's lines (MySQL): DATABASE_HOST, or it and DATABASE_PORT."""
    return dict(host=lines["DATABASE_HOST"], port=int(lines.get("DATABASE_PORT") or 0) or None,
                username=lines["DATABASE_USERNAME"], password=lines["DATABASE_PASSWORD"], database=lines["DATABASE_NAME"])


def test_branch_environment(ansible, emulator, tmp_path):
    role_vars = branch_vars(tmp_path)
    play = role_play(tmp_path, "branch_environment", role_vars, after=CHECK_CONNECTION)
    connection_file = tmp_path / "pr-7.json"

    checked = ansible.run(role_play(tmp_path, "branch_environment", role_vars, name="check.yml"),
                          check=True).succeeded(changed=1)
    assert "would be created from main" in checked.output
    assert emulator.writes() == []
    assert not connection_file.exists()

    ansible.run(play, args=["-vvv"]).succeeded(changed=3)  # branch, password, file; no secret even at -vvv
    assert mode(connection_file) == "0o600"
    connection = json.loads(connection_file.read_text())
    assert sorted(connection) == ["branch", "database", "host", "kind", "password", "port", "username"]
    assert connection["password"].startswith("pscale_pw_") and connection["branch"] == "pr-7"
    # the file connects as written (PyMySQL, the CA and the host verified): database app is the branch's schema
    assert emulator.login(connection, "SELECT DATABASE()", "SELECT COUNT(*) FROM users") == [[("app__pr-7",)], [(0,)]]
    branch = emulator.api("GET", "/organizations/acme/databases/app/branches/pr-7")
    assert branch["ready"] is True and branch["parent_branch"] == "main"

    emulator.clear_requests()
    ansible.run(play, args=["-vvv"]).succeeded(changed=0)  # the fact has the secret, from the file
    assert emulator.writes() == []

    ansible.assert_no_secret(connection["password"])


def test_branch_environment_check_mode_change_writes_nothing(ansible, emulator, tmp_path):
    ansible.run(role_play(tmp_path, "branch_environment", branch_vars(tmp_path))).succeeded(changed=3)
    narrowed = role_play(tmp_path, "branch_environment", branch_vars(
        tmp_path, branch_environment_password_cidrs=["10.0.0.0/8"]), name="narrowed.yml")

    emulator.clear_requests()
    checked = ansible.run(narrowed, check=True, diff=True).succeeded(changed=1)
    assert "10.0.0.0/8" in checked.output  # the password's diff
    assert emulator.writes() == []

    ansible.run(narrowed).succeeded(changed=1)
    assert [write.split()[0] for write in emulator.writes()] == ["PATCH"]


def test_branch_environment_env_file_and_a_lost_secret(ansible, emulator, tmp_path):
    env_file = tmp_path / "pr-7.env"
    role_vars = branch_vars(tmp_path, branch_environment_connection_file=str(env_file),
                            branch_environment_connection_file_format="env")
    play = role_play(tmp_path, "branch_environment", role_vars)
    ansible.run(play).succeeded(changed=3)
    lines = env_lines(env_file)
    assert sorted(lines) == ["DATABASE_BRANCH", "DATABASE_HOST", "DATABASE_NAME", "DATABASE_PASSWORD",
                             "DATABASE_PORT", "DATABASE_URL", "DATABASE_USERNAME"]
    address = "%s:%s" % (lines["DATABASE_HOST"], lines["DATABASE_PORT"])  # the emulator's address names its port
    assert address == emulator.world["dataplane"]["mysql_edge"]
    userinfo = "%s:%s" % (lines["DATABASE_USERNAME"], lines["DATABASE_PASSWORD"])
    assert lines["DATABASE_URL"].startswith("mysql://%s@%s/app?" % (userinfo, address))
    assert mode(env_file) == "0o600"
    ansible.run(play).succeeded(changed=0)

    env_file.unlink()
    emulator.clear_requests()
    ansible.run(play).failed(
        "its secret is not in %s and the platform shows it only once" % env_file,
        "set branch_environment_replace_lost_password to true")
    assert emulator.writes() == []

    replacing = role_play(tmp_path, "branch_environment", dict(
        role_vars, branch_environment_replace_lost_password=True), name="replace.yml")
    checked = ansible.run(replacing, check=True).succeeded(changed=2)  # delete, create with its file
    assert "would be created again with a new secret and written to %s" % env_file in checked.output
    assert emulator.writes() == [] and not env_file.exists()
    ansible.run(replacing).succeeded(changed=3)  # delete, create, file
    new = env_lines(env_file)
    assert new["DATABASE_USERNAME"] != lines["DATABASE_USERNAME"]
    # the new lines connect; the replaced password's are refused (access denied)
    assert emulator.login(env_connection(new), "SELECT DATABASE()") == [[("app__pr-7",)]]
    with pytest.raises(pymysql.err.OperationalError) as refused:
        emulator.login(env_connection(lines))
    assert refused.value.args[0] == 1045
    ansible.assert_no_secret(lines["DATABASE_PASSWORD"], new["DATABASE_PASSWORD"])


def test_branch_environment_absent(ansible, emulator, tmp_path):
    connection_file = tmp_path / "pr-7.json"
    ansible.run(role_play(tmp_path, "branch_environment", branch_vars(tmp_path))).succeeded(changed=3)
    absent = role_play(tmp_path, "branch_environment", branch_vars(
        tmp_path, branch_environment_state="absent"), name="absent.yml")

    emulator.clear_requests()
    ansible.run(absent, check=True).succeeded(changed=3)
    assert emulator.writes() == [] and connection_file.exists()

    ansible.run(absent).succeeded(changed=3)
    assert not connection_file.exists()
    branches = emulator.api("GET", "/organizations/acme/databases/app/branches")["data"]
    assert [b["name"] for b in branches] == ["main"]

    emulator.clear_requests()
    ansible.run(absent).succeeded(changed=0)
    assert emulator.writes() == []


def capacity_example(tmp_path, index):
    """A playbook of the README's playbooks of the section Capacity (0: MySQL, 1: PostgreSQL), as written, and a play
    after it that asserts the role handed back no credential: capacity settings alone create none."""
    with open(os.path.join(ROOT, "roles", "branch_environment", "README.md"), encoding="utf-8") as handle:
        section = handle.read().split("\n## Capacity", 1)[1].split("\n## ", 1)[0]
    path = tmp_path / ("capacity-%d.yml" % index)
    path.write_text(re.findall(r"```yaml\n(.*?)```", section, re.S)[index] + textwrap.dedent("""
        - name: Capacity alone hands back no credential
          hosts: localhost
          gather_facts: false
          tasks:
            - name: No connection details, no password, no role
              ansible.builtin.assert:
                that:
                  - branch_environment_connection == {}
                  - branch_environment_password == {}
                  - branch_environment_role == {}
                quiet: true
        """))
    return str(path)


def test_branch_environment_scales_a_production_branch_for_a_launch_and_back(ansible, emulator, tmp_path):
    """The README's example: check mode is the review (no write, the change shown), the run resizes and waits, a second
    run writes nothing, and launch=false scales back. Capacity settings alone change capacity only: no password is
    created on the production branch (its secret would be kept nowhere)."""
    emulator.settings(change_step_delay=0.2)
    base = "/organizations/acme/databases/app/branches/main"
    passwords = emulator.api("GET", base + "/passwords")["data"]
    play = capacity_example(tmp_path, 0)
    up, down = dict(launch=True), dict(launch=False)
    ansible.run(play, extra_vars=down).succeeded()  # the size it has
    assert not [write for write in emulator.writes() if write.startswith("POST")]  # no password
    emulator.clear_requests()

    checked = ansible.run(play, extra_vars=up, check=True, diff=True).succeeded(changed=1)
    assert "PS_80" in checked.output and "VTG_20" in checked.output
    assert emulator.writes() == []

    ansible.run(play, extra_vars=up).succeeded(changed=1)
    assert sorted(write.split()[0] for write in emulator.writes()) == ["PATCH", "PUT"]
    branch = emulator.api("GET", base)
    assert (branch["cluster_name"], branch["vtgate_count"]) == ("PS_80", 4)

    emulator.clear_requests()
    ansible.run(play, extra_vars=up).succeeded(changed=0)
    assert emulator.writes() == []

    ansible.run(play, extra_vars=down).succeeded(changed=1)
    branch = emulator.api("GET", base)
    assert (branch["cluster_name"], branch["vtgate_count"]) == ("PS_40", 1)
    assert emulator.api("GET", base + "/passwords")["data"] == passwords


def test_branch_environment_named_password_with_capacity_and_no_file(ansible, emulator, tmp_path):
    """Naming the password asks for it, capacity settings or not; without a connection file the role says that the
    secret is in the fact for this play only. The second run finds the password and writes nothing."""
    play = role_play(tmp_path, "branch_environment", dict(
        branch_environment_database=DATABASE, branch_environment_name="pr-7", branch_environment_cluster_size="PS_10",
        branch_environment_password_name="ci"))
    kept_nowhere = "Its secret is in the fact branch_environment_connection for this play only"

    first = ansible.run(play).succeeded(changed=2)  # branch, password
    assert kept_nowhere in first.output
    passwords = emulator.api("GET", "/organizations/acme/databases/app/branches/pr-7/passwords")["data"]
    assert [password["name"] for password in passwords] == ["ci"]

    emulator.clear_requests()
    second = ansible.run(play).succeeded(changed=0)
    assert emulator.writes() == [] and kept_nowhere not in second.output


def test_branch_environment_never_deletes_a_production_branch(ansible, emulator, tmp_path):
    play = role_play(tmp_path, "branch_environment", dict(
        branch_environment_database=DATABASE, branch_environment_name="main", branch_environment_state="absent"))
    ansible.run(play).failed(
        'Branch \\"main\\" of database \\"app\\" is a production branch; branch_environment never deletes one.')
    assert emulator.writes() == []


TEAMS = [
    dict(name="Engineering", description="Builds the shop", members=["member1@acme.test"]),
    dict(name="Reviewers", description="Review preview branches", members=["member2@acme.test", "member3@acme.test"]),
    dict(name="Everyone"),
]


def test_team_access(ansible, emulator, tmp_path):
    play = role_play(tmp_path, "team_access", dict(team_access_teams=TEAMS))

    checked = ansible.run(play, check=True, diff=True).succeeded(changed=1)
    assert '+    "description": "Builds the shop",' in checked.output
    assert emulator.writes() == []

    applied = ansible.run(play).succeeded(changed=1)
    assert "Engineering has 4 members: admin@acme.test, engineer1@acme.test, engineer2@acme.test, member1@acme.test" \
        in applied.output
    assert "Reviewers has 2 members: member2@acme.test, member3@acme.test" in applied.output
    assert "Everyone has 260 members: " in applied.output and " and 250 more." in applied.output
    assert emulator.api("GET", "/organizations/acme/teams/reviewers")["description"] == "Review preview branches"

    emulator.clear_requests()
    ansible.run(play).succeeded(changed=0)
    assert emulator.writes() == []

    gone = role_play(tmp_path, "team_access", dict(team_access_teams=[dict(name="reviewers", state="absent")]),
                     name="absent.yml")
    ansible.run(gone).succeeded(changed=1)
    ansible.run(gone).succeeded(changed=0)


@pytest.mark.parametrize("named", ["SSO Admins", "sso admins", "sso-admins"])
def test_team_access_refuses_sso_managed_teams(ansible, emulator, tmp_path, named):
    play = role_play(tmp_path, "team_access", dict(team_access_teams=[
        dict(name="Engineering", description="Would change"), dict(name=named, description="Would fail")]))
    ansible.run(play).failed(
        'team_access_teams names teams that single sign-on manages: \\"SSO Admins\\". The API cannot change them',
        "Nothing was changed.")
    assert emulator.writes() == []


OAUTH_CHECK = """
- name: The facts hold the kept token
  ansible.builtin.assert:
    that:
      - oauth_session_access_token == kept.access_token
      - oauth_session_refresh_token == kept.refresh_token
      - oauth_session_expires_at is match('[0-9]{4}-[0-9]{2}-[0-9]{2}T')
      - "'read_user' in oauth_session_scopes"
    fail_msg: the token facts do not match the token file
    quiet: true
  vars:
    kept: "{{ lookup('ansible.builtin.file', oauth_session_token_file) | from_json }}"

- name: The access token works for the modules
  planetscale.cloud.user_info:
    access_token: "{{ oauth_session_access_token }}"
  register: me

- name: It acts for the user who authorized it
  ansible.builtin.assert:
    that: me.user.email == 'admin@acme.test'
    quiet: true
"""


def token_posts(emulator):
    return [r for r in emulator.requests() if r["method"] == "POST" and r["path"] == "/oauth/token"]


def test_oauth_session(ansible, emulator, tmp_path):
    token_file = tmp_path / "token.json"
    app = emulator.world["oauth_application"]
    role_vars = dict(oauth_session_code=emulator.code(), oauth_session_redirect_uri=app["redirect_uri"],
                     oauth_session_token_file=str(token_file))
    play = role_play(tmp_path, "oauth_session", role_vars, after=OAUTH_CHECK)

    emulator.clear_requests()
    ansible.run(role_play(tmp_path, "oauth_session", role_vars, name="check.yml"), check=True,
                oauth_only=True).succeeded(changed=1)
    assert emulator.requests() == [] and not token_file.exists()

    ansible.run(play, oauth_only=True, args=["-vvv"]).succeeded(changed=2)  # tokens issued, file written
    assert mode(token_file) == "0o600"
    first = json.loads(token_file.read_text())

    emulator.clear_requests()
    kept = ansible.run(play, oauth_only=True).succeeded(changed=0)  # the kept token comes before the code
    assert "at least min_ttl 600: nothing was refreshed" in kept.output
    assert token_posts(emulator) == []
    assert json.loads(token_file.read_text()) == first

    # the token lives 3600 s, less than a min_ttl of 4000; the ones issued from now on live 300 s
    emulator.control("POST", "/settings", dict(token_ttl=300))
    longer = role_play(tmp_path, "oauth_session", dict(
        oauth_session_token_file=str(token_file), oauth_session_min_ttl=4000), name="longer.yml", after=OAUTH_CHECK)
    emulator.clear_requests()
    ansible.run(longer, oauth_only=True).succeeded(changed=2)
    assert len(token_posts(emulator)) == 1
    second = json.loads(token_file.read_text())
    assert second["refresh_token"] != first["refresh_token"]

    emulator.clear_requests()
    predicted = ansible.run(play, check=True, oauth_only=True).succeeded(changed=1)
    assert "less than min_ttl 600: the tokens would be refreshed" in predicted.output
    assert emulator.writes() == [] and json.loads(token_file.read_text()) == second

    ansible.assert_no_secret(first["access_token"], first["refresh_token"], second["access_token"], second["refresh_token"])


def test_oauth_session_needs_a_token_or_a_code(ansible, emulator, tmp_path):
    play = role_play(tmp_path, "oauth_session", dict(oauth_session_token_file=str(tmp_path / "none.json")))
    ansible.run(play, oauth_only=True).failed(
        "oauth_session needs a refresh token (oauth_session_token, or a token kept in oauth_session_token_file)")
    assert emulator.requests() == []


def test_oauth_session_says_when_the_kept_token_is_refused(ansible, tmp_path):
    token_file = tmp_path / "token.json"
    token_file.write_text(json.dumps(dict(access_token="revoked-access", refresh_token="revoked-refresh")))
    play = role_play(tmp_path, "oauth_session", dict(oauth_session_token_file=str(token_file)))
    ansible.run(play, oauth_only=True).failed(
        "invalid_grant",
        "The token kept in %s no longer works: delete the file and run again with a new oauth_session_code." % token_file)


KEPT = dict(access_token="pscale_oauth_kept0access", refresh_token="pscale_ref_kept0refresh", token_type="Bearer",
            expires_at="2026-11-22T03:12:30Z", scopes=["read_user"])


class TokenAnswers:
    """An OAuth server on loopback that answers every grant 200 with one body, and every token 'inactive'.

    The emulator's fault rules answer errors only; this is the success without a token that a broken
    proxy or server may send.
    """

    def __init__(self, body):
        self.grants = 0
        answers = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _answer(self, data):
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):  # pylint: disable=invalid-name
                self._answer(b'{"active": false}')

            def do_POST(self):  # pylint: disable=invalid-name
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                answers.grants += 1
                self._answer(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.mark.parametrize("body, missing", [
    (b"{}", "an answer without access_token and refresh_token"),
    (b"null", "an empty answer"),
    (b'{"access_token": "pscale_oauth_half0issued", "token_type": "Bearer", "expires_in": 3600}',
     "an answer without refresh_token"),
])
def test_oauth_session_keeps_its_file_when_the_answer_holds_no_token(ansible, tmp_path, body, missing):
    token_file = tmp_path / "token.json"
    token_file.write_text(json.dumps(KEPT))
    kept = token_file.read_text()
    server = TokenAnswers(body)
    try:
        play = role_play(tmp_path, "oauth_session", dict(oauth_session_token_file=str(token_file),
                                                         oauth_session_auth_url=server.url))
        ansible.run(play, oauth_only=True).failed(
            "POST /oauth/token succeeded with %s, which is no token: the task fails so that the token you keep is "
            "not replaced." % missing)
        assert server.grants == 1
    finally:
        server.close()
    assert token_file.read_text() == kept
    ansible.assert_no_secret(KEPT["access_token"], KEPT["refresh_token"], "pscale_oauth_half0issued")


# A token action that reports new tokens without a refresh token: a bug the role must survive. It replaces the action
# every module runs through (meta/runtime.yml routes them to in_process); the role runs only the token module.
BROKEN_TOKEN_ACTION = """
from ansible.plugins.action import ActionBase


class ActionModule(ActionBase):
    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        result.update(changed=True, token=dict(access_token="pscale_oauth_broken0module", refresh_token=None,
                                               token_type="Bearer", expires_at=None, scopes=[]))
        return result
"""


def collection_with(tmp_path, relative_path, text):
    """A collections path where planetscale.cloud is this working tree but for one file (links elsewhere)."""
    root = tmp_path / "overlay"
    here, source = root / "ansible_collections" / "planetscale" / "cloud", ROOT
    parts = relative_path.split("/")
    for depth, part in enumerate(parts):
        here.mkdir(parents=True)
        for entry in os.listdir(source):
            if entry != part:
                os.symlink(os.path.join(source, entry), str(here / entry))
        if depth < len(parts) - 1:
            here, source = here / part, os.path.join(source, part)
    (here / parts[-1]).write_text(text)
    return str(root)


def test_oauth_session_never_writes_an_incomplete_token_whatever_the_module_says(ansible, tmp_path):
    token_file = tmp_path / "token.json"
    token_file.write_text(json.dumps(KEPT))
    kept = token_file.read_text()
    collections = collection_with(tmp_path, "plugins/action/token.py", BROKEN_TOKEN_ACTION)
    play = role_play(tmp_path, "oauth_session", dict(oauth_session_token_file=str(token_file)))
    ansible.run(play, oauth_only=True, collections_path=collections).failed(
        "The token task reported new tokens without an access token and a refresh token; nothing was kept, and %s "
        "still holds the previous token." % token_file)
    assert token_file.read_text() == kept
    ansible.assert_no_secret(KEPT["access_token"], KEPT["refresh_token"], "pscale_oauth_broken0module")


@pytest.mark.parametrize("role, role_vars, message", [
    ("branch_environment", dict(branch_environment_name="pr-1"),
     "missing required arguments: branch_environment_database"),
    ("branch_environment", dict(branch_environment_database="app", branch_environment_name="pr-1",
                                branch_environment_password_role="owner"),
     "value of branch_environment_password_role must be one of: reader, writer, admin, readwriter, got: owner"),
    ("branch_environment", dict(branch_environment_database="app", branch_environment_name="pr-1",
                                branch_environment_wait_timeout="soon"),
     "unable to convert to int"),
    ("team_access", dict(team_access_teams=[dict(description="no name")]),
     "missing required arguments: name found in team_access_teams"),
    ("team_access", dict(team_access_teams=[dict(name="Engineering", state="gone")]),
     "value of state must be one of: present, absent, got: gone found in team_access_teams"),
    ("oauth_session", dict(oauth_session_min_ttl="a while"), "unable to convert to int"),
    ("restore_drill", dict(restore_drill_backup="latest"), "missing required arguments: restore_drill_database"),
    ("restore_drill", dict(restore_drill_database="app", restore_drill_state="gone"),
     "value of restore_drill_state must be one of: present, absent, got: gone"),
    ("oauth_session", dict(oauth_session_token=dict(access_token="x")),
     "missing required arguments: refresh_token found in oauth_session_token"),
    ("access_review", dict(access_review_databases=dict(app=True)),
     "access_review_databases' is of type dict and we were unable to convert to list"),
])
def test_argument_specs_reject_bad_input(ansible, emulator, tmp_path, role, role_vars, message):
    ansible.run(role_play(tmp_path, role, role_vars)).failed(
        "Validation of arguments failed", message)
    assert emulator.requests() == []


@pytest.mark.parametrize("in_process", [True, False], ids=["in-process", "module-process"])
def test_a_role_without_an_organization_says_which_option_and_variable_to_set(ansible, emulator, tmp_path, in_process):
    # PLANETSCALE_ORG set but empty counts as not set; the role's tasks pass no organization of their own
    play = role_play(tmp_path, "access_review", dict(access_review_report_path=str(tmp_path / "review.md")))
    ansible.run(play, env=dict(PLANETSCALE_ORG=""), in_process=in_process).failed(
        "No organization was given: set organization (in the task, or in module_defaults for "
        "group/planetscale.cloud.all) or the environment variable PLANETSCALE_ORG to the name of the organization.")
    assert emulator.requests() == []
