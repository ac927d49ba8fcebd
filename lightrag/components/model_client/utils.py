"""lightrag 0.1's ``components.model_client.utils``: parse an OpenAI-style embeddings reply.

Example:
    >>> from types import SimpleNamespace as NS
    >>> reply = NS(data=[NS(embedding=[0.1, 0.2], index=0)], model="m",
    ...            usage=NS(prompt_tokens=3, total_tokens=3))
    >>> out = parse_embedding_response(reply)
    >>> out.data[0].embedding, out.model, out.usage.total_tokens
    ([0.1, 0.2], 'm', 3)
"""

from __future__ import annotations

from typing import Any

from lightrag.core.types import EmbedderOutput, Embedding, Usage

__all__ = ["parse_embedding_response"]


def parse_embedding_response(api_response: Any) -> EmbedderOutput:
    """An :class:`EmbedderOutput` (vectors, model, usage) from an OpenAI-style response."""
    from lightrag.components.model_client.chat_utils import _in_index_order

    items = _in_index_order(list(api_response.data))  # input order, by the index fields
    embeddings = [Embedding(embedding=list(e.embedding), index=i) for i, e in enumerate(items)]
    usage = getattr(api_response, "usage", None)
    return EmbedderOutput(
        data=embeddings,
        model=getattr(api_response, "model", None),
        usage=Usage(prompt_tokens=usage.prompt_tokens, total_tokens=usage.total_tokens)
        if usage is not None
        else None,
    )
