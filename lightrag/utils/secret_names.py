"""Which key names say their value is a secret (``api_key``, ``Authorization``,
``OPENAI_API_KEY``; not ``max_tokens`` or ``pad_token``): :func:`is_secret_key`, shared by
:mod:`lightrag.utils.secrets` (configs) and :mod:`lightrag.utils.secrets_text` (the environment's
keys, redacted from free text), which import it from here."""

from __future__ import annotations

import re
from typing import Any, List

_SECRET_WORDS = frozenset({
    "apikey", "secret", "password", "passwd", "pwd", "passphrase", "authorization",
    "credential", "credentials", "cookie", "token", "bearer", "secrets",
    "passwords",
})  # fmt: skip
_SECRET_SUFFIXES = (
    "api_key", "access_key", "secret_key", "private_key", "auth_key", "signing_key",
    "access_key_id", "session_key", "master_key", "account_key", "subscription_key",
)  # fmt: skip
_NOT_SECRET_TOKENS = frozenset({
    "pad_token", "eos_token", "bos_token", "unk_token", "sep_token", "cls_token", "mask_token",
    "start_token", "end_token", "stop_token", "special_token", "split_token", "max_token",
})  # fmt: skip
_POINTER_WORDS = frozenset({"env", "file", "path", "var", "name", "names", "header"})
_PROVIDER_WORDS = frozenset({
    "openai", "azure", "groq", "anthropic", "claude", "google", "gemini", "cohere", "hf",
    "huggingface", "mistral", "together", "aws", "ollama", "xai", "deepseek", "voyage", "jina",
    "fireworks", "openrouter",
})  # fmt: skip
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")



def _words(name: str) -> List[str]:
    snake = _CAMEL.sub("_", name).lower()
    return [w for w in re.split(r"[^a-z0-9]+", snake) if w]


def is_secret_key(name: Any) -> bool:
    """Whether a key name says its value is a secret.

    Example:
        >>> [is_secret_key(k) for k in ("api_key", "apiKey", "X-Api-Key", "Authorization",
        ...                              "max_tokens", "pad_token", "token_budget", "password_env")]
        [True, True, True, True, False, False, False, False]
    """
    words = _words(str(name))
    if not words:
        return False
    joined = "_".join(words)
    if joined in _NOT_SECRET_TOKENS or words[-1] in _POINTER_WORDS:
        return False
    if words[-1] in _SECRET_WORDS or joined.endswith(_SECRET_SUFFIXES):
        return True
    if joined in ("key", "keys", "auth") or words[-1] == "auth":
        return True
    if words[-1] in ("key", "keys") and words[0] in _PROVIDER_WORDS:
        return True
    return "secret" in words or "password" in words
