"""``TextLoader``: a plain-text file, decoded as described in :func:`~.base.decode_text`.

Example:
    >>> doc = TextLoader()("notes.txt", data="Alice met Bob.\\n".encode())
    >>> doc.text, doc.meta_data["format"], doc.meta_data["encoding"]
    ('Alice met Bob.', 'text', 'utf-8')
    >>> TextLoader(encoding="cp1252")("old.txt", data=b"caf\\xe9").text
    'café'
"""

from __future__ import annotations

from typing import Any, Dict, Tuple

from lightrag.components.loaders.base import DocumentLoader, decode_text
from lightrag.utils.registry import register

__all__ = ["TextLoader"]


@register
class TextLoader(DocumentLoader):
    """Plain text (UTF-8 with or without BOM, UTF-16/32 with BOM, or a legacy encoding).

    Args:
        encoding: used when the file is not UTF-8 (otherwise detected with charset-normalizer).
    """

    format = "text"
    extensions = (".txt", ".text", ".log", ".csv", ".tsv", ".rst")

    def extract(self, data: bytes, file_path: str) -> Tuple[str, Dict[str, Any]]:
        text, encoding = decode_text(data, self.encoding, file_path)
        return text, {"encoding": encoding}
