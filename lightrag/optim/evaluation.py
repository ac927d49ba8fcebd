"""Run a pipeline over a dataset and score every item, with per-item usage and latency.

:func:`evaluate_pipeline` is what the benchmark runner and the trainer share. Each item runs in a
worker thread (``concurrency`` at most at a time); results come back in dataset order, whatever
the order they finished in. An item whose pipeline call raises, returns a ``GeneratorOutput``
with an ``error``, or whose metric raises is a *failure*: it scores 0 and keeps its error text
and its kind (:data:`ERROR_KINDS`: ``call`` when the model never replied, e.g. a 500 or a 429
left after the retries, apart from a reply that was wrong); the run goes on. Ctrl-C stops it
at once: the items not started yet are cancelled (no request is sent for them), the ones in
flight finish and are cached.

Each item also counts the provider's transient errors that were retried (``retries``) and the
429 answers among them and its final error (``rate_limited``), told by a retry hook
(:func:`~lightrag.core.retry.register_retry_hook`, called by every retrying model call in the
item's context, whatever the log level).

:func:`attach_cache` routes every Generator of a pipeline through one shared
:class:`~lightrag.core.cache.ResponseCache`, scoped by the model client's configuration (so two
clients with different models never share answers) and by a caller's scope (the benchmark's
variant name), and counts per item the model calls, the cache hits, the tokens and the model
latency. A cache hit reports the latency measured when the
answer was first fetched, so a re-run from the cache reproduces the same report at no cost.
"""

from __future__ import annotations

import contextvars
import hashlib
import itertools
import json
import logging
import re
import threading
import time
import weakref
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from lightrag.core.cache import ResponseCache
from lightrag.core.component import Component
from lightrag.core.generator import Generator
from lightrag.core.retry import register_retry_hook
from lightrag.core.types import GeneratorOutput
from lightrag.utils.secrets import redact_text

log = logging.getLogger(__name__)

Metric = Callable[[Any, Dict[str, Any]], float]
Inputs = Union[None, str, Sequence[str], Callable[[Dict[str, Any]], Dict[str, Any]]]
Progress = Callable[[int, int], None]

#: what failed: the model call (no reply), the reply's processing (unparsable or empty), the
#: pipeline's own code, or the metric
ERROR_KINDS = ("call", "output", "pipeline", "metric")

_STATUS = re.compile(r"(?:Error code:|status(?: code)?[: ]) ?(\d{3})\b", re.IGNORECASE)


def is_rate_limit(error: str) -> bool:
    """True when an error text is a provider's 429 (rate limit).

    Example:
        >>> is_rate_limit("RateLimitError: Error code: 429 - slow down")
        True
        >>> is_rate_limit("InternalServerError: Error code: 500")
        False
    """
    match = _STATUS.search(error)
    return (match is not None and match.group(1) == "429") or "RateLimitError" in error


@dataclass
class ItemResult:
    """One dataset item's outcome."""

    index: int
    score: float
    prediction: Any = None
    raw_response: Optional[str] = None
    error: Optional[str] = None
    latency_s: float = 0.0
    wall_s: float = 0.0
    model_calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error_kind: Optional[str] = None
    retries: int = 0
    rate_limited: int = 0
    new_prompt_tokens: int = 0
    new_completion_tokens: int = 0
    sample_scores: Optional[List[float]] = None

    def to_dict(self) -> Dict[str, Any]:
        data = asdict(self)
        if not isinstance(self.prediction, (str, int, float, bool, type(None))):
            data["prediction"] = str(self.prediction)
        return data


@dataclass
class _Tally:
    latency_s: float = 0.0
    model_calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    raw_response: Optional[str] = None
    last_cached_latency: Optional[float] = None
    last_fresh_latency: Optional[float] = None
    started: Dict[str, float] = field(default_factory=dict)
    retries: int = 0
    rate_limited: int = 0
    new_prompt_tokens: int = 0
    new_completion_tokens: int = 0


_CURRENT: contextvars.ContextVar[Optional[_Tally]] = contextvars.ContextVar(
    "lightrag_eval_tally", default=None
)


def _count_retry(error: BaseException, attempt: int, wait: float) -> None:
    """A retry hook (:func:`~lightrag.core.retry.register_retry_hook`): counts the retries of
    the item whose call is running in this context, whatever the log level."""
    tally = _CURRENT.get()
    if tally is not None:
        tally.retries += 1
        if is_rate_limit(f"{type(error).__name__}: {error}"):
            tally.rate_limited += 1


register_retry_hook(_count_retry)


def client_fingerprint(client: Any) -> str:
    """A stable text naming a model client's class and configuration (for cache scoping)."""
    try:
        config: Any = client.to_config()
    except Exception:
        config = {
            k: (f"{getattr(v, '__module__', '')}.{getattr(v, '__qualname__', '')}"
                if callable(v) else repr(v))
            for k, v in sorted(getattr(client, "_init_args", {}).items())
        }
    return f"{type(client).__name__}:{json.dumps(config, sort_keys=True, default=repr)}"


class ScopedCache:
    """A view of a shared ResponseCache whose keys are prefixed by a scope (a client config)."""

    def __init__(self, base: ResponseCache, scope: str) -> None:
        self.base = base
        self.scope = scope

    def _key(self, key: str) -> str:
        return hashlib.sha256(f"{self.scope}\n{key}".encode()).hexdigest()

    def get(self, key: str) -> Optional[Any]:
        value = self.base.get(self._key(key))
        tally = _CURRENT.get()
        if tally is not None:
            if value is None:
                tally.started[key] = time.perf_counter()
            else:
                tally.last_cached_latency = value.get("latency_s")
        return value

    def delete(self, key: str) -> bool:
        return self.base.delete(self._key(key))

    def set(self, key: str, value: Any) -> None:
        tally = _CURRENT.get()
        started = tally.started.pop(key, None) if tally is not None else None
        if started is not None and isinstance(value, dict):
            latency = round(time.perf_counter() - started, 6)
            tally.last_fresh_latency = latency  # type: ignore[union-attr]
            value = {**value, "latency_s": latency}
        self.base.set(self._key(key), value)


def _count_call(output: GeneratorOutput, **kwargs: Any) -> None:
    tally = _CURRENT.get()
    if tally is None:
        return
    metadata = output.metadata or {}
    if metadata.get("cached"):
        tally.cached_calls += 1
        tally.latency_s += tally.last_cached_latency or 0.0
        tally.last_cached_latency = None
    else:
        tally.model_calls += 1
        fresh = tally.last_fresh_latency
        tally.latency_s += fresh if fresh is not None else float(metadata.get("latency_s") or 0.0)
        tally.last_fresh_latency = None
    if output.usage is not None:
        prompt, completion = output.usage.prompt_tokens or 0, output.usage.completion_tokens or 0
        tally.prompt_tokens += prompt
        tally.completion_tokens += completion
        if not metadata.get("cached"):
            tally.new_prompt_tokens += prompt
            tally.new_completion_tokens += completion
    if isinstance(output.raw_response, str):
        tally.raw_response = output.raw_response


def generators_of(pipeline: Component) -> List[tuple[str, Generator]]:
    """Every Generator in ``pipeline`` (itself included) as ``(dotted name, generator)``."""
    return [(n, c) for n, c in pipeline.named_components() if isinstance(c, Generator)]


_COUNTED: weakref.WeakSet[Generator] = weakref.WeakSet()
_COUNTED_LOCK = threading.Lock()


def attach_cache(pipeline: Component, cache: Optional[ResponseCache], scope: str = "") -> None:
    """Count calls of every Generator in ``pipeline`` and, given a cache, cache their replies.

    Cache keys combine ``scope`` (the benchmark uses the variant name), the model client's
    configuration and the full request. Attaching twice counts each call once.
    """
    for _, gen in generators_of(pipeline):
        if cache is not None:
            fingerprint = f"{scope}\n{client_fingerprint(gen.model_client)}"
            gen.set_cache(ScopedCache(cache, fingerprint))  # type: ignore[arg-type]
        with _COUNTED_LOCK:
            if gen in _COUNTED:
                continue
            _COUNTED.add(gen)
        gen.register_callback("on_complete", _count_call)


def call_pipeline(pipeline: Component, item: Dict[str, Any], inputs: Inputs) -> Any:
    """Call ``pipeline`` on one item: ``inputs`` is None (the item itself), a key, a list of
    keys (passed as keyword arguments) or a function ``item -> kwargs``."""
    if inputs is None:
        return pipeline(item)
    if isinstance(inputs, str):
        return pipeline(item[inputs])
    if callable(inputs):
        return pipeline(**inputs(item))
    return pipeline(**{k: item[k] for k in inputs})


class _ItemFailure(Exception):
    """A failure whose message is already complete, and its kind (see :data:`ERROR_KINDS`)."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


def _run_one(pipeline: Component, index: int, item: Dict[str, Any], metric: Metric,
             inputs: Inputs) -> ItemResult:
    tally = _Tally()
    token = _CURRENT.set(tally)
    started = time.perf_counter()
    result = ItemResult(index=index, score=0.0)
    try:
        output = call_pipeline(pipeline, item, inputs)
        if isinstance(output, GeneratorOutput):
            result.raw_response = output.raw_response if isinstance(output.raw_response, str) else None
            if output.error is not None:
                replied = isinstance(output.raw_response, str)
                raise _ItemFailure(f"pipeline returned an error: {output.error}",
                                   "output" if replied else "call")
            output = output.data
        if output is None or (isinstance(output, str) and not output.strip()):
            raise _ItemFailure("the pipeline returned an empty answer", "output")
        result.prediction = output
        try:
            result.score = float(metric(output, item))
        except Exception as e:
            raise _ItemFailure(f"metric failed: {type(e).__name__}: {e}", "metric") from e
    except Exception as e:
        result.score = 0.0
        # (a pipeline's exception may carry what a provider echoed of the request: its key)
        result.error = redact_text(str(e) if isinstance(e, _ItemFailure) else f"{type(e).__name__}: {e}")
        result.error_kind = e.kind if isinstance(e, _ItemFailure) else "pipeline"
        if result.error_kind == "call" and is_rate_limit(result.error):
            tally.rate_limited += 1
        log.info("item %d failed: %s", index, result.error)
    finally:
        _CURRENT.reset(token)
    result.wall_s = round(time.perf_counter() - started, 6)
    result.latency_s = round(tally.latency_s, 6)
    result.model_calls, result.cached_calls = tally.model_calls, tally.cached_calls
    result.prompt_tokens, result.completion_tokens = tally.prompt_tokens, tally.completion_tokens
    result.retries, result.rate_limited = tally.retries, tally.rate_limited
    result.new_prompt_tokens = tally.new_prompt_tokens
    result.new_completion_tokens = tally.new_completion_tokens
    if result.raw_response is None:
        result.raw_response = tally.raw_response
    return result


def evaluate_pipeline(
    pipeline: Component,
    dataset: Sequence[Dict[str, Any]],
    metric: Metric,
    inputs: Inputs = None,
    concurrency: int = 4,
    progress: Optional[Progress] = None,
) -> List[ItemResult]:
    """Run and score ``pipeline`` on every item; failures score 0 and never abort the run.

    An exception in the caller's thread while waiting (Ctrl-C's ``KeyboardInterrupt``) cancels
    the items not started yet and is raised again; the items in flight run to their end (their
    replies are cached), so nothing already paid for is lost and nothing more is sent.

    Args:
        metric: ``metric(prediction, item) -> float``; the prediction is the pipeline's output
            (its ``data`` when it is a ``GeneratorOutput``).
        inputs: how an item becomes the call's arguments (see :func:`call_pipeline`).
        concurrency: worker threads.
        progress: called as ``progress(done, total)`` after each item.

    Example:
        >>> from lightrag.core import FunComponent
        >>> results = evaluate_pipeline(FunComponent(str.upper), [{"q": "a"}, {"q": "b"}],
        ...                             metric=lambda pred, item: float(pred == "A"), inputs="q")
        >>> [r.score for r in results]
        [1.0, 0.0]
    """
    total = len(dataset)
    results: List[Optional[ItemResult]] = [None] * total
    done = 0
    if progress is not None:
        progress(0, total)
    workers = max(1, concurrency)
    pool = ThreadPoolExecutor(max_workers=workers)
    queue = iter(enumerate(dataset))
    running: Dict[Any, int] = {}

    def start_next() -> None:
        for i, item in itertools.islice(queue, 1):
            running[pool.submit(_run_one, pipeline, i, item, metric, inputs)] = i

    try:
        # an item starts when one ends and the caller has seen it: all submitted at once, the
        # workers ran on while the caller's thread was busy, so a Ctrl-C raised from progress
        # found more items sent than were in flight (a race the test of it lost on a busy machine)
        for _ in range(workers):
            start_next()
        while running:
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                results[running.pop(future)] = future.result()
                done += 1
                if progress is not None:
                    progress(done, total)
                start_next()
    except BaseException:
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return [r for r in results if r is not None]
