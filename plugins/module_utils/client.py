# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one HTTP client of the collection: credentials, retries, redirects and what a failed request says.

The walks through lists are in pagination.py (Pagination, a base class of Client); ApiError and the
phrases of its sentence are in errors.py.
"""

from __future__ import annotations

import hashlib
import heapq
import json as json_module
import os
import random
import re
import socket
import ssl
import threading
import time
import traceback
import warnings
from contextlib import contextmanager
from urllib.parse import quote, urljoin, urlsplit

from ansible_collections.planetscale.cloud.plugins.module_utils.errors import (
    ApiError,
    bounded,
    json_kind,
    validation_errors,
)
from ansible_collections.planetscale.cloud.plugins.module_utils.pagination import (
    PARALLEL_PAGES,
    Pagination,
    current_gate,
)

try:
    import requests
    from requests.adapters import HTTPAdapter
    from urllib3 import exceptions as urllib3_exceptions
    from urllib3.exceptions import InsecureRequestWarning, MaxRetryError, ReadTimeoutError
    from urllib3.util.retry import Retry
except ImportError:  # pragma: no cover - exercised through missing_required_lib
    HAS_REQUESTS = False
    REQUESTS_IMPORT_ERROR = traceback.format_exc()
    Retry = object
    NEVER_CONNECTED = ()
else:
    HAS_REQUESTS = True
    REQUESTS_IMPORT_ERROR = None
    # What a request that cannot have reached the server fails with (refused, DNS, connect timeout).
    NEVER_CONNECTED = tuple(kind for kind in (
        requests.exceptions.ConnectTimeout, urllib3_exceptions.NewConnectionError,
        urllib3_exceptions.ConnectTimeoutError, getattr(urllib3_exceptions, "NameResolutionError", None),
        ConnectionRefusedError, socket.gaierror) if kind is not None)

COLLECTION_VERSION = "0.3.0"  # galaxy.yml is the source; tests/unit/test_collection.py keeps them equal
USER_AGENT = "planetscale.cloud/%s (Ansible collection)" % COLLECTION_VERSION

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
MAX_REDIRECTS = 5
# The only redirect to another host the API documents: the signed download of a query-pattern report.
# It is followed without credentials; every other redirect to another scheme, host or port is refused.
OFFSITE_REDIRECTS = (re.compile(r"/query-patterns/[^/]+/download$"),)
DEFAULT_PORTS = dict(http=80, https=443)
# How OpenSSL reports a TLS handshake answered by a server that speaks plain HTTP on that port.
NOT_TLS = frozenset(("WRONG_VERSION_NUMBER", "RECORD_LAYER_FAILURE", "PACKET_LENGTH_TOO_LONG", "UNKNOWN_PROTOCOL"))
NOT_TLS_TEXT = ("wrong version number", "record layer failure", "packet length too long", "unknown protocol")
# An answer's body is read whole into memory, so it is bounded: at most MAX_ANSWER_BYTES (the largest answers of the
# API, a branch's schema or a page of a list, are far smaller; lists come by pages), and in full within api_timeout
# seconds of its head, or ANSWER_TIME_MIN where that is longer. requests applies api_timeout to each wait for a
# byte only: a body that keeps coming, slowly or without end, would never time out.
MAX_ANSWER_BYTES = 64 * 1024 * 1024
ANSWER_TIME_MIN = 60.0
ANSWER_CHUNK = 64 * 1024
_now = time.monotonic  # the real clock, as the watchdog's waits use it (tests may move time.monotonic)
# What requests reads from the environment at each request: a session borrowed from a pool (the in-process
# path) is keyed by their values, so a task with other proxies or CA bundle never gets another task's session.
SESSION_ENVIRONMENT = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy",
                       "no_proxy", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")


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

    def sleep(self, response=None):
        """Wait before a retry; among the threads reading one list side by side, a wait for an answer's
        status (429 with Retry-After above all) holds every thread at their shared gate."""
        gate = current_gate()
        if gate is None or response is None:
            return super().sleep(response)
        wait = self.get_retry_after(response) if self.respect_retry_after_header else None
        gate.hold(self.get_backoff_time() if wait is None else wait)
        gate.wait()
        return None

    def increment(self, method=None, url=None, response=None, error=None, _pool=None, _stacktrace=None):
        retry = super().increment(method, url, response, error, _pool, _stacktrace)
        if retry._next_wait(response) is None:
            raise MaxRetryError(_pool, url, error)
        return retry


class _Watch:
    """An answer being read, and the time when the watchdog cuts its connection."""

    __slots__ = ("deadline", "cut", "fired")

    def __init__(self, deadline, cut):
        self.deadline, self.cut, self.fired = deadline, cut, False

    def __lt__(self, other):
        return self.deadline < other.deadline


class _Watchdog:
    """Cuts the connection of an answer still arriving at its deadline, so that a read waiting on it returns.

    One thread a process, started at the first answer and ended once every answer it watched is read (it looks
    at each deadline); watch() and cancel() cost a lock each. A process forked from one with the thread starts
    its own.
    """

    def __init__(self):
        self._reset()
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self._reset)

    def _reset(self):
        self._lock = threading.Condition(threading.Lock())
        self._due = []  # a heap of _Watch, the earliest deadline first
        self._thread = None

    def watch(self, deadline, cut):
        """Call cut() at deadline (on _now's clock) unless cancel() comes first."""
        watch = _Watch(deadline, cut)
        with self._lock:
            heapq.heappush(self._due, watch)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="planetscale.cloud answer deadline")
                self._thread.daemon = True
                self._thread.start()
            elif self._due[0] is watch:
                self._lock.notify()
        return watch

    def cancel(self, watch):
        with self._lock:
            watch.cut = None

    def _run(self):
        with self._lock:
            while True:
                while self._due and self._due[0].cut is None:
                    heapq.heappop(self._due)
                if not self._due:  # nothing to watch: the thread ends, and the next watch() starts another
                    self._thread = None
                    return
                left = self._due[0].deadline - _now()
                if left > 0:
                    self._lock.wait(left)
                    continue
                watch = heapq.heappop(self._due)
                watch.fired = True
                try:
                    watch.cut()
                except Exception:  # the read fails on its own then
                    pass
                watch.cut = None


WATCHDOG = _Watchdog()


class _Authorization:
    """The credentials as the session's auth: requests then never consults ~/.netrc, whose entry for
    the API host would replace them (and cost a file lookup on every request)."""

    def __init__(self, value, api_origin):
        self.value = value
        self.origin = api_origin  # the credentials go to the API's origin only, never to a host a redirect names

    def __call__(self, request):
        if self.value and origin(request.url) == self.origin:
            request.headers["Authorization"] = self.value
        return request


class Client(Pagination):
    """A requests Session bound to one API root, with the collection's retry rules; its lists are walked by
    paginate() and paginate_cursor() (Pagination, pagination.py).

    requests never follows a redirect on its own: the client follows one to the same scheme, host
    and port itself (at most MAX_REDIRECTS), and one to another origin only where the caller allows
    it (by default the redirect the API documents), as a GET without credentials or body.
    """

    def __init__(self, base_url, authorization=None, timeout=30, retries=5,
                 validate_certs=True, ca_path=None, secrets=(), pool=None, debug=None):
        self.base_url = base_url.rstrip("/")
        self.origin = origin(_prepared(self.base_url))  # as requests spells the URLs it sends (IDNA host)
        self.timeout = timeout
        self._secrets = [s for s in secrets if s]
        self._masks = None  # the secrets' patterns, compiled when a text is first scrubbed (most tasks never do)
        self.server_date = None  # the Date header of the last answer: the server's clock
        self.last = None  # (method, path, status) of the last request, to name it in a sentence about its answer
        self.debug = debug or (lambda message: None)  # a note for the task's debug output only
        self._retry = _Retry(total=retries, connect=retries, read=retries, status=retries, other=0,
                             redirect=False, raise_on_status=False, respect_retry_after_header=True,
                             status_forcelist=TRANSIENT_STATUSES)
        verify = ca_path if (validate_certs and ca_path) else bool(validate_certs)
        # pool: the in-process path's sessions of this worker (plugin_utils/sessions.py); the session is
        # borrowed under a key of everything that makes it safe to share, and given back by close()
        self._pool, self._suspect = pool, False
        self._key = self.session_key(authorization, verify, retries) if pool is not None else None
        if pool is None:
            self.session = self._build_session(authorization, verify)
        else:
            self.session = pool.borrow(self._key, lambda: self._build_session(authorization, verify))

    def _build_session(self, authorization, verify):
        session = requests.Session()
        session.verify = verify
        session.headers.update({"User-Agent": USER_AGENT, "Accept": "application/json"})
        session.auth = _Authorization(authorization, self.origin)
        # a pool may give the adapter (the in-process path: one whose connections a keeper keeps across tasks)
        make = getattr(self._pool, "adapter", None)
        adapter_options = dict(max_retries=self._retry, pool_maxsize=max(10, PARALLEL_PAGES))
        adapter = make(self._key, **adapter_options) if make else HTTPAdapter(**adapter_options)
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        return session

    def session_key(self, authorization, verify, retries):
        """What a shared session must agree on: the credentials only as a digest (the key is no place for them)."""
        ca_file = None
        if isinstance(verify, str):
            try:
                found = os.stat(verify)
                ca_file = (verify, found.st_mtime_ns, found.st_size)
            except OSError:
                ca_file = (verify, None, None)
        return (self.base_url, hashlib.sha256((authorization or "").encode("utf-8")).hexdigest(),
                verify is not False, ca_file, retries,
                tuple(os.environ.get(name) for name in SESSION_ENVIRONMENT))

    def close(self):
        """Close the session, or give it back to its pool (closed there instead if a fault touched it)."""
        if self.session is None:
            return
        if self._pool is None:
            self.session.close()
        else:
            self._pool.give_back(self._key, self.session, suspect=self._suspect)
        self.session = None

    @contextmanager
    def retrying(self, retries):
        """Send the requests of the block with this many retries: 0 for a write asked for again after a lost
        answer, whose refusal (429) tells that the lost one was applied, so it must not be waited out and resent."""
        adapters = dict((adapter, adapter.max_retries) for adapter in self.session.adapters.values())
        for adapter in adapters:
            adapter.max_retries = self._retry.new(total=retries, connect=retries, read=retries, status=retries)
        try:
            yield self
        finally:
            for adapter, retry in adapters.items():
                adapter.max_retries = retry

    def request(self, method, url_path, json=None, data=None, params=None, missing_ok=False, offsite=None,
                any_json=False, raw=False):
        """Send one request (retried as the rules allow); return the decoded JSON object, or None for no body.

        offsite: follow a redirect to another scheme, host or port (as a GET without credentials);
        by default only the redirects the API documents are followed. any_json: return whatever JSON
        value the answer holds, for a caller that checks its shape itself with a better sentence. raw: return the
        body as it arrived (bytes, at most MAX_ANSWER_BYTES), for a file the API serves.
        """
        if offsite is None:
            offsite = method.upper() == "GET" and any(rule.search(url_path) for rule in OFFSITE_REDIRECTS)
        try:
            return self._request(method, url_path, json, data, params, missing_ok, offsite, any_json, raw)
        except ApiError as error:
            # an error without an HTTP status is a fault of the connection (dropped, cut short, TLS, timeout):
            # the session's pool is suspect, and a pooled session is not lent again
            self._suspect = self._suspect or error.status is None
            error.resends = self._retry.total  # the user's api_retries: a write proven not applied is resent as often
            raise
        except BaseException:
            self._suspect = True
            raise

    def _request(self, method, url_path, json, data, params, missing_ok, offsite, any_json, raw):
        self.last = (method, url_path, None)
        url, sending = self.base_url + url_path, dict(json=json, data=data, params=params, method=method)
        for dummy in range(MAX_REDIRECTS + 1):
            response = self._send(method, url_path, url, sending)
            if not response.is_redirect:
                break
            url, sending = self._redirect(method, url_path, response, sending, offsite)
        else:
            raise ApiError(method, url_path, response.status_code,
                           message="the server redirected the request more than %d times" % MAX_REDIRECTS)
        self.server_date = response.headers.get("Date")
        self.last = (method, url_path, response.status_code)
        if response.status_code == 404 and missing_ok:
            return None
        if response.status_code >= 400:
            raise self._error(method, url_path, response)
        if response.status_code >= 300:
            raise ApiError(method, url_path, response.status_code, message="a redirect without a Location to follow")
        self._whole(method, url_path, response)
        if raw:
            return response.content
        if response.status_code == 204 or not response.content:
            if method.upper() == "GET":
                raise ApiError(method, url_path, response.status_code,
                               message="the answer was empty where a JSON object was expected")
            return None
        try:
            body = response.json()
        except ValueError:
            raise ApiError(method, url_path, response.status_code, message="the answer was not JSON")
        if not isinstance(body, dict) and not any_json:
            if method.upper() == "DELETE":  # deleted: what the answer says does not change that
                return None
            raise ApiError(method, url_path, response.status_code, message=(
                "the answer was %s where a JSON object was expected" % json_kind(body)))
        return body

    def _whole(self, method, url_path, response):
        """Refuse an answer shorter than its Content-Length: older urllib3 (1.x) hands it over as if whole."""
        declared = response.headers.get("Content-Length")
        if not (declared or "").isdigit() or response.headers.get("Content-Encoding", "identity") != "identity":
            return
        if len(response.content) < int(declared):
            raise ApiError(method, url_path, message=self._scrub(
                "the connection to %s closed in the middle of the answer, which was cut short (%d of %s bytes "
                "arrived)" % (urlsplit(response.url).netloc.rpartition("@")[2], len(response.content), declared)),
                outcome_unknown=method.upper() != "GET")

    def _send(self, method, url_path, url, sending):
        """One request and its retries, without following a redirect; a failure becomes an ApiError sentence."""
        where = urlsplit(url).netloc.rpartition("@")[2]
        try:
            with warnings.catch_warnings():
                if self.session.verify is False:  # the module warns once, in Ansible's way; not urllib3 on stderr
                    warnings.simplefilter("ignore", InsecureRequestWarning)
                # verify on each request: requests lets REQUESTS_CA_BUNDLE or CURL_CA_BUNDLE override session.verify,
                # which would ignore ca_path and validate_certs
                response = self.session.request(url=url, timeout=self.timeout, verify=self.session.verify,
                                                allow_redirects=False, stream=True, **sending)
                self._read(method, url_path, response)
                return response
        except requests.exceptions.SSLError as exc:
            if _speaks_no_tls(exc):
                message = ("%s does not speak TLS on that port (%s): use an http:// URL, or the port where the "
                           "server serves HTTPS" % (where, _reason(exc)))
            else:
                message = ("the TLS certificate of %s could not be verified (%s); set ca_path to the CA bundle "
                           "that signed it, or validate_certs to false for a test server" % (where, _reason(exc)))
            raise ApiError(method, url_path, message=self._scrub(message))
        except requests.exceptions.ChunkedEncodingError as exc:
            raise ApiError(method, url_path, message=self._scrub(
                "the connection to %s closed in the middle of the answer, which was cut short%s" % (
                    where, _received(exc))), outcome_unknown=method.upper() != "GET")
        except (requests.exceptions.ConnectTimeout, requests.exceptions.ConnectionError) as exc:
            if _read_timed_out(exc):  # what requests reports once the retries of a read timeout ran out
                raise ApiError(method, url_path, message="no answer within %s seconds (api_timeout)" % self.timeout,
                               outcome_unknown=method.upper() != "GET")
            sent = not _never_connected(exc)
            raise ApiError(method, url_path, message=self._scrub(
                ("the connection to %s broke after the request was sent (%s)" if sent else "could not connect to %s (%s)")
                % (where, _reason(exc))),
                outcome_unknown=sent and method.upper() != "GET")
        except requests.exceptions.Timeout:
            raise ApiError(method, url_path, message="no answer within %s seconds (api_timeout)" % self.timeout,
                           outcome_unknown=method.upper() != "GET")
        except requests.exceptions.RequestException as exc:
            raise ApiError(method, url_path, message=self._scrub(_reason(exc)))

    def _read(self, method, url_path, response):
        """Read the answer's body whole, as requests would, but at most MAX_ANSWER_BYTES and within its time."""
        declared = response.headers.get("Content-Length") or ""
        if declared.isdigit() and int(declared) > MAX_ANSWER_BYTES:
            response.close()
            raise self._unread(method, url_path, "the answer would be %s bytes (its Content-Length), more than the %s"
                               % (declared, _bytes(MAX_ANSWER_BYTES)))
        seconds = max(self.timeout or 0, ANSWER_TIME_MIN)
        deadline = _now() + seconds
        watch = WATCHDOG.watch(deadline, lambda: _cut(response))
        chunks, size, late = [], 0, False
        try:
            for chunk in response.iter_content(ANSWER_CHUNK):
                size += len(chunk)
                if size > MAX_ANSWER_BYTES:
                    raise self._unread(method, url_path, "the answer goes on past %s, the most"
                                       % _bytes(MAX_ANSWER_BYTES))
                if _now() > deadline:
                    late = True
                    break
                chunks.append(chunk)
        except ApiError:
            response.close()
            raise
        except Exception:
            if not watch.fired:
                raise
        finally:
            WATCHDOG.cancel(watch)
        if watch.fired or late:
            response.close()
            raise ApiError(method, url_path, message=(
                "the answer was still arriving after %s seconds (%d bytes so far): an answer must arrive in full "
                "within api_timeout, or %s seconds where that is longer; stopped reading it" % (
                    _number(seconds), size, _number(ANSWER_TIME_MIN))), outcome_unknown=method.upper() != "GET")
        response._content = b"".join(chunks)  # what response.content reads

    @staticmethod
    def _unread(method, url_path, what):
        return ApiError(method, url_path, message="%s the collection reads of an answer; stopped reading it" % what,
                        outcome_unknown=method.upper() != "GET")

    def _redirect(self, method, url_path, response, sending, offsite):
        """Where a redirect leads and what to send there; ApiError where it must not be followed."""
        target = urljoin(response.url, self.session.get_redirect_target(response)).split("#", 1)[0]
        response.close()
        if origin(target) != origin(response.url):
            plain = sending["method"].upper() == "GET" and sending["json"] is None and sending["data"] is None
            if not (offsite and plain) or urlsplit(target).scheme not in DEFAULT_PORTS:
                parts = urlsplit(target)
                raise ApiError(method, url_path, response.status_code, message=self._scrub(
                    "the server redirected the request to %s://%s, another scheme, host or port, which the collection "
                    "does not follow: a request that carries credentials is never sent elsewhere, and another "
                    "server's answer is not the API's; check that api_url and auth_url name the platform's servers"
                    % (parts.scheme, parts.netloc.rpartition("@")[2])))
        if response.status_code == 303 or (response.status_code in (301, 302) and sending["method"].upper() == "POST"):
            sending = dict(sending, method="GET", json=None, data=None)  # what every HTTP client does with these
        return target, dict(sending, params=None)  # the Location carries its own query

    def get(self, url_path, params=None, missing_ok=False, offsite=None):
        return self.request("GET", url_path, params=params, missing_ok=missing_ok, offsite=offsite)

    def post(self, url_path, json=None, data=None, any_json=False):
        return self.request("POST", url_path, json=json, data=data, any_json=any_json)

    def patch(self, url_path, json):
        return self.request("PATCH", url_path, json=json)

    def delete(self, url_path, missing_ok=False):
        return self.request("DELETE", url_path, missing_ok=missing_ok)

    def wrong_answer(self, message, last=None):
        """An ApiError about the answer to the last request (or to last: method, path, status), naming that request."""
        method, url_path, status = last or self.last or ("GET", "?", None)
        return ApiError(method, url_path, status, message=message)

    def record_id(self, record, what):
        """The id of a record the last request answered, to name it in a path; the wrong-answer ApiError where the
        record has none (no id key, null, empty, or not a string or number): never a request for .../None."""
        value = record.get("id") if isinstance(record, dict) else None
        if isinstance(value, bool) or not isinstance(value, (str, int)) or str(value).strip() in ("", ".", ".."):
            found = "it has no id key" if not isinstance(record, dict) or "id" not in record else "its id is %s" % (
                bounded(json_module.dumps(value), 50) if isinstance(value, str) else json_kind(value))
            raise self.wrong_answer("%s of the answer has no id to read it by (%s); the collection cannot use it"
                                    % (what, found))
        return value

    def _error(self, method, url_path, response):
        code = message = None
        try:
            body = response.json()
        except ValueError:
            body = None
        if isinstance(body, dict):
            code = body.get("code") or body.get("error")
            message = body.get("message") or body.get("error_description")
            details = validation_errors(body.get("errors"))
            if details:
                message = "%s (%s)" % (str(message).rstrip("."), details) if message else details
        if not message:
            message = response.reason or None
        return ApiError(method, url_path, response.status_code,
                        self._scrub(str(code)) if code else None,
                        self._scrub(str(message)) if message else None,
                        outcome_unknown=method.upper() != "GET" and response.status_code >= 500
                        and response.status_code not in NOT_APPLIED_STATUSES,
                        retry_after=self._retry.get_retry_after(response))

    def _scrub(self, text):
        """The text with every secret masked, in each encoding an echo may carry it (raw, percent-, form-, JSON-)."""
        if self._masks is None:
            self._masks = [secret_pattern(s) for s in sorted(self._secrets, key=len, reverse=True)]
        for mask in self._masks:
            text = mask.sub("********", text)
        return text


def origin(url):
    """(scheme, host, port) of a URL, with the scheme's default port filled in."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), port or DEFAULT_PORTS.get(scheme)


def _prepared(url):
    """The URL as requests sends it, or as it is where requests refuses it (the request then fails with a sentence)."""
    try:
        return requests.Request("GET", url).prepare().url
    except (requests.exceptions.RequestException, ValueError):
        return url


def secret_pattern(secret):
    """A regular expression matching the secret raw, percent-encoded (either case), form-encoded or JSON-escaped,
    and any mixture of these."""
    def hex_digits(number, width):
        return "".join("[%s%s]" % (d.upper(), d.lower()) if d.isalpha() else d for d in "%0*x" % (width, number))

    pieces = []
    for char in secret:
        variants = [re.escape(char), "".join("%" + hex_digits(byte, 2) for byte in char.encode("utf-8"))]
        if char == " ":
            variants.append(r"\+")
        escaped = json_module.dumps(char)[1:-1]
        if escaped != char:
            variants.append(re.escape(escaped))
        units = char.encode("utf-16-be")
        variants.append("".join(r"\\u" + hex_digits(int.from_bytes(units[i:i + 2], "big"), 4)
                                for i in range(0, len(units), 2)))
        if char == "/":
            variants.append(r"\\/")
        pieces.append("(?:%s)" % "|".join(variants))
    return re.compile("".join(pieces))


def _cut(response):
    """Shut the connection an answer arrives on (from the watchdog's thread): a read waiting on it returns at once."""
    raw = getattr(response, "raw", None)
    sock = getattr(getattr(raw, "connection", None), "sock", None)
    if sock is None:  # urllib3 without the connection on the answer: http.client's socket file
        sock = getattr(getattr(getattr(getattr(raw, "_fp", None), "fp", None), "raw", None), "_sock", None)
    if isinstance(sock, socket.socket):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)  # the plain socket's: never TLS's own shutdown, from a thread


def _bytes(count):
    """A size in words: MiB where it is a whole number of them."""
    mib = 1024 * 1024
    return "%d MiB" % (count // mib) if count >= mib and count % mib == 0 else "%d bytes" % count


def _number(seconds):
    return "%g" % seconds


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


def _chain(exc, depth=12):
    """The exception and those it wraps (arguments, urllib3's reason, the explicit cause), outermost first."""
    found, todo = [], [exc]
    while todo and len(found) < depth:
        current = todo.pop(0)
        if not isinstance(current, BaseException) or any(current is known for known in found):
            continue
        found.append(current)
        todo.extend([getattr(current, "reason", None), current.__cause__] + list(getattr(current, "args", ())))
    return found


def _never_connected(exc):
    """True where the request cannot have reached the server (refused, DNS, connect timeout)."""
    return any(isinstance(cause, NEVER_CONNECTED) for cause in _chain(exc))


def _speaks_no_tls(exc):
    """True where the TLS handshake was answered by something else: plain HTTP on an https URL's port."""
    for cause in _chain(exc):
        if isinstance(cause, ssl.SSLError) and (
                getattr(cause, "reason", None) in NOT_TLS or any(text in str(cause).lower() for text in NOT_TLS_TEXT)):
            return True
    return False


def _received(exc):
    """How much of a cut-short answer arrived, as a phrase (empty when unknown)."""
    for cause in _chain(exc):
        partial, expected = getattr(cause, "partial", None), getattr(cause, "expected", None)
        if isinstance(partial, bytes):
            partial = len(partial)
        if isinstance(partial, int) and isinstance(expected, int):
            return " (%d of %d bytes arrived)" % (partial, partial + expected)
    return ""
