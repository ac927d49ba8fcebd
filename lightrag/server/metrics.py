"""Prometheus metrics of the HTTP server, in the text exposition format (version 0.0.4).

Counted here: requests by method, route template and status; a latency histogram by method and
route; errors by kind. Read from the GraphRAG at scrape time: LLM calls and tokens of every
``Generator`` in the pipeline (by its dotted name, e.g. ``extractor.generator``), documents by
status, graph size and whether an insert is running.

Example:
    >>> metrics = ServerMetrics()
    >>> metrics.observe_request("POST", "/query", 200, 0.012)
    >>> 'lightrag_http_requests_total{method="POST",route="/query",status="200"} 1' in metrics.render()
    True
"""

from __future__ import annotations

import bisect
import threading
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
DEFAULT_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)

Labels = Tuple[Tuple[str, str], ...]


def _escape(value: Any) -> str:
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(labels: Labels, extra: Optional[Tuple[str, str]] = None) -> str:
    pairs = list(labels) + ([extra] if extra else [])
    if not pairs:
        return ""
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in pairs) + "}"


def _number(value: float) -> str:
    if value == float("inf"):
        return "+Inf"
    return repr(int(value)) if float(value).is_integer() else repr(float(value))


class ServerMetrics:
    """Thread-safe counters and histograms, rendered as Prometheus text.

    Args:
        buckets: upper bounds (seconds) of the request-latency histogram.
    """

    def __init__(self, buckets: Sequence[float] = DEFAULT_BUCKETS) -> None:
        self.buckets = tuple(sorted(buckets))
        self._lock = threading.Lock()
        self._requests: Dict[Labels, int] = {}
        self._latency: Dict[Labels, List[float]] = {}  # counts per bucket and +Inf, sum, count
        self._errors: Dict[Labels, int] = {}

    def observe_request(self, method: str, route: str, status: int, seconds: float) -> None:
        """Count one finished request and its latency."""
        key = (("method", method), ("route", route), ("status", str(status)))
        with self._lock:
            self._requests[key] = self._requests.get(key, 0) + 1
            row = self._latency.setdefault(key[:2], [0.0] * (len(self.buckets) + 3))
            row[bisect.bisect_left(self.buckets, seconds)] += 1
            row[-2] += seconds
            row[-1] += 1
        if status >= 500:
            self.count_error("http_5xx")

    def count_error(self, kind: str) -> None:
        """Count an error by kind (5xx responses are counted as ``http_5xx`` automatically)."""
        key = (("kind", kind),)
        with self._lock:
            self._errors[key] = self._errors.get(key, 0) + 1

    # ------------------------------------------------------------------- render
    @staticmethod
    def _family(name: str, kind: str, help: str, samples: Iterable[Tuple[str, float]]) -> List[str]:
        lines = [f"# HELP {name} {help}", f"# TYPE {name} {kind}"]
        lines.extend(f"{series} {_number(value)}" for series, value in samples)
        return lines

    def _histogram_lines(self) -> List[str]:
        name = "lightrag_http_request_duration_seconds"
        lines = [f"# HELP {name} Request latency by method and route.", f"# TYPE {name} histogram"]
        for labels, row in sorted(self._latency.items()):
            cumulative = 0.0
            for bound, count in zip((*self.buckets, float("inf")), row[:-2]):
                cumulative += count
                lines.append(f"{name}_bucket{_labels(labels, ('le', _number(bound)))} "
                             f"{_number(cumulative)}")
            lines.append(f"{name}_sum{_labels(labels)} {_number(row[-2])}")
            lines.append(f"{name}_count{_labels(labels)} {_number(row[-1])}")
        return lines

    def render(self, rag: Any = None, inserting: bool = False) -> str:
        """The whole exposition; ``rag`` adds LLM, document and graph metrics."""
        with self._lock:
            lines = self._family("lightrag_http_requests_total", "counter",
                                 "HTTP requests by method, route and status.",
                                 ((f"lightrag_http_requests_total{_labels(k)}", v)
                                  for k, v in sorted(self._requests.items())))
            lines += self._histogram_lines()
            lines += self._family("lightrag_errors_total", "counter",
                                  "Errors: 5xx responses, failed inserts, failed streams.",
                                  ((f"lightrag_errors_total{_labels(k)}", v)
                                   for k, v in sorted(self._errors.items())))
        if rag is not None:
            lines += rag_metric_lines(rag, inserting)
        return "\n".join(lines) + "\n"


def _generator_usages(rag: Any) -> List[Tuple[str, Any]]:
    found = []
    for name, component in rag.named_components():
        usage = getattr(component, "usage", None)
        if usage is not None and hasattr(usage, "calls") and hasattr(usage, "total_tokens"):
            found.append((name or type(component).__name__, usage))
    return found


def rag_metric_lines(rag: Any, inserting: bool = False) -> List[str]:
    """LLM calls and tokens per Generator, documents by status, graph size, insert activity."""
    family = ServerMetrics._family
    calls: List[Tuple[str, float]] = []
    tokens: List[Tuple[str, float]] = []
    for name, usage in _generator_usages(rag):
        for outcome, value in (("completed", usage.calls), ("cached", usage.cached_calls),
                               ("failed", usage.failed_calls)):
            labels = _labels((("generator", name), ("outcome", outcome)))
            calls.append((f"lightrag_llm_calls_total{labels}", value))
        for kind, value in (("prompt", usage.prompt_tokens), ("completion", usage.completion_tokens)):
            labels = _labels((("generator", name), ("kind", kind)))
            tokens.append((f"lightrag_llm_tokens_total{labels}", value))
    lines = family("lightrag_llm_calls_total", "counter",
                   "LLM calls by generator: completed, answered from the cache, failed.", calls)
    lines += family("lightrag_llm_tokens_total", "counter", "LLM tokens by generator and kind.",
                    tokens)
    counts = rag.doc_status.get_status_counts()
    lines += family("lightrag_documents", "gauge", "Documents by status.",
                    [(f"lightrag_documents{_labels((('status', s),))}", c)
                     for s, c in sorted(counts.items())])
    lines += family("lightrag_graph_entities", "gauge", "Entities in the graph.",
                    [("lightrag_graph_entities", rag.graph.node_count())])
    lines += family("lightrag_graph_relations", "gauge", "Relations in the graph.",
                    [("lightrag_graph_relations", rag.graph.edge_count())])
    lines += family("lightrag_insert_in_progress", "gauge", "1 while an insert runs.",
                    [("lightrag_insert_in_progress", int(inserting))])
    return lines
