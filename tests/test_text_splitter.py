import asyncio
import math
import subprocess
import sys
import uuid

import pytest

from lightrag.components.data_process import TextSplitter
from lightrag.core.tokenizer import get_encoding
from lightrag.core.types import Document

WORDS = "one two three four five six seven"


def splitter(split_by="word", size=3, overlap=1, **kw):
    return TextSplitter(split_by=split_by, chunk_size=size, chunk_overlap=overlap, **kw)


# ---------------------------------------------------------------- validation
@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"split_by": "paragraph"}, "split_by"),
        ({"chunk_size": 0, "chunk_overlap": 0}, "chunk_size must be greater than 0"),
        ({"chunk_size": -5, "chunk_overlap": 0}, "chunk_size"),
        ({"chunk_size": 10, "chunk_overlap": -1}, "chunk_overlap must be 0 or more"),
        ({"chunk_size": 10, "chunk_overlap": 10}, r"chunk_overlap \(10\) must be smaller"),
        ({"chunk_size": 10, "chunk_overlap": 11}, "must be smaller than chunk_size"),
        ({"chunk_size": 2.5, "chunk_overlap": 0}, "chunk_size must be an int"),
        ({"batch_size": 0}, "batch_size"),
    ],
)
def test_invalid_arguments_raise_value_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TextSplitter(**kwargs)


def test_defaults_and_repr():
    s = TextSplitter()
    assert (s.split_by, s.chunk_size, s.chunk_overlap, s.batch_size) == ("word", 800, 200, 1000)
    assert repr(s) == "TextSplitter(split_by=word, chunk_size=800, chunk_overlap=200)"


# ---------------------------------------------------------------- word
def test_word_split_matches_0_1_arithmetic():
    assert splitter(size=3, overlap=1).split_text(WORDS) == [
        "one two three ",
        "three four five ",
        "five six seven",
    ]
    assert splitter(size=2, overlap=0).split_text("a b c d") == ["a b ", "c d"]
    assert splitter(size=2, overlap=1).split_text("a b c d") == ["a b ", "b c ", "c d"]


def test_word_split_keeps_original_whitespace():
    text = "  alpha\tbeta\n\ngamma  delta epsilon\n"
    chunks = splitter(size=2, overlap=0).split_text(text)
    assert chunks == ["  alpha\tbeta\n\n", "gamma  delta ", "epsilon\n"]
    assert "".join(chunks) == text


@pytest.mark.parametrize("size, overlap", [(1, 0), (2, 1), (3, 0), (3, 2), (5, 2), (7, 3), (10, 9)])
def test_word_chunk_count_and_overlap(size, overlap):
    words = [f"w{i}" for i in range(23)]
    chunks = splitter(size=size, overlap=overlap).split_text(" ".join(words))
    step = size - overlap
    expected = 1 if len(words) <= size else math.ceil((len(words) - size) / step) + 1
    assert len(chunks) == expected
    unit_chunks = [c.split() for c in chunks]
    for i, units in enumerate(unit_chunks):
        assert units == words[i * step : i * step + size]
    for prev, nxt in zip(unit_chunks, unit_chunks[1:]):
        assert prev[step:] == nxt[:overlap]
    assert unit_chunks[-1][-1] == words[-1]


def test_empty_whitespace_and_short_text():
    for split_by in ("word", "sentence", "page", "passage", "token", "character"):
        s = splitter(split_by, size=5, overlap=1)
        assert s.split_text("") == []
        # 0.1 keeps whitespace-only text as one chunk by sentence, passage and page
        blank = [" \n\t "] if split_by in ("sentence", "page", "passage") else []
        assert s.split_text(" \n\t ") == blank
    assert splitter(size=10, overlap=2).split_text("just four words here") == [
        "just four words here"
    ]
    assert splitter(size=4, overlap=2).split_text("exactly four words here") == [
        "exactly four words here"
    ]


def test_non_string_text_raises_type_error():
    with pytest.raises(TypeError, match="must be a str"):
        splitter().split_text(None)


# ---------------------------------------------------------------- sentence
def test_sentence_split_is_01s():
    """lightrag 0.1's sentences: ``text.split(".")``, each non-final chunk ending with ``.``, the
    next sentence starting with its whitespace; ``!`` and ``?`` do not end a sentence."""
    text = "Hello world. How are you? I am fine! Thanks."
    assert splitter("sentence", size=1, overlap=0).split_text(text) == [
        "Hello world.",
        " How are you? I am fine! Thanks.",
    ]
    text = "One. Two. Three. Four"
    assert splitter("sentence", size=2, overlap=1).split_text(text) == [
        "One. Two.",
        " Two. Three.",
        " Three. Four",
    ]


def test_sentence_split_edge_cases_as_01():
    text = "Pi is 3.14 exactly. Then\nleft... Done"
    assert splitter("sentence", size=1, overlap=0).split_text(text) == [
        "Pi is 3.", "14 exactly.", " Then\nleft.", ".", ".", " Done"]
    # a text ending with "." has an empty last unit, which still counts in 0.1's window
    assert splitter("sentence", size=2, overlap=1).split_text("A. B.") == ["A. B.", " B."]
    assert splitter("sentence", size=1, overlap=0).split_text("A. B.") == ["A.", " B."]


# ---------------------------------------------------------------- passage / page
def test_passage_split():
    text = "First para\nstill first.\n\nSecond para.\n\n\n  Third para."
    assert splitter("passage", size=1, overlap=0).split_text(text) == [  # 0.1's units
        "First para\nstill first.\n\n",
        "Second para.\n\n",
        "\n  Third para.",
    ]
    assert splitter("passage", size=2, overlap=1).split_text(text) == [
        "First para\nstill first.\n\nSecond para.\n\n",
        "Second para.\n\n\n  Third para.",
    ]


def test_page_split():
    text = "page one\fpage two\fpage three"
    assert splitter("page", size=1, overlap=0).split_text(text) == [
        "page one\f",
        "page two\f",
        "page three",
    ]
    assert splitter("page", size=2, overlap=1).split_text(text) == [
        "page one\fpage two\f",
        "page two\fpage three",
    ]


# ---------------------------------------------------------------- character
def test_character_split_and_offsets():
    s = splitter("character", size=4, overlap=2)
    assert s.split_text("abcdefg") == ["abcd", "cdef", "efg"]
    assert s.split_text_with_offsets("abcdefgh") == [("abcd", 0), ("cdef", 2), ("efgh", 4)]
    assert splitter("character", size=2, overlap=0).split_text("日本語だ😀") == [
        "日本",
        "語だ",
        "😀",
    ]


# ---------------------------------------------------------------- token
def test_token_split_decodes_windows_of_token_ids():
    encoding = get_encoding("cl100k_base")
    text = "The quick brown fox jumps over the lazy dog. " * 5
    ids = encoding.encode(text)
    size, overlap = 7, 2
    chunks = splitter("token", size=size, overlap=overlap).split_text(text)
    step = size - overlap
    assert len(chunks) == math.ceil((len(ids) - size) / step) + 1
    for i, chunk in enumerate(chunks):
        assert chunk == encoding.decode(ids[i * step : i * step + size])
    assert "".join(splitter("token", size=size, overlap=0).split_text(text)) == text


def test_token_split_never_cuts_a_character():
    text = "naïve café 😀 日本語のテキスト 🎉🎉 end"
    for size in (1, 2, 3):
        chunks = splitter("token", size=size, overlap=0).split_text(text)
        assert chunks and all(chunk and "\ufffd" not in chunk for chunk in chunks)
        assert "".join(chunks) == text


def test_offsets_point_into_the_text():
    text = "Alpha beta. Gamma delta! Epsilon zeta? Eta theta."
    for split_by in ("word", "sentence", "token", "character"):
        for chunk, offset in splitter(split_by, size=3, overlap=1).split_text_with_offsets(text):
            assert text[offset : offset + len(chunk)] == chunk


def test_module_builds_no_tokenizer_at_import():
    code = (
        "import lightrag.core.tokenizer as t\n"
        "import lightrag.components.data_process.text_splitter\n"
        "assert t.get_encoding.cache_info().currsize == 0\n"
        "assert t.default_tokenizer.cache_info().currsize == 0\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# ---------------------------------------------------------------- documents
def test_call_splits_documents_keeping_ids_and_order():
    docs = [
        Document(text="a b c d e", meta_data={"source": "x", "tags": ["t"]}, id="doc-1"),
        Document(text="f g", id="doc-2"),
        Document(text="", id="doc-3"),
    ]
    chunks = splitter(size=2, overlap=0)(docs)
    assert [(c.text, c.parent_doc_id, c.order) for c in chunks] == [
        ("a b ", "doc-1", 0),
        ("c d ", "doc-1", 1),
        ("e", "doc-1", 2),
        ("f g", "doc-2", 0),
    ]
    assert all(c.vector == [] and c.id not in {"doc-1", "doc-2"} for c in chunks)
    assert len({c.id for c in chunks}) == len(chunks)
    assert chunks[0].meta_data == {"source": "x", "tags": ["t"]}
    chunks[0].meta_data["tags"].append("changed")
    assert docs[0].meta_data == {"source": "x", "tags": ["t"]}
    assert docs[0].text == "a b c d e" and docs[0].id == "doc-1"
    assert chunks[0].estimated_num_tokens > 0


def test_call_in_small_batches_gives_same_result():
    docs = [Document(text=f"doc {i} has some words", id=str(i)) for i in range(7)]
    small = splitter(size=2, overlap=1, batch_size=3)(docs)
    big = splitter(size=2, overlap=1)(docs)
    assert [(c.text, c.parent_doc_id, c.order) for c in small] == [
        (c.text, c.parent_doc_id, c.order) for c in big
    ]


def test_parent_doc_id_is_a_string():
    doc_id = uuid.uuid4()
    chunks = splitter()([Document(text="x y", id=doc_id)])
    assert chunks[0].parent_doc_id == str(doc_id)


def test_call_rejects_bad_input():
    s = splitter()
    with pytest.raises(TypeError, match="list of Document"):
        s(["plain string"])
    with pytest.raises(TypeError, match="list of Document"):
        s("plain string")
    with pytest.raises(TypeError, match="list of Document"):
        s(Document(text="single"))
    with pytest.raises(ValueError, match="'missing-text'"):
        s([Document(text="ok"), Document(text=None, id="missing-text")])


def test_acall_matches_call():
    docs = [Document(text=WORDS, id="d")]
    s = splitter("word", size=3, overlap=1)
    got = asyncio.run(s.acall(docs))
    assert [c.text for c in got] == [c.text for c in s(docs)]


def test_config_and_dict_round_trip():
    s = TextSplitter(split_by="sentence", chunk_size=4, chunk_overlap=1)
    rebuilt = TextSplitter.from_config(s.to_config())
    assert repr(rebuilt) == repr(s)
    restored = TextSplitter.from_dict(s.to_dict())
    assert restored.split_text("A. B. C. D. E.") == s.split_text("A. B. C. D. E.")
