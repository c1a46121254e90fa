# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a request that did not succeed says: ApiError, and the phrases its sentence is made of.

Client raises ApiError; the modules turn it into their failure sentence (Module.explain).
"""

from __future__ import annotations

QUOTE_MAX = 400  # characters of a server's text an error sentence quotes
CODE_MAX = 100


class ApiError(Exception):
    """A request that did not succeed. Carries no header, token or secret."""

    def __init__(self, method, path, status=None, code=None, message=None, outcome_unknown=False,
                 retry_after=None):
        self.method = method
        self.path = path
        self.status = status
        self.code = bounded(code, CODE_MAX)
        self.message = bounded(message)
        self.outcome_unknown = outcome_unknown
        self.retry_after = retry_after  # seconds the server asked to wait (Retry-After), capped; or None
        self.resends = None  # how often the user allows a request to be sent again (api_retries), set by the client
        super().__init__(self.sentence())

    def sentence(self):
        where = "%s %s" % (self.method, self.path)
        if self.status is None:
            return "%s failed: %s." % (where, (self.message or "no response").rstrip("."))
        detail = ", ".join(str(part) for part in (self.code, self.message) if part)
        return "%s failed with HTTP %s%s." % (where, self.status, ": %s" % detail.rstrip(".") if detail else "")

    def as_dict(self):
        return dict(method=self.method, path=self.path, status=self.status, code=self.code, message=self.message)


def bounded(text, limit=QUOTE_MAX):
    """A server's text as an error sentence quotes it: at most limit characters, and says where it was cut."""
    if not isinstance(text, str) or len(text) <= limit:
        return text
    return "%s... [cut: %d more characters not shown]" % (text[:limit], len(text) - limit)


def json_kind(value):
    """A JSON value's type in words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


def validation_errors(errors):
    """The {"errors": [{"namespace", "name", "errors": [...]}]} of a validation failure, as one phrase."""
    if isinstance(errors, dict):  # {"name": ["message", ...]}
        errors = [dict(name=name, errors=messages) for name, messages in errors.items()]
    if not isinstance(errors, list):
        return None
    parts = []
    for entry in errors:
        if not isinstance(entry, dict):
            parts.append(str(entry))
            continue
        where = " ".join(str(entry[key]) for key in ("namespace", "name") if entry.get(key) not in (None, ""))
        messages = entry.get("errors", entry.get("message"))
        messages = messages if isinstance(messages, list) else [messages]
        said = ", ".join(str(text) for text in messages if text not in (None, ""))
        parts.append("%s: %s" % (where, said) if where and said else where or said)
    return "; ".join(part for part in parts if part) or None
