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

import io
import re
import zipfile
import zlib
from typing import Any, Dict, List, Optional, Tuple
from xml.etree import ElementTree

from lightrag.components.loaders.base import DocumentLoader, DocumentLoadError
from lightrag.utils.registry import register

__all__ = ["DocxLoader", "is_docx"]

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
DC_TITLE = "{http://purl.org/dc/elements/1.1/}title"
_HEADING = re.compile(r"^(?:heading|berschrift|titre)\s*([1-9])$", re.IGNORECASE)
MAX_XML_BYTES = 64 * 1024 * 1024  # word/document.xml, uncompressed
MAX_PART_BYTES = 1024 * 1024  # any other member read (docProps/core.xml)
_READ_BLOCK = 1024 * 1024


def read_member(archive: zipfile.ZipFile, name: str, limit: int, file_path: str) -> bytes:
    """The uncompressed bytes of one archive member, refused past ``limit`` bytes whatever its
    header claims (read in blocks: a zip bomb costs at most ``limit`` bytes of memory)."""
    info = archive.getinfo(name)
    if info.file_size > limit:
        raise DocumentLoadError(file_path, "unsupported",
                                f"{name} is {info.file_size} bytes uncompressed (limit {limit})")
    parts: List[bytes] = []
    size = 0
    with archive.open(info) as member:
        while True:
            block = member.read(min(_READ_BLOCK, limit + 1 - size))
            if not block:
                break
            parts.append(block)
            size += len(block)
            if size > limit:
                raise DocumentLoadError(file_path, "unsupported",
                                        f"{name} expands past {limit} bytes (a zip bomb?)")
    return b"".join(parts)


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
    def __init__(self) -> None:
        self.blocks: List[str] = []
        self.sections: List[Dict[str, Any]] = []
        self.offset = 0

    def add(self, text: str, level: Optional[int] = None) -> None:
        if not text:
            return
        if level is not None:
            self.sections.append({"level": level, "title": text, "offset": self.offset})
        self.blocks.append(text)
        self.offset += len(text) + 2

    def walk(self, container: ElementTree.Element) -> None:
        for child in container:
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
                if content is not None:
                    self.walk(content)


@register
class DocxLoader(DocumentLoader):
    """Word ``.docx`` text with headings as structure (see the module doc)."""

    format = "docx"
    extensions = (".docx",)

    def extract(self, data: bytes, file_path: str) -> Tuple[str, Dict[str, Any]]:
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                root = ElementTree.fromstring(
                    read_member(archive, "word/document.xml", MAX_XML_BYTES, file_path))
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
        body = root.find(f"{W}body")
        walker = _Body()
        walker.walk(body if body is not None else root)
        sections = walker.sections
        return "\n\n".join(walker.blocks), {
            "title": title or (sections[0]["title"] if sections else None), "sections": sections}
