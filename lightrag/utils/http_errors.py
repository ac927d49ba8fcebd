"""Provider errors that say what went wrong and where.

The SDKs' own messages leave the user guessing: a wrong ``base_url`` or a server that is down
gives ``APIConnectionError: Connection error.`` (no address, no cause), and a proxy that answers
with an HTML page or bytes that are not UTF-8 gives a bare ``JSONDecodeError``/
``UnicodeDecodeError`` from deep inside the SDK. :func:`explain_error` adds the request
(``POST http://host/v1/chat/completions``, credentials removed) and the underlying cause to
connection and timeout errors, keeping their type (so retries and ``except`` clauses still see
them), and turns an unreadable reply into a :class:`ProviderResponseError` that says so.

Example:
    >>> import json
    >>> try:
    ...     json.loads("<html>")
    ... except ValueError as e:
    ...     print(explain_error(e, "http://127.0.0.1:8000/v1"))
    the provider at http://127.0.0.1:8000/v1 sent a reply that is not valid JSON (Expecting value: \
line 1 column 1 (char 0)): is it an OpenAI-compatible API, or a proxy's error page?
"""

from __future__ import annotations

import json
from typing import Optional

from lightrag.utils.secrets import redact, redact_error, redact_text

__all__ = ["ProviderResponseError", "add_note", "explain_error"]

_CONNECTION_ERRORS = {"APIConnectionError", "APITimeoutError", "ConnectError", "ConnectTimeout",
                      "ReadTimeout", "RemoteProtocolError", "ReadError"}
_MARK = "_lightrag_explained"


class ProviderResponseError(ValueError):
    """The provider's reply could not be read (not JSON, not UTF-8, a cut or empty stream)."""


def _where(error: BaseException, base_url: Optional[str]) -> str:
    request = getattr(error, "request", None)
    try:
        url = getattr(request, "url", None)
        method = getattr(request, "method", None)
    except Exception:  # noqa: BLE001 - httpx raises when an error has no request
        url = method = None
    if url is not None:
        return redact_text(f"{method or 'POST'} {redact(str(url))}")
    return redact_text(redact(base_url)) if base_url else ""


def _cause(error: BaseException) -> str:
    seen = set()
    cause = error.__cause__ or error.__context__
    text = ""
    while cause is not None and id(cause) not in seen:  # the innermost says the most
        seen.add(id(cause))
        if str(cause):
            text = f"{type(cause).__name__}: {cause}"
        cause = cause.__cause__ or cause.__context__
    return redact_text(text)


def add_note(error: BaseException, text: str) -> None:
    """Append `` (text)`` to the error's message (its ``args[0]`` and an SDK error's
    ``message``); its type, and so its handling, stay the same."""
    if error.args and isinstance(error.args[0], str):
        message = f"{error.args[0]} ({text})"
        error.args = (message, *error.args[1:])
        if isinstance(getattr(error, "message", None), str):
            try:
                error.message = message  # type: ignore[attr-defined]
            except AttributeError:
                pass


def explain_error(error: BaseException, base_url: Optional[str] = None) -> BaseException:
    """The error to raise for ``error`` from a request to ``base_url`` (see the module doc); its
    text scrubbed of credentials the provider echoed (:func:`~lightrag.utils.secrets.redact_error`:
    a traceback of it in a library user's own log handler printed the key)."""
    if getattr(error, _MARK, False):
        return error
    redact_error(error)
    if isinstance(error, (json.JSONDecodeError, UnicodeDecodeError)):
        what = "not valid JSON" if isinstance(error, json.JSONDecodeError) else "not UTF-8 text"
        where = f" at {redact_text(redact(base_url))}" if base_url else ""
        new = ProviderResponseError(
            f"the provider{where} sent a reply that is {what} ({error}): is it an "
            f"OpenAI-compatible API, or a proxy's error page?")
        setattr(new, _MARK, True)
        return new
    if type(error).__name__ in _CONNECTION_ERRORS and error.args and isinstance(error.args[0], str):
        parts = [p for p in (_where(error, base_url), _cause(error)) if p]
        if parts:
            add_note(error, "; ".join(parts))
        try:
            setattr(error, _MARK, True)
        except AttributeError:
            pass
    return error
