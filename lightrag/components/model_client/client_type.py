"""``ModelClientType``: the model clients by provider name (0.1's ``ModelClientType.OPENAI()``).

Example:
    >>> from lightrag.components.model_client.client_type import ModelClientType
    >>> ModelClientType.OPENAI(base_url="http://localhost:11434/v1")
    OpenAIClient(base_url='http://localhost:11434/v1')
"""

from lightrag.components.model_client.groq_client import GroqAPIClient
from lightrag.components.model_client.openai_client import OpenAIClient

__all__ = ["ModelClientType"]


class ModelClientType:
    """Namespace of client classes; call an attribute to build a client: ``ModelClientType.GROQ()``."""

    OPENAI = OpenAIClient
    GROQ = GroqAPIClient
