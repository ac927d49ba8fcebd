"""Embedding many texts for the store: each distinct text once, in batches of similar length.

One function for every place that writes vectors (chunk vectors in an insert, on a Ray worker
or in this process, and the entity and relation vectors of the index), so they all refuse the
same bad output the same way.
"""

from __future__ import annotations

from typing import Any, List, Sequence

import numpy as np


async def embed_texts(embedder: Any, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
    """Unit-length float32 vectors of ``texts``, one row per text, in order.

    Each distinct text is embedded once, and texts are sent sorted by length in batches of
    ``batch_size`` (padding to the longest text of a batch is what makes mixed batches slow).
    A model client that batches by token length itself says how many texts it takes per call
    (``texts_per_call``, e.g. the local embedder's 2,048): it gets that many at a time, so its
    batches of similar token length are drawn from more texts (MuSiQue, 300 passages: 118,819
    -> 104,124 padded tokens with the ONNX backend).

    Args:
        embedder: an :class:`~lightrag.core.embedder.Embedder` (``acall(list of texts)``).
        texts: the texts.
        batch_size: texts per embedder call.

    Raises:
        RuntimeError: the embedder returned an error.
        ValueError: it returned NaN or infinite values, or a wrong number of vectors.

    Example:
        >>> import asyncio
        >>> asyncio.run(embed_texts(embedder, ["a", "bb", "a"])).shape  # doctest: +SKIP
        (3, 384)
    """
    unique = list(dict.fromkeys(texts))
    if not unique:
        return np.zeros((0, 0), dtype=np.float32)
    if embedder is None:
        raise ValueError("no embedder is configured: cannot embed texts")
    if batch_size < 1:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    client_call = getattr(getattr(embedder, "model_client", None), "texts_per_call", None)
    if isinstance(client_call, int) and client_call > batch_size:
        batch_size = client_call
    ordered = sorted(unique, key=len)
    rows: List[Any] = []
    for start in range(0, len(ordered), batch_size):
        batch = ordered[start:start + batch_size]
        output = await embedder.acall(batch)
        if output.error is not None:
            raise RuntimeError(f"embedding failed: {output.error}")
        if len(output.data) != len(batch):
            raise ValueError(f"the embedder returned {len(output.data)} vectors for "
                             f"{len(batch)} texts")
        rows.extend(e.embedding for e in output.data)
    matrix = np.asarray(rows, dtype=np.float32)
    bad = ~np.isfinite(matrix).all(axis=1)
    if bad.any():
        raise ValueError(f"the embedder returned NaN or infinite values for {int(bad.sum())} of "
                         f"{len(unique)} texts: refusing to store them (check the embedding model)")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    matrix /= norms
    position = {text: row for row, text in enumerate(ordered)}
    return matrix[[position[t] for t in texts]]
