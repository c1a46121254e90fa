"""The MySQL edge: where the emulator's passwords connect, as the platform's edge (``mysql_edge_address``).

On the platform a password logs in to ``<database>`` and the edge takes it to the password's branch. On the
data plane a MySQL branch is the MariaDB schema ``<database>__<branch>``, so a client that connects as the
platform's documentation says (``database: app``) would land on a schema its user has no grant on. The edge
stands between the two: it speaks TLS to the client with the emulator's certificate (the client verifies it as
it verifies the platform's), reads the client's login packet, names the branch's schema in it instead of the
database, sends it on to MariaDB over TLS, and from then on passes every byte unchanged both ways.

It reads the MySQL protocol only as far as the login packet (HandshakeResponse41: the user name, the auth
answer and the database); MariaDB checks the password itself, against the scramble it sent: the edge relays
MariaDB's greeting, so the client's answer is made for MariaDB's challenge and the edge never sees a secret.
A client that later switches databases (``USE app``, COM_INIT_DB) is not rewritten: the platform has one
keyspace per connection, and the branch's tables are the connection's default schema.
"""

import select
import socket
import socketserver
import ssl
import struct
import threading

CLIENT_CONNECT_WITH_DB = 0x8
CLIENT_SSL = 0x800
CLIENT_SECURE_CONNECTION = 0x8000
CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA = 0x200000
SSL_REQUEST_SIZE = 32


def read_packet(sock) -> tuple[int, bytes]:
    """One protocol packet: its sequence number and payload."""
    header = _read_exactly(sock, 4)
    size = header[0] | header[1] << 8 | header[2] << 16
    return header[3], _read_exactly(sock, size)


def write_packet(sock, sequence: int, payload: bytes) -> None:
    sock.sendall(struct.pack("<I", len(payload))[:3] + bytes([sequence]) + payload)


def _read_exactly(sock, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError("the peer closed the connection during the login")
        data += chunk
    return data


def _lenenc(payload: bytes, at: int) -> tuple[int, int]:
    """A length-encoded integer at ``at``: its value and where what follows starts."""
    first = payload[at]
    if first < 0xFB:
        return first, at + 1
    width = {0xFC: 2, 0xFD: 3, 0xFE: 8}[first]
    return int.from_bytes(payload[at + 1:at + 1 + width], "little"), at + 1 + width


def login_fields(payload: bytes) -> tuple[int, str, int, int]:
    """Of a HandshakeResponse41: the capability flags, the user name, and where the database field starts and
    ends (equal when the client named none, and then the flag CLIENT_CONNECT_WITH_DB is not set)."""
    capabilities = struct.unpack_from("<I", payload)[0]
    end = payload.index(b"\0", SSL_REQUEST_SIZE)
    user = payload[SSL_REQUEST_SIZE:end].decode("utf-8", "replace")
    at = end + 1
    if capabilities & CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA:
        size, at = _lenenc(payload, at)
        at += size
    elif capabilities & CLIENT_SECURE_CONNECTION:
        at += 1 + payload[at]
    else:
        at = payload.index(b"\0", at) + 1
    if not capabilities & CLIENT_CONNECT_WITH_DB:
        return capabilities, user, at, at
    return capabilities, user, at, payload.index(b"\0", at)


def with_database(payload: bytes, schema: str | None) -> bytes:
    """The login packet with ``schema`` as its database (None: the client's, or none); the flag
    CLIENT_CONNECT_WITH_DB is always set, as in the SSL request the edge sent the server before."""
    capabilities, _, start, end = login_fields(payload)
    name = payload[start:end] if schema is None else schema.encode()
    if capabilities & CLIENT_CONNECT_WITH_DB:
        return payload[:start] + name + payload[end:]
    flags = struct.pack("<I", capabilities | CLIENT_CONNECT_WITH_DB)
    return flags + payload[4:start] + name + b"\0" + payload[start:]


class MySQLEdge(socketserver.ThreadingTCPServer):
    """A TCP server on 127.0.0.1 (a free port) in a thread of its own; ``route(user, database)`` names the schema
    a login goes to (None: as the client asked)."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, backend: tuple[str, int], cert_file: str, key_file: str, ca_file: str, route):
        super().__init__(("127.0.0.1", 0), EdgeConnection)
        self.backend = backend
        self.route = route
        self.to_client = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.to_client.load_cert_chain(cert_file, key_file)
        self.to_server = ssl.create_default_context(cafile=ca_file)
        self.thread = threading.Thread(target=self.serve_forever, name="mysql-edge", daemon=True)
        self.thread.start()

    @property
    def address(self) -> str:
        host, port = self.server_address[:2]
        return f"{host}:{port}"


class EdgeConnection(socketserver.BaseRequestHandler):
    def handle(self):
        edge: MySQLEdge = self.server
        client = self.request
        server = socket.create_connection(edge.backend, timeout=30)
        try:
            sequence, greeting = read_packet(server)
            write_packet(client, sequence, greeting)
            sequence, answer = read_packet(client)
            if len(answer) == SSL_REQUEST_SIZE and struct.unpack_from("<I", answer)[0] & CLIENT_SSL:
                # MariaDB takes the client's capabilities from this request: the login will name a database
                flags = struct.pack("<I", struct.unpack_from("<I", answer)[0] | CLIENT_CONNECT_WITH_DB)
                write_packet(server, sequence, flags + answer[4:])
                server = edge.to_server.wrap_socket(server, server_hostname=edge.backend[0])
                client = edge.to_client.wrap_socket(client, server_side=True)
                sequence, answer = read_packet(client)
            _, user, start, end = login_fields(answer)
            schema = edge.route(user, answer[start:end].decode("utf-8", "replace") or None)
            write_packet(server, sequence, with_database(answer, schema))
            server.settimeout(None)
            splice(client, server)
        except (OSError, ValueError, IndexError, KeyError, struct.error):
            pass  # a client that leaves, or a packet that is no login: the connection ends, as at MariaDB's door
        finally:
            for sock in (client, server):
                try:
                    sock.close()
                except OSError:
                    pass


def splice(one, other) -> None:
    """Every byte each side sends goes to the other, until one of them closes (TLS records decrypted on one side
    and encrypted on the other; data already decrypted and buffered is passed on before waiting again)."""
    peers = {one: other, other: one}
    while True:
        ready = [sock for sock in peers if isinstance(sock, ssl.SSLSocket) and sock.pending()]
        if not ready:
            ready, _, _ = select.select(list(peers), [], [])
        for sock in ready:
            try:
                data = sock.recv(65536)
            except ssl.SSLWantReadError:
                continue
            if not data:
                return
            peers[sock].sendall(data)
