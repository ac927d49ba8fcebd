"""Helpers shared by the chat-completion clients (OpenAI, Groq and OpenAI-compatible servers).

* :func:`to_messages` turns lightrag's LLM input into chat ``messages``: a rendered prompt string
  (a ``<SYS>…</SYS>`` block becomes the system message, the rest the user message) or a list of
  ``{"role", "content"}`` messages passed through as they are.
* :func:`parse_completion` and :func:`stream_output` turn a provider reply, whole or streamed
  (sync or async), into a :class:`~lightrag.core.types.GeneratorOutput`.
* ``get_first_message_content``, ``get_all_messages_content`` and ``get_probabilities`` are the
  0.1 parser helpers; any of them can be given to a client as ``chat_completion_parser``.

None of these functions imports a provider SDK: they only read the attributes the SDKs' response
objects share (``choices``, ``message``, ``delta``, ``usage``).

Example:
    >>> to_messages("<SYS>Be brief.</SYS> What is RAG?")
    [{'role': 'system', 'content': 'Be brief.'}, {'role': 'user', 'content': 'What is RAG?'}]
    >>> to_messages([{"role": "user", "content": "hi"}])
    [{'role': 'user', 'content': 'hi'}]
"""

from __future__ import annotations

import array
import base64
import inspect
import logging
import os
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Any

from lightrag.core.messages import split_prompt
from lightrag.core.types import (
    CompletionUsage,
    EmbedderOutput,
    Embedding,
    GeneratorOutput,
    TokenLogProb,
    Usage,
)
from lightrag.utils.secrets import guard_http_logs, register_secret

log = logging.getLogger(__name__)

Message = dict[str, Any]
ChatCompletionParser = Callable[[Any], Any]

INPUT_TYPES = ("text", "messages")


def check_input_type(input_type: str) -> str:
    if input_type not in INPUT_TYPES:
        raise ValueError(f"input_type must be one of {INPUT_TYPES}, got {input_type!r}")
    return input_type


# ------------------------------------------------------------------------------- requests
def _as_message(item: Any, position: int) -> Message:
    if isinstance(item, Mapping):
        if "role" not in item:
            raise ValueError(f"message {position} has no 'role': {item!r}")
        return dict(item)
    if hasattr(item, "role"):
        dump = getattr(item, "model_dump", None)
        if callable(dump):
            return dump(exclude_none=True)
        return {"role": item.role, "content": getattr(item, "content", None)}
    raise TypeError(
        f"message {position} must be a dict with 'role' and 'content' (or an object with those "
        f"attributes), got {type(item).__name__}"
    )


def to_messages(input: Any) -> list[Message]:
    """Chat ``messages`` for an LLM input: a prompt string, one message, or a list of messages."""
    if isinstance(input, str):
        return split_prompt(input)
    if isinstance(input, Mapping) or (hasattr(input, "role") and hasattr(input, "content")):
        return [_as_message(input, 0)]
    if isinstance(input, (list, tuple)):
        if not input:
            raise ValueError("cannot send an empty list of messages")
        return [_as_message(item, i) for i, item in enumerate(input)]
    if input is None:
        raise ValueError("an LLM call needs a prompt or messages, got None")
    return split_prompt(str(input))


def to_embedding_input(input: Any) -> list[str]:
    """The ``input`` list of an embeddings request."""
    if isinstance(input, str):
        return [input]
    if isinstance(input, (list, tuple)):
        return list(input)
    raise TypeError(f"embedding input must be a str or a list of str, got {type(input).__name__}")


# ------------------------------------------------------------------------------ responses
def to_completion_usage(usage: Any) -> CompletionUsage | None:
    """A :class:`CompletionUsage` from an SDK usage object or dict (None when there is none)."""
    if usage is None:
        return None

    def read(name: str) -> int | None:
        value = usage.get(name) if isinstance(usage, Mapping) else getattr(usage, name, None)
        return value if isinstance(value, int) else None

    return CompletionUsage(
        completion_tokens=read("completion_tokens"),
        prompt_tokens=read("prompt_tokens"),
        total_tokens=read("total_tokens"),
    )


def get_first_message_content(completion: Any) -> str | None:
    """The text of the first choice (the default ``chat_completion_parser``)."""
    return completion.choices[0].message.content


def get_all_messages_content(completion: Any) -> list[str | None]:
    """The text of every choice (for ``n > 1``)."""
    return [choice.message.content for choice in completion.choices]


def get_probabilities(completion: Any) -> list[list[TokenLogProb]]:
    """Token log-probabilities of every choice (request them with ``logprobs=True``)."""
    result: list[list[TokenLogProb]] = []
    for choice in completion.choices:
        content = getattr(choice.logprobs, "content", None) or []
        result.append([TokenLogProb(token=t.token, logprob=t.logprob) for t in content])
    return result


def parse_stream_response(completion: Any) -> str | None:
    """The text delta of one streamed chunk (None for chunks without text, e.g. usage-only)."""
    choices = getattr(completion, "choices", None)
    if not choices:
        return None
    delta = getattr(choices[0], "delta", None)
    return getattr(delta, "content", None)


def handle_streaming_response(generator: Any) -> Any:
    """Yield the text delta of each chunk of a chat-completions stream (0.1's helper)."""
    for chunk in generator:
        yield parse_stream_response(chunk)


def chunk_usage(chunk: Any) -> CompletionUsage | None:
    """Usage carried by a streamed chunk: ``chunk.usage`` (OpenAI) or ``chunk.x_groq.usage``."""
    usage = getattr(chunk, "usage", None)
    if usage is None:
        usage = getattr(getattr(chunk, "x_groq", None), "usage", None)
    return to_completion_usage(usage)


def is_stream(completion: Any) -> bool:
    """True for a streamed reply (a sync or async iterator of chunks)."""
    return isinstance(completion, (Iterator, AsyncIterator)) or hasattr(completion, "__aiter__")


class StreamCutError(ConnectionError):
    """A reply stream ended before the provider said it was finished (cut by the server, a proxy
    or the network): the text read so far is incomplete."""


def _stream_read_error(error: BaseException) -> BaseException:
    """A clear error for a stream event the SDK could not decode (not JSON, not UTF-8)."""
    import json

    if isinstance(error, (json.JSONDecodeError, UnicodeDecodeError)):
        from lightrag.utils.http_errors import ProviderResponseError

        what = "not valid JSON" if isinstance(error, json.JSONDecodeError) else "not UTF-8 text"
        return ProviderResponseError(f"the provider sent a stream event that is {what} ({error})")
    return error


def _sync_pieces(stream: Any, take: Callable[[Any], str | None],
                 at_end: Callable[[], None] | None = None) -> Iterator[str]:
    try:
        try:
            for chunk in stream:
                text = take(chunk)
                if text:
                    yield text
        except Exception as e:
            clear = _stream_read_error(e)
            if clear is e:
                raise
            raise clear from e
        if at_end is not None:
            at_end()
    finally:
        close = getattr(stream, "close", None)
        if callable(close):
            close()


async def _async_pieces(stream: Any, take: Callable[[Any], str | None],
                        at_end: Callable[[], None] | None = None) -> AsyncIterator[str]:
    try:
        try:
            async for chunk in stream:
                text = take(chunk)
                if text:
                    yield text
        except Exception as e:
            clear = _stream_read_error(e)
            if clear is e:
                raise
            raise clear from e
        if at_end is not None:
            at_end()
    finally:
        close = getattr(stream, "close", None)
        result = close() if callable(close) else None
        if inspect.isawaitable(result):
            await result


def chunk_finish_reason(chunk: Any) -> str | None:
    """The ``finish_reason`` of an OpenAI-style chunk's first choice (None while it goes on)."""
    choices = getattr(chunk, "choices", None)
    if not choices:
        return None
    return getattr(choices[0], "finish_reason", None)


def _tool_calls_of(message: Any) -> list[dict[str, Any]]:
    """The tool calls of a chat message as plain dicts (``id``, ``type``, ``function``)."""
    calls = []
    for call in getattr(message, "tool_calls", None) or []:
        function = getattr(call, "function", None)
        calls.append({
            "id": getattr(call, "id", None),
            "type": getattr(call, "type", None) or "function",
            "function": {"name": getattr(function, "name", None),
                         "arguments": getattr(function, "arguments", None) or ""},
        })
    return calls


def _add_tool_call_deltas(calls: list[dict[str, Any]], chunk: Any) -> None:
    """Merge the ``delta.tool_calls`` of a streamed chunk into ``calls`` (by their ``index``)."""
    choices = getattr(chunk, "choices", None)
    delta = getattr(choices[0], "delta", None) if choices else None
    for part in getattr(delta, "tool_calls", None) or []:
        index = getattr(part, "index", None)
        index = index if isinstance(index, int) else len(calls)
        while len(calls) <= index:
            calls.append({"id": None, "type": "function", "function": {"name": None, "arguments": ""}})
        call = calls[index]
        if getattr(part, "id", None):
            call["id"] = part.id
        function = getattr(part, "function", None)
        if getattr(function, "name", None):
            call["function"]["name"] = function.name
        if getattr(function, "arguments", None):
            call["function"]["arguments"] += function.arguments


def stream_output(
    stream: Any,
    text_of: Callable[[Any], str | None] = parse_stream_response,
    usage_of: Callable[[Any], CompletionUsage | None] | None = chunk_usage,
    finished_of: Callable[[Any], str | None] | None = None,
) -> GeneratorOutput:
    """Wrap a sync or async chunk stream in a ``GeneratorOutput`` whose ``data`` yields text.

    ``data`` and ``raw_response`` are the same (async) generator of the non-empty texts
    ``text_of(chunk)`` (by default an OpenAI-style chunk's ``delta.content``); the stream is
    closed when the generator ends. When ``usage_of(chunk)`` reports token usage (OpenAI's final
    chunk, with ``stream_options={"include_usage": True}``), it is stored in the output's
    ``usage`` while the stream is consumed.

    With ``finished_of`` (a chunk's finish reason, e.g. :func:`chunk_finish_reason`), the reason
    lands in ``output.metadata["finish_reason"]``, streamed tool calls in
    ``metadata["tool_calls"]``, and a stream that ends without any reason (cut by the server, or
    empty) raises :class:`StreamCutError` after its last piece: the reply is incomplete.
    """
    output: GeneratorOutput = GeneratorOutput()
    state: dict[str, Any] = {"finish": None, "chunks": 0, "pieces": 0, "has_field": False}
    tool_calls: list[dict[str, Any]] = []

    def note(**values: Any) -> None:
        output.metadata = {**(output.metadata or {}), **values}

    def take(chunk: Any) -> str | None:
        state["chunks"] += 1
        usage = usage_of(chunk) if usage_of is not None else None
        if usage is not None:
            output.usage = usage
        if finished_of is not None:
            choices = getattr(chunk, "choices", None)
            if choices and hasattr(choices[0], "finish_reason"):
                state["has_field"] = True
            reason = finished_of(chunk)
            had_calls = bool(tool_calls)
            _add_tool_call_deltas(tool_calls, chunk)
            if tool_calls and not had_calls:
                note(tool_calls=tool_calls)
            if reason:
                state["finish"] = reason
                note(finish_reason=reason)
        text = text_of(chunk)
        if text:
            state["pieces"] += 1
        return text

    def at_end() -> None:
        # SDK chunks always have the field (None until the last): a stream that never set it,
        # or that sent nothing at all, was cut
        if state["finish"] is None and (state["chunks"] == 0 or state["has_field"]):
            got = (f"after {state['pieces']} text pieces" if state["chunks"] else "with no chunk")
            raise StreamCutError(
                f"the reply stream ended {got} and without a finish_reason: the server or a "
                f"proxy cut it, the text is incomplete"
            )

    end_check = at_end if finished_of is not None else None
    aio = isinstance(stream, AsyncIterator) or hasattr(stream, "__aiter__")
    pieces = (_async_pieces(stream, take, end_check) if aio
              else _sync_pieces(stream, take, end_check))
    output.data = pieces
    output.raw_response = pieces  # type: ignore[assignment]
    return output


def parse_completion(
    completion: Any, parser: ChatCompletionParser | None = None
) -> GeneratorOutput:
    """A ``GeneratorOutput`` for a whole or streamed chat reply; failures become ``error``.

    Args:
        completion: the SDK's ``ChatCompletion``, a (sync or async) chunk stream, or plain text.
        parser: turns a whole completion into ``data``; defaults to the first message's text.
    """
    if isinstance(completion, GeneratorOutput):
        return completion
    if is_stream(completion):
        return stream_output(completion, finished_of=chunk_finish_reason)
    if isinstance(completion, str):
        return GeneratorOutput(data=completion, raw_response=completion)
    try:
        data = (parser or get_first_message_content)(completion)
    except Exception as e:  # noqa: BLE001 - a bad reply is returned as an error, not raised
        log.warning("could not parse the chat completion: %s", e)
        return GeneratorOutput(
            raw_response=str(completion), error=f"parse error: {type(e).__name__}: {e}"
        )
    usage = to_completion_usage(getattr(completion, "usage", None))
    output = GeneratorOutput(data=data, raw_response=data, usage=usage)
    choices = getattr(completion, "choices", None)
    if isinstance(choices, list) and choices:
        metadata: dict[str, Any] = {}
        reason = getattr(choices[0], "finish_reason", None)
        if reason:
            metadata["finish_reason"] = reason
        calls = _tool_calls_of(getattr(choices[0], "message", None))
        if calls:  # the reply is a request to call tools (its text is often None)
            metadata["tool_calls"] = calls
        output.metadata = metadata or None
    return output


# ------------------------------------------------------------------------------- clients
def resolve_api_key(
    api_key: str | None, env_name: str, provider: str, placeholder: str | None = None
) -> str:
    """The API key from the argument or ``env_name``; ``placeholder`` (local servers) or an error."""
    key = api_key or os.getenv(env_name)
    guard_http_logs()  # the SDK's HTTP client logs request URLs (credentials in a base URL too)
    if key:
        register_secret(key)  # removed from every error and log line, whatever its shape
        return key
    if placeholder is not None:
        return placeholder
    raise ValueError(
        f"{provider} needs an API key: set the environment variable {env_name} "
        f"or pass the key as the client's api_key argument"
    )


def chat_api_kwargs(input: Any, model_kwargs: Mapping[str, Any] | None) -> dict[str, Any]:
    """``{**model_kwargs, "messages": [...]}`` for a chat-completions request."""
    api_kwargs = dict(model_kwargs or {})
    api_kwargs["messages"] = to_messages(input)
    return api_kwargs


def embedding_api_kwargs(input: Any, model_kwargs: Mapping[str, Any] | None) -> dict[str, Any]:
    """``{**model_kwargs, "input": [...]}`` for an embeddings request."""
    api_kwargs = dict(model_kwargs or {})
    api_kwargs["input"] = to_embedding_input(input)
    return api_kwargs


def _in_index_order(items: list[Any]) -> list[Any]:
    """The embeddings of a reply in input order: sorted by their ``index`` fields.

    Providers may send them in any order (OpenAI documents ``index`` for that); replies without
    ``index`` fields keep their order. Duplicate or out-of-range indexes raise ``ValueError``.
    """
    indexes = [getattr(item, "index", None) for item in items]
    if all(i is None for i in indexes):
        return items
    if any(not isinstance(i, int) for i in indexes) or sorted(indexes) != list(range(len(items))):
        shown = indexes if len(indexes) <= 20 else [*indexes[:20], "..."]
        raise ValueError(
            f"the embedding reply's index fields are not 0..{len(items) - 1} once each: {shown}"
        )
    return [item for _index, item in sorted(zip(indexes, items), key=lambda pair: pair[0])]


def parse_embeddings(response: Any) -> EmbedderOutput:
    """An :class:`EmbedderOutput` from an SDK ``CreateEmbeddingResponse``; failures -> ``error``.

    The vectors are put in input order by their ``index`` fields; vectors of different lengths
    or without numbers are an error.
    """
    try:
        if getattr(response, "data", None) is None:
            raise ValueError("the embedding reply has no data")
        items = _in_index_order(list(response.data))
        data = []
        for position, item in enumerate(items):
            vector = getattr(item, "embedding", None)
            if isinstance(vector, str):  # encoding_format="base64": little-endian float32
                vector = array.array("f", base64.b64decode(vector)).tolist()
            if not isinstance(vector, (list, tuple)) or not vector:
                raise ValueError(f"embedding {position} is not a list of numbers: {vector!r}"[:200])
            data.append(Embedding(embedding=list(vector), index=position))
        dims = sorted({len(e.embedding) for e in data})
        if len(dims) > 1:
            raise ValueError(f"the embeddings have different lengths: {dims}")
        raw_usage = getattr(response, "usage", None)
        usage = None
        if raw_usage is not None:
            usage = Usage(
                prompt_tokens=getattr(raw_usage, "prompt_tokens", 0) or 0,
                total_tokens=getattr(raw_usage, "total_tokens", 0) or 0,
            )
        return EmbedderOutput(data=data, model=getattr(response, "model", None), usage=usage)
    except Exception as e:  # noqa: BLE001 - a bad reply is returned as an error, not raised
        log.warning("could not parse the embedding response: %s", e)
        return EmbedderOutput(
            error=f"parse error: {type(e).__name__}: {e}", raw_response=str(response)[:2000]
        )
