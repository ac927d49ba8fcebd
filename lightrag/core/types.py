"""The data types passed between components: model outputs, documents, tools and conversations.

Every type is a :class:`~lightrag.core.base_data_class.DataClass`, so each can render a schema or
signature for a prompt and round-trip through ``to_dict``/``from_dict``, JSON and YAML.

Example:
    >>> out = GeneratorOutput(data={"answer": 4}, raw_response='{"answer": 4}')
    >>> out.error is None, out.data["answer"]
    (True, 4)
    >>> FunctionExpression.from_function(pow, "square it", 3, 2).action
    'pow(3, 2)'
"""

import importlib
import inspect
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum, auto
from typing import Any, Generic, Literal, TypeVar
from uuid import UUID

import numpy as np

from lightrag.core.base_data_class import DataClass, required_field
from lightrag.core.tokenizer import count_tokens

__all__ = [
    "AssistantResponse",
    "BatchEmbedderInputType",
    "BatchEmbedderOutputType",
    "CompletionUsage",
    "Conversation",
    "DialogTurn",
    "Document",
    "EmbedderInputType",
    "EmbedderOutput",
    "EmbedderOutputType",
    "Embedding",
    "Function",
    "FunctionDefinition",
    "FunctionExpression",
    "FunctionOutput",
    "GeneratorOutput",
    "GeneratorOutputType",
    "ModelClientType",  # noqa: F822 (resolved by the module __getattr__)
    "ModelType",
    "RetrieverDocumentType",
    "RetrieverDocumentsType",
    "RetrieverOutput",
    "RetrieverOutputType",
    "RetrieverQueriesType",
    "RetrieverQueryType",
    "RetrieverStrDocumentType",
    "RetrieverStrQueriesType",
    "RetrieverStrQueryType",
    "StepOutput",
    "TokenLogProb",
    "Usage",
    "UserQuery",
    "get_model_args",
]

log = logging.getLogger(__name__)

T_co = TypeVar("T_co", covariant=True)
T = TypeVar("T")


def _desc(text: str) -> dict[str, str]:
    return {"desc": text}


class ModelType(Enum):
    """What a model client is asked to do."""

    EMBEDDER = auto()
    LLM = auto()
    RERANKER = auto()
    UNDEFINED = auto()


def get_model_args(model_type: ModelType) -> list[str]:
    """The ``model_kwargs`` keys a model type needs.

    Example:
        >>> get_model_args(ModelType.RERANKER)
        ['model', 'top_k', 'documents', 'query']
    """
    if model_type in (ModelType.EMBEDDER, ModelType.LLM):
        return ["model"]
    if model_type == ModelType.RERANKER:
        return ["model", "top_k", "documents", "query"]
    return []


# ---- embedder -------------------------------------------------------------------------------


@dataclass
class Embedding(DataClass):
    """One embedding vector and the position of its input in the batch."""

    embedding: list[float] = field(metadata=_desc("The embedding vector"))
    index: int | None = field(metadata=_desc("Index of the input this embedding belongs to"))


@dataclass
class Usage(DataClass):
    """Token usage of an embedding call."""

    prompt_tokens: int = field(metadata=_desc("Number of tokens in the input"))
    total_tokens: int = field(metadata=_desc("Total number of tokens used"))


@dataclass
class CompletionUsage(DataClass):
    """Token usage of a completion (LLM) call."""

    completion_tokens: int | None = field(default=None, metadata=_desc("Tokens generated"))
    prompt_tokens: int | None = field(default=None, metadata=_desc("Tokens in the prompt"))
    total_tokens: int | None = field(default=None, metadata=_desc("Total tokens used"))


@dataclass
class EmbedderOutput(DataClass):
    """The result of an ``Embedder`` call; ``error`` is set when the request timed out or the
    client's parser reports a failure.

    Example:
        >>> out = EmbedderOutput(data=[Embedding([0.6, 0.8], 0), Embedding([1.0, 0.0], 1)])
        >>> out.length, out.embedding_dim, out.is_normalized
        (2, 2, True)
    """

    data: list[Embedding] = field(default_factory=list, metadata=_desc("The embeddings, in order"))
    model: str | None = field(default=None, metadata=_desc("The model used"))
    usage: Usage | None = field(default=None, metadata=_desc("Token usage"))
    error: str | None = field(default=None, metadata=_desc("Error message, if any"))
    raw_response: Any | None = field(default=None, metadata=_desc("The raw model response"))
    input: list[str] | None = field(default=None, metadata=_desc("The input texts"))

    @property
    def length(self) -> int:
        """Number of embeddings."""
        return len(self.data) if self.data else 0

    @property
    def embedding_dim(self) -> int:
        """Dimension of the first embedding (-1 when there is none, as in lightrag 0.1)."""
        first = self.data[0].embedding if self.data else None
        return len(first) if first is not None and len(first) > 0 else -1

    @property
    def is_normalized(self) -> bool:
        """True when every embedding has unit L2 norm (False when there is none)."""
        if not self.data:
            return False
        norms = (np.linalg.norm(np.asarray(e.embedding, dtype=float)) for e in self.data)
        return all(bool(np.isclose(n, 1.0, atol=1e-5)) for n in norms)


EmbedderInputType = str | Sequence[str]
EmbedderOutputType = EmbedderOutput
BatchEmbedderInputType = EmbedderInputType
BatchEmbedderOutputType = list[EmbedderOutputType]


# ---- generator ------------------------------------------------------------------------------


@dataclass
class TokenLogProb(DataClass):
    """A generated token and its log probability."""

    token: str = field(metadata=_desc("The token"))
    logprob: float = field(metadata=_desc("Its log probability"))


@dataclass
class GeneratorOutput(DataClass, Generic[T_co]):
    """The result of a ``Generator`` call. Failures are data: ``error`` is set, nothing raises.

    ``raw_response`` is the model's text; ``data`` is what the output processors made of it (the
    raw text itself when there are none).

    Example:
        >>> GeneratorOutput(error="timeout").data is None
        True
    """

    data: T_co = field(
        default=None, metadata=_desc("The final output data, after the output processors")
    )
    error: str | None = field(default=None, metadata=_desc("Error message, if any"))
    usage: CompletionUsage | None = field(default=None, metadata=_desc("Token usage"))
    raw_response: str | None = field(
        default=None, metadata=_desc("The raw response, before the output processors")
    )
    metadata: dict[str, object] | None = field(
        default=None, metadata=_desc("Additional information")
    )
    id: str | None = field(default=None, metadata=_desc("The id of this output"))


GeneratorOutputType = GeneratorOutput[object]


# ---- retriever and documents ----------------------------------------------------------------


@dataclass
class Document(DataClass):
    """A text with metadata, an optional vector and its estimated token count.

    ``estimated_num_tokens`` is counted with tiktoken ``cl100k_base`` when not given.

    Example:
        >>> doc = Document(text="hello world", meta_data={"source": "a.txt"})
        >>> doc.estimated_num_tokens
        2
    """

    text: str | None = field(default=None, metadata=_desc("The main text"))
    meta_data: dict[str, Any] | None = field(
        default=None, metadata=_desc("Metadata such as title, source or author")
    )
    vector: list[float] = field(
        default_factory=list, metadata=_desc("The embedding vector of the text")
    )
    id: str | None = field(
        default_factory=lambda: str(uuid.uuid4()), metadata=_desc("Unique id of the document")
    )
    order: int | None = field(
        default=None, metadata=_desc("Position of this chunk in its parent document")
    )
    score: float | None = field(default=None, metadata=_desc("Retrieval score"))
    parent_doc_id: str | UUID | None = field(
        default=None, metadata=_desc("Id of the document this chunk was split from")
    )
    estimated_num_tokens: int | None = field(
        default=None, metadata=_desc("Estimated number of tokens in the text")
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.estimated_num_tokens is None and isinstance(self.text, str):
            self.estimated_num_tokens = count_tokens(self.text)

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> "Document":
        """Like :meth:`DataClass.from_dict`; a missing or empty ``id`` gets a new uuid."""
        if isinstance(doc, dict) and not doc.get("id"):
            doc = {**doc, "id": str(uuid.uuid4())}
        return super().from_dict(doc)

    def __repr__(self) -> str:
        text = self.text
        if isinstance(text, str) and len(text) > 100:
            text = text[:100] + "..."
        vector: Any = self.vector
        if vector is not None and len(vector) > 10:
            vector = f"{list(vector[:10])}...(len={len(vector)})"
        return (
            f"Document(id={self.id}, text={text!r}, meta_data={self.meta_data}, "
            f"vector={vector}, parent_doc_id={self.parent_doc_id}, order={self.order}, "
            f"score={self.score})"
        )


RetrieverQueryType = TypeVar("RetrieverQueryType", contravariant=True)  # noqa: PLC0105 (0.1 name)
RetrieverStrQueryType = str
RetrieverQueriesType = RetrieverQueryType | Sequence[RetrieverQueryType]
RetrieverStrQueriesType = str | Sequence[RetrieverStrQueryType]
RetrieverDocumentType = TypeVar("RetrieverDocumentType", contravariant=True)  # noqa: PLC0105
RetrieverStrDocumentType = str
RetrieverDocumentsType = Sequence[RetrieverDocumentType]


@dataclass
class RetrieverOutput(DataClass):
    """The top-k result of one query: indices into the indexed documents, with scores."""

    doc_indices: list[int] = field(metadata=_desc("Indices of the retrieved documents"))
    doc_scores: list[float] | None = field(
        default=None, metadata=_desc("Scores of the retrieved documents")
    )
    query: Any | None = field(default=None, metadata=_desc("The query"))
    documents: list[Any] | None = field(
        default=None, metadata=_desc("The retrieved documents themselves")
    )


RetrieverOutputType = list[RetrieverOutput]


# ---- tools ----------------------------------------------------------------------------------


@dataclass
class FunctionDefinition(DataClass):
    """A tool's name, description and JSON-schema-like parameters, for the LLM to read."""

    func_name: str = field(metadata=_desc("The name of the tool"))
    func_desc: str | None = field(default=None, metadata=_desc("The description of the tool"))
    func_parameters: dict[str, object] = field(
        default_factory=dict, metadata=_desc("The schema of the function parameters")
    )

    def fn_schema_str(self, type: Literal["json", "yaml"] = "json") -> str:
        """This definition as a JSON or YAML string."""
        if type == "json":
            return self.to_json()
        if type == "yaml":
            return self.to_yaml()
        raise ValueError(f"Unsupported type {type!r}: use 'json' or 'yaml'")


@dataclass
class Function(DataClass):
    """A parsed function call: a name with positional and keyword arguments."""

    thought: str | None = field(default=None, metadata=_desc("Why the function is called"))
    name: str = field(default="", metadata=_desc("The name of the function"))
    args: list[object] | None = field(
        default_factory=list, metadata=_desc("The positional arguments of the function")
    )
    kwargs: dict[str, object] | None = field(
        default_factory=dict, metadata=_desc("The keyword arguments of the function")
    )


#: 0.1's description of ``FunctionExpression.action``, word for word (it is in the prompts that
#: JsonOutputParser builds from the class)
_ACTION_DESC = (
    'FuncName(<kwargs>) Valid function call expression. Example: "FuncName(a=1, b=2)" '
    "Follow the data type specified in the function parameters.e.g. for Type object with x,y "
    'properties, use "ObjectType(x=1, y=2)'
)


@dataclass
class FunctionExpression(DataClass):
    """A function call written as Python, e.g. ``action="add(1, b=2)"``, as an LLM emits it."""

    thought: str | None = field(default=None, metadata=_desc("Why the function is called"))
    action: str = field(
        default_factory=required_field(),
        metadata=_desc(_ACTION_DESC),
    )

    @classmethod
    def from_function(
        cls, func: Callable[..., Any], thought: str | None = None, *args: Any, **kwargs: Any
    ) -> "FunctionExpression":
        """The expression calling ``func`` with these arguments (written with ``repr``).

        Raises:
            ValueError: when the arguments do not fit ``func``'s signature.

        Example:
            >>> def add(a, b=0): return a + b
            >>> FunctionExpression.from_function(add, None, 1, b=2).action
            'add(1, b=2)'
        """
        try:
            inspect.signature(func).bind(*args, **kwargs)
        except TypeError as e:
            raise ValueError(f"Arguments do not fit {func.__name__}: {e}") from e
        except ValueError:  # builtins without a signature: nothing to check
            pass
        parts = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
        return cls(thought=thought, action=f"{func.__name__}({', '.join(parts)})")


@dataclass
class FunctionOutput(DataClass):
    """The result of running a tool: its output, or the error it raised."""

    name: str | None = field(default=None, metadata=_desc("The name of the function"))
    input: Function | FunctionExpression | None = field(
        default=None, metadata=_desc("The function call or expression that was run")
    )
    parsed_input: Function | None = field(
        default=None, metadata=_desc("The function call parsed from an expression")
    )
    output: object | None = field(default=None, metadata=_desc("The function's return value"))
    error: str | None = field(default=None, metadata=_desc("Error message, if any"))


@dataclass
class StepOutput(DataClass, Generic[T]):
    """One step of an agent: the action it chose, the parsed call and what it observed.

    Example:
        >>> StepOutput.with_action_type(FunctionExpression).to_schema()["properties"]["action"][
        ...     "type"
        ... ].startswith("{'type': 'FunctionExpression'")
        True
    """

    step: int = field(default=0, metadata=_desc("The step number"))
    action: T = field(default=None, metadata=_desc("The action the agent chose"))
    function: Function | None = field(
        default=None, metadata=_desc("The function parsed from the action")
    )
    observation: str | None = field(default=None, metadata=_desc("The result of the action"))

    @classmethod
    def with_action_type(cls, action_type: type[Any]) -> type["StepOutput"]:
        """A subclass whose ``action`` is ``action_type`` in schemas and ``from_dict``."""
        type_var_map = {**cls.__type_var_map__, T: action_type}
        attrs = {
            "__type_var_map__": type_var_map,
            "__module__": cls.__module__,
            "__annotations__": {"action": action_type},  # as 0.1 set it
        }
        return type(cls.__name__, (cls,), attrs)


from lightrag.core.conversation import (  # noqa: E402  (0.1 import path)
    AssistantResponse,
    Conversation,
    DialogTurn,
    UserQuery,
)

#: where ``ModelClientType`` lives: it lists the provider clients, which import this module, so
#: core names it by string only (0.1's ``from lightrag.core.types import ModelClientType`` works
#: without an import edge from core to the clients)
_MODEL_CLIENT_TYPE_MODULE = "lightrag.components.model_client.client_type"


def __getattr__(name: str) -> Any:
    if name == "ModelClientType":
        return importlib.import_module(_MODEL_CLIENT_TYPE_MODULE).ModelClientType
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
