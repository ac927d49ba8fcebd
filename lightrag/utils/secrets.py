"""Find secrets in configs, and redact them from what the library prints or writes.

Configs are shared like code (committed, pasted into issues, printed by ``lightrag
print-config``), so they must never hold a credential: API keys come from the environment
(``OPENAI_API_KEY``, ``GROQ_API_KEY``, ...), which every client reads. This module finds secrets at
any depth of a nested dict/list:

* by key name: ``api_key``, ``apikey``, ``x-api-key``, ``token``, ``access_token``, ``secret``,
  ``client_secret``, ``password``, ``Authorization``, ``cookie``, ``credentials``, ... (tokenizer
  settings such as ``pad_token`` or ``max_tokens`` are not secrets);
* under ``headers`` / ``extra_headers`` / ``default_headers``: any header whose name carries
  ``auth``, ``key``, ``token``, ``secret`` or ``cookie``;
* in URLs: ``https://user:pass@host``, ``postgresql://u:p@db/x``, ``?api_key=...``, ``&token=...``,
  and ``password=...`` in libpq-style connection strings;
* by value: strings shaped like provider keys (``sk-...``, ``gsk_...``, ``hf_...``, ``ghp_...``,
  ``Bearer ...``) under any key.

Redacting free text (errors, log lines, tracebacks: :func:`redact_text`, :func:`redact_error`,
:func:`register_secret`, :class:`RedactingFilter`) lives in :mod:`lightrag.utils.secrets_text`;
its names are importable from here too.

Empty values (``None``, ``""``) and the :data:`REDACTED` marker are not secrets, so a redacted
dump can be loaded back (the marked entries are dropped and the clients read the environment).

Example:
    >>> find_secrets({"model_kwargs": {"extra_headers": {"Authorization": "Bearer abc"}}})
    [('model_kwargs.extra_headers.Authorization', "key 'Authorization' names a secret")]
    >>> redact({"base_url": "https://me:pw@api.example.com/v1?api_key=x&v=2", "api_key": "sk-1"})
    {'base_url': 'https://api.example.com/v1?v=2', 'api_key': '<redacted>'}
"""

from __future__ import annotations

import re
from typing import Any, List, Optional, Tuple, Union
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from lightrag.utils.secret_names import is_secret_key
from lightrag.utils.secrets_text import (
    MIN_SECRET_LENGTH,
    REDACTED,
    RedactingFilter,
    guard_http_logs,
    redact_error,
    redact_text,
    register_secret,
    register_url_credentials,
)

__all__ = [
    "MIN_SECRET_LENGTH",
    "REDACTED",
    "RedactedValueError",
    "RedactingFilter",
    "check_not_redacted",
    "find_secrets",
    "guard_http_logs",
    "is_secret_key",
    "redact",
    "redact_error",
    "redact_text",
    "register_secret",
    "redacted_paths",
    "register_url_credentials",
    "strip_redacted",
    "text_secret",
    "url_secret",
]


_HEADER_KEYS = frozenset({"headers", "extra_headers", "default_headers", "http_headers"})
#: dicts of URL query parameters sent with every request (the OpenAI SDK's ``extra_query``)
_QUERY_KEYS = frozenset({"extra_query", "default_query", "query_params"})
_HEADER_HINTS = ("auth", "key", "token", "secret", "cookie", "signature", "session")
_QUERY_SECRETS = frozenset({"key", "sig", "signature", "auth", "code", "x_amz_signature",
                            "x_amz_credential", "x_amz_security_token"})  # fmt: skip
_URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")
_LIBPQ_PASSWORD = re.compile(r"(?:^|\s)password\s*=\s*\S", re.IGNORECASE)
_LIBPQ_FIELD = re.compile(r"(?:^|\s)(?:host|hostaddr|dbname|user|port)\s*=", re.IGNORECASE)
# Key shapes of the providers we support (and a few common others), matched inside any text.
_KEY_BODY = (
    r"sk-[A-Za-z0-9_\-]{16,}"  # OpenAI sk-/sk-proj-/sk-svcacct-, Anthropic sk-ant-, sk-live-...
    r"|(?:gsk|xai|pk|rk|sk)_[A-Za-z0-9_\-]{16,}"  # Groq gsk_, xAI, Stripe-style keys
    r"|(?:xai|pk|rk)-[A-Za-z0-9_\-]{16,}"
    r"|AIza[0-9A-Za-z_\-]{30,}"  # Google (Gemini, Vertex, Maps) API keys
    r"|hf_[A-Za-z0-9]{16,}"  # Hugging Face
    r"|(?:ghp|gho|ghs|ghu|ghr|github_pat)_[A-Za-z0-9_]{16,}"  # GitHub
    r"|xox[abpr]-[A-Za-z0-9\-]{10,}"  # Slack
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"  # AWS access key ids
    r"|eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]+"  # JWTs
    # Cohere (40) and Mistral (32) keys: a run of letters and digits of exactly that length
    # with upper case, lower case and digits in it
    r"|(?=[A-Za-z0-9]*[A-Z])(?=[A-Za-z0-9]*[a-z])(?=[A-Za-z0-9]*[0-9])"
    r"(?:[A-Za-z0-9]{40}|[A-Za-z0-9]{32})(?![A-Za-z0-9])"
)
_KEY_SHAPED = re.compile(
    r"(?:" + _KEY_BODY + r")|(?:Bearer|Token)\s+[A-Za-z0-9._~+/=\-]{8,}|Basic\s+[A-Za-z0-9+/=]{8,}"
)
_KEY_IN_VALUE = re.compile(
    r"(?<![A-Za-z0-9_\-])(?:" + _KEY_BODY + r")"
    r"|(?i:\b(?:bearer|token|basic)\s+)(?!\{)[A-Za-z0-9._~+/=\-]{8,}"
)
_FIELD_IN_VALUE = re.compile(
    r"(?i)\b(?:x-api-key|x-goog-api-key|api[-_]?key|authorization|access[-_]?token|auth[-_]?token"
    r"|refresh[-_]?token|client[-_]?secret|password|passwd)[\"']?\s*[:=]\s*[\"']?"
    r"(?!<redacted>)(?:(?:bearer|basic|token)\s+(?!\{|<redacted>)[^\s\"',;}{]{6,}"
    r"|(?!(?:bearer|basic|token)\b)(?!\{)[^\s\"',;}{<]{6,})"
)
_URL_IN_VALUE = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s\"'<>`]+")
Path = str


def _is_header_secret(name: Any) -> bool:
    lowered = str(name).lower()
    return is_secret_key(name) or any(hint in lowered for hint in _HEADER_HINTS)


def _empty(value: Any) -> bool:
    return value is None or value is False or value == "" or value == REDACTED


def url_secret(value: str) -> Optional[str]:
    """What credential a URL or connection string carries, or None.

    Example:
        >>> url_secret("postgresql://app:hunter2@db:5432/rag")
        'a password in the URL'
        >>> url_secret("https://api.example.com/v1?api_key=abc"), url_secret("https://x.org/a?v=1")
        ("query parameter 'api_key' in the URL", None)
    """
    if not isinstance(value, str):
        return None
    if _URL.match(value.strip()):
        try:
            parts = urlsplit(value.strip())
            password, username = parts.password, parts.username
        except ValueError:
            return None
        if password:
            return "a password in the URL"
        if username and (parts.scheme.lower() in ("http", "https") or _KEY_SHAPED.fullmatch(username)):
            return "credentials (user@) in the URL"
        for where, text in (("query parameter", parts.query), ("fragment parameter", parts.fragment)):
            for name, param in parse_qsl(text, keep_blank_values=True):
                if param and _is_query_secret(name):
                    return f"{where} {name!r} in the URL"
        if _KEY_IN_VALUE.search(value):
            return "a value shaped like an API key in the URL"
        return None
    if _LIBPQ_PASSWORD.search(value) and _LIBPQ_FIELD.search(value):
        return "password= in a connection string"
    return None


def _is_query_secret(name: str) -> bool:
    return is_secret_key(name) or name.lower().replace("-", "_") in _QUERY_SECRETS


def text_secret(value: str) -> Optional[str]:
    """What credential a string carries anywhere in it (a template, a header line, a note), or
    None: a key-shaped word, ``Bearer <token>``, ``api_key=...``/``Authorization: ...``, or a
    URL with credentials.

    Example:
        >>> text_secret("Send 'Authorization: Bearer sk-live-abcdefghijklmnop1234' first")
        'a value shaped like an API key in the text'
        >>> text_secret("Answer in {{ n }} words; use Bearer {{ token }}") is None
        True
    """
    if not isinstance(value, str):
        return None
    reason = url_secret(value)
    if reason is not None:
        return reason
    if _KEY_SHAPED.fullmatch(value.strip()):
        return "a value shaped like an API key"
    if _KEY_IN_VALUE.search(value):
        return "a value shaped like an API key in the text"
    if _FIELD_IN_VALUE.search(value):
        return "a credential field in the text"
    for url in _URL_IN_VALUE.findall(value):
        reason = url_secret(url)
        if reason is not None:
            return f"{reason} (inside the text)"
    return None


def _join(path: str, key: Union[str, int]) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def find_secrets(obj: Any, path: str = "") -> List[Tuple[Path, str]]:
    """Every secret in a nested config: ``(path, reason)`` pairs, in document order.

    Example:
        >>> find_secrets({"store": {"dsn": "postgresql://u:p@h/db"}, "items": ["gsk_" + "a" * 20]})
        [('store.dsn', 'a password in the URL'), ('items[0]', 'a value shaped like an API key')]
    """
    found: List[Tuple[Path, str]] = []
    _walk(obj, path, found, in_headers=False)
    return found


def _container(key: Any) -> str:
    """``"headers"`` or ``"query parameters"`` when ``key`` names a dict of them, else ``""``."""
    name = str(key).lower().replace("-", "_")
    return "headers" if name in _HEADER_KEYS else "query parameters" if name in _QUERY_KEYS else ""


def _is_member_secret(key: Any, container: Union[bool, str]) -> bool:
    """Whether ``key`` names a secret, read as a header or query parameter name inside those."""
    if container == "query parameters":
        return _is_query_secret(str(key))
    return _is_header_secret(key) if container else is_secret_key(key)


def _walk(obj: Any, path: str, found: List[Tuple[Path, str]], in_headers: Union[bool, str]) -> None:
    if isinstance(obj, dict):
        for key, value in obj.items():
            here = _join(path, str(key))
            secret_name = _is_member_secret(key, in_headers)
            if secret_name and not _empty(value):
                inner: List[Tuple[Path, str]] = []
                if isinstance(value, (dict, list, tuple)):
                    _walk(value, here, inner, in_headers=False)
                found.extend(inner or [(here, f"key {str(key)!r} names a secret")])
                continue
            headers = _container(key)
            if headers and isinstance(value, str) and value.strip():
                found.append((here, f"{headers} given as text may hold credentials"))
                continue
            _walk(value, here, found, in_headers=headers)
    elif isinstance(obj, (list, tuple)):
        for i, value in enumerate(obj):
            _walk(value, _join(path, i), found, in_headers=False)
    elif isinstance(obj, str):
        reason = text_secret(obj)
        if reason is not None:
            found.append((path or "<root>", reason))


def _redact_url(value: str) -> str:
    if not _URL.match(value.strip()):
        return REDACTED
    parts = urlsplit(value.strip())
    netloc = parts.hostname or ""
    if parts.port:
        netloc += f":{parts.port}"
    query = [(n, v) for n, v in parse_qsl(parts.query, keep_blank_values=True)
             if not _is_query_secret(n)]  # fmt: skip
    fragment = parts.fragment
    if "=" in fragment:
        fragment = urlencode([(n, v) for n, v in parse_qsl(fragment, keep_blank_values=True)
                              if not _is_query_secret(n)])
    url = urlunsplit((parts.scheme, netloc, parts.path, urlencode(query), fragment))
    return _KEY_IN_VALUE.sub(REDACTED, url)


def _redact_string(value: str) -> str:
    """``value`` with every credential in it replaced (a whole secret value by :data:`REDACTED`,
    a URL by its form without credentials, a key inside a longer text by :data:`REDACTED`)."""
    if url_secret(value) is not None:
        return _redact_url(value)
    if _KEY_SHAPED.fullmatch(value.strip()):
        return REDACTED
    if text_secret(value) is None:
        return value

    def url(match: re.Match[str]) -> str:
        return _redact_url(match.group(0)) if url_secret(match.group(0)) else match.group(0)

    def field(match: re.Match[str]) -> str:
        text = match.group(0)
        head = re.match(r"(?is).*?[:=]\s*[\"']?(?:(?:bearer|basic|token)\s+)?", text)
        return (head.group(0) if head else "") + REDACTED

    value = _URL_IN_VALUE.sub(url, value)
    value = _FIELD_IN_VALUE.sub(field, value)
    return _KEY_IN_VALUE.sub(lambda m: _keep_scheme(m.group(0)), value)


def _keep_scheme(found: str) -> str:
    """``Bearer <token>`` keeps its ``Bearer``; a bare key becomes :data:`REDACTED`."""
    head = re.match(r"(?i)(?:bearer|token|basic)\s+", found)
    return (head.group(0) if head else "") + REDACTED


def redact(obj: Any, in_headers: Union[bool, str] = False) -> Any:
    """A copy of ``obj`` with every secret replaced: values under secret keys (and key-shaped
    values) by :data:`REDACTED`, credentials removed from URLs. Non-container values other than
    strings are returned as they are.

    Example:
        >>> redact({"headers": {"Authorization": "Bearer abc", "Accept": "json"}, "top_k": 5})
        {'headers': {'Authorization': '<redacted>', 'Accept': 'json'}, 'top_k': 5}
    """
    if isinstance(obj, dict):
        out = {}
        for key, value in obj.items():
            secret_name = _is_member_secret(key, in_headers)
            headers = _container(key)
            if (secret_name or (headers and isinstance(value, str))) and not _empty(value):
                out[key] = REDACTED
            else:
                out[key] = redact(value, in_headers=headers)
        return out
    if isinstance(obj, list):
        return [redact(value) for value in obj]
    if isinstance(obj, tuple):
        return tuple(redact(value) for value in obj)
    if isinstance(obj, str):
        return _redact_string(obj)
    return obj


#: names of request settings sent as they are (``extra_headers``, ``extra_query``, ``params``,
#: ``extra_body``): nothing supplies a redacted entry of theirs again, unlike a key or password
#: (the clients read ``*_API_KEY``, libpq ``PGPASSWORD``)
_SENT_AS_IS = re.compile(r"(headers|query|params|body)$", re.IGNORECASE)


def strip_redacted(obj: Any, _sent_as_is: bool = False) -> Any:
    """A copy of ``obj`` without the entries whose value is :data:`REDACTED` (a redacted dump
    loaded back: the clients then read their keys from the environment), except inside a request
    setting sent as it is (headers, query, params, body): a redacted header dropped would send
    requests without it, so it is kept and the component refuses to send it
    (:func:`check_not_redacted`) until it is set again.

    Example:
        >>> strip_redacted({"api_key": "<redacted>", "model_kwargs": {"model": "m"}})
        {'model_kwargs': {'model': 'm'}}
        >>> strip_redacted({"extra_headers": {"X-Auth": "<redacted>"}})
        {'extra_headers': {'X-Auth': '<redacted>'}}
    """
    if isinstance(obj, dict):
        return {k: strip_redacted(v, _sent_as_is or bool(_SENT_AS_IS.search(str(k))))
                for k, v in obj.items() if _sent_as_is or v != REDACTED}
    if isinstance(obj, list):
        return [strip_redacted(v, _sent_as_is) for v in obj if _sent_as_is or v != REDACTED]
    return obj


class RedactedValueError(ValueError):
    """A request setting that still reads :data:`REDACTED`: it was removed when its component
    was saved, and sending it would send the marker (as a header, a key) instead of the secret."""


def redacted_paths(obj: Any, path: str = "") -> List[str]:
    """Where a nested dict/list holds the :data:`REDACTED` marker, as ``a['b']['c']`` paths.

    Example:
        >>> redacted_paths({"model": "m", "extra_headers": {"X-Auth": "<redacted>"}})
        ["['extra_headers']['X-Auth']"]
    """
    if isinstance(obj, dict):
        return [p for k, v in obj.items() for p in redacted_paths(v, f"{path}[{k!r}]")]
    if isinstance(obj, (list, tuple)):
        return [p for i, v in enumerate(obj) for p in redacted_paths(v, f"{path}[{i}]")]
    return [path] if isinstance(obj, str) and obj == REDACTED else []


def check_not_redacted(obj: Any, what: str, owner: str = "generator") -> None:
    """Raise :class:`RedactedValueError` naming every :data:`REDACTED` value in ``obj`` (the
    ``model_kwargs`` of a request about to be sent; ``owner`` names the component in the
    error's example of setting it again).

    Example:
        >>> check_not_redacted({"headers": {"X-Auth": "<redacted>"}}, "kw")
        Traceback (most recent call last):
        ...
        lightrag.utils.secrets.RedactedValueError: kw['headers']['X-Auth'] is '<redacted>': ...
    """
    found = redacted_paths(obj)
    if found:
        raise RedactedValueError(
            f"{', '.join(what + p for p in found)} is {REDACTED!r}: secrets are removed when a "
            f"component is saved (to_dict, pickle_to_file, a config dump); set the value again "
            f"before calling (e.g. {owner}.{what}{found[0]} = os.environ[...])")
