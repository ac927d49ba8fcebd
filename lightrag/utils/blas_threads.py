"""One BLAS thread while a writer works: :func:`one_blas_thread`.

An insert's write steps multiply small matrices many times a second (new vectors against the
IVF centroids, new entity names against the stored names, vector composition). OpenBLAS runs a
product of more than ~260k multiply-adds on every core, and its helper threads then spin for
about 0.1 s waiting for the next one: called every few milliseconds, a helper spins for good,
taking a core from the insert pipeline's own threads (the writer and the event loop). Measured
on the 1M-chunk scale store on 2 cores (``benchmarks/scale.py``, 100-document batches of the
10k corpus's documents): the spinning helper used 0.34 s of CPU per batch, and the batches took
0.557 s against 0.493 s with the writer's BLAS on one thread; the 10k store never reached the
threshold. A write's products are small, so one thread loses nothing.

The limit is process-wide (BLAS libraries have no per-thread setting): it holds while any
writer is inside, and the library's own setting comes back when the last one leaves, so a query
running meanwhile multiplies on one core too. Enter it from the thread that starts the work (an
event loop's, usually the main thread): OpenBLAS ignores a setting made in another thread once
the main thread has made one (measured with numpy's OpenBLAS 0.3.31). It uses `threadpoolctl
<https://github.com/joblib/threadpoolctl>`_ (installed with the ``faiss`` extra, and with
scikit-learn); without it nothing is limited.

Example:
    >>> import numpy as np
    >>> with one_blas_thread():
    ...     product = np.ones((300, 64)) @ np.ones((64, 2000))
    >>> float(product[0, 0])
    64.0
"""

from __future__ import annotations

import logging
import threading
from contextlib import contextmanager
from typing import Any, Iterator, Optional

log = logging.getLogger(__name__)

_lock = threading.Lock()
_inside = 0
_limiter: Optional[Any] = None
_controller: Optional[Any] = None
_unavailable = False


def _limit() -> Optional[Any]:
    """Limit BLAS to one thread; the limiter that restores it, or None without threadpoolctl."""
    global _controller, _unavailable
    if _unavailable:
        return None
    if _controller is None:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:
            _unavailable = True
            log.debug("threadpoolctl is not installed: BLAS threads are not limited while writing")
            return None
        _controller = ThreadpoolController()
    return _controller.limit(limits=1, user_api="blas")


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """BLAS on one thread inside (process-wide, counted: nested and concurrent uses restore the
    library's setting when the last one leaves)."""
    global _inside, _limiter
    with _lock:
        _inside += 1
        if _inside == 1:
            _limiter = _limit()
    try:
        yield
    finally:
        with _lock:
            _inside -= 1
            if _inside == 0 and _limiter is not None:
                _limiter.restore_original_limits()
                _limiter = None
