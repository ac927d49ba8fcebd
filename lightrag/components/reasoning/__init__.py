"""Reasoning components: chain of thought (lightrag 0.1's ``components.reasoning``)."""

from lightrag.components.reasoning.chain_of_thought import (
    COT_TASK_DESC_STR_BASIC,
    COT_TASK_DESC_STR_WITH_JSON_OUTPUT,
    ChainOfThought,
)

__all__ = ["COT_TASK_DESC_STR_BASIC", "COT_TASK_DESC_STR_WITH_JSON_OUTPUT", "ChainOfThought"]
