# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one HTTP client of the collection: authentication, retries, errors and pagination."""

from __future__ import annotations

import random
import time
import traceback
import warnings
from urllib.parse import quote, urlsplit

try:
    import requests
    from requests.adapters import HTTPAdapter
    from urllib3.exceptions import InsecureRequestWarning, MaxRetryError, ReadTimeoutError
    from urllib3.util.retry import Retry
except ImportError:  # pragma: no cover - exercised through missing_required_lib
    HAS_REQUESTS = False
    REQUESTS_IMPORT_ERROR = traceback.format_exc()
    Retry = object
else:
    HAS_REQUESTS = True
    REQUESTS_IMPORT_ERROR = None

COLLECTION_VERSION = "0.1.0"
USER_AGENT = "planetscale.cloud/%s (Ansible collection)" % COLLECTION_VERSION

PAGE_SIZE = 100
TRANSIENT_STATUSES = frozenset((429, 502, 503, 504))
# A POST is retried only where the platform cannot have applied it: a rate-limit refusal. A 503 may
# come from a server that committed the write first, and password names are not unique, so a 503
# after a POST is an unknown outcome that the module resolves by reading.
NOT_APPLIED_STATUSES = frozenset((429,))
IDEMPOTENT_METHODS = frozenset(("GET", "HEAD", "OPTIONS", "PUT", "PATCH", "DELETE"))
BACKOFF_FACTOR = 0.5
BACKOFF_MAX = 30.0
RETRY_AFTER_MAX = 60.0
RETRY_TIME_MAX = 120.0


class ApiError(Exception):
    """A request that did not succeed. Carries no header, token or secret."""

    def __init__(self, method, path, status=None, code=None, message=None, outcome_unknown=False,
                 retry_after=None):
        self.method = method
        self.path = path
        self.status = status
        self.code = code
        self.message = message
        self.outcome_unknown = outcome_unknown
        self.retry_after = retry_after  # seconds the server asked to wait (Retry-After), capped; or None
        super().__init__(self.sentence())

    def sentence(self):
        where = "%s %s" % (self.method, self.path)
        if self.status is None:
            return "%s failed: %s." % (where, (self.message or "no response").rstrip("."))
        detail = ", ".join(str(part) for part in (self.code, self.message) if part)
        return "%s failed with HTTP %s%s." % (where, self.status, ": %s" % detail.rstrip(".") if detail else "")

    def as_dict(self):
        return dict(method=self.method, path=self.path, status=self.status, code=self.code, message=self.message)


def path(*segments):
    """Join path segments, each escaped so user input cannot reach another endpoint."""
    parts = []
    for segment in segments:
        text = str(segment)
        if text in ("", ".", ".."):
            raise ValueError("%r cannot be used as a name in an API path." % text)
        parts.append(quote(text, safe=""))
    return "/" + "/".join(parts)


def backoff(attempt, retry_after=None):
    """Seconds to wait before attempt + 1: what the server asked for, else exponential with full jitter."""
    if retry_after is not None:
        return retry_after
    return min(BACKOFF_MAX, BACKOFF_FACTOR * (2 ** (attempt - 1))) * random.uniform(0.5, 1.0)


class _Retry(Retry):
    """urllib3's Retry with the collection's rules.

    Exponential backoff with full jitter, Retry-After honoured up to RETRY_AFTER_MAX,
    all waits of one request bounded by a deadline, and a non-idempotent request
    (POST) retried only on the statuses that mean it was not applied.
    """

    def __init__(self, *args, deadline=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.deadline = deadline  # set at the first retry of a request, so every request gets its own bound

    def new(self, **kwargs):
        kwargs.setdefault("deadline", self.deadline or time.monotonic() + RETRY_TIME_MAX)
        return super().new(**kwargs)

    def is_retry(self, method, status_code, has_retry_after=False):
        if status_code not in TRANSIENT_STATUSES:
            return False
        if method.upper() not in IDEMPOTENT_METHODS and status_code not in NOT_APPLIED_STATUSES:
            return False
        return bool(self.total) and self._next_wait(None) is not None

    def _is_method_retryable(self, method):
        # Statuses are judged by is_retry; this governs read errors (the request was sent).
        return method.upper() in IDEMPOTENT_METHODS

    def get_backoff_time(self):
        attempts = len(self.history)
        if attempts == 0:
            return 0.0
        return backoff(attempts)

    def get_retry_after(self, response):
        value = response.headers.get("Retry-After")
        if value is None:
            return None
        try:
            seconds = self.parse_retry_after(value)
        except Exception:  # an unparsable header is treated as absent
            return None
        return min(max(float(seconds), 0.0), RETRY_AFTER_MAX)

    def _next_wait(self, response):
        wait = (self.get_retry_after(response) if response is not None else None)
        if wait is None:
            wait = self.get_backoff_time()
        if self.deadline is not None and time.monotonic() + wait > self.deadline:
            return None
        return wait

    def increment(self, method=None, url=None, response=None, error=None, _pool=None, _stacktrace=None):
        retry = super().increment(method, url, response, error, _pool, _stacktrace)
        if retry._next_wait(response) is None:
            raise MaxRetryError(_pool, url, error)
        return retry


class _Authorization:
    """The credentials as the session's auth: requests then never consults ~/.netrc, whose entry for
    the API host would replace them (and cost a file lookup on every request)."""

    def __init__(self, value):
        self.value = value

    def __call__(self, request):
        if self.value:
            request.headers["Authorization"] = self.value
        return request


class Client:
    """A requests Session bound to one API root, with the collection's retry rules."""

    def __init__(self, base_url, authorization=None, timeout=30, retries=5,
                 validate_certs=True, ca_path=None, secrets=()):
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self._secrets = [s for s in secrets if s]
        self.server_date = None  # the Date header of the last answer: the server's clock
        self.session = requests.Session()
        self.session.verify = ca_path if (validate_certs and ca_path) else bool(validate_certs)
        self.session.headers.update({"User-Agent": USER_AGENT, "Accept": "application/json"})
        self.session.auth = _Authorization(authorization)
        retry = _Retry(total=retries, connect=retries, read=retries, status=retries, other=0,
                       redirect=5, raise_on_status=False, respect_retry_after_header=True,
                       status_forcelist=TRANSIENT_STATUSES)
        self._retry = retry
        adapter = HTTPAdapter(max_retries=retry)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)

    def close(self):
        self.session.close()

    def request(self, method, url_path, json=None, data=None, params=None, missing_ok=False):
        """Send one request (retried as the rules allow); return the decoded body or None."""
        url = self.base_url + url_path
        try:
            with warnings.catch_warnings():
                if self.session.verify is False:  # the module warns once, in Ansible's way; not urllib3 on stderr
                    warnings.simplefilter("ignore", InsecureRequestWarning)
                # verify on each request: requests lets REQUESTS_CA_BUNDLE or CURL_CA_BUNDLE override session.verify,
                # which would ignore ca_path and validate_certs
                response = self.session.request(method, url, json=json, data=data, params=params,
                                                timeout=self.timeout, verify=self.session.verify)
        except requests.exceptions.SSLError as exc:
            raise ApiError(method, url_path, message=self._scrub(
                "the TLS certificate of %s could not be verified (%s); set ca_path to the CA bundle "
                "that signed it, or validate_certs to false for a test server"
                % (urlsplit(url).netloc, _reason(exc))))
        except (requests.exceptions.ConnectTimeout, requests.exceptions.ConnectionError) as exc:
            if _read_timed_out(exc):  # what requests reports once the retries of a read timeout ran out
                raise ApiError(method, url_path, message="no answer within %s seconds (api_timeout)" % self.timeout,
                               outcome_unknown=method.upper() != "GET")
            sent = not _never_connected(exc)
            raise ApiError(method, url_path, message=self._scrub(
                ("the connection to %s broke after the request was sent (%s)" if sent else "could not connect to %s (%s)")
                % (urlsplit(url).netloc, _reason(exc))),
                outcome_unknown=sent and method.upper() != "GET")
        except requests.exceptions.Timeout:
            raise ApiError(method, url_path, message="no answer within %s seconds (api_timeout)" % self.timeout,
                           outcome_unknown=method.upper() != "GET")
        except requests.exceptions.RequestException as exc:
            raise ApiError(method, url_path, message=self._scrub(_reason(exc)))
        self.server_date = response.headers.get("Date")
        if response.status_code == 404 and missing_ok:
            return None
        if response.status_code >= 400:
            raise self._error(method, url_path, response)
        if response.status_code == 204 or not response.content:
            return None
        try:
            return response.json()
        except ValueError:
            raise ApiError(method, url_path, response.status_code, message="the answer was not JSON")

    def get(self, url_path, params=None, missing_ok=False):
        return self.request("GET", url_path, params=params, missing_ok=missing_ok)

    def post(self, url_path, json=None, data=None):
        return self.request("POST", url_path, json=json, data=data)

    def patch(self, url_path, json):
        return self.request("PATCH", url_path, json=json)

    def delete(self, url_path, missing_ok=False):
        return self.request("DELETE", url_path, missing_ok=missing_ok)

    def paginate(self, url_path, params=None, limit=None):
        """Yield every item of a page-based list, following next_page (at most limit items)."""
        query = dict(params or {})
        query["per_page"] = min(PAGE_SIZE, limit) if limit else PAGE_SIZE
        query["page"] = 1
        count = 0
        while True:
            page = self.get(url_path, params=query) or {}
            for item in page.get("data") or []:
                yield item
                count += 1
                if limit and count >= limit:
                    return
            next_page = page.get("next_page")
            if not next_page:
                return
            query["page"] = next_page

    def paginate_cursor(self, url_path, params=None, limit=None, starting_after=None, ending_before=None,
                        pages=None):
        """Yield every item of a cursor list from the given cursor to its end (at most limit items).

        Walks forward (has_next/cursor_end) unless ending_before is given, then backward
        (has_prev/cursor_start). When pages is a list, each envelope's cursor fields are appended.
        """
        query = dict(params or {}, limit=PAGE_SIZE)
        forward = ending_before is None
        if starting_after:
            query["starting_after"] = starting_after
        if ending_before:
            query["ending_before"] = ending_before
        count = 0
        while True:
            if limit:  # never read past the cap, so the cursor fields point at the last item returned
                query["limit"] = min(PAGE_SIZE, limit - count)
            page = self.get(url_path, params=query) or {}
            if pages is not None:
                pages.append({k: page.get(k) for k in ("has_next", "has_prev", "cursor_start", "cursor_end")})
            for item in page.get("data") or []:
                yield item
                count += 1
                if limit and count >= limit:
                    return
            more, cursor = (("has_next", "cursor_end") if forward else ("has_prev", "cursor_start"))
            if not page.get(more) or not page.get(cursor):
                return
            query.pop("starting_after" if not forward else "ending_before", None)
            query["starting_after" if forward else "ending_before"] = page[cursor]

    def _error(self, method, url_path, response):
        code = message = None
        try:
            body = response.json()
        except ValueError:
            body = None
        if isinstance(body, dict):
            code = body.get("code") or body.get("error")
            message = body.get("message") or body.get("error_description")
        if not message:
            message = response.reason or None
        return ApiError(method, url_path, response.status_code,
                        self._scrub(str(code)) if code else None,
                        self._scrub(str(message)) if message else None,
                        outcome_unknown=method.upper() != "GET" and response.status_code >= 500
                        and response.status_code not in NOT_APPLIED_STATUSES,
                        retry_after=self._retry.get_retry_after(response))

    def _scrub(self, text):
        for secret in self._secrets:
            text = text.replace(secret, "********")
        return text


def _reason(exc):
    """The innermost cause of a requests exception, as a short phrase."""
    reason = exc
    for dummy in range(5):
        args = getattr(reason, "args", None) or ()
        nested = [arg for arg in args if isinstance(arg, Exception)]
        inner = getattr(reason, "reason", None) or (nested[-1] if nested else (args[0] if args else None))
        if inner is None or inner is reason or isinstance(inner, str):
            break
        reason = inner
    text = str(reason)
    return text.split(": ", 1)[-1] if "object at 0x" in text else text


def _read_timed_out(exc):
    """True where a ConnectionError stands for read timeouts that used up the retries."""
    cause = exc.args[0] if exc.args else None
    return isinstance(getattr(cause, "reason", None), ReadTimeoutError)


def _never_connected(exc):
    """True where the request cannot have reached the server (refused, DNS, connect timeout)."""
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return True
    text = repr(exc)
    return any(marker in text for marker in (
        "NewConnectionError", "ConnectTimeoutError", "NameResolutionError", "Connection refused"))
