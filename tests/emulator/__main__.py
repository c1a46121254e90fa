"""python -m emulator [--host H] [--port P] [--ready-delay S] [--deploy-check-delay S] [--deploy-step-delay S]
[--revert-window S] [--rate-limit N] [--tls --cert-dir DIR] [--dataplane FILE]
[--lean | --list-envelope full|no_totals|bare --cluster-rate-name --type-keys --recorded-databases]"""

import argparse
import asyncio
import os
from pathlib import Path

import uvicorn

from .app import create_app
from .world.state import Settings


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m emulator", description="Run the platform API emulator.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8787, help="0 picks a free port (printed when ready)")
    parser.add_argument("--ready-delay", type=float, default=2.0, help="seconds until a new branch is ready")
    parser.add_argument("--deploy-check-delay", type=float, default=1.0,
                        help="seconds a new deploy request stays pending (its deploy check)")
    parser.add_argument("--deploy-step-delay", type=float, default=1.0,
                        help="seconds each step of a deploy, cancel or revert takes")
    parser.add_argument("--revert-window", type=float, default=1800.0,
                        help="seconds a deployed request can be reverted")
    parser.add_argument("--rate-limit", type=int, default=None, help="requests a minute per credential")
    parser.add_argument("--token-ttl", type=int, default=3600, help="OAuth access token lifetime in seconds")
    parser.add_argument("--tls", action="store_true", help="serve HTTPS with a generated certificate")
    parser.add_argument("--cert-dir", type=Path, help="where --tls writes ca.pem (and the server certificate)")
    parser.add_argument("--log-level", default="warning", help="uvicorn log level")
    parser.add_argument("--dataplane", type=Path, help="the data plane's servers (dataplane.json of tests/harness/dataplane.py; default: $EMULATOR_DATAPLANE)")
    lean = parser.add_argument_group("shapes of real responses beside the published OpenAPI")
    lean.add_argument("--lean", action="store_true", help="the leanest shapes: --list-envelope bare "
                      "--cluster-rate-name --type-keys --recorded-databases, lean answers to deploy-request writes, "
                      "zero times, capacity as the platform records it (the flags below given with it win)")
    lean.add_argument("--list-envelope", choices=("full", "no_totals", "bare"), help="page list envelopes")
    lean.add_argument("--cluster-rate-name", action="store_true", default=None,
                      help="branch records carry cluster_rate_name instead of cluster_name")
    lean.add_argument("--type-keys", action="store_true", default=None, help='records carry "type"')
    lean.add_argument("--recorded-databases", action="store_true", default=None,
                      help="database records carry neither ready nor kind")
    args = parser.parse_args(argv)
    if args.tls and args.cert_dir is None:
        parser.error("--tls needs --cert-dir")
    return args


def write_certificates(cert_dir: Path) -> Path:
    """A fresh CA (ca.pem) and a server certificate for 127.0.0.1 and localhost (server.pem); those the test
    harness wrote there already (its data plane's servers have certificates of the same CA) are kept."""
    import trustme

    if (cert_dir / "ca.pem").is_file() and (cert_dir / "server.pem").is_file():
        return cert_dir / "server.pem"
    cert_dir.mkdir(parents=True, exist_ok=True)
    ca = trustme.CA()
    server = ca.issue_cert("127.0.0.1", "localhost")
    server.private_key_and_cert_chain_pem.write_to_path(str(cert_dir / "server.pem"))
    ca.cert_pem.write_to_path(str(cert_dir / "ca.pem"))
    return cert_dir / "server.pem"


async def serve(server: uvicorn.Server, scheme: str) -> None:
    task = asyncio.create_task(server.serve())
    while not server.started and not task.done():
        await asyncio.sleep(0.02)
    if server.started:
        host, port = server.servers[0].sockets[0].getsockname()[:2]
        base = f"{scheme}://{host}:{port}"
        print(f"emulator ready: api_url={base}/v1 auth_url={base} control={base}/_emulator/world", flush=True)
    await task


def settings_of(args: argparse.Namespace) -> Settings:
    shapes = {"list_envelope": args.list_envelope, "cluster_rate_name": args.cluster_rate_name,
              "type_keys": args.type_keys, "recorded_databases": args.recorded_databases}
    given = {key: value for key, value in shapes.items() if value is not None}
    if args.lean:
        given["lean"] = True
    return Settings(ready_delay=args.ready_delay, rate_limit=args.rate_limit, token_ttl=args.token_ttl,
                    deploy_check_delay=args.deploy_check_delay, deploy_step_delay=args.deploy_step_delay,
                    revert_window=args.revert_window, **given)


def count_connections(config: uvicorn.Config, app) -> None:
    """The server counts every connection it accepts in the app's traffic (GET /_emulator/connections),
    and those its HTTP protocol saw made: over TLS, a connection whose handshake fails is never made."""
    config.load()
    protocol = config.http_protocol_class

    class Counted(protocol):  # type: ignore[misc, valid-type]
        def __init__(self, *args, **kwargs):
            app.state.traffic.count_connection()
            super().__init__(*args, **kwargs)

        def connection_made(self, transport):
            app.state.traffic.count_connection(made=True)
            super().connection_made(transport)

    config.http_protocol_class = Counted


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    settings = settings_of(args)
    if args.dataplane is not None:
        os.environ["EMULATOR_DATAPLANE"] = str(args.dataplane.resolve())
    certificate = write_certificates(args.cert_dir) if args.tls else None
    app = create_app(settings)
    config = uvicorn.Config(
        app,
        host=args.host,
        port=args.port,
        log_level=args.log_level,
        lifespan="off",
        date_header=False,  # the emulator's own, from its clock
        # an idle connection is kept as a platform's front servers keep one (a minute and more): uvicorn's 5 s
        # closed it between two tasks of a busy machine, and connection counts (the benchmark's) varied with load
        timeout_keep_alive=75,
        ssl_certfile=str(certificate) if certificate else None,
    )
    count_connections(config, app)
    asyncio.run(serve(uvicorn.Server(config), "https" if certificate else "http"))


if __name__ == "__main__":
    main()
