"""The web UI at ``/`` and the offline API docs at ``/docs`` (Swagger UI) and ``/redoc`` (ReDoc).

Every asset is served from ``lightrag/server/static`` inside the package: the UI's own
``index.html``, ``app.js`` and ``app.css``, and in ``static/vendor`` the files of the npm packages
``cytoscape``, ``swagger-ui-dist`` and ``redoc`` (copied there by ``npm run vendor`` in ``webui/``;
``vendor/manifest.json`` names each file's package version and SHA-256). No page loads anything
from a CDN, so the UI and the docs work offline.

The pages themselves need no API key (they are static); the UI asks for the key and sends it as
``X-API-Key`` on every API call.

Example:
    >>> app = FastAPI(docs_url=None, redoc_url=None)  # doctest: +SKIP
    >>> mount_ui(app)  # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse
from fastapi.staticfiles import StaticFiles

STATIC_DIR = Path(__file__).parent / "static"
VENDOR = "/static/vendor"


def mount_ui(app: FastAPI) -> None:
    """Serve the UI at ``/``, its assets at ``/static`` and the API docs at ``/docs``, ``/redoc``.

    Raises:
        FileNotFoundError: the packaged assets are missing (a broken install).
    """
    for name in ("index.html", "app.js", "app.css", "vendor/cytoscape.min.js",
                 "vendor/swagger-ui-bundle.js", "vendor/redoc.standalone.js"):
        if not (STATIC_DIR / name).is_file():
            raise FileNotFoundError(f"the web UI asset {STATIC_DIR / name} is missing: reinstall "
                                    "lightrag (the package ships lightrag/server/static)")
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    openapi_url = app.openapi_url or "/openapi.json"
    title = app.title

    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html", headers={"Cache-Control": "no-cache"})

    @app.get("/docs", include_in_schema=False)
    async def swagger() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=openapi_url, title=f"{title} - Swagger UI",
            swagger_js_url=f"{VENDOR}/swagger-ui-bundle.js",
            swagger_css_url=f"{VENDOR}/swagger-ui.css",
            swagger_favicon_url=f"{VENDOR}/favicon-32x32.png",
            swagger_ui_parameters={"persistAuthorization": True})

    @app.get("/redoc", include_in_schema=False)
    async def redoc() -> HTMLResponse:
        return get_redoc_html(openapi_url=openapi_url, title=f"{title} - ReDoc",
                              redoc_js_url=f"{VENDOR}/redoc.standalone.js",
                              redoc_favicon_url=f"{VENDOR}/favicon-32x32.png",
                              with_google_fonts=False)
