"""Holds every response the emulator serves to the platform's published OpenAPI.

``Recorder`` wraps an emulator app (outermost ASGI layer) and keeps each exchange: method,
path, status, content type, body, the settings in force and the fault rule that answered, if
any. ``PublishedApi`` reads every ``platform-openapi-*.json`` in ``../shared/reference/``
beside the project root (read at test time, never copied into the project) and validates an
exchange with openapi-core against whichever file declares its operation; a file added there
later (new endpoints) joins without a change here. The whole published file,
``platform-openapi.json``, is read last: an operation none of the excerpts declares (workflows)
is validated against it.

Outcomes of one exchange:

- ``validated``: the operation and the status are declared and the body matches the declared
  content (every required field present, with the declared type);
- ``violation``: a success status the operation does not declare, a body that does not match,
  or a success answer on a /v1 operation no file declares;
- ``expected``: validated, and its only differences are the ones a lean setting
  (``list_envelope``, ``cluster_rate_name``, ``lean_write_answers``, ``recorded_databases``, ``recorded_capacity``,
  ``recorded_vitess``: keyspaces and workflows; ``recorded_metrics``; ``recorded_billing_oauth``: invoices, OAuth
  applications and tokens; ``recorded_insights``: query insights)
  or the body a fault rule was asked for produces
  on purpose, or a success status the platform answers beside the OpenAPI under a setting
  (``DEVIATIONS``: a database DELETE that opens a deletion request);
- ``undeclared error``: a 4xx/5xx the operation does not list (the published OpenAPI lists
  only some error statuses; the platform answers 422 and 429 where it does not say so);
- ``outside``: not an operation of the published API: the OAuth server (/oauth), the signed
  download host, routes the emulator does not have (404), and operations the reference lists
  under ``x-not-in-published-spec``.
"""

import json
import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from openapi_core import OpenAPI
from openapi_core.templating.paths.exceptions import PathError
from openapi_core.templating.responses.exceptions import ResponseNotFound
from openapi_core.testing import MockRequest, MockResponse

PROJECT_ROOT = Path(__file__).resolve().parents[3]
REFERENCE = PROJECT_ROOT.parent / "shared" / "reference"
PATTERN = "platform-openapi-*.json"
WHOLE = "platform-openapi.json"  # the whole published file: for the operations no excerpt declares (workflows)
SERVER = "https://api.planetscale.com"  # the servers entry of the published files is {SERVER}/v1
CONTROL_PREFIX = "/_emulator/"
SIGNED_PREFIX = "/_emulator/signed/"
UNPUBLISHED = "x-not-in-published-spec"
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")

ENVELOPE_TOTALS = {"current_page", "total_count", "total_pages"}
LEAN_WRITES = re.compile(
    r"^(PATCH /v1/.*/deploy-requests/\d+|POST /v1/.*/deploy-requests/\d+/(deploy|cancel|complete-deploy|force-cutover))$")
LEAN_PASSWORD_CREATE = re.compile(r"^POST /v1/.*/branches/[^/]+/passwords$")
# the answers that carry database records (a list or one): the recorded_databases setting leaves out ready and kind
DATABASE_PATH = re.compile(r"/v1/organizations/[^/]+/databases(/[^/]+)?/?$")
# the answers about keyspaces (records, lists, resize requests): the recorded_vitess setting makes them lean
KEYSPACE_PATH = re.compile(r"^/v1/organizations/[^/]+/databases/[^/]+/branches/[^/]+/keyspaces(/|$)")
# the answers about workflows: recorded_vitess leaves these keys out (per_page of the list) and makes the actors and the
# subtype null; lean_write_answers makes the complete action's answer say "complete", a state the enum lacks
WORKFLOW_PATH = re.compile(r"^/v1/organizations/[^/]+/databases/[^/]+/workflows(/|$)")
RECORDED_WORKFLOW_WITHOUT = {"defer_secondary_keys", "on_ddl", "workflow_errors", "may_restart",
                             "sequence_tables_applied", "global_keyspace", "per_page"}
RECORDED_WORKFLOW_NULL = re.compile(
    r"at (/data/\d+)?/(\w+_by|workflow_subtype): None (for not nullable|is not of type '\w+')$")
# the answers about invoices and OAuth applications: recorded_billing_oauth gives their lists the recorded envelopes
# and the tokens' oauth_accesses_by_resource only its database key, empty
BILLING_OAUTH_PATH = re.compile(r"^/v1/organizations/[^/]+/(invoices|oauth-applications)(/|$)")
LEAN_COMPLETE = re.compile(r"^PATCH /v1/.*/workflows/\d+/complete$")
# the public regions and query-pattern reports: recorded_regions_reports leaves out the regions' public_ip_addresses, a
# pending report's download_url and finished_at, a completed one's actor and url
REPORT_PATH = re.compile(r"^/v1/organizations/[^/]+/databases/[^/]+/branches/[^/]+/query-patterns(/[^/]+)?$")
RECORDED_REPORT_WITHOUT = {"download_url", "finished_at", "actor", "url"}
# the answers about metrics: recorded_metrics gives series and instant metrics as objects where the spec types strings
METRICS_ITEM = re.compile(r": at /(series|metrics)/\d+: ")
METRICS_PATH = re.compile(r"^/v1/organizations/[^/]+/databases/[^/]+/branches/[^/]+/metrics(/|$)")
# the answers about query insights: recorded_insights gives durations as fractions, the recorded envelopes, and items
# without the keys the platform's recorded ones lack
INSIGHTS_PATH = re.compile(r"^/v1/organizations/[^/]+/databases/[^/]+/branches/[^/]+/insights(/|$)")
INSIGHTS_FRACTION = re.compile(r"/(sum_total|sum_cpu|sum_io|total)_duration_millis: [\d.e-]+ is not of type 'integer'$")
RECORDED_INSIGHTS_WITHOUT = {
    "sum_shard_queries", "max_shard_queries", "avg_shard_queries", "egress_bytes", "egress_bytes_per_query",
    "max_egress_bytes", "ingress_bytes", "ingress_bytes_per_query", "max_ingress_bytes", "blocks_read", "blocks_hit",
    "block_cache_hit_ratio", "blocks_dirtied", "blocks_written", "statement_type", "keyspace", "tables", "password"}
# success statuses an operation does not declare that the platform answers under a setting
# (../shared/reference/README.md, "More of the platform"): (operation, status) -> the setting that asks for it
DEVIATIONS = {
    ("DELETE /organizations/{organization}/databases/{database}", 202): "multiple_admins_required_for_deletion",
}


@dataclass
class Exchange:
    method: str
    path: str
    status: int = 0
    content_type: str = ""
    body: bytes = b""
    settings: dict = field(default_factory=dict)
    fault: dict | None = None

    def describe(self) -> str:
        return f"{self.method} {self.path} -> {self.status}"


@dataclass
class Outcome:
    kind: str  # validated, violation, expected, undeclared_error, outside, control
    exchange: Exchange
    operation: str = ""  # "GET /organizations/{organization}/..." as the file declares it; outside: why
    problems: list[str] = field(default_factory=list)


class Recorder:
    """ASGI wrapper that keeps every exchange of the app it wraps (thread-safe)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pending: list[Exchange] = []

    def wrap(self, app):
        """The app, recorded: an exchange is kept once its answer has started (not when dropped)."""

        async def recording(scope, receive, send):
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            exchange = Exchange(scope["method"], scope["path"])
            await app(scope, receive, RecordingSend(send, exchange, app, scope))
            if exchange.status:
                with self.lock:
                    self.pending.append(exchange)

        return recording

    def drain(self) -> list[Exchange]:
        with self.lock:
            taken, self.pending = self.pending, []
        return taken


class RecordingSend:
    """The ``send`` of a recorded request. ``transport`` passes the server's own through, so a
    fault rule that drops the connection still reaches the socket under a real server."""

    def __init__(self, send, exchange: Exchange, app, scope):
        self.send, self.exchange, self.app, self.scope = send, exchange, app, scope
        self.transport = getattr(getattr(send, "__self__", None), "transport", None)
        self.__self__ = self

    async def __call__(self, message):
        exchange = self.exchange
        if message["type"] == "http.response.start":
            exchange.status = message["status"]
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in message.get("headers", [])}
            exchange.content_type = headers.get("content-type", "")
            exchange.settings = self.app.state.world.settings.model_dump()
            exchange.fault = self.scope.get("emulator.fault")
        elif message["type"] == "http.response.body":
            exchange.body += message.get("body", b"")
        await self.send(message)


def reference_files(directory: Path = REFERENCE) -> list[Path]:
    """The excerpts (PATTERN), then the whole published file when it is there."""
    if not directory.is_dir():
        return []
    whole = directory / WHOLE
    return sorted(directory.glob(PATTERN)) + ([whole] if whole.is_file() else [])


def missing_reason(directory: Path = REFERENCE) -> str | None:
    """Why the check cannot run, or None when the published OpenAPI files are there."""
    if reference_files(directory):
        return None
    return (
        f"the platform's published OpenAPI ({PATTERN}) is not in {directory} "
        "(../shared/reference/ beside the project root): responses are not validated"
    )


def _template_regex(template: str) -> re.Pattern:
    parts = re.split(r"(\{[^}]+\})", template)
    return re.compile("^" + "".join("[^/]+" if p.startswith("{") else re.escape(p) for p in parts) + "$")


def _missing_property(error) -> str | None:
    if error.validator != "required":
        return None
    match = re.match(r"^'(.+)' is a required property$", error.message)
    return match.group(1) if match else None


class PublishedApi:
    """The published OpenAPI files, and the validation of one exchange against them."""

    def __init__(self, files: list[Path]):
        self.files = files
        self.specs: list[tuple[str, OpenAPI]] = []
        self.unpublished: list[tuple[str, re.Pattern, str]] = []  # x-not-in-published-spec operations
        for path in files:
            document = json.loads(path.read_text())
            self.specs.append((path.name, OpenAPI.from_dict(document)))
            for entries in document.get("x-not-in-published-spec", {}).values():
                for entry in entries if isinstance(entries, list) else [entries]:
                    if isinstance(entry, dict) and "method" in entry and "path" in entry:
                        method = entry["method"].upper()
                        self.unpublished.append((method, _template_regex("/v1" + entry["path"]),
                                                 f"{method} {entry['path']} ({UNPUBLISHED})"))
        self.lists: set[str] = set()  # operations that answer a list envelope ({"data": [...], ...})
        self.templates = self._templates(files)

    def _templates(self, files: list[Path]) -> dict[str, list[tuple[str, re.Pattern]]]:
        templates: dict[str, list[tuple[str, re.Pattern]]] = {}
        for path in files:
            for template, item in json.loads(path.read_text()).get("paths", {}).items():
                for method, operation in item.items():
                    if method in METHODS:
                        templates.setdefault(method.upper(), []).append((template, _template_regex("/v1" + template)))
                        if _answers_a_list(operation):
                            self.lists.add(f"{method.upper()} {template}")
        # concrete segments first, as openapi-core matches them (roles/default before roles/{id})
        for entries in templates.values():
            entries.sort(key=lambda entry: entry[0].count("{"))
        return templates

    def operation(self, method: str, path: str) -> str | None:
        for template, regex in self.templates.get(method.upper(), []):
            if regex.match(path):
                return f"{method.upper()} {template}"
        return None

    def unpublished_operation(self, method: str, path: str) -> str | None:
        """The x-not-in-published-spec operation of a request ("METHOD template (x-not-in-published-spec)")."""
        return next((label for m, regex, label in self.unpublished if m == method.upper() and regex.match(path)),
                    None)

    def check(self, exchange: Exchange) -> Outcome:
        if exchange.path.startswith(SIGNED_PREFIX):
            return Outcome("outside", exchange, "signed download host")
        if exchange.path.startswith(CONTROL_PREFIX):
            return Outcome("control", exchange)  # the emulator's own control API, no part of the platform
        if not exchange.path.startswith("/v1/"):
            why = "OAuth server" if exchange.path.startswith("/oauth/") else "unknown route"
            return Outcome("outside", exchange, why)
        operation = self.operation(exchange.method, exchange.path)
        if operation is None:
            label = self.unpublished_operation(exchange.method, exchange.path)
            if label is not None:  # not validated (the reference gives no schema); its success counts as served
                return Outcome("outside", exchange, UNPUBLISHED, [label])
            if exchange.status >= 400:
                return Outcome("outside", exchange, "unknown route")  # an error answer to a route nobody declares
            return Outcome("violation", exchange, "", [f"no published OpenAPI file declares {exchange.method} "
                                                       f"{exchange.path}, yet the emulator answered it"])
        problems: list[str] = []
        declared = False
        for name, spec in self.specs:
            if declared and name == WHOLE:
                break  # an excerpt declared it: the whole file says the same
            found = self._problems(name, spec, exchange)
            declared = declared or found is not None
            problems += found or []
        if set(problems) == {"undeclared status"}:
            setting = DEVIATIONS.get((operation, exchange.status))
            if setting and exchange.settings.get(setting):
                return Outcome("expected", exchange, operation, [f"status {exchange.status}: {setting} is on"])
            return Outcome("undeclared_error" if exchange.status >= 400 else "violation", exchange, operation,
                           [f"status {exchange.status} is not declared for {operation}"])
        if not problems:
            return Outcome("validated", exchange, operation)
        unexpected = [p for p in problems if not self._expected(p, exchange, operation in self.lists)]
        return Outcome("violation" if unexpected else "expected", exchange, operation, unexpected or problems)

    @staticmethod
    def _problems(name: str, spec: OpenAPI, exchange: Exchange) -> list[str] | None:
        """The problems of the answer by the file's operation; None when the file does not declare it."""
        request = MockRequest(SERVER, exchange.method.lower(), exchange.path)
        response = MockResponse(exchange.body, exchange.status, content_type=exchange.content_type)
        try:
            spec.validate_response(request, response)
        except PathError:
            return None  # another file declares it
        except ResponseNotFound:
            return ["undeclared status"]
        except Exception as exc:  # openapi-core's validation errors: one problem per schema error
            schema_errors = getattr(exc.__cause__, "schema_errors", None)
            if not schema_errors:
                return [f"{name}: {type(exc).__name__}: {exc}"[:500]]
            return [_schema_problem(name, error) for error in schema_errors]
        return []

    @staticmethod
    def _expected(problem: str, exchange: Exchange, is_list: bool) -> bool:
        """A difference that the settings or the fault rule in force asked for."""
        if exchange.fault and exchange.fault.get("body"):
            return True  # the rule asked for that body: a deliberately malformed or foreign answer
        settings = exchange.settings
        workflow = settings.get("recorded_vitess", False) and WORKFLOW_PATH.match(exchange.path) is not None
        if workflow and RECORDED_WORKFLOW_NULL.search(problem):
            return True  # a workflow's workflow_subtype and *_by actors null, as the platform's recorded ones
        if settings.get("recorded_metrics") and METRICS_PATH.match(exchange.path) and METRICS_ITEM.search(problem):
            return True  # a series or an instant metric as the object the platform answers, not a string
        if settings.get("lean_write_answers") and LEAN_COMPLETE.search(f"{exchange.method} {exchange.path}") \
                and re.search(r"at /state: 'complete' is not one of", problem):
            return True  # the complete action's recorded answer says complete
        insights = settings.get("recorded_insights", False) and INSIGHTS_PATH.match(exchange.path) is not None
        if insights and INSIGHTS_FRACTION.search(problem):
            return True  # a duration as the fraction the platform answers
        match = re.search(r"at (\S*): missing required '([^']+)'$", problem)
        if match is None:
            return False
        where, missing = match.groups()
        if insights and (missing in RECORDED_INSIGHTS_WITHOUT or (is_list and where == "/" and missing != "data")):
            return True  # a recorded envelope, or an item without the keys the platform's recorded ones lack
        envelope = settings.get("list_envelope", "full")
        if is_list and where == "/" and envelope == "bare" and missing != "data":
            return True
        if is_list and where == "/" and envelope == "no_totals" and missing in ENVELOPE_TOTALS:
            return True
        if settings.get("lean_write_answers") and LEAN_WRITES.search(f"{exchange.method} {exchange.path}"):
            return True  # a deploy request's close, deploy, cancel, complete-deploy or force-cutover, lean
        if settings.get("lean_write_answers") and missing == "username" and LEAN_PASSWORD_CREATE.search(
                f"{exchange.method} {exchange.path}"):
            return True  # a password's create answered without username, as a recorded answer of the platform
        if missing in ("ready", "kind") and settings.get("recorded_databases", False) \
                and DATABASE_PATH.match(exchange.path) is not None:
            return True  # a database without ready and kind (a keyspace without ready: recorded_vitess, below)
        if settings.get("recorded_vitess", False) and KEYSPACE_PATH.match(exchange.path):
            return True  # a lean keyspace record or list, a resize request without display names or vector fields
        if settings.get("recorded_billing_oauth", False) and BILLING_OAUTH_PATH.match(exchange.path) and (
                (is_list and where == "/" and missing != "data") or "/oauth_accesses_by_resource" in where):
            return True  # a recorded envelope, or a token's recorded oauth_accesses_by_resource: {"database": {}}
        if settings.get("recorded_regions_reports", False) and (
                (exchange.path == "/v1/regions" and missing == "public_ip_addresses")
                or (REPORT_PATH.match(exchange.path) and missing in RECORDED_REPORT_WITHOUT)):
            return True  # a public region, or a report, without the keys the platform's recorded ones lack
        if workflow and missing in RECORDED_WORKFLOW_WITHOUT:
            return True  # a workflow (or their list) without the keys the platform's recorded ones lack
        if settings.get("recorded_capacity", False) and (missing.startswith("vtgate_") or missing == "replicas"):
            return True  # a branch without vtgate_* fields, a completed change request without replicas
        return missing == "cluster_name" and settings.get("cluster_rate_name", False)


def _answers_a_list(operation: dict) -> bool:
    for status, response in operation.get("responses", {}).items():
        if status.startswith("2"):
            schema = response.get("content", {}).get("application/json", {}).get("schema", {})
            if schema.get("properties", {}).get("data", {}).get("type") == "array":
                return True
    return False


def _schema_problem(name: str, error) -> str:
    where = "/" + "/".join(str(part) for part in error.absolute_path)
    missing = _missing_property(error)
    if missing is not None:
        return f"{name}: at {where}: missing required '{missing}'"
    return f"{name}: at {where}: {error.message}"[:500]


class Tally:
    """What the session validated: counts by outcome and the violations in full."""

    def __init__(self) -> None:
        self.counts: Counter = Counter()
        self.violations: list[Outcome] = []
        self.undeclared: Counter = Counter()  # (operation, status) of undeclared error statuses
        self.outside: Counter = Counter()  # why responses were not held to the OpenAPI
        self.operations: set[str] = set()  # operations with a validated success answer

    def add(self, outcome: Outcome) -> None:
        self.counts[outcome.kind] += 1
        if outcome.kind == "violation":
            self.violations.append(outcome)
        elif outcome.kind == "undeclared_error":
            self.undeclared[(outcome.operation, outcome.exchange.status)] += 1
        elif outcome.kind == "outside":
            self.outside[outcome.operation] += 1
        if outcome.kind in ("validated", "expected") and outcome.exchange.status < 400:
            self.operations.add(outcome.operation)
        if outcome.operation == UNPUBLISHED and outcome.exchange.status < 400:
            self.operations.add(outcome.problems[0])

    @property
    def checked(self) -> int:
        """Responses held to a declared operation and status."""
        return self.counts["validated"] + self.counts["expected"] + self.counts["violation"]


def describe(outcomes: list[Outcome]) -> str:
    lines = []
    for outcome in outcomes:
        lines.append(f"{outcome.exchange.describe()} ({outcome.operation or 'no operation'})")
        lines += [f"    {problem}" for problem in outcome.problems[:10]]
        if len(outcome.problems) > 10:
            lines.append(f"    ... and {len(outcome.problems) - 10} more")
    return "\n".join(lines)
