"""Load ``KEY=value`` lines from a ``.env`` file into the environment (API keys live there).

A small reader written here instead of depending on python-dotenv: it handles comments, blank
lines, ``export`` prefixes and quoted values, which is all a key file needs.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, Union


def parse_dotenv(text: str) -> Dict[str, str]:
    """Parse ``.env`` text into a dict."""
    values: Dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        key = key.removeprefix("export ").strip()
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        values[key] = value
    return values


def setup_env(dotenv_path: Union[str, Path] = ".env", override: bool = False) -> Dict[str, str]:
    """Read ``dotenv_path`` into ``os.environ``; raises FileNotFoundError when it is missing."""
    path = Path(dotenv_path)
    if not path.is_file():
        raise FileNotFoundError(f"The .env file {path} does not exist")
    values = parse_dotenv(path.read_text(encoding="utf-8"))
    for key, value in values.items():
        if override or key not in os.environ:
            os.environ[key] = value
    return values
