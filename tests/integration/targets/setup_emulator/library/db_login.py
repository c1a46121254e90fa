#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test-only module: log in to the emulator's data plane as an application would, and run statements.

A real client (PyMySQL for MySQL, psycopg 3 for PostgreSQL) over TLS, the server's certificate checked against
ca_file as the connection details ask (MySQL ssl-mode VERIFY_IDENTITY, the Go driver's tls=true, PostgreSQL
sslmode=verify-full: the certificate and the host). The credential comes as one of:

    url: "{{ created | planetscale.cloud.connection_url(format='jdbc') }}"   # any form the filter makes:
                                                  # url, go, jdbc, env (its DATABASE_URL line)
    connection: "{{ created.connection }}"       # host (host:port), port, username, password, database, kind
    connection: {kind: mysql, host: ..., ...}    # or a dict of those keys (kind: mysql unless named)

    database: app__dev                           # instead of the credential's database
    statements: ["SELECT 1", "INSERT ..."]       # each runs in autocommit, a refused one does not stop the next
    fail_on_refusal: true                        # fail the task when the login or a statement is refused

Returns, never with the secret: login (ok, code, message: the server's refusal), results (one per statement: ok,
rows, code, message), target (kind, host, port, username, database), verified (identity, certificate or none) and
tls (the protocol the session uses). The task is failed only when fail_on_refusal is true (or the input is bad).
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, unquote, urlsplit

from ansible.module_utils.basic import AnsibleModule

# the TLS mode of each form, as the server is verified: identity (certificate and host), certificate, none
VERIFIED = {"VERIFY_IDENTITY": "identity", "VERIFY_CA": "certificate", "REQUIRED": "none",
            "verify-full": "identity", "verify-ca": "certificate", "require": "none",
            "true": "identity", "skip-verify": "none", "strict": "identity"}
PG_MODES = {"identity": "verify-full", "certificate": "verify-ca", "none": "require"}
GO_DSN = re.compile(r"^(?P<user>[^:@]*):(?P<password>.*)@tcp\((?P<address>[^)]*)\)/(?P<database>[^?]*)"
                    r"(\?(?P<query>.*))?$")


def split_host(host, port):
    """host, port of a host that may name its port (host:port)."""
    name, colon, number = (host or "").rpartition(":")
    if colon and number.isdigit() and ":" not in name:
        return name, int(number)
    return host, int(port) if port not in (None, "") else None


def parse_url(url):
    """kind, host, port, username, password, database, verified of a connection string of any form."""
    lines = [line for line in url.splitlines() if line.strip()]
    if len(lines) > 1 or url.startswith("DATABASE_URL="):  # an environment file: its DATABASE_URL
        found = [line.split("=", 1)[1] for line in lines if line.startswith("DATABASE_URL=")]
        if not found:
            raise ValueError("the environment lines have no DATABASE_URL")
        return parse_url(found[0])
    go = GO_DSN.match(url)
    if go:
        host, port = split_host(go.group("address"), None)
        query = parse_qs(go.group("query") or "")
        return ("mysql", host, port, go.group("user"), go.group("password"), go.group("database"),
                VERIFIED.get(query.get("tls", ["false"])[0], "none"))
    jdbc = url.startswith("jdbc:")
    parts = urlsplit(url[5:] if jdbc else url)
    kind = {"mysql": "mysql", "postgresql": "postgresql", "postgres": "postgresql"}.get(parts.scheme)
    if kind is None:
        raise ValueError("the URL is neither mysql:// nor postgresql:// (nor jdbc: or a Go DSN)")
    query = parse_qs(parts.query)
    mode = next((query[key][0] for key in ("ssl-mode", "sslMode", "sslmode", "sslaccept") if key in query), None)
    username = query["user"][0] if jdbc else unquote(parts.username or "")
    password = query["password"][0] if jdbc else unquote(parts.password or "")
    return (kind, parts.hostname, parts.port, username, password, unquote(parts.path.lstrip("/")),
            VERIFIED.get(mode, "none"))


def parse_connection(connection, kind):
    """The same from a dict of connection details: the strictest verification, as applications are told to use."""
    host, port = split_host(connection.get("host"), connection.get("port"))
    return (connection.get("kind") or kind or "mysql", host, port, connection.get("username"),
            connection.get("password"), connection.get("database"), "identity")


def mysql_session(target, ca_file):
    import pymysql

    kind, host, port, username, password, database, verified = target
    ssl = {"ssl_ca": ca_file, "ssl_verify_cert": verified != "none", "ssl_verify_identity": verified == "identity"}
    connection = pymysql.connect(host=host, port=port or 3306, user=username, password=password,
                                 database=database or None, autocommit=True, connect_timeout=10, **ssl)

    def run(statement):
        with connection.cursor() as cursor:
            cursor.execute(statement)
            return [list(row) for row in cursor.fetchall()] if cursor.description else []

    return connection, run, run("SHOW STATUS LIKE 'Ssl_version'")[0][1]


def postgres_session(target, ca_file):
    import psycopg

    kind, host, port, username, password, database, verified = target
    connection = psycopg.connect(host=host, port=port or 5432, user=username, password=password, dbname=database,
                                 sslmode=PG_MODES[verified], sslrootcert=ca_file, autocommit=True, connect_timeout=10)

    def run(statement):
        cursor = connection.execute(statement)
        return [list(row) for row in cursor.fetchall()] if cursor.description else []

    return connection, run, run("SELECT version FROM pg_stat_ssl WHERE pid = pg_backend_pid()")[0][0]


def refusal(error, secret):
    """code, message of a server's refusal (MySQL: the error number; PostgreSQL: the SQLSTATE), without the secret."""
    code = error.args[0] if error.args and isinstance(error.args[0], int) else getattr(error, "sqlstate", None)
    message = error.args[1] if len(error.args) > 1 and isinstance(error.args[1], str) else str(error)
    return code, message.replace(secret, "********") if secret else message


def main():
    module = AnsibleModule(argument_spec=dict(
        url=dict(type="str", no_log=True),
        connection=dict(type="dict", options=dict(
            kind=dict(type="str"), host=dict(type="str"), port=dict(type="int"), username=dict(type="str"),
            password=dict(type="str", no_log=True), database=dict(type="str"), branch=dict(type="str"))),
        kind=dict(type="str", choices=["mysql", "postgresql"]),
        database=dict(type="str"),
        ca_file=dict(type="path", required=True),
        statements=dict(type="list", elements="str", default=[]),
        fail_on_refusal=dict(type="bool", default=False),
    ), required_one_of=[("url", "connection")], mutually_exclusive=[("url", "connection")])
    params = module.params
    try:
        target = parse_url(params["url"]) if params["url"] else parse_connection(params["connection"], params["kind"])
    except ValueError as error:
        module.fail_json(msg="db_login: %s." % error)
    if params["database"]:
        target = target[:5] + (params["database"],) + target[6:]
    kind, host, port, username, secret, database, verified = target
    if secret:
        module.no_log_values.add(secret)
    result = dict(changed=False, verified=verified, results=[],
                  target=dict(kind=kind, host=host, port=port, username=username, database=database))
    if kind == "mysql":
        import pymysql
        session, errors = mysql_session, pymysql.MySQLError
    else:
        import psycopg
        session, errors = postgres_session, psycopg.Error
    try:
        connection, run, result["tls"] = session(target, params["ca_file"])
    except errors as error:
        code, message = refusal(error, secret)
        result["login"] = dict(ok=False, code=code, message=message)
    else:
        result["login"] = dict(ok=True)
        with connection:
            for statement in params["statements"]:
                try:
                    result["results"].append(dict(statement=statement, ok=True, rows=run(statement)))
                except errors as error:
                    code, message = refusal(error, secret)
                    result["results"].append(dict(statement=statement, ok=False, code=code, message=message))
    refused = [r["message"] for r in [result["login"]] + result["results"] if not r["ok"]]
    if params["fail_on_refusal"] and refused:
        module.fail_json(msg="db_login: refused: %s" % refused[0], **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
