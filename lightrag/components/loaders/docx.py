"""``DocxLoader``: the text of a Word ``.docx`` file, read with the standard library.

A ``.docx`` is a ZIP archive whose ``word/document.xml`` holds the body. Paragraphs become lines
(``w:t`` text, ``w:tab`` tabs, ``w:br`` line breaks), paragraphs styled ``Heading N`` / ``Title``
are listed in ``meta_data["sections"]``, list paragraphs get a ``- `` bullet, and table rows
become ``cell; cell`` lines. The title from ``docProps/core.xml`` goes to ``meta_data["title"]``.
No extra package is needed.

Example:
    >>> import io, zipfile
    >>> body = ('<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
    ...         '<w:body><w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Acme</w:t></w:r>'
    ...         '</w:p><w:p><w:r><w:t>Acme builds robots.</w:t></w:r></w:p></w:body></w:document>')
    >>> buffer = io.BytesIO()
    >>> with zipfile.ZipFile(buffer, "w") as z:
    ...     z.writestr("word/document.xml", body)
    >>> doc = DocxLoader()("acme.docx", data=buffer.getvalue())
    >>> doc.text, doc.meta_data["sections"]
    ('Acme\\n\\nAcme builds robots.', [{'level': 1, 'title': 'Acme', 'offset': 0}])
"""

from __future__ import annotations

import collections
import io
import logging
import re
import zipfile
import zlib
from typing import Any, Dict, Iterator, List, Optional, Tuple
from xml.etree import ElementTree

from lightrag.components.loaders.base import MAX_TEXT_CHARS, DocumentLoader, DocumentLoadError
from lightrag.utils.registry import register

__all__ = ["DocxLoader", "is_docx", "iter_member", "read_member"]

log = logging.getLogger(__name__)

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
DC_TITLE = "{http://purl.org/dc/elements/1.1/}title"
_HEADING = re.compile(r"^(?:heading|berschrift|titre)\s*([1-9])$", re.IGNORECASE)
MAX_XML_BYTES = 64 * 1024 * 1024  # word/document.xml, uncompressed
MAX_PART_BYTES = 1024 * 1024  # any other member read (docProps/core.xml)
#: a member expanding more than this many times its compressed size (past
#: :data:`RATIO_FLOOR_BYTES`) is a zip bomb: Word's own XML compresses 5-30x
MAX_RATIO = 200
RATIO_FLOOR_BYTES = 4 * 1024 * 1024
#: most tags (``<``) in ``word/document.xml``: a long book has a few hundred thousand
MAX_TAGS = 4_000_000
_READ_BLOCK = 1024 * 1024
_FEED_BYTES = 64 * 1024  # XML parsed between two prunings of the tree


def _open_member(archive: zipfile.ZipFile, name: str, limit: int, file_path: str) -> zipfile.ZipInfo:
    """The archive entry ``name``, refused when its header says it expands past ``limit`` bytes
    or more than :data:`MAX_RATIO` times its compressed size."""
    info = archive.getinfo(name)
    if info.file_size > limit:
        raise DocumentLoadError(file_path, "unsupported",
                                f"{name} is {info.file_size} bytes uncompressed (limit {limit})")
    ratio = info.file_size / max(info.compress_size, 1)
    if info.file_size > RATIO_FLOOR_BYTES and ratio > MAX_RATIO:
        raise DocumentLoadError(
            file_path, "unsupported",
            f"{name} expands {ratio:.0f} times ({info.compress_size} bytes to {info.file_size}; "
            f"limit {MAX_RATIO} times): refused as a zip bomb")
    return info


def iter_member(archive: zipfile.ZipFile, name: str, limit: int, file_path: str) -> Iterator[bytes]:
    """The uncompressed bytes of one archive member in blocks, refused past ``limit`` bytes or an
    absurd compression ratio whatever its header claims (a zip bomb costs one block of memory)."""
    info = _open_member(archive, name, limit, file_path)
    size = 0
    with archive.open(info) as member:
        while True:
            block = member.read(min(_READ_BLOCK, limit + 1 - size))
            if not block:
                return
            size += len(block)
            if size > limit:
                raise DocumentLoadError(file_path, "unsupported",
                                        f"{name} expands past {limit} bytes (a zip bomb?)")
            if size > RATIO_FLOOR_BYTES and size / max(info.compress_size, 1) > MAX_RATIO:
                raise DocumentLoadError(
                    file_path, "unsupported",
                    f"{name} expands over {MAX_RATIO} times its {info.compress_size} compressed "
                    "bytes: refused as a zip bomb")
            yield block


def read_member(archive: zipfile.ZipFile, name: str, limit: int, file_path: str) -> bytes:
    """The uncompressed bytes of one archive member, refused past ``limit`` bytes whatever its
    header claims (read in blocks: a zip bomb costs at most ``limit`` bytes of memory)."""
    return b"".join(iter_member(archive, name, limit, file_path))


def is_docx(data: bytes) -> bool:
    """Whether ``data`` is a ZIP archive with ``word/document.xml`` (a Word document)."""
    if not data.startswith(b"PK\x03\x04"):
        return False
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return "word/document.xml" in archive.namelist()
    except zipfile.BadZipFile:
        return False


def _heading_level(style: Optional[str]) -> Optional[int]:
    if not style:
        return None
    if style.lower() == "title":
        return 1
    match = _HEADING.match(style.replace("_", " ").strip())
    return int(match.group(1)) if match else None


def _paragraph_text(paragraph: ElementTree.Element) -> str:
    parts: List[str] = []
    for node in paragraph.iter():
        if node.tag == f"{W}t" and node.text:
            parts.append(node.text)
        elif node.tag == f"{W}tab":
            parts.append("\t")
        elif node.tag in (f"{W}br", f"{W}cr"):
            parts.append("\n")
    return "".join(parts).strip()


class _Body:
    """The text blocks and headings of a document body, fed one block element at a time."""

    def __init__(self, file_path: str) -> None:
        self.file_path = file_path
        self.blocks: List[str] = []
        self.sections: List[Dict[str, Any]] = []
        self.offset = 0
        self.truncated = False
        self._root: Optional[ElementTree.Element] = None

    def add(self, text: str, level: Optional[int] = None) -> None:
        if not text or self.truncated:
            return
        if self.offset + len(text) > MAX_TEXT_CHARS:
            text = text[:max(0, MAX_TEXT_CHARS - self.offset)]
            self.truncated = True
            log.warning("%s: only the first %d characters of text are read", self.file_path,
                        MAX_TEXT_CHARS)
        if level is not None:
            self.sections.append({"level": level, "title": text, "offset": self.offset})
        self.blocks.append(text)
        self.offset += len(text) + 2

    def block(self, child: ElementTree.Element) -> None:
        """Read one child of the body: a paragraph, a table or a content control."""
        if child.tag == f"{W}p":
            props = child.find(f"{W}pPr")
            style = props.find(f"{W}pStyle") if props is not None else None
            level = _heading_level(style.get(f"{W}val") if style is not None else None)
            is_item = props is not None and props.find(f"{W}numPr") is not None
            text = _paragraph_text(child)
            self.add(f"- {text}" if is_item and text and level is None else text, level)
        elif child.tag == f"{W}tbl":
            rows = []
            for row in child.iter(f"{W}tr"):
                cells = [" ".join(_paragraph_text(p) for p in cell.iter(f"{W}p")).strip()
                         for cell in row.findall(f"{W}tc")]
                if any(cells):
                    rows.append("; ".join(c for c in cells if c))
            self.add("\n".join(rows))
        elif child.tag == f"{W}sdt":
            content = child.find(f"{W}sdtContent")
            for inner in content if content is not None else ():
                self.block(inner)

    def read(self, chunks: Iterator[bytes]) -> None:
        """Parse ``word/document.xml`` as it is read. After each 64 KB parsed, the complete
        children of ``w:body`` (paragraphs, tables) go to :meth:`block` and are dropped, so the
        memory held is about 1 MB of bytes and one paragraph or table, not the whole tree.
        More than :data:`MAX_TAGS` tags is refused (counted in C on the raw bytes: a document of
        millions of empty paragraphs is refused before they are parsed)."""
        parser = ElementTree.XMLPullParser(events=("start",))
        body: Optional[ElementTree.Element] = None
        tags = 0
        for chunk in chunks:
            tags += chunk.count(b"<")
            if tags > MAX_TAGS:
                raise DocumentLoadError(
                    self.file_path, "unsupported",
                    f"word/document.xml holds over {MAX_TAGS} XML tags: too many to read")
            for start in range(0, len(chunk), _FEED_BYTES):
                parser.feed(chunk[start:start + _FEED_BYTES])
                body = self._step(parser, body)
                if self.truncated:
                    return  # the rest is not read (its text would be left out)
        parser.close()
        container = body if body is not None else self._root
        if container is not None:
            self._blocks(list(container))

    def _step(self, parser: ElementTree.XMLPullParser,
              body: Optional[ElementTree.Element]) -> Optional[ElementTree.Element]:
        """Read the complete body children the parser has built so far (and drop them)."""
        events = parser.read_events()
        if body is None:
            for _, node in events:
                self._root = node if self._root is None else self._root
                if node.tag == f"{W}body":
                    body = node
                    break
        collections.deque(events, maxlen=0)  # the other events are not needed
        if body is not None and len(body) > 1:
            complete = body[:-1]  # the last child may still be open
            del body[:-1]
            self._blocks(complete)
        return body

    def _blocks(self, children: List[ElementTree.Element]) -> None:
        for child in children:
            if self.truncated:
                return
            if len(child):  # an element without children holds no text (an empty paragraph)
                self.block(child)


@register
class DocxLoader(DocumentLoader):
    """Word ``.docx`` text with headings as structure (see the module doc).

    ``word/document.xml`` is parsed as it is decompressed, one paragraph or table at a time; a
    member past :data:`MAX_XML_BYTES` or :data:`MAX_RATIO` times its compressed size is refused
    as a zip bomb, and text past :data:`MAX_TEXT_CHARS` is left out (logged).
    """

    format = "docx"
    extensions = (".docx",)

    def extract(self, data: bytes, file_path: str) -> Tuple[str, Dict[str, Any]]:
        walker = _Body(file_path)
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                walker.read(iter_member(archive, "word/document.xml", MAX_XML_BYTES, file_path))
                title = None
                if "docProps/core.xml" in archive.namelist():
                    core = ElementTree.fromstring(
                        read_member(archive, "docProps/core.xml", MAX_PART_BYTES, file_path))
                    node = core.find(DC_TITLE)
                    title = node.text.strip() if node is not None and node.text else None
        except (zipfile.BadZipFile, KeyError, zlib.error, EOFError, NotImplementedError) as e:
            raise DocumentLoadError(file_path, "unsupported",
                                    f"not a Word .docx file (a ZIP with word/document.xml): {e}"
                                    ) from e
        except ElementTree.ParseError as e:
            raise DocumentLoadError(file_path, "unsupported", f"malformed .docx XML: {e}") from e
        sections = walker.sections
        return "\n\n".join(walker.blocks), {
            "title": title or (sections[0]["title"] if sections else None), "sections": sections}
