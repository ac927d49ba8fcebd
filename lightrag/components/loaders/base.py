"""The ``DocumentLoader`` base Component, its errors, and text decoding.

A loader turns one file (a path, or raw bytes with a file name) into a
:class:`~lightrag.core.types.Document` whose ``text`` is plain text ready for chunking and whose
``meta_data`` keeps the ``file_path`` (used in references) and the ``format``.

Every failure is a :class:`DocumentLoadError` with a short ``reason`` that callers can report:
``binary``, ``empty``, ``undecodable``, ``unsupported``, ``encrypted`` or ``missing-extra``.

Text decoding (:func:`decode_text`): a byte-order mark decides first (UTF-8, UTF-16, UTF-32);
then strict UTF-8; then the ``encoding`` you give (``--encoding`` on the command line); then, for
legacy files (cp1252, latin-1, Shift-JIS, ...), detection with ``charset-normalizer`` (the
``loaders`` extra). Bytes that look binary (NUL bytes, many control characters) are refused.

Example:
    >>> decode_text("café".encode("utf-8-sig"))
    ('café', 'utf-8-sig')
    >>> try:
    ...     decode_text(b"\\x00\\x01\\x02binary")
    ... except DocumentLoadError as e:
    ...     print(e)
    <bytes>: binary file (NUL bytes in the first 8 KiB), not text
"""

from __future__ import annotations

import codecs
import logging
from pathlib import Path
from typing import Any, Dict, Optional, Tuple, Union

from lightrag.core.component import Component
from lightrag.core.types import Document

log = logging.getLogger(__name__)

__all__ = [
    "DocumentLoadError",
    "DocumentLoader",
    "LOADERS_EXTRA_HINT",
    "MAX_TEXT_CHARS",
    "decode_text",
    "looks_binary",
    "read_source",
]

PathLike = Union[str, Path]

LOADERS_EXTRA_HINT = "pip install -e '.[loaders]' (from the lightrag repository)"

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_SNIFF = 8192
#: most characters of text a ZIP-based or PDF loader reads from one file (the rest is left out,
#: logged): a 3,000-page book is about 6 million
MAX_TEXT_CHARS = 16 * 1024 * 1024


class DocumentLoadError(ValueError):
    """A file that cannot become a document; ``reason`` is a short tag for reports.

    Example:
        >>> err = DocumentLoadError("a.bin", "binary", "binary file, not text")
        >>> err.reason, str(err)
        ('binary', 'a.bin: binary file, not text')
    """

    def __init__(self, file_path: Any, reason: str, message: str) -> None:
        super().__init__(f"{file_path}: {message}")
        self.file_path = str(file_path)
        self.reason = reason
        self.detail = message


def missing_extra(file_path: Any, package: str, what: str) -> DocumentLoadError:
    """The error for a format whose library is not installed (reason ``missing-extra``)."""
    return DocumentLoadError(
        file_path, "missing-extra",
        f"reading {what} needs {package!r} from the `loaders` extra: {LOADERS_EXTRA_HINT}")


def read_source(path: PathLike, data: Optional[bytes] = None) -> bytes:
    """The bytes of ``path``, or ``data`` when given (an upload named ``path``)."""
    if data is not None:
        return bytes(data)
    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"no such file: {file}")
    return file.read_bytes()


def looks_binary(data: bytes) -> Optional[str]:
    """Why ``data`` looks binary (a message), or None when it may be text.

    UTF-16/32 text with a byte-order mark is text, even though it has NUL bytes.

    Example:
        >>> looks_binary(b"plain text\\n"), looks_binary(b"\\x89PNG\\r\\n\\x1a\\n\\x00\\x00")
        (None, 'NUL bytes in the first 8 KiB')
    """
    head = data[:_SNIFF]
    if any(head.startswith(bom) for bom, _ in _BOMS):
        return None
    if b"\x00" in head:
        return "NUL bytes in the first 8 KiB"
    control = sum(1 for b in head if b < 32 and b not in (9, 10, 12, 13, 27))
    if head and control / len(head) > 0.1:
        return f"{control} control bytes in the first {len(head)} bytes"
    return None


#: legacy encodings taken, in this order, when the detector scores several alike: a short Western
#: text is as plausible in cp1250 as in cp1252 ("crème brûlée" became "crčme brűlée"), a Russian
#: one in mac_cyrillic as in cp1251 (which read "Привет" as "ѕривет"); Windows code pages are
#: what legacy files are written in
PREFERRED_LEGACY_ENCODINGS = ("cp1252", "latin_1", "iso8859_15", "cp1251", "cp1250", "cp1253",
                              "cp1254", "cp1257")
#: how close to the best coherence (the detector's language fit, 0-1) a match counts as as good
COHERENCE_TIE = 0.05


def _detect(data: bytes) -> Optional[Tuple[str, str, bool]]:
    """``(text, encoding, ambiguous)`` from ``charset_normalizer``, or None. Among the matches it
    scores about as well as its best (the same chaos, coherence within :data:`COHERENCE_TIE`),
    the first of :data:`PREFERRED_LEGACY_ENCODINGS` that reads the bytes wins; ``ambiguous``
    says that several scored alike."""
    try:
        from charset_normalizer import from_bytes
    except ImportError:
        return None
    matches = from_bytes(data)
    best = matches.best()
    if best is None or best.encoding is None:
        return None
    tied = [m for m in matches if abs(m.chaos - best.chaos) < 1e-6
            and best.coherence - m.coherence <= COHERENCE_TIE]
    readers = {name for m in tied for name in m.could_be_from_charset}
    chosen = next((name for name in PREFERRED_LEGACY_ENCODINGS if name in readers), best.encoding)
    return data.decode(chosen), chosen, len(tied) > 1


MAX_BAD_UTF8_SHARE = 0.01


def _mostly_utf8(data: bytes) -> Optional[int]:
    """How many bytes are invalid when ``data`` is UTF-8 text with a few damaged bytes (it
    holds valid multi-byte sequences and at most :data:`MAX_BAD_UTF8_SHARE` bad bytes), else
    None: a legacy 8-bit encoding has no valid multi-byte sequences to speak of."""
    text = data.decode("utf-8", errors="replace")
    bad = text.count("\ufffd") - data.decode("utf-8", errors="ignore").count("\ufffd")
    valid_multibyte = sum(1 for ch in text if ord(ch) > 0x7F and ch != "\ufffd")
    if bad and valid_multibyte >= bad and bad <= max(1, MAX_BAD_UTF8_SHARE * len(data)):
        return bad
    return None


def decode_text(data: bytes, encoding: Optional[str] = None,
                file_path: Any = "<bytes>") -> Tuple[str, str]:
    """``(text, encoding used)`` for the bytes of a text file (see the module doc for the order).

    Args:
        data: the file's bytes.
        encoding: the encoding to use when the bytes are not UTF-8 (``--encoding``).
        file_path: names the file in errors.

    Raises:
        DocumentLoadError: ``binary`` bytes, or ``undecodable`` ones (not UTF-8, not the given
            encoding, and not detected).
    """
    for bom, name in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(name), name
            except UnicodeDecodeError as e:
                raise DocumentLoadError(file_path, "undecodable",
                                        f"has a {name} byte-order mark but is not {name}: {e}") from e
    why = looks_binary(data)
    if why:
        raise DocumentLoadError(file_path, "binary", f"binary file ({why}), not text")
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError as utf8_error:
        damaged = _mostly_utf8(data)
        if damaged is not None and not encoding:
            log.warning("%s: UTF-8 with %d invalid byte(s) (first at byte %d); decoded as UTF-8 "
                        "with U+FFFD in their place", file_path, damaged, utf8_error.start)
            return data.decode("utf-8", errors="replace"), "utf-8"
        if encoding:
            try:
                return data.decode(encoding), encoding
            except (UnicodeDecodeError, LookupError) as e:
                raise DocumentLoadError(file_path, "undecodable",
                                        f"not valid {encoding}: {e}") from e
        detected = _detect(data)
        if detected is not None:
            text, used, ambiguous = detected
            if ambiguous:
                log.warning("%s: not UTF-8; decoded as %s, one of several encodings that read it "
                            "alike (pass the encoding if it is another: --encoding / encoding=)",
                            file_path, used)
            else:
                log.info("%s: not UTF-8, decoded as %s (detected)", file_path, used)
            return text, used
        try:
            import charset_normalizer  # noqa: F401
            hint = "pass the encoding (--encoding / encoding=)"
        except ImportError:
            hint = f"pass the encoding (--encoding / encoding=), or install the `loaders` " \
                   f"extra to detect it: {LOADERS_EXTRA_HINT}"
        raise DocumentLoadError(
            file_path, "undecodable",
            f"not UTF-8 ({utf8_error.reason} at byte {utf8_error.start}); {hint}") from utf8_error


class DocumentLoader(Component):
    """Base of the per-format loaders: ``loader(path)`` or ``loader(name, data=bytes)``.

    Subclasses implement :meth:`extract` (bytes to ``(text, metadata)``); the base reads the
    file, refuses empty results and builds the :class:`Document` with ``file_path`` and
    ``format`` in its ``meta_data``.

    Args:
        encoding: the text encoding to try when a text file is not UTF-8.
    """

    format: str = "text"
    extensions: Tuple[str, ...] = ()

    def __init__(self, encoding: Optional[str] = None) -> None:
        super().__init__()
        self.encoding = encoding

    def extract(self, data: bytes, file_path: str) -> Tuple[str, Dict[str, Any]]:
        raise NotImplementedError(f"{type(self).__name__} must implement extract()")

    def call(self, path: PathLike, data: Optional[bytes] = None) -> Document:
        """Load ``path`` (or ``data`` named ``path``) into a Document.

        Raises:
            FileNotFoundError: ``path`` does not exist (and no ``data`` was given).
            DocumentLoadError: the file is binary, empty, undecodable, encrypted or needs an
                extra that is not installed.
        """
        name = str(path)
        raw = read_source(path, data)
        if not raw.strip():
            raise DocumentLoadError(name, "empty", "empty file")
        try:
            text, meta = self.extract(raw, name)
        except (MemoryError, RecursionError) as e:
            raise DocumentLoadError(name, "unsupported",
                                    f"too large or too deeply nested to parse ({type(e).__name__})"
                                    ) from e
        text = _tidy(text)
        if not text:
            raise DocumentLoadError(name, "empty", f"no text found in this {self.format} file")
        return Document(text=text, meta_data={"file_path": name, "format": self.format, **meta})

    def _extra_repr(self) -> str:
        return f"encoding={self.encoding!r}" if self.encoding else ""


def _tidy(text: str) -> str:
    """Strip trailing spaces, collapse runs of blank lines, drop NULs (keeps ``\\f`` pages)."""
    lines = [line.rstrip(" \t\v\u00a0") for line in text.replace("\x00", "").replace("\r\n", "\n")
             .replace("\r", "\n").split("\n")]
    out: list[str] = []
    for line in lines:
        if not line and (not out or not out[-1]):
            continue
        out.append(line)
    return "\n".join(out).strip()
