"""API keys of the HTTP server, each good for every workspace or limited to some.

A key entry is ``key`` (every workspace) or ``key:ws1,ws2`` (only those workspaces; ``default``
names the server's default workspace, the one a request without ``LIGHTRAG-WORKSPACE`` gets).
``LIGHTRAG_API_KEYS`` holds the entries (see :func:`~lightrag.server.middleware.
api_keys_from_env`); :func:`~lightrag.server.app.create_app` takes them as a list of entries or
as a mapping ``{key: None or [workspaces]}``. A request offers its key as ``X-API-Key: <key>`` or
``Authorization: Bearer <key>``: a wrong or missing key is 401, a key used on a workspace it is
not limited to is 403.

Example:
    >>> ring = KeyRing(["admin", "acme-key:acme,default"])
    >>> ring.match("acme-key", None), ring.allows("acme-key", "acme"), ring.allows("acme-key", "globex")
    ('acme-key', True, False)
    >>> ring.allows("admin", "globex"), ring.match(None, "Bearer admin"), ring.match("nope", None)
    (True, 'admin', None)
"""

from __future__ import annotations

import hmac
import re
from typing import Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Union

from lightrag.utils.secrets import register_secret

DEFAULT_WORKSPACE = "default"
WORKSPACE_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

KeySpec = Union[Sequence[str], Mapping[str, Optional[Iterable[str]]]]


def check_workspace_name(name: str) -> str:
    """``name`` when it is a valid workspace name (1 to 64 of ``A-Z a-z 0-9 _ -``).

    >>> check_workspace_name("team_a-1")
    'team_a-1'
    >>> check_workspace_name("../etc")
    Traceback (most recent call last):
    ...
    ValueError: invalid workspace name '../etc': use 1 to 64 letters, digits, '_' or '-'
    """
    if not isinstance(name, str) or not WORKSPACE_NAME.match(name):
        raise ValueError(f"invalid workspace name {name!r}: use 1 to 64 letters, digits, '_' or '-'")
    return name


def _parse_entry(entry: str) -> tuple[str, Optional[FrozenSet[str]]]:
    key, sep, scope = entry.strip().partition(":")
    key = key.strip()
    if not key:
        raise ValueError(f"an API key entry has no key: {entry.split(':')[0]!r}...")
    if not sep:
        return key, None
    names = [n.strip() for n in scope.split(",") if n.strip()]
    if not names:
        raise ValueError("an API key limited to workspaces names none (use key:ws1,ws2)")
    return key, frozenset(check_workspace_name(n) for n in names)


def parse_keys(keys: Optional[KeySpec]) -> Dict[str, Optional[FrozenSet[str]]]:
    """``{key: None (every workspace) or the workspaces it is limited to}``.

    Raises:
        ValueError: an empty key, or a workspace name that is not valid.
    """
    if not keys:
        return {}
    if isinstance(keys, Mapping):
        parsed: Dict[str, Optional[FrozenSet[str]]] = {}
        for key, names in keys.items():
            parsed[_parse_entry(key)[0]] = (None if names is None else
                                            frozenset(check_workspace_name(n) for n in names))
        return parsed
    if isinstance(keys, str):
        keys = [keys]
    return dict(_parse_entry(entry) for entry in keys)


class KeyRing:
    """The accepted keys and the workspaces each may use.

    Args:
        keys: entries ``key`` / ``key:ws1,ws2``, or a mapping ``{key: None or workspaces}``;
            empty: no authentication.
    """

    def __init__(self, keys: Optional[KeySpec] = None) -> None:
        self.scopes = parse_keys(keys)
        for key in self.scopes:
            register_secret(key)  # never in a log line or an error message

    @property
    def enabled(self) -> bool:
        """Whether requests need a key."""
        return bool(self.scopes)

    def match(self, x_api_key: Optional[str], authorization: Optional[str]) -> Optional[str]:
        """The key the request carries, when it is one of ours (constant-time comparison)."""
        offered = [x_api_key or ""]
        if authorization and authorization[:7].lower() == "bearer ":
            offered.append(authorization[7:].strip())
        for candidate in offered:
            if not candidate:
                continue
            for key in self.scopes:
                if hmac.compare_digest(candidate.encode(), key.encode()):
                    return key
        return None

    def allows(self, key: Optional[str], workspace: str) -> bool:
        """Whether ``key`` may use ``workspace`` (with no keys configured, everyone may)."""
        if not self.enabled:
            return True
        if key is None or key not in self.scopes:
            return False
        scope = self.scopes[key]
        return scope is None or workspace in scope

    def visible(self, key: Optional[str], names: Iterable[str]) -> List[str]:
        """The names among ``names`` that ``key`` may use."""
        return [n for n in names if self.allows(key, n)]
