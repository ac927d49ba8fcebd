"""Uploaded archives and PDFs are read in a child process, a few at once, bounded in memory and time.

Reading a file can cost far more than its size: a 79 KB ``.docx`` holding 64 MB of empty
paragraphs took ~900 MB and 8 s to read, and four of them uploaded at once took the server to
3.4 GB and kept ``/health`` waiting 11 s (the readers' threads held the interpreter's lock).

:class:`UploadReader` reads a ZIP-based file (``.docx``) or a PDF — the formats that expand —
with :func:`read_in_child` in an interpreter of its own (``python -c``: no ``multiprocessing``,
which would import the server's own script again in each child), :data:`UPLOAD_READERS` at once,
each with its address space limited to :data:`UPLOAD_MEMORY_BYTES` and its time to
:data:`UPLOAD_SECONDS` (wall-clock, by the server, and CPU, by the system): a file that needs
more is refused (reason ``too-large``), and the server never holds its parse. Other files
(text, Markdown, HTML: read in pure Python, linear in their size) are read in a worker thread
as before. The child gets ``{"name"}`` and the bytes on its stdin and answers JSON on stdout.

Example:
    >>> reader = UploadReader()
    >>> asyncio.run(reader.read("a.txt", b"Alice met Bob."))
    'Alice met Bob.'
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import sys
from typing import Optional

from lightrag.components.loaders import DocumentLoadError, load_document

log = logging.getLogger(__name__)

__all__ = ["UPLOAD_MEMORY_BYTES", "UPLOAD_READERS", "UPLOAD_SECONDS", "UploadReader", "expands"]

UPLOAD_READERS = 2  #: archives and PDFs read at once, server-wide (one process each)
UPLOAD_MEMORY_BYTES = 2 * 1024**3  #: address space of a reading process
UPLOAD_SECONDS = 120.0  #: time a reading process gets
#: what a reading process runs (``python -c``; its arguments: memory bytes, seconds)
_CHILD_CODE = ("import sys; from lightrag.server.uploads import read_in_child; "
               "read_in_child(int(sys.argv[1]), int(sys.argv[2]))")


def expands(data: bytes) -> bool:
    """Whether ``data`` is a format whose reading can cost far more than its size: a ZIP
    archive (``.docx``) or a PDF (compressed streams)."""
    head = data[:1024].lstrip()
    return data.startswith(b"PK\x03\x04") or head.startswith(b"%PDF") or b"%PDF-" in head


class UploadReader:
    """Reads uploads (see the module doc).

    Args:
        workers: archives and PDFs read at once.
        memory_bytes: address space of each reading process.
        seconds: time each reading process gets.
    """

    def __init__(self, workers: int = UPLOAD_READERS, memory_bytes: Optional[int] = None,
                 seconds: Optional[float] = None) -> None:
        self.memory_bytes = UPLOAD_MEMORY_BYTES if memory_bytes is None else memory_bytes
        self.seconds = UPLOAD_SECONDS if seconds is None else seconds
        self._slots = asyncio.Semaphore(workers)

    async def read(self, name: str, data: bytes) -> str:
        """The text of the uploaded file ``name``.

        Raises:
            DocumentLoadError: the file cannot be read (``too-large`` when it needs more memory
                or time than an upload may use).
        """
        if not expands(data):
            return (await asyncio.to_thread(load_document, name, data=data)).text
        async with self._slots:
            return await self._read_in_child(name, data)

    async def _read_in_child(self, name: str, data: bytes) -> str:
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-c", _CHILD_CODE, str(self.memory_bytes),
            str(math.ceil(self.seconds)),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL)
        message = json.dumps({"name": name}).encode() + b"\n" + data
        try:
            out, _ = await asyncio.wait_for(child.communicate(message), self.seconds)
        except asyncio.TimeoutError:
            raise DocumentLoadError(name, "too-large", f"reading it took over {self.seconds:g} s, "
                                                       "more than an upload may use") from None
        finally:
            if child.returncode is None:  # timed out, or the request was cancelled
                child.kill()
                await child.wait()
        try:
            answer = json.loads(out)
        except ValueError:
            log.warning("the process reading upload %r ended with status %s", name, child.returncode)
            if child.returncode is not None and child.returncode < 0:  # killed: memory or CPU
                raise DocumentLoadError(name, "too-large", "reading it took more memory or time "
                                                           "than an upload may use") from None
            raise DocumentLoadError(name, "unsupported", "the process reading it failed (status "
                                                         f"{child.returncode})") from None
        if answer.get("error"):
            raise DocumentLoadError(name, str(answer["error"]), str(answer.get("message", "")))
        return str(answer["text"])


def read_in_child(memory_bytes: int, seconds: int) -> None:
    """What a reading process runs (:data:`_CHILD_CODE`): read one file from stdin,
    with at most ``MEMORY_BYTES`` of address space and ``SECONDS`` of CPU time (the server kills
    it at that time too; the CPU limit ends it if the server died first)."""
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
        resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))
    except (ImportError, ValueError, OSError):  # no such limits here: the server's timeout holds
        pass
    raw = sys.stdin.buffer.read()
    header, _, data = raw.partition(b"\n")
    name = json.loads(header)["name"]
    del raw
    try:
        answer = {"text": load_document(name, data=data).text}
    except DocumentLoadError as e:
        answer = {"error": e.reason, "message": e.detail}
    except MemoryError:
        answer = {"error": "too-large", "message": "reading it needs more memory than an upload may use"}
    sys.stdout.write(json.dumps(answer))
