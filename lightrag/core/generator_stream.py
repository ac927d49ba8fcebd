"""The iterators ``Generator.stream`` and ``Generator.astream`` return: text pieces, with
errors as data.

A failed request, or a stream that breaks while it is read, ends the iteration instead of
raising; the reason is in ``stream.error`` and in ``stream.output.error`` (the
:class:`~lightrag.core.types.GeneratorOutput` of the request).

Example:
    >>> from lightrag.core.types import GeneratorOutput
    >>> ok = GeneratorStream(GeneratorOutput(data=iter(["Hel", "lo"])))
    >>> "".join(ok), ok.error
    ('Hello', None)
    >>> failed = GeneratorStream(GeneratorOutput(error="RuntimeError: rate limited"))
    >>> list(failed), failed.error
    ([], 'RuntimeError: rate limited')
"""

from __future__ import annotations

import logging
from typing import AsyncIterator, Awaitable, Callable, Iterator, Optional

from lightrag.core.types import GeneratorOutput

log = logging.getLogger(__name__)

__all__ = ["AsyncGeneratorStream", "DeferredStream", "GeneratorStream"]

OnError = Callable[[GeneratorOutput], None]


def _broken(output: GeneratorOutput, e: Exception, on_error: Optional[OnError]) -> None:
    log.warning("stream broke while reading: %s", e)
    output.error = f"stream broke: {type(e).__name__}: {e}"
    if on_error is not None:
        on_error(output)


class GeneratorStream(Iterator[str]):
    """The text pieces of one streamed reply (see the module doc).

    Args:
        output: the request's output; its ``data`` is a text iterator, a string or None.
        on_error: called with ``output`` when the stream breaks midway.
    """

    def __init__(self, output: GeneratorOutput, on_error: Optional[OnError] = None) -> None:
        self.output = output
        self._on_error = on_error
        self._pieces = self._read()

    @property
    def error(self) -> Optional[str]:
        """Why the request or the stream failed; None while all is well."""
        return self.output.error

    def _read(self) -> Iterator[str]:
        if self.output.error is not None or self.output.data is None:
            return
        if isinstance(self.output.data, str):
            yield self.output.data
            return
        try:
            yield from self.output.data
        except Exception as e:  # noqa: BLE001 - errors as data
            _broken(self.output, e, self._on_error)

    def __next__(self) -> str:
        return next(self._pieces)


class AsyncGeneratorStream(AsyncIterator[str]):
    """Async :class:`GeneratorStream`: the request is sent when iteration starts; ``output`` and
    ``error`` are set from then on.

    Args:
        start: sends the request and returns its output.
        on_error: called with the output when the stream breaks midway.
    """

    def __init__(
        self, start: Callable[[], Awaitable[GeneratorOutput]], on_error: Optional[OnError] = None
    ) -> None:
        self._start = start
        self._on_error = on_error
        self.output: Optional[GeneratorOutput] = None
        self._pieces = self._read()

    @property
    def error(self) -> Optional[str]:
        """Why the request or the stream failed; None while all is well or not yet started."""
        return None if self.output is None else self.output.error

    async def _read(self) -> AsyncIterator[str]:
        output = self.output = await self._start()
        if output.error is not None or output.data is None:
            return
        if isinstance(output.data, str):
            yield output.data
            return
        try:
            if isinstance(output.data, AsyncIterator):
                async for piece in output.data:
                    yield piece
            else:
                for piece in output.data:
                    yield piece
        except Exception as e:  # noqa: BLE001 - errors as data
            _broken(output, e, self._on_error)

    async def __anext__(self) -> str:
        return await self._pieces.__anext__()


class DeferredStream(Iterator[str]):
    """A :class:`GeneratorStream` whose request is sent when it is first read (``start``
    returns the stream), so a sync caller sends it in its own thread: a query answered inside
    ``asyncio.run`` and read after it, where Ctrl-C interrupts the wait for the reply (inside
    the event loop it waited for the request's time limit).

    Example:
        >>> started = []
        >>> lazy = DeferredStream(lambda: started.append(1) or GeneratorStream(
        ...     GeneratorOutput(data=iter(["a", "b"]))))
        >>> started
        []
        >>> "".join(lazy), started, lazy.error
        ('ab', [1], None)
    """

    def __init__(self, start: Callable[[], GeneratorStream]) -> None:
        self._start = start
        self._stream: Optional[GeneratorStream] = None

    @property
    def stream(self) -> GeneratorStream:
        """The stream, its request sent now if it was not yet."""
        if self._stream is None:
            self._stream = self._start()
        return self._stream

    @property
    def output(self) -> GeneratorOutput:
        return self.stream.output

    @property
    def error(self) -> Optional[str]:
        """Why the request or the stream failed (None while all is well or not yet sent)."""
        return None if self._stream is None else self._stream.error

    def __next__(self) -> str:
        return next(self.stream)
