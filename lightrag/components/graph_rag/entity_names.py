"""Which extracted names can be entities: code, paths, markup, numbers and table fragments cannot.

Technical documents are full of strings a tagger mistakes for names (``$ pip install -e path``,
``${dir}/${base}``, ``| mysql``, ``os.path.join``, ``config.yaml``); as graph nodes they are noise
that the explorer shows and retrieval walks through. :func:`is_entity_name` is the one rule, used
by the offline extractor and the LLM extraction parser alike.

Example:
    >>> [is_entity_name(n) for n in ("Marie Curie", "TCP/IP", "C++", "U.S.", "Apollo 11")]
    [True, True, True, True, True]
    >>> [is_entity_name(n) for n in ("$ Pip Install -E Path", "| Mysql", "os.path", "64001")]
    [False, False, False, False]
"""

from __future__ import annotations

import re

MAX_NAME_WORDS = 8
MAX_NAME_CHARS = 80

_MARKUP = re.compile(r"[$`{}<>|\\=;~^*\[\]@]")
_URL = re.compile(r"://|^www\.|\.(?:com|org|net|io)\b", re.I)
_FILE = re.compile(
    r"\.(?:py|sh|txt|md|rst|json|ya?ml|toml|ini|cfg|conf|c|h|cc|cpp|js|ts|html?|xml|css|so|deb|"
    r"gz|tar|zip|exe|dll|log|lock|pem|crt|key|sql|db)$", re.I)
_DOTTED_IDENTIFIER = re.compile(r"[a-z0-9_]\.[a-z_]|[A-Za-z]:[A-Za-z]|\w\(")
_SHORT_SLASHED = re.compile(r"^[A-Z0-9]{1,6}(?:/[A-Z0-9]{1,6})+$")
_LEADING = re.compile(r"^[^\w\"'(“‘]")


def is_entity_name(name: str) -> bool:
    """True when ``name`` reads as a name (a person, place, thing, idea), not a fragment of code,
    a path, a URL, markup, a table cell, an option flag or a bare number."""
    text = " ".join(str(name).split())
    if len(text) < 2 or len(text) > MAX_NAME_CHARS or len(text.split()) > MAX_NAME_WORDS:
        return False
    if _MARKUP.search(text) or _URL.search(text) or _FILE.search(text) or _LEADING.match(text):
        return False
    if "_" in text or " -" in text or text.count("(") != text.count(")"):
        return False
    if "/" in text and not _SHORT_SLASHED.match(text):
        return False
    if _DOTTED_IDENTIFIER.search(text):
        return False
    visible = [c for c in text.rstrip("+#") if not c.isspace()]  # C++, C#, F#
    letters = sum(c.isalpha() for c in visible)
    return letters >= 1 and letters >= 0.5 * len(visible)
