"""``ModelClientType``: the model clients by provider name (0.1's ``ModelClientType.OPENAI()``).

Example:
    >>> from lightrag.components.model_client.client_type import ModelClientType
    >>> ModelClientType.OPENAI(base_url="http://localhost:11434/v1")
    OpenAIClient(base_url='http://localhost:11434/v1')
"""

from lightrag.components.model_client.anthropic_client import AnthropicAPIClient
from lightrag.components.model_client.cohere_client import CohereAPIClient
from lightrag.components.model_client.google_client import GoogleGenAIClient
from lightrag.components.model_client.groq_client import GroqAPIClient
from lightrag.components.model_client.local_embedder_client import LocalEmbedderClient
from lightrag.components.model_client.local_llm_client import LocalLLMClient
from lightrag.components.model_client.ollama_client import OllamaClient
from lightrag.components.model_client.openai_client import OpenAIClient
from lightrag.components.model_client.transformers_client import TransformersClient

__all__ = ["ModelClientType"]


class ModelClientType:
    """Namespace of client classes; call an attribute to build a client: ``ModelClientType.GROQ()``."""

    COHERE = CohereAPIClient
    TRANSFORMERS = TransformersClient
    ANTHROPIC = AnthropicAPIClient
    GROQ = GroqAPIClient
    OPENAI = OpenAIClient
    GOOGLE_GENAI = GoogleGenAIClient
    OLLAMA = OllamaClient
    LOCAL_LLM = LocalLLMClient
    LOCAL_EMBEDDER = LocalEmbedderClient
