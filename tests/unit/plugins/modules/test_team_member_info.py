# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations


from ansible_collections.planetscale.cloud.plugins.modules.team_member_info import TeamMemberInfo

PLAIN_TEXT = "pscale_pw_the_password_itself"


MODULE = TeamMemberInfo  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", team="backend", service_token_id="svc", service_token="secret")


def test_member_passwords_never_carry_their_secret(server, run):
    password = dict(id="pw1", name="laptop", role="reader", plain_text=PLAIN_TEXT)
    server.script = [(200, dict(data=[dict(id="m1", user=dict(id="u1"), passwords=[password]),
                                      dict(id="m2", user=dict(id="u2"))], next_page=None))]
    members = run()["members"]
    assert members[0]["passwords"] == [dict(id="pw1", name="laptop", role="reader")]
    assert "passwords" not in members[1]
    assert PLAIN_TEXT not in repr(members)
