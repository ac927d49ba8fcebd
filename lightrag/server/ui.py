"""The web UI at ``/`` and the offline API docs at ``/docs`` (Swagger UI) and ``/redoc`` (ReDoc).

Every asset is served from ``lightrag/server/static`` inside the package: the UI's own
``index.html``, ``app.js`` and ``app.css``, and in ``static/vendor`` the files of the npm packages
``cytoscape``, ``swagger-ui-dist`` and ``redoc`` (copied there by ``npm run vendor`` in ``webui/``;
``vendor/manifest.json`` names each file's package version and SHA-256). No page loads anything
from a CDN, so the UI and the docs work offline.

The UI page needs no API key (it is static); the UI asks for the key and sends it as
``X-API-Key`` on every API call. ``/docs`` and ``/redoc`` take the ``dependencies`` given to
:func:`mount_ui` (the app's API-key check when keys are set), as ``/openapi.json`` does. Each docs
page sends its own Content-Security-Policy: Swagger UI's one inline script is allowed by its
SHA-256 hash, ReDoc's styles and search worker by ``'unsafe-inline'`` styles and ``blob:`` workers.

Example:
    >>> app = FastAPI(docs_url=None, redoc_url=None)  # doctest: +SKIP
    >>> mount_ui(app)  # doctest: +SKIP
"""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path
from typing import Any, Optional, Sequence

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse
from fastapi.staticfiles import StaticFiles

STATIC_DIR = Path(__file__).parent / "static"
VENDOR = "/static/vendor"


_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)
_DOCS_CSP = ("default-src 'self'; script-src 'self' {scripts}; style-src 'self' 'unsafe-inline'; "
             "img-src 'self' data:; connect-src 'self'; font-src 'self' data:; "
             "worker-src 'self' blob:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'")


def _with_csp(page: HTMLResponse) -> HTMLResponse:
    """``page`` with a Content-Security-Policy allowing its inline scripts by hash, nothing else."""
    body = bytes(page.body).decode()
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'"
        for s in _INLINE_SCRIPT.findall(body))
    return HTMLResponse(body, headers={"Content-Security-Policy": _DOCS_CSP.format(scripts=hashes)})


def mount_ui(app: FastAPI, dependencies: Optional[Sequence[Any]] = None,
             openapi_url: str = "/openapi.json") -> None:
    """Serve the UI at ``/``, its assets at ``/static`` and the API docs at ``/docs``, ``/redoc``
    (behind ``dependencies``, e.g. the API-key check; the schema is read from ``openapi_url``).

    Raises:
        FileNotFoundError: the packaged assets are missing (a broken install).
    """
    for name in ("index.html", "app.js", "app.css", "vendor/cytoscape.min.js",
                 "vendor/swagger-ui-bundle.js", "vendor/redoc.standalone.js"):
        if not (STATIC_DIR / name).is_file():
            raise FileNotFoundError(f"the web UI asset {STATIC_DIR / name} is missing: reinstall "
                                    "lightrag (the package ships lightrag/server/static)")
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    title = app.title
    protected = list(dependencies or [])

    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html", headers={"Cache-Control": "no-cache"})

    @app.get("/docs", include_in_schema=False, dependencies=protected)
    async def swagger() -> HTMLResponse:
        return _with_csp(get_swagger_ui_html(
            openapi_url=openapi_url, title=f"{title} - Swagger UI",
            swagger_js_url=f"{VENDOR}/swagger-ui-bundle.js",
            swagger_css_url=f"{VENDOR}/swagger-ui.css",
            swagger_favicon_url=f"{VENDOR}/favicon-32x32.png",
            swagger_ui_parameters={"persistAuthorization": True}))

    @app.get("/redoc", include_in_schema=False, dependencies=protected)
    async def redoc() -> HTMLResponse:
        return _with_csp(get_redoc_html(openapi_url=openapi_url, title=f"{title} - ReDoc",
                                        redoc_js_url=f"{VENDOR}/redoc.standalone.js",
                                        redoc_favicon_url=f"{VENDOR}/favicon-32x32.png",
                                        with_google_fonts=False))
