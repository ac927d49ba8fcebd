"""The shared model-client seams: per-model-type request hooks, SDKClientMixin, stream_output, and
the import structure (no import cycle through the clients, core never importing them by name)."""

from __future__ import annotations

import asyncio
import pathlib
import subprocess
import sys
from types import SimpleNamespace as NS
from typing import Any, Dict

import pytest
from import_graph import imported_modules

import lightrag
from lightrag.components.model_client import (
    AnthropicAPIClient,
    CohereAPIClient,
    GoogleGenAIClient,
    GroqAPIClient,
    OpenAIClient,
)
from lightrag.components.model_client.base import SDKClientMixin, packaged_path
from lightrag.components.model_client.chat_utils import stream_output
from lightrag.core.model_client import ModelClient
from lightrag.core.types import ModelType

ROOT = pathlib.Path(lightrag.__file__).parent


# ------------------------------------------------------------------------ request hooks
class _Bare(ModelClient):
    pass


class _LLMOnly(ModelClient):
    def _llm_api_kwargs(self, input: Any, api_kwargs: Dict[str, Any]) -> Dict[str, Any]:
        api_kwargs["prompt"] = input
        return api_kwargs


def test_convert_without_hooks_is_still_not_implemented() -> None:
    with pytest.raises(NotImplementedError, match="convert_inputs_to_api_kwargs"):
        _Bare().convert_inputs_to_api_kwargs("hi", {}, ModelType.LLM)


def test_convert_dispatches_to_the_hook_with_a_copy_of_model_kwargs() -> None:
    model_kwargs = {"model": "m"}
    out = _LLMOnly().convert_inputs_to_api_kwargs("hi", model_kwargs, ModelType.LLM)
    assert out == {"model": "m", "prompt": "hi"} and model_kwargs == {"model": "m"}
    with pytest.raises(ValueError, match="model_type=.*serves LLM requests only"):
        _LLMOnly().convert_inputs_to_api_kwargs("hi", {}, ModelType.EMBEDDER)


@pytest.mark.parametrize(
    "client, unsupported",
    [
        (OpenAIClient(api_key="k"), ModelType.RERANKER),
        (GroqAPIClient(api_key="k"), ModelType.RERANKER),
        (AnthropicAPIClient(api_key="k"), ModelType.EMBEDDER),
        (CohereAPIClient(api_key="k"), ModelType.LLM),
        (GoogleGenAIClient(api_key="k"), ModelType.RERANKER),
    ],
)
def test_api_clients_refuse_model_types_they_do_not_serve(client: Any, unsupported: ModelType) -> None:
    with pytest.raises(ValueError, match="model_type"):
        client.convert_inputs_to_api_kwargs("hi", {"model": "m"}, unsupported)
    with pytest.raises(ValueError, match="model_type"):
        client.call({"model": "m"}, unsupported)


# --------------------------------------------------------------------------- the mixin
class _Fake(SDKClientMixin, ModelClient):
    model_types = (ModelType.LLM, ModelType.EMBEDDER)

    def __init__(self, api_key: str | None = None, env_api_key_name: str = "FAKE_KEY") -> None:
        super().__init__()
        self._init_api_key(api_key, env_api_key_name, None)

    def _endpoint(self, client: Any, model_type: ModelType, request: Dict[str, Any]) -> Any:
        return client.embed if model_type == ModelType.EMBEDDER else client.generate

    def _finish(self, response: Any, model_type: ModelType) -> Any:
        return ("finished", response)


class _SDK:
    def __init__(self) -> None:
        self.sent: list = []

    def generate(self, **kwargs: Any) -> str:
        self.sent.append(kwargs)
        return "text"

    def embed(self, **kwargs: Any) -> list:
        return [[1.0]]


class _AsyncSDK:
    async def generate(self, **kwargs: Any) -> str:
        return "async text"

    async def embed(self, **kwargs: Any) -> list:
        return [[2.0]]


def test_mixin_call_uses_endpoint_and_finish(monkeypatch: pytest.MonkeyPatch) -> None:
    client = _Fake(api_key="k")
    monkeypatch.setattr(client, "init_sync_client", _SDK)
    assert client.call({"prompt": "p"}, ModelType.LLM) == ("finished", "text")
    assert client.call({"input": ["a"]}, ModelType.EMBEDDER) == ("finished", [[1.0]])
    assert client.sync_client.sent == [{"prompt": "p"}]
    with pytest.raises(ValueError, match="_Fake does not support model_type"):
        client.call({}, ModelType.RERANKER)


def test_mixin_acall_uses_a_client_per_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    client = _Fake(api_key="k")
    made = []
    monkeypatch.setattr(client, "init_async_client", lambda: made.append(1) or _AsyncSDK())
    assert asyncio.run(client.acall({"prompt": "p"}, ModelType.LLM)) == ("finished", "async text")
    assert asyncio.run(client.acall({}, ModelType.EMBEDDER)) == ("finished", [[2.0]])
    assert len(made) == 2


def test_mixin_key_from_argument_or_env_and_never_serialised(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FAKE_KEY", raising=False)
    with pytest.raises(ValueError, match="FAKE_KEY"):
        _Fake()._resolved_api_key()
    assert _Fake()._resolved_api_key(placeholder="local") == "local"
    client = _Fake(api_key="secret")
    assert client._resolved_api_key() == "secret"
    assert "secret" not in repr(client.to_dict())
    restored = _Fake.from_dict(client.to_dict())
    monkeypatch.setenv("FAKE_KEY", "from-env")
    assert restored._resolved_api_key() == "from-env" and restored.sync_client is None


def test_packaged_path_of_a_missing_package_is_none() -> None:
    assert packaged_path("no_such_package_here_xyz", "model") is None


# ----------------------------------------------------------------------- stream_output
class _Closing:
    def __init__(self, chunks: list) -> None:
        self._it = iter(chunks)
        self.closed = False

    def __iter__(self) -> _Closing:
        return self

    def __next__(self) -> Any:
        return next(self._it)

    def close(self) -> None:
        self.closed = True


def test_stream_output_yields_non_empty_texts_records_usage_and_closes() -> None:
    chunks = [NS(text="a", n=None), NS(text="", n=None), NS(text="b", n=7)]
    stream = _Closing(chunks)
    output = stream_output(stream, lambda c: c.text, usage_of=lambda c: c.n)
    assert output.data is output.raw_response
    assert list(output.data) == ["a", "b"]
    assert output.usage == 7 and stream.closed


def test_stream_output_async() -> None:
    class AsyncChunks:
        def __init__(self) -> None:
            self.closed = False
            self._items = iter(["x", None, "y"])

        def __aiter__(self) -> AsyncChunks:
            return self

        async def __anext__(self) -> Any:
            try:
                return next(self._items)
            except StopIteration:
                raise StopAsyncIteration from None

        async def close(self) -> None:
            self.closed = True

    stream = AsyncChunks()
    output = stream_output(stream, lambda c: c, usage_of=None)

    async def read() -> list:
        return [piece async for piece in output.data]

    assert asyncio.run(read()) == ["x", "y"] and stream.closed and output.usage is None


# -------------------------------------------------------------------- import structure


def test_core_never_imports_the_components() -> None:
    for name in ("types.py", "model_client.py", "__init__.py", "generator.py", "string_parser.py"):
        imported = imported_modules(ROOT / "core" / name)
        assert not any(m.startswith("lightrag.components") for m in imported), name
    assert "lightrag.core" not in imported_modules(ROOT / "core" / "string_parser.py")


def test_clients_do_not_import_each_other() -> None:
    package = ROOT / "components" / "model_client"
    shared = {"lightrag.components.model_client.base", "lightrag.components.model_client.chat_utils",
              "lightrag.components.model_client.sdk_client"}
    for path in package.glob("*_client.py"):
        ours = {m for m in imported_modules(path) if m.startswith("lightrag.components.model_client")}
        assert ours <= shared, (path.name, ours - shared)


def test_optimizer_does_not_import_the_trainer() -> None:
    assert "lightrag.optim.trainer" not in imported_modules(ROOT / "optim" / "optimizer.py")


def test_model_client_type_from_01_paths_in_a_fresh_interpreter() -> None:
    code = (
        "from lightrag.core.types import ModelClientType as A\n"
        "from lightrag.core import ModelClientType as B\n"
        "from lightrag.components.model_client import ModelClientType as C, OpenAIClient\n"
        "assert A is B is C and A.OPENAI is OpenAIClient\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
