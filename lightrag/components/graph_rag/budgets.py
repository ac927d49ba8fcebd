"""Token budgets of a query context, derived from the answer model's context window.

A :class:`QueryParam` may leave ``max_total_tokens``, ``max_entity_tokens`` and
``max_relation_tokens`` unset (``None``). :func:`resolve_budgets` settles them:

- the window is the answer model's context length (``n_ctx`` of a local llama.cpp client, a
  known window for common hosted models, else :data:`DEFAULT_CONTEXT_WINDOW`);
- the prompt may use the window minus the tokens kept for the answer (the generator's
  ``max_tokens``, else a quarter of the window, at most :data:`ANSWER_RESERVE_CAP`);
- ``max_total_tokens`` defaults to that, capped at :data:`DEFAULT_TOTAL_TOKENS`, and an explicit
  value larger than the window is cut to it: a query never sends a prompt the model cannot read;
- explicit entity and relation budgets are cut to the total; unset ones stay ``None``: the
  query mode then lets entity and relation lines take a share of the chunk context
  (:data:`lightrag.components.graph_rag.context_builder.KG_SHARE`) instead of adding to it.

Example:
    >>> from lightrag.components.graph_rag.schemas import QueryParam
    >>> p = resolve_budgets(QueryParam(max_entity_tokens=9000), window=4096, answer_tokens=512)
    >>> p.max_total_tokens, p.max_entity_tokens, p.max_relation_tokens
    (3584, 3584, None)
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any, Tuple

from lightrag.components.graph_rag.schemas import QueryParam

log = logging.getLogger(__name__)

DEFAULT_CONTEXT_WINDOW = 32768
DEFAULT_TOTAL_TOKENS = 30000
ANSWER_RESERVE_CAP = 2048

KNOWN_WINDOWS = (  # model-name prefix -> context window (tokens)
    ("gpt-4.1", 1_047_576), ("gpt-4o", 128_000), ("gpt-4-turbo", 128_000), ("o1", 200_000),
    ("o3", 200_000), ("o4", 200_000), ("gpt-3.5-turbo", 16_385), ("gpt-4", 8_192),
    ("llama-3.1", 131_072), ("llama-3.2", 131_072), ("llama-3.3", 131_072),
    ("llama3-", 8_192), ("gemma2", 8_192), ("mixtral-8x7b", 32_768), ("qwen", 32_768),
)


def model_window(generator: Any) -> Tuple[int, bool]:
    """``(context window, known)`` of the model behind a Generator: the client's ``n_ctx``
    (local llama.cpp), the ``KNOWN_WINDOWS`` entry of its model name, or the default."""
    client = getattr(generator, "model_client", None)
    n_ctx = getattr(client, "n_ctx", None)
    if isinstance(n_ctx, int) and n_ctx > 0:
        return n_ctx, True
    kwargs = getattr(generator, "model_kwargs", None) or {}
    model = str(kwargs.get("model", "")).lower().split("/")[-1]
    for prefix, window in KNOWN_WINDOWS:
        if model.startswith(prefix):
            return window, True
    return DEFAULT_CONTEXT_WINDOW, False


def answer_reserve(generator: Any, window: int) -> int:
    """Tokens kept free for the answer: the generator's ``max_tokens`` (or
    ``max_completion_tokens``), else a quarter of the window up to ``ANSWER_RESERVE_CAP``."""
    kwargs = getattr(generator, "model_kwargs", None) or {}
    for key in ("max_tokens", "max_completion_tokens", "max_new_tokens"):
        value = kwargs.get(key)
        if isinstance(value, int) and value > 0:
            return min(value, window // 2)
    return min(ANSWER_RESERVE_CAP, window // 4)


def resolve_budgets(param: QueryParam, window: int, answer_tokens: int) -> QueryParam:
    """``param`` with every token budget set and the total cut to ``window - answer_tokens``."""
    limit = max(1, window - answer_tokens)
    total = param.max_total_tokens if param.max_total_tokens is not None else min(limit, DEFAULT_TOTAL_TOKENS)
    if total > limit:
        log.info("max_total_tokens %d cut to %d to fit the answer model's %d-token window",
                 total, limit, window)
        total = limit
    entity, relation = param.max_entity_tokens, param.max_relation_tokens
    return dataclasses.replace(
        param, max_total_tokens=total,
        max_entity_tokens=None if entity is None else min(entity, total),
        max_relation_tokens=None if relation is None else min(relation, total))

