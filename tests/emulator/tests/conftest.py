import os
import re
import tempfile
import threading
import time
from pathlib import Path

import httpx2
import pytest
import uvicorn
from fastapi.testclient import TestClient

from emulator import Settings, create_app
from harness.dataplane import DataPlane, write_certificates

from .openapi_check import PublishedApi, Recorder, Tally, describe, missing_reason, reference_files

DB = "/v1/organizations/acme/databases/app"
MAIN = f"{DB}/branches/main"

# Every exchange of the session's emulators (TestClient and real server) is recorded and, after
# each test, validated against the platform's published OpenAPI (see openapi_check.py).
RECORDER = Recorder()
TALLY = Tally()
_published: list[PublishedApi] = []
COVERAGE_FAILED: list[bool] = []  # set when the whole suite left an operation without a validated success answer


DATAPLANE: list[DataPlane] = []


def pytest_sessionstart(session):
    """One data plane (MariaDB and PostgreSQL, tests/harness/dataplane.py) for the session's emulators: every
    app made from now on drives it (EMULATOR_DATAPLANE) and resets it with its world; a missing server fails."""
    cert_dir = tempfile.mkdtemp(prefix="emulator-tests-tls-")
    write_certificates(cert_dir)
    DATAPLANE.append(DataPlane(cert_dir).start())
    os.environ["EMULATOR_DATAPLANE"] = DATAPLANE[0].config_path


def pytest_unconfigure(config):
    while DATAPLANE:
        DATAPLANE.pop().stop()


@pytest.fixture(scope="session")
def dataplane() -> DataPlane:
    """The session's data plane: its config (addresses, admin logins, ca_file)."""
    return DATAPLANE[0]


def published_api() -> PublishedApi | None:
    """The published OpenAPI files, read once; None when they are absent."""
    if not _published and missing_reason() is None:
        _published.append(PublishedApi(reference_files()))
    return _published[0] if _published else None


def check_recorded() -> list:
    """Validate what was recorded since the last call; answer the violations."""
    exchanges = RECORDER.drain()
    published = published_api()
    if published is None:
        return []
    violations = []
    for exchange in exchanges:
        outcome = published.check(exchange)
        TALLY.add(outcome)
        if outcome.kind == "violation":
            violations.append(outcome)
    return violations


@pytest.fixture(autouse=True)
def openapi_check():
    """Fail the test whose requests got a response that violates the published OpenAPI."""
    check_recorded()  # anything left over belongs to no test: counted, reported at the end
    yield
    violations = check_recorded()
    if violations:
        pytest.fail(f"{len(violations)} response(s) violate the published OpenAPI:\n{describe(violations)}")


@pytest.fixture
def published():
    """The published OpenAPI files; the test is skipped, saying why, when they are absent."""
    reason = missing_reason()
    if reason:
        pytest.skip(reason)
    return published_api()


def pytest_sessionfinish(session):
    if check_recorded() or TALLY.violations:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    # the whole suite gets a validated success answer from every /v1 operation the emulator serves
    if published_api() is not None and session.testsfailed == 0 and whole_suite(session) \
            and unexercised_operations():
        COVERAGE_FAILED.append(True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter):
    reason = missing_reason()
    write = terminalreporter.write_line
    terminalreporter.section("published OpenAPI")
    if reason:
        write(f"OpenAPI check skipped: {reason}")
        return
    counts = TALLY.counts
    files = ", ".join(path.name for path in reference_files())
    write(f"OpenAPI check against {files}: {TALLY.checked} responses validated, "
          f"{counts['violation']} violations; {len(TALLY.operations)} operations answered with success")
    write(f"  {counts['expected']} differ only as a lean setting or a fault rule's body asked (not violations)")
    undeclared = ", ".join(f"{op} {status} x{n}" for (op, status), n in sorted(TALLY.undeclared.items()))
    write(f"  {counts['undeclared_error']} error responses with a status their operation does not declare "
          f"(not violations): {undeclared or 'none'}")
    outside = ", ".join(f"{why} x{n}" for why, n in sorted(TALLY.outside.items()))
    write(f"  {counts['outside']} responses outside the published API, not validated: {outside or 'none'}")
    unexercised = unexercised_operations()
    write(f"  emulator operations without a validated success answer: {', '.join(unexercised) or 'none'}",
          red=bool(unexercised))
    if unexercised and COVERAGE_FAILED:
        write("  the whole suite must get a validated success answer from every operation: the session fails",
              red=True)
    if TALLY.violations:
        write(describe(TALLY.violations[:20]), red=True)


def api_routes(routes=None) -> list:
    """Every route of the emulator app, through the routers it includes (newer FastAPI wraps them)."""
    found = []
    for route in create_app(Settings()).routes if routes is None else routes:
        inner = getattr(route, "original_router", None)
        found += api_routes(inner.routes) if inner is not None else [route]
    return found


def emulator_operations() -> dict[str, str]:
    """The published operation of each /v1 route of the emulator ("METHOD template"), by route."""
    published = published_api()
    operations = {}
    for route in api_routes():
        if not getattr(route, "path", "").startswith("/v1/"):
            continue
        sample = re.sub(r"\{[^}]+\}", "x", route.path)
        for method in sorted(route.methods):
            operations[f"{method} {route.path}"] = published.operation(method, sample) \
                or published.unpublished_operation(method, sample)
    return operations


def unexercised_operations() -> list[str]:
    """The emulator's /v1 routes that no test got a validated success answer from."""
    return [operation or f"{route} (not in the published OpenAPI)"
            for route, operation in emulator_operations().items() if operation not in TALLY.operations]


def whole_suite(session) -> bool:
    """The session ran every test of the suite (not narrowed by -k, -m, --lf or paths)."""
    option = session.config.option
    if getattr(option, "keyword", "") or getattr(option, "markexpr", "") or getattr(option, "lf", False):
        return False
    here = Path(__file__).resolve().parent
    return all(Path(arg.split("::")[0]).resolve() in (here, here.parent) for arg in session.config.args)


class Api:
    """A client of one emulator with the seeded credentials at hand."""

    def __init__(self, client):
        self.client = client
        self.world = client.get("/_emulator/world").json()
        token = self.world["service_token"]
        self.auth = {"Authorization": f"{token['id']}:{token['token']}"}

    def call(self, method, path, **kwargs):
        headers = {**self.auth, **kwargs.pop("headers", {})}
        return self.client.request(method, path, headers=headers, **kwargs)

    def get(self, path, **kwargs):
        return self.call("GET", path, **kwargs)

    def post(self, path, **kwargs):
        return self.call("POST", path, **kwargs)

    def patch(self, path, **kwargs):
        return self.call("PATCH", path, **kwargs)

    def put(self, path, **kwargs):
        return self.call("PUT", path, **kwargs)

    def delete(self, path, **kwargs):
        return self.call("DELETE", path, **kwargs)

    def control(self, method, path, **kwargs):
        return self.client.request(method, f"/_emulator{path}", **kwargs)

    def advance(self, seconds):
        assert self.control("POST", "/clock", json={"advance_seconds": seconds}).status_code == 200

    def authorization_code(self, **overrides):
        app = self.world["oauth_application"]
        body = {"client_id": app["client_id"], "redirect_uri": app["redirect_uri"], **overrides}
        response = self.control("POST", "/oauth/authorization-codes", json=body)
        assert response.status_code == 200, response.text
        return response.json()["code"]

    def token(self, **form):
        return self.client.post("/oauth/token", data=form)

    def login(self):
        """Run the authorization code grant; answer the token response."""
        app = self.world["oauth_application"]
        response = self.token(
            grant_type="authorization_code",
            code=self.authorization_code(),
            redirect_uri=app["redirect_uri"],
            client_id=app["client_id"],
            client_secret=app["client_secret"],
        )
        assert response.status_code == 200, response.text
        return response.json()


@pytest.fixture(scope="session")
def app():
    return create_app(Settings())


@pytest.fixture(scope="session")
def client(app):
    with TestClient(RECORDER.wrap(app)) as session_client:
        yield session_client


@pytest.fixture
def api(client):
    client.post("/_emulator/reset")
    return Api(client)


class Server:
    """The emulator on a real uvicorn server in a thread, on a free port."""

    def __init__(self, app):
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, lifespan="off", log_level="error",
                                                     date_header=False))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self):
        self.thread.start()
        deadline = time.monotonic() + 120  # a guard against a hang, not a measure: a busy machine starts slowly
        while not self.server.started:
            assert time.monotonic() < deadline, "server did not start within 120 seconds"
            time.sleep(0.02)
        self.port = self.server.servers[0].sockets[0].getsockname()[1]
        return self

    def __exit__(self, *exc_info):
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture(scope="session")
def server():
    with Server(RECORDER.wrap(create_app(Settings()))) as running:
        yield running


@pytest.fixture
def remote(server):
    """An Api over real HTTP to the threaded server, reset first."""
    with httpx2.Client(base_url=f"http://127.0.0.1:{server.port}", trust_env=False, timeout=10) as client:
        client.post("/_emulator/reset")
        yield Api(client)
