"""Logging set-up for applications built on lightrag (the library itself only logs)."""

from __future__ import annotations

import inspect
import logging
import os
import sys
from datetime import datetime
from typing import Optional, Tuple, Union

log = logging.getLogger(__name__)

LOG_LEVELS = {
    "DEBUG": logging.DEBUG,
    "INFO": logging.INFO,
    "WARNING": logging.WARNING,
    "ERROR": logging.ERROR,
    "CRITICAL": logging.CRITICAL,
}

COLOR_MAP = {
    "black": "\x1b[30m",
    "red": "\x1b[31m",
    "green": "\x1b[32m",
    "yellow": "\x1b[33m",
    "blue": "\x1b[34m",
    "magenta": "\x1b[35m",
    "cyan": "\x1b[36m",
    "white": "\x1b[37m",
}
_RESET = "\x1b[0m"
#: 0.1's log line: time (to the second), module, level, [file:line:function], message
_FORMAT = (
    "%(asctime)s - %(module)s - %(levelname)s - [%(filename)s:%(lineno)d:%(funcName)s] - %(message)s"
)
_DATE_FORMAT = "%Y-%m-%d %H:%M:%S"


def _level_number(level: Union[str, int]) -> int:
    """The logging level for a name in :data:`LOG_LEVELS` (any case) or a number; an unknown
    name falls back to INFO with a warning, as lightrag 0.1 did."""
    if isinstance(level, int) and not isinstance(level, bool):
        return level
    name = str(level).upper()
    number = LOG_LEVELS.get(name)
    if number is None:
        number = logging.getLevelName(name)  # logging's own names too: "WARN", "NOTSET"
    if not isinstance(number, int):
        log.warning("unknown log level %r: using INFO (choose one of %s)", level, ", ".join(LOG_LEVELS))
        return logging.INFO
    return number


def get_logger(
    name: Optional[str] = None,
    level: Union[str, int] = "INFO",
    save_dir: Optional[str] = None,
    filename: Optional[str] = None,
    enable_console: bool = True,
    enable_file: Optional[bool] = None,
) -> logging.Logger:
    """Configure and return the root logger (``name=None``) or a named one.

    Handlers set up by an earlier call are replaced. A file handler writes to
    ``save_dir/filename`` (default ``./logs/lib.log`` or ``./logs/<name>.log``). With
    ``enable_file`` left out, a file is written when ``save_dir`` or ``filename`` is given
    (0.1 code such as ``get_logger(name="app", save_dir="logs")`` gets its file) and not
    otherwise (0.1 wrote ``./logs/lib.log`` into the working folder on any call). An unknown
    ``level`` name falls back to INFO with a warning, as in 0.1.
    """
    if enable_file is None:
        enable_file = save_dir is not None or filename is not None
    logger = logging.getLogger(name)
    logger.setLevel(_level_number(level))
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
    formatter = logging.Formatter(_FORMAT, datefmt=_DATE_FORMAT)
    if enable_console:
        console = logging.StreamHandler(sys.stdout)
        console.setFormatter(formatter)
        logger.addHandler(console)
    if enable_file:
        directory = save_dir or "./logs"
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, filename or f"{name or 'lib'}.log")
        file_handler = logging.FileHandler(path, encoding="utf-8")
        file_handler.setFormatter(formatter)
        logger.addHandler(file_handler)
    if name is not None:
        logger.propagate = False
    return logger


def printc(text: str, color: str = "cyan") -> None:
    """Print a coloured, time-stamped line naming the caller, in 0.1's format:
    ``<time> - [<script>:<line>:<function>] - <text>`` (a debugging aid for scripts)."""
    frame = inspect.stack()[1]
    where = f"{os.path.basename(frame.filename)}:{frame.lineno}:{frame.function}"
    stamp = datetime.now().strftime("%Y-%m-%d %H:%M:%S")
    print(f"{COLOR_MAP.get(color, COLOR_MAP['cyan'])}{stamp} - [{where}] - {text}{_RESET}")  # noqa: T201


def get_current_script_and_line() -> Tuple[str, str, int]:
    """``(function, script file name, line)`` of the caller's caller (0.1's helper)."""
    frame = inspect.stack()[2]
    return frame.function, os.path.basename(frame.filename), frame.lineno


# HKU LightRAG programs write ``from lightrag.utils import logger`` and call ``logger.info(...)``;
# here that name is this module (0.1's ``lightrag.utils.logger``), so it logs like the library's
# logger too.
_library_logger = logging.getLogger("lightrag")
debug = _library_logger.debug
info = _library_logger.info
warning = _library_logger.warning
error = _library_logger.error
exception = _library_logger.exception
setLevel = _library_logger.setLevel
