# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: connection_url
short_description: Turn a password or a Postgres role, with its secret, into the connection string an application takes
version_added: 0.2.0
author:
  - planetscale.cloud contributors (@planetscale-ansible)
description:
  - Formats the credential of a MySQL branch (a password of M(planetscale.cloud.password)) or of a PostgreSQL branch
    (a role of M(planetscale.cloud.postgres_role)) as a URL, a Go DSN, a JDBC URL or the lines of an environment
    file.
  - The secret is only in the result of the task that created, renewed or reset the credential; a result without
    it (a later run, check mode) fails the filter with a sentence that says so. No error names the secret.
  - The result holds the secret. Use it in a task with C(no_log=true), or write it to a file with mode C(0600);
    never print it.
  - The user name and the password are percent-encoded in a URL and a JDBC URL, so that any character in them is
    safe. A Go DSN of the MySQL driver takes them as they are (the driver does not decode them).
  - Every form verifies the server's certificate and that it is issued for the host (MySQL V(VERIFY_IDENTITY), the
    Go driver's C(tls=true), PostgreSQL V(verify-full)), so that no one else can answer for the host and take the
    password. A weaker mode only where O(ssl_mode) names it.
positional: _input
options:
  _input:
    description:
      - The registered result of M(planetscale.cloud.password) (its RV(planetscale.cloud.password#module:password)
        and RV(planetscale.cloud.password#module:connection)) or of M(planetscale.cloud.postgres_role) (its C(role)).
      - Or one of their records alone - a password with its C(plain_text), a role with its C(password) - or a
        dict of C(host), C(username), C(password), C(database) (and C(port), C(kind)), such as the fact
        C(branch_environment_connection) of the P(planetscale.cloud.branch_environment#role) role.
    type: dict
    required: true
  format:
    description:
      - V(url) - C(mysql://user:password@host/database?ssl-mode=VERIFY_IDENTITY) (the form of MySQL Shell and
        the MySQL connectors), or C(postgresql://user:password@host:5432/database?sslmode=verify-full).
      - V(go) - the DSN of the Go MySQL driver, C(user:password@tcp(host)/database?tls=true); for PostgreSQL the
        URL, which the Go drivers take.
      - V(jdbc) - C(jdbc:mysql://host:3306/database?sslMode=VERIFY_IDENTITY&user=...&password=...), or
        C(jdbc:postgresql://host:5432/database?sslmode=verify-full&user=...&password=...).
      - V(env) - the lines of an environment file, C(DATABASE_URL) (the V(url) form), C(DATABASE_HOST),
        C(DATABASE_PORT), C(DATABASE_USERNAME), C(DATABASE_PASSWORD) and C(DATABASE_NAME), one C(KEY=value) a line.
    type: str
    choices: [url, go, jdbc, env]
    default: url
  kind:
    description:
      - V(mysql) or V(postgresql). By default told by the input - a password is MySQL, a role is PostgreSQL.
      - Required for a plain dict of connection details that has no C(kind) key; a kind that contradicts the input
        fails.
    type: str
    choices: [mysql, postgresql]
  database:
    description:
      - The name of the database to connect to, instead of the one in the input (a password record alone has none;
        a role names its PostgreSQL database, C(postgres) by default).
    type: str
  port:
    description:
      - The port. By default V(5432) for PostgreSQL; for MySQL the host's default (V(3306) in a JDBC URL), left out
        of the URL and the DSN.
    type: int
  ssl_mode:
    description:
      - How the client checks the server. By default the strictest, which verifies the server's identity -
        V(VERIFY_IDENTITY) for MySQL, V(verify-full) for PostgreSQL.
      - V(VERIFY_CA) or V(verify-ca) verify the certificate but not that it names the host; V(REQUIRED) or
        V(require) encrypt and accept any certificate, so whoever answers for the host gets the password. Give
        them only for a client that cannot verify.
      - The MySQL modes are for MySQL, the PostgreSQL modes for PostgreSQL; another fails. The Go DSN of MySQL
        has no V(VERIFY_CA) (it gives C(tls=skip-verify) for V(REQUIRED)).
    type: str
    choices: [VERIFY_IDENTITY, VERIFY_CA, REQUIRED, verify-full, verify-ca, require]
seealso:
  - module: planetscale.cloud.password
  - module: planetscale.cloud.postgres_role
"""

EXAMPLES = r"""
- name: Create the application's password (its secret is shown once)
  planetscale.cloud.password:
    organization: acme
    database: shop
    branch: main
    name: app
    role: readwriter
  register: app_password
  no_log: true

- name: Keep its connection string for the application, readable by its owner only
  ansible.builtin.copy:
    dest: /etc/shop/database.env
    mode: "0600"
    content: "{{ app_password | planetscale.cloud.connection_url(format='env') }}\n"
  when: app_password.connection is defined
  no_log: true

- name: Create a role on a PostgreSQL branch
  planetscale.cloud.postgres_role:
    organization: acme
    database: ledger
    branch: main
    name: app
    inherited_roles: [pg_read_all_data, pg_write_all_data]
  register: app_role
  no_log: true

- name: Hand its URL to the application's secret store
  ansible.builtin.set_fact:
    ledger_url: "{{ app_role | planetscale.cloud.connection_url }}"
  when: app_role.role.password is defined
  no_log: true

# {"role": {"username": "app.x1", "password": "p@ss", "access_host_url": "db.example", "database_name": "postgres"}}
#   | planetscale.cloud.connection_url  =>  'postgresql://app.x1:p%40ss@db.example:5432/postgres?sslmode=verify-full'
"""

RETURN = r"""
_value:
  description: The connection string, with the secret; for V(env), the lines joined by line breaks.
  type: str
"""

from urllib.parse import quote

from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.text.converters import to_text

FORMATS = ("url", "go", "jdbc", "env")
KINDS = ("mysql", "postgresql")
# the TLS modes of each kind, the strictest (the default) first; the Go MySQL driver's tls value for each
SSL_MODES = dict(mysql=("VERIFY_IDENTITY", "VERIFY_CA", "REQUIRED"), postgresql=("verify-full", "verify-ca", "require"))
GO_TLS = dict(VERIFY_IDENTITY="true", REQUIRED="skip-verify")
NO_SECRET = ("connection_url: the %s carries no secret. The platform shows it only in the result of the task that "
             "created, renewed or reset it (not a later run, not check mode): format that task's registered result, "
             "or read the secret from where it was stored.")


def _text(value):
    return None if value in (None, "") else to_text(value, errors="surrogate_or_strict")


def _shape(value, kind):
    """(kind, record, connection, what) of the input: the credential's record, the connection details beside it."""
    role, password = value.get("role"), value.get("password")
    if isinstance(role, dict):
        return "postgresql", role, value.get("connection") or {}, "role"
    if isinstance(password, dict):
        return "mysql", password, value.get("connection") or {}, "password"
    if "plain_text" in value or "database_branch" in value or "ttl_seconds" in value:
        return "mysql", value, {}, "password"
    if "database_name" in value or "base_username" in value or "inherited_roles" in value:
        return "postgresql", value, {}, "role"
    shaped = value.get("kind") or kind
    if shaped not in KINDS:
        raise AnsibleFilterError("connection_url cannot tell whether these connection details are for MySQL or "
                                 "PostgreSQL: give kind='mysql' or kind='postgresql' (or the registered result of "
                                 "planetscale.cloud.password or planetscale.cloud.postgres_role).")
    return shaped, {}, value, "connection details"


def _details(value, kind, database, port):
    """kind, host, port, username, secret, database of the input; a sentence (never the secret) when one is missing."""
    if not isinstance(value, dict):
        raise AnsibleFilterError("connection_url expects the registered result of planetscale.cloud.password or "
                                 "planetscale.cloud.postgres_role (a dict), not %s." % type(value).__name__)
    shaped, record, conn, what = _shape(value, kind)
    if kind is not None and kind != shaped:
        raise AnsibleFilterError("connection_url: the input is a %s of %s, but kind is %s; leave kind out, or give "
                                 "the credential of a %s database." % (what, shaped, kind, kind))
    secret = _text(conn.get("password") or record.get("plain_text" if shaped == "mysql" else "password"))
    if secret is None:
        raise AnsibleFilterError(NO_SECRET % what)
    host = _text(conn.get("host") or record.get("access_host_url") or record.get("hostname") or record.get("host"))
    username = _text(conn.get("username") or record.get("username"))
    database = _text(database or conn.get("database") or record.get("database_name") or
                     (record.get("database") if not isinstance(record.get("database"), dict) else None))
    for name, found in (("host", host), ("username", username)):
        if found is None:
            raise AnsibleFilterError("connection_url: the %s has no %s; give the registered result of the task that "
                                     "created the credential." % (what, name))
    if database is None:
        raise AnsibleFilterError("connection_url: the %s does not name its database; give database='name'." % what)
    if any(char in host for char in "/@?# \t\r\n"):
        raise AnsibleFilterError("connection_url: the host of the %s is not a host name; give the registered result "
                                 "of the task that created the credential." % what)
    host, _sep, in_host = host.rpartition(":") if host.rpartition(":")[2].isdigit() else (host, "", None)
    port = next((found for found in (port, conn.get("port"), int(in_host) if in_host else None) if found is not None),
                5432 if shaped == "postgresql" else None)
    port = int(port) if isinstance(port, str) and port.isdigit() else port  # a templated fact may be text
    if port is not None and (isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536):
        raise AnsibleFilterError("connection_url: port must be a number from 1 to 65535.")
    return shaped, host, port, username, secret, database


def _ssl_mode(kind, ssl_mode, format):  # pylint: disable=redefined-builtin
    """The TLS mode for the kind: the strictest unless the user names another of the kind's modes."""
    if ssl_mode is None:
        return SSL_MODES[kind][0]
    if ssl_mode not in SSL_MODES[kind]:
        known = SSL_MODES["mysql"] + SSL_MODES["postgresql"]
        raise AnsibleFilterError("connection_url: ssl_mode for %s must be one of %s, not %r%s." % (
            kind, ", ".join(SSL_MODES[kind]), ssl_mode, " (a mode of the other kind)" if ssl_mode in known else ""))
    if format == "go" and kind == "mysql" and ssl_mode not in GO_TLS:
        raise AnsibleFilterError("connection_url: the Go MySQL driver has no ssl_mode %s; leave ssl_mode out (the "
                                 "driver then verifies the server's identity) or give REQUIRED." % ssl_mode)
    return ssl_mode


def _url(kind, host, port, username, secret, database, ssl_mode):
    user = "%s:%s" % (quote(username, safe=""), quote(secret, safe=""))
    address = host if port is None else "%s:%d" % (host, port)
    query = "%s=%s" % ("sslmode" if kind == "postgresql" else "ssl-mode", ssl_mode)
    return "%s://%s@%s/%s?%s" % (kind, user, address, quote(database, safe=""), query)


def connection_url(value, format="url", kind=None, database=None, port=None,  # pylint: disable=redefined-builtin
                   ssl_mode=None):
    """The connection string of a password or role result that carries its secret."""
    if format not in FORMATS:
        raise AnsibleFilterError("connection_url: format must be one of %s, not %r." % (", ".join(FORMATS), format))
    if kind is not None and kind not in KINDS:
        raise AnsibleFilterError("connection_url: kind must be mysql or postgresql, not %r." % (kind,))
    if ssl_mode is not None and not isinstance(ssl_mode, str):
        raise AnsibleFilterError("connection_url: ssl_mode must be the name of a mode, such as VERIFY_IDENTITY.")
    kind, host, port, username, secret, database = _details(value, kind, database, port)
    ssl_mode = _ssl_mode(kind, ssl_mode, format)
    url = _url(kind, host, port, username, secret, database, ssl_mode)
    if format == "url" or (format == "go" and kind == "postgresql"):
        return url
    if format == "go":
        return "%s:%s@tcp(%s)/%s?tls=%s" % (username, secret, host if port is None else "%s:%d" % (host, port),
                                            database, GO_TLS[ssl_mode])
    if format == "jdbc":
        query = "%s=%s" % ("sslmode" if kind == "postgresql" else "sslMode", ssl_mode)
        return "jdbc:%s://%s:%d/%s?%s&user=%s&password=%s" % (
            kind, host, port or 3306, quote(database, safe=""), query, quote(username, safe=""), quote(secret, safe=""))
    if any(char in part for part in (username, secret, database) for char in "\r\n\0"):
        raise AnsibleFilterError("connection_url: the user name, the secret or the database holds a line break, "
                                 "which an environment file cannot; use format='url' or format='jdbc'.")
    lines = [("DATABASE_URL", url), ("DATABASE_HOST", host), ("DATABASE_PORT", str(port or 3306)),
             ("DATABASE_USERNAME", username), ("DATABASE_PASSWORD", secret), ("DATABASE_NAME", database)]
    return "\n".join("%s=%s" % line for line in lines)


class FilterModule:
    """Connection filters of planetscale.cloud."""

    def filters(self):
        return dict(connection_url=connection_url)
