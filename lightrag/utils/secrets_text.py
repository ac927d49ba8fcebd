"""Redact the keys a running process uses from what it prints: errors, log lines, tracebacks.

:mod:`lightrag.utils.secrets` finds secrets in configs by their place (key names, headers, URLs);
this module cleans free text, where no structure tells what a value is:

* :func:`redact_text` removes ``Authorization``/``api_key``/``token``/``password`` fields, bearer
  and basic credentials, URL passwords and key-shaped words of the providers we support, and the
  exact value of every key in use: those given to :func:`register_secret` (the clients register
  theirs) and the values of the secret-named environment variables (``OPENAI_API_KEY``, ...);
* :class:`RedactingFilter` / :func:`guard_http_logs` pass log records through it;
* :func:`redact_error` cleans an exception in place (an SDK error echoes the request's key).

Every name here is importable from :mod:`lightrag.utils.secrets` too.

Example:
    >>> redact_text("GET https://me:hunter2@api.example.com/v1 failed")
    'GET https://<redacted>@api.example.com/v1 failed'
"""

from __future__ import annotations

import base64
import logging
import os
import re
from typing import Any, Optional
from urllib.parse import urlsplit

from lightrag.utils.secret_names import is_secret_key

__all__ = [
    "MIN_SECRET_LENGTH",
    "REDACTED",
    "RedactingFilter",
    "guard_http_logs",
    "redact_error",
    "redact_text",
    "register_secret",
    "register_url_credentials",
]

REDACTED = "<redacted>"

_AUTH_IN_TEXT = re.compile(
    r"(?i)((?:authorization|proxy-authorization|x-api-key|api[-_]?key|x-goog-api-key|"
    r"access[-_]?token|token|password|secret)[\"']?\s*[:=]\s*[\"']?)"
    r"((?:bearer|basic|token)\s+)?[^\s\"',;}]+")
_KEY_IN_TEXT = re.compile(
    r"\b(?:sk-[A-Za-z0-9_-]{16,}|sk-ant-[A-Za-z0-9_-]{16,}|gsk_[A-Za-z0-9]{16,}|"
    r"AIza[0-9A-Za-z_-]{30,}|xox[abpr]-[A-Za-z0-9-]{10,}|gh[pousr]_[A-Za-z0-9]{20,}|"
    r"hf_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16}|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]+)")
_BEARER_IN_TEXT = re.compile(r"(?i:\b(bearer\s+))[A-Za-z0-9._~+/=-]{8,}"
                             # Basic credentials: base64, so with a digit, "+", "/" or "=" in it
                             # ("Basic arithmetic" is prose)
                             r"|\b(Basic\s+)(?=[A-Za-z0-9+/]*[0-9+/=])[A-Za-z0-9+/]{8,}={0,2}")


def redact_text(text: str) -> str:
    """``text`` (an error message, a log line) with credentials replaced by :data:`REDACTED`:
    values of ``Authorization``/``api_key``/``token``/``password`` fields, bearer tokens, URL
    credentials and key-shaped words of the providers we support, and the exact value of every
    key in use (:func:`register_secret`, and the secret-named environment variables such as
    ``OPENAI_API_KEY``) whatever its shape ("Incorrect API key provided: token-abc123").

    Example:
        >>> redact_text("401: {'Authorization': 'Bearer sk-live-abcdefghijklmnopqrst'}")
        "401: {'Authorization': '<redacted>'}"
    """
    text = str(text)
    for value in sorted(_known_values(), key=len, reverse=True):
        if value in text:
            text = text.replace(value, REDACTED)
    text = _AUTH_IN_TEXT.sub(lambda m: m.group(1) + REDACTED, text)
    text = _BEARER_IN_TEXT.sub(lambda m: (m.group(1) or m.group(2)) + REDACTED, text)
    text = _KEY_IN_TEXT.sub(REDACTED, text)
    return re.sub(r"([a-zA-Z][a-zA-Z0-9+.-]*://)[^/\s:@]+:[^/\s@]+@", r"\1" + REDACTED + "@", text)


#: keys the clients of this process use (see :func:`register_secret`)
_REGISTERED: set = set()
#: shorter values are not treated as secrets (they would redact ordinary words)
MIN_SECRET_LENGTH = 8


def register_url_credentials(url: Optional[str]) -> None:
    """Register the password of a URL with credentials (``https://user:pw@host``) and the
    ``Basic`` value the HTTP client sends for it (base64 of ``user:pw``), which a provider may
    echo without its ``Basic`` prefix."""
    if not isinstance(url, str) or "@" not in url:
        return
    try:
        parts = urlsplit(url.strip())
        user, password = parts.username, parts.password
    except ValueError:
        return
    if password:
        register_secret(password)
        register_secret(base64.b64encode(f"{user or ''}:{password}".encode()).decode("ascii"))


def register_secret(value: Optional[str]) -> None:
    """Remember ``value`` (an API key a client uses) so that :func:`redact_text` removes it from
    any error or log line, whatever its shape: providers echo a wrong key in their errors
    ("Incorrect API key provided: token-abc123"), and no pattern knows every key format."""
    value = value.strip() if isinstance(value, str) else ""
    if len(value) >= MIN_SECRET_LENGTH and not re.search(r"\s", value):
        _REGISTERED.add(value)


#: environment variables named like a secret that are not one: the shell's working directory
#: (``pwd`` is a password in a config; ``PWD=/home/me/project`` removed that folder from every
#: error and log line)
_NOT_SECRET_ENV = frozenset({"PWD", "OLDPWD"})


def _known_values() -> set:
    """The registered keys and the values of the environment variables whose names say they
    hold a secret (``OPENAI_API_KEY``, ``PGPASSWORD``, ...)."""
    found = set(_REGISTERED)
    for name, value in os.environ.items():
        if (len(value) >= MIN_SECRET_LENGTH and not re.search(r"\s", value) and value != REDACTED
                and name not in _NOT_SECRET_ENV and is_secret_key(name)):
            found.add(value)  # a value with spaces is no key (it would eat indentation)
    return found


class RedactingFilter(logging.Filter):
    """A logging filter that passes each record's message through :func:`redact_text` (the HTTP
    client logs every request's URL, credentials in it included)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact_text(message)
        if cleaned != message:
            record.msg, record.args = cleaned, ()
        return True


_GUARDED_LOGGERS = ("httpx", "httpx2", "httpcore", "openai", "groq", "anthropic")


def guard_http_logs() -> None:
    """Redact the log lines of the HTTP and provider SDK loggers (idempotent)."""
    for name in _GUARDED_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactingFilter) for f in logger.filters):
            logger.addFilter(RedactingFilter())


def _redact_strings(value: Any) -> Any:
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {k: _redact_strings(v) for k, v in value.items()}
    return [_redact_strings(v) for v in value] if isinstance(value, list) else value


def redact_error(error: BaseException) -> BaseException:
    """``error`` with :func:`redact_text` applied in place to its message (``args``, an SDK
    error's ``message`` and parsed ``body``, its notes), and to those of the errors it was raised from: an SDK
    error keeps what the provider echoed of the request (``Incorrect API key provided: ...``,
    the ``Authorization`` header), and any traceback of it, in any log handler, would print
    that. Its type and so its handling stay the same.

    Example:
        >>> e = ValueError("401: Incorrect API key provided: Bearer sk-live-abcdefghijklmnopqrst")
        >>> str(redact_error(e))
        '401: Incorrect API key provided: Bearer <redacted>'
    """
    seen = set()
    current: Optional[BaseException] = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        try:
            current.args = tuple(redact_text(a) if isinstance(a, str) else a for a in current.args)
            for name in ("message", "body"):  # an SDK error's text and the reply it parsed
                if isinstance(getattr(current, name, None), (str, dict, list)):
                    setattr(current, name, _redact_strings(getattr(current, name)))
            notes = getattr(current, "__notes__", None)
            if isinstance(notes, list):
                current.__notes__ = [redact_text(n) if isinstance(n, str) else n for n in notes]
        except (AttributeError, TypeError):  # a read-only attribute: leave that error as it is
            pass
        current = current.__cause__ or current.__context__
    return error
