"""Hostile and damaged files (issue 26, defects 3 and 11): a DOCX zip bomb through any member
is refused by itself (the folder run goes on); UTF-8 with a few bad bytes stays UTF-8."""

import io
import zipfile

import pytest

from lightrag.components.loaders import DocumentLoadError, load_document, load_documents
from lightrag.components.loaders.base import decode_text

DOC_XML = ('<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
           '<w:body><w:p><w:r><w:t>Saturn has rings.</w:t></w:r></w:p></w:body></w:document>')


def docx(members=None):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/document.xml", DOC_XML)
        for name, data in (members or {}).items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_zip_bomb_in_core_xml_is_refused_cheaply():
    bomb = docx({"docProps/core.xml": b"<a>" + b" " * (50 * 1024 * 1024) + b"</a>"})
    assert len(bomb) < 200_000
    with pytest.raises(DocumentLoadError, match="docProps/core.xml") as caught:
        load_document("bomb.docx", data=bomb)
    assert caught.value.reason == "unsupported"


def test_a_bomb_in_a_folder_is_skipped_and_the_rest_indexed(tmp_path):
    (tmp_path / "bomb.docx").write_bytes(docx({"docProps/core.xml": b" " * (20 * 1024 * 1024)}))
    (tmp_path / "good.docx").write_bytes(docx())
    (tmp_path / "notes.txt").write_text("Titan orbits Saturn.")
    report = load_documents([tmp_path])
    assert sorted(d.meta_data["file_path"].rsplit("/", 1)[-1] for d in report.documents) == [
        "good.docx", "notes.txt"]
    assert [s for s in report.skipped if "bomb.docx" in str(s[0])]


def test_utf8_with_a_few_bad_bytes_stays_utf8():
    text = "Zürich liegt an der Limmat. Café, naïve, Größe. " * 20
    data = text.encode("utf-8")
    data = data[:100] + b"\xff" + data[100:]
    decoded, encoding = decode_text(data)
    assert encoding == "utf-8" and "Zürich" in decoded and "\ufffd" in decoded


def test_latin1_is_still_detected_not_mangled():
    data = ("Le café est très bon. " * 20).encode("latin-1")
    decoded, encoding = decode_text(data)
    assert "café" in decoded and encoding != "utf-8"
