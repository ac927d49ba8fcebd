"""Model clients: the bridges between lightrag and model providers.

Every client module imports without its provider's SDK; the SDK is imported when the client first
sends a request, with an error that says which extra to install (``pip install 'lightrag[openai]'``).

Example:
    >>> from lightrag.components.model_client import GroqAPIClient, OpenAIClient
    >>> OpenAIClient(base_url="http://localhost:8000/v1")
    OpenAIClient(base_url='http://localhost:8000/v1')
"""

from lightrag.components.model_client.client_type import ModelClientType
from lightrag.components.model_client.groq_client import GroqAPIClient
from lightrag.components.model_client.local_embedder_client import LocalEmbedderClient
from lightrag.components.model_client.local_llm_client import LocalLLMClient
from lightrag.components.model_client.openai_client import (
    OpenAIClient,
    get_all_messages_content,
    get_first_message_content,
    get_probabilities,
)
from lightrag.components.model_client.scripted_client import ScriptedClient

__all__ = [
    "GroqAPIClient",
    "LocalEmbedderClient",
    "LocalLLMClient",
    "ModelClientType",
    "OpenAIClient",
    "ScriptedClient",
    "get_all_messages_content",
    "get_first_message_content",
    "get_probabilities",
]
