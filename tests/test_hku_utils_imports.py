"""HKU LightRAG programs' imports from ``lightrag.utils`` work here."""

import asyncio
import logging

import numpy as np


def test_hku_utils_names_import_and_wrap_an_embedding_function():
    from lightrag import EmbeddingFunc as top_level
    from lightrag.utils import EmbeddingFunc, logger, setup_logger, wrap_embedding_func_with_attrs

    assert EmbeddingFunc is top_level
    seen = {}

    @wrap_embedding_func_with_attrs(embedding_dim=3, max_token_size=64, send_dimensions=True,
                                    model_name="m")
    async def embed(texts, embedding_dim=None):
        seen["dim"] = embedding_dim
        return np.ones((len(texts), 3))

    assert isinstance(embed, EmbeddingFunc) and embed.model_name == "m"
    assert asyncio.run(embed(["a", "b"])).shape == (2, 3) and seen["dim"] == 3
    library = logging.getLogger("lightrag")
    level, handlers = library.level, list(library.handlers)
    try:
        setup_logger("lightrag", level="WARNING")
        assert library.level == logging.WARNING
    finally:  # the library's logger is shared by every later test
        library.setLevel(level)
        library.handlers[:] = handlers
    logger.info("logs like a logger")  # 0.1's module, callable as HKU's logger
    from lightrag.utils.logger import get_logger  # 0.1's import still works

    assert callable(get_logger)


def test_hku_readme_pipeline_status_call_runs():
    from lightrag.kg.shared_storage import initialize_pipeline_status

    assert asyncio.run(initialize_pipeline_status()) is None
    assert asyncio.run(initialize_pipeline_status(workspace="w")) is None
