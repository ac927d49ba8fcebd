"""What HKU LightRAG programs import from ``lightrag.utils``: ``EmbeddingFunc``,
``wrap_embedding_func_with_attrs`` and ``setup_logger`` (``logger`` is 0.1's
``lightrag.utils.logger`` module, which logs like a logger).

Example:
    >>> import numpy as np
    >>> @wrap_embedding_func_with_attrs(embedding_dim=2, max_token_size=512)
    ... async def embed(texts):
    ...     return np.ones((len(texts), 2))
    >>> embed.embedding_dim, embed.func.__name__
    (2, 'embed')
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable, List, Optional

import numpy as np

__all__ = ["EmbeddingFunc", "setup_logger", "wrap_embedding_func_with_attrs"]


@dataclass
class EmbeddingFunc:
    """HKU's embedding wrapper: ``func(texts) -> array (len(texts), embedding_dim)``, sync or
    async; calling the wrapper calls ``func`` (with ``embedding_dim=`` when ``send_dimensions``)
    and checks the dimension. ``model_name`` and ``supports_asymmetric`` are kept for programs
    that read them; queries and documents are embedded alike here."""

    embedding_dim: int
    func: Callable[..., Any]
    max_token_size: Optional[int] = None
    send_dimensions: bool = False
    model_name: Optional[str] = None
    supports_asymmetric: bool = False

    async def __call__(self, texts: List[str], **kwargs: Any) -> np.ndarray:
        if self.send_dimensions:
            kwargs.setdefault("embedding_dim", self.embedding_dim)
        result = self.func(texts, **kwargs)
        if hasattr(result, "__await__"):
            result = await result
        vectors = np.asarray(result, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[1] != self.embedding_dim:
            raise ValueError(f"embedding_func returned shape {vectors.shape}; expected "
                             f"({len(texts)}, {self.embedding_dim})")
        return vectors


def wrap_embedding_func_with_attrs(**attrs: Any) -> Callable[[Callable[..., Any]], EmbeddingFunc]:
    """HKU's decorator: ``@wrap_embedding_func_with_attrs(embedding_dim=..., max_token_size=...)``
    turns an embedding function into an :class:`EmbeddingFunc` (the function stays in ``.func``)."""
    def wrap(func: Callable[..., Any]) -> EmbeddingFunc:
        return EmbeddingFunc(**attrs, func=func)
    return wrap


def setup_logger(logger_name: str, level: str = "INFO", add_filter: bool = False,
                 log_file_path: Optional[str] = None, enable_file_logging: bool = True) -> None:
    """HKU's ``setup_logger``: ``logger_name`` logs at ``level`` to the console (and to
    ``log_file_path`` when given and ``enable_file_logging``). ``add_filter`` is accepted and
    ignored (HKU's filter drops its server's access-log noise)."""
    named = logging.getLogger(logger_name)
    named.setLevel(getattr(logging, str(level).upper(), logging.INFO))
    if not any(isinstance(h, logging.StreamHandler) and not isinstance(h, logging.FileHandler)
               for h in named.handlers):
        named.addHandler(logging.StreamHandler())
    if log_file_path and enable_file_logging and not any(
            isinstance(h, logging.FileHandler) for h in named.handlers):
        named.addHandler(logging.FileHandler(log_file_path, encoding="utf-8"))
