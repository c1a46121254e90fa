import threading
import time

import httpx2
import pytest
import uvicorn
from fastapi.testclient import TestClient

from emulator import Settings, create_app

DB = "/v1/organizations/acme/databases/app"
MAIN = f"{DB}/branches/main"


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
    with TestClient(app) as session_client:
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
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.02)
        self.port = self.server.servers[0].sockets[0].getsockname()[1]
        return self

    def __exit__(self, *exc_info):
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture(scope="session")
def server():
    with Server(create_app(Settings())) as running:
        yield running


@pytest.fixture
def remote(server):
    """An Api over real HTTP to the threaded server, reset first."""
    with httpx2.Client(base_url=f"http://127.0.0.1:{server.port}", trust_env=False, timeout=10) as client:
        client.post("/_emulator/reset")
        yield Api(client)
