# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""connection_url: a password or a Postgres role result into the connection strings people paste, never naming the
secret in an error."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.planetscale.cloud.plugins.filter.connection_url import FilterModule, connection_url

SECRET = "pscale_pw_s3cr3t"
ODD_SECRET = "p@ss:w/o%rd?#&= x"
ODD_ENCODED = "p%40ss%3Aw%2Fo%25rd%3F%23%26%3D%20x"


def password_result(secret=SECRET, username="u1abc", connection=True):
    """What planetscale.cloud.password registers when it creates a password."""
    record = dict(id="pw1", name="app", role="readwriter", username=username, plain_text=secret,
                  access_host_url="aws.connect.psdb.cloud", ttl_seconds=None, database_branch=dict(name="main"))
    result = dict(changed=True, password=record)
    if connection:
        result["connection"] = dict(host="aws.connect.psdb.cloud", username=username, password=secret, database="shop")
    return result


def role_result(secret=SECRET, username="app.r1xyz"):
    """What planetscale.cloud.postgres_role registers when it creates a role."""
    return dict(changed=True, role=dict(
        id="r1", name="app", username=username, base_username="app", password=secret,
        access_host_url="gcp-us-east1.pg.psdb.cloud", database_name="postgres", inherited_roles=[], default=False))


MYSQL = {
    "url": "mysql://u1abc:pscale_pw_s3cr3t@aws.connect.psdb.cloud/shop?ssl-mode=VERIFY_IDENTITY",
    "go": "u1abc:pscale_pw_s3cr3t@tcp(aws.connect.psdb.cloud)/shop?tls=true",
    "jdbc": "jdbc:mysql://aws.connect.psdb.cloud:3306/shop?sslMode=VERIFY_IDENTITY&user=u1abc&password=pscale_pw_s3cr3t",
    "env": "\n".join([
        "DATABASE_URL=mysql://u1abc:pscale_pw_s3cr3t@aws.connect.psdb.cloud/shop?ssl-mode=VERIFY_IDENTITY",
        "DATABASE_HOST=aws.connect.psdb.cloud", "DATABASE_PORT=3306", "DATABASE_USERNAME=u1abc",
        "DATABASE_PASSWORD=pscale_pw_s3cr3t", "DATABASE_NAME=shop"]),
}
PG_URL = "postgresql://app.r1xyz:pscale_pw_s3cr3t@gcp-us-east1.pg.psdb.cloud:5432/postgres?sslmode=verify-full"
POSTGRES = {
    "url": PG_URL,
    "go": PG_URL,
    "jdbc": "jdbc:postgresql://gcp-us-east1.pg.psdb.cloud:5432/postgres?sslmode=verify-full&user=app.r1xyz"
            "&password=pscale_pw_s3cr3t",
    "env": "\n".join([
        "DATABASE_URL=" + PG_URL, "DATABASE_HOST=gcp-us-east1.pg.psdb.cloud", "DATABASE_PORT=5432",
        "DATABASE_USERNAME=app.r1xyz", "DATABASE_PASSWORD=pscale_pw_s3cr3t", "DATABASE_NAME=postgres"]),
}


def test_the_filter_is_registered():
    assert FilterModule().filters() == dict(connection_url=connection_url)


@pytest.mark.parametrize("fmt", sorted(MYSQL))
def test_every_format_of_a_password_result(fmt):
    assert connection_url(password_result(), format=fmt) == MYSQL[fmt]


@pytest.mark.parametrize("fmt", sorted(POSTGRES))
def test_every_format_of_a_role_result(fmt):
    assert connection_url(role_result(), format=fmt) == POSTGRES[fmt]


def test_url_is_the_default_format():
    assert connection_url(password_result()) == MYSQL["url"]
    assert connection_url(role_result()) == POSTGRES["url"]


def test_the_records_alone_and_plain_connection_details_with_their_kind():
    record = password_result()["password"]
    assert connection_url(record, database="shop") == MYSQL["url"]
    assert connection_url(role_result()["role"]) == POSTGRES["url"]
    details = dict(host="gcp-us-east1.pg.psdb.cloud", username="app.r1xyz", password=SECRET, database="postgres")
    assert connection_url(details, kind="postgresql") == POSTGRES["url"]
    assert connection_url(dict(details, kind="postgresql")) == POSTGRES["url"]
    assert connection_url(dict(password_result()["connection"], kind="mysql"), format="go") == MYSQL["go"]


def test_the_database_override_and_the_port():
    assert connection_url(role_result(), database="ledger").endswith(":5432/ledger?sslmode=verify-full")
    assert connection_url(password_result(), database="other") == MYSQL["url"].replace("/shop?", "/other?")
    assert connection_url(role_result(), port=6432).startswith(PG_URL.split(":5432", maxsplit=1)[0] + ":6432/")
    assert "@aws.connect.psdb.cloud:3307/shop?" in connection_url(password_result(), port=3307)
    assert "tcp(aws.connect.psdb.cloud:3307)" in connection_url(password_result(), format="go", port=3307)
    role = role_result()
    role["role"]["access_host_url"] = "pg.example:6543"
    assert "@pg.example:6543/postgres?" in connection_url(role)
    assert connection_url(dict(kind="postgresql", host="h", port="6432", username="u", password=SECRET, database="d")
                          ).startswith("postgresql://u:%s@h:6432/" % SECRET)  # a port a template made text
    details = dict(kind="postgresql", host="pg.example", port=6432, username="u", password=SECRET, database="d")
    assert connection_url(details) == "postgresql://u:%s@pg.example:6432/d?sslmode=verify-full" % SECRET
    assert connection_url(dict(role_result(), connection=details), port=7000).startswith("postgresql://u:")
    assert "@pg.example:7000/d?" in connection_url(dict(role_result(), connection=details), port=7000)


@pytest.mark.parametrize("result", [password_result(ODD_SECRET, "u@1:x"), role_result(ODD_SECRET, "u@1:x")])
def test_special_characters_are_percent_encoded(result):
    url = connection_url(result)
    assert "://u%401%3Ax:" + ODD_ENCODED + "@" in url
    jdbc = connection_url(result, format="jdbc")
    assert jdbc.endswith("&user=u%401%3Ax&password=" + ODD_ENCODED)
    env = dict(line.split("=", 1) for line in connection_url(result, format="env").splitlines())
    assert env["DATABASE_PASSWORD"] == ODD_SECRET and env["DATABASE_USERNAME"] == "u@1:x"
    assert env["DATABASE_URL"] == url
    assert connection_url(result, database="a/b c").split("/")[3].startswith("a%2Fb%20c?")


@pytest.mark.parametrize("result, fmt", [(password_result(), fmt) for fmt in sorted(MYSQL)] +
                         [(role_result(), fmt) for fmt in sorted(POSTGRES)])
def test_every_form_verifies_the_server_identity_by_default(result, fmt):
    text = connection_url(result, format=fmt)
    assert any(mode in text for mode in ("ssl-mode=VERIFY_IDENTITY", "sslMode=VERIFY_IDENTITY", "tls=true",
                                         "sslmode=verify-full"))
    assert "REQUIRED" not in text and "skip-verify" not in text and "sslmode=require" not in text


@pytest.mark.parametrize("result, ssl_mode, fmt, part", [
    (password_result(), "REQUIRED", "url", "/shop?ssl-mode=REQUIRED"),
    (password_result(), "VERIFY_CA", "url", "/shop?ssl-mode=VERIFY_CA"),
    (password_result(), "REQUIRED", "jdbc", "/shop?sslMode=REQUIRED&user="),
    (password_result(), "REQUIRED", "go", "/shop?tls=skip-verify"),
    (password_result(), "VERIFY_IDENTITY", "go", "/shop?tls=true"),
    (password_result(), "REQUIRED", "env", "/shop?ssl-mode=REQUIRED\n"),
    (role_result(), "require", "url", "/postgres?sslmode=require"),
    (role_result(), "verify-ca", "jdbc", "/postgres?sslmode=verify-ca&user="),
])
def test_a_weaker_mode_only_where_ssl_mode_names_it(result, ssl_mode, fmt, part):
    assert part in connection_url(result, format=fmt, ssl_mode=ssl_mode)


def test_the_go_dsn_keeps_the_secret_as_the_driver_reads_it():
    assert connection_url(password_result(ODD_SECRET), format="go").startswith("u1abc:%s@tcp(" % ODD_SECRET)


def _error(value, **options):
    with pytest.raises(AnsibleFilterError) as caught:
        connection_url(value, **options)
    return str(caught.value)


def _cases():
    later = password_result()  # a later run: the record without its secret, no connection
    del later["password"]["plain_text"]
    del later["connection"]
    no_host = password_result(connection=False)
    del no_host["password"]["access_host_url"]
    no_user = role_result()
    del no_user["role"]["username"]
    no_database = role_result()
    del no_database["role"]["database_name"]
    odd_host = role_result()
    odd_host["role"]["access_host_url"] = "evil/host@x"
    line_break = role_result(SECRET + "\nEVIL=1")
    no_secret_role = role_result()
    del no_secret_role["role"]["password"]
    return [
        (later, {}, "carries no secret"),
        (no_secret_role, {}, "carries no secret"),
        (no_host, {}, "has no host"),
        (no_user, {}, "has no username"),
        (no_database, {}, "does not name its database"),
        (password_result(connection=False), {}, "does not name its database"),
        (odd_host, {}, "not a host name"),
        (line_break, dict(format="env"), "line break"),
        (dict(host="h", username="u", password=SECRET, database="d"), {}, "kind='mysql' or kind='postgresql'"),
        (password_result(), dict(kind="postgresql"), "is a password of mysql, but kind is postgresql"),
        (role_result(), dict(format="dsn"), "format must be one of"),
        (role_result(), dict(kind="oracle"), "kind must be mysql or postgresql"),
        (role_result(), dict(port=0), "port must be a number"),
        (role_result(), dict(ssl_mode="REQUIRED"), "ssl_mode for postgresql must be one of verify-full, verify-ca, "
                                                   "require, not 'REQUIRED' (a mode of the other kind)"),
        (password_result(), dict(ssl_mode="disable"), "ssl_mode for mysql must be one of VERIFY_IDENTITY"),
        (password_result(), dict(ssl_mode="VERIFY_CA", format="go"), "Go MySQL driver has no ssl_mode VERIFY_CA"),
        (password_result(), dict(ssl_mode=True), "ssl_mode must be the name of a mode"),
        (SECRET, {}, "not str"),
    ]


@pytest.mark.parametrize("value, options, sentence", _cases())
def test_bad_input_is_a_sentence_that_never_holds_the_secret(value, options, sentence):
    message = _error(value, **options)
    assert sentence in message
    assert SECRET not in message and "s3cr3t" not in message
