"""Red team 6: ``lightrag/utils/secrets.py`` was 507 lines (the limit is ~500). It is split by
concept: secrets in configs (``secrets``) and redacting free text (``secrets_text``); every
public name is still importable from ``lightrag.utils.secrets``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import lightrag.utils.secrets as secrets
import lightrag.utils.secrets_text as secrets_text

ROOT = Path(__file__).resolve().parents[1]


def test_both_modules_are_under_the_size_limit():
    for module in (secrets, secrets_text):
        lines = Path(module.__file__).read_text(encoding="utf-8").count("\n")
        assert lines <= 500, (module.__name__, lines)


def test_every_public_name_is_importable_from_secrets():
    names = set(secrets.__all__) | set(secrets_text.__all__)
    assert {"REDACTED", "RedactingFilter", "find_secrets", "guard_http_logs", "is_secret_key",
            "redact", "redact_error", "redact_text", "register_secret", "register_url_credentials",
            "strip_redacted", "text_secret", "url_secret", "MIN_SECRET_LENGTH"} <= names
    for name in secrets_text.__all__:
        assert getattr(secrets, name) is getattr(secrets_text, name), name


def test_text_redaction_alone_reads_secret_named_env_vars():
    """``secrets_text`` imported first (before ``secrets``) still knows which variables hold
    keys (it asks ``secrets.is_secret_key`` when it needs to)."""
    code = ("import os; os.environ['ACME_API_KEY'] = 'acme-key-1234567890'\n"
            "from lightrag.utils.secrets_text import redact_text\n"
            "print(redact_text('401: bad key acme-key-1234567890'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         timeout=60, check=True).stdout
    assert out.strip() == "401: bad key <redacted>"
