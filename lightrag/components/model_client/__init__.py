"""Model clients: the bridges between lightrag and model providers.

Every client module imports without its provider's SDK; the SDK is imported when the client first
sends a request, with an error that says which extra to install (``pip install -e '.[openai]'``,
``[groq]``, ``[anthropic]``, ``[google]``, ``[cohere]``, ``[ollama]``, ``[transformers]``). So,
unlike 0.1's lazy proxies, these are the real classes: they can be subclassed and isinstance-checked.

Example:
    >>> from lightrag.components.model_client import GroqAPIClient, OpenAIClient
    >>> OpenAIClient(base_url="http://localhost:8000/v1")
    OpenAIClient(base_url='http://localhost:8000/v1')
"""

from lightrag.components.model_client.anthropic_client import AnthropicAPIClient
from lightrag.components.model_client.client_type import ModelClientType
from lightrag.components.model_client.cohere_client import CohereAPIClient
from lightrag.components.model_client.function_client import FunctionClient
from lightrag.components.model_client.google_client import GoogleGenAIClient
from lightrag.components.model_client.groq_client import GroqAPIClient
from lightrag.components.model_client.local_embedder_client import LocalEmbedderClient
from lightrag.components.model_client.local_llm_client import LocalLLMClient
from lightrag.components.model_client.ollama_client import OllamaClient
from lightrag.components.model_client.openai_client import (
    OpenAIClient,
    get_all_messages_content,
    get_first_message_content,
    get_probabilities,
)
from lightrag.components.model_client.scripted_client import ScriptedClient
from lightrag.components.model_client.transformers_client import (
    TransformerEmbedder,
    TransformerLLM,
    TransformerReranker,
    TransformersClient,
)

__all__ = [
    "AnthropicAPIClient",
    "CohereAPIClient",
    "GoogleGenAIClient",
    "GroqAPIClient",
    "OllamaClient",
    "TransformerEmbedder",
    "TransformerLLM",
    "TransformerReranker",
    "TransformersClient",
    "LocalEmbedderClient",
    "LocalLLMClient",
    "ModelClientType",
    "OpenAIClient",
    "ScriptedClient",
    "FunctionClient",
    "get_all_messages_content",
    "get_first_message_content",
    "get_probabilities",
]
