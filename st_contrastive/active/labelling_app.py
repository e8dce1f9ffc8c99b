"""The labelling page over HTTP: a small FastAPI app around a :class:`~st_contrastive.active.labelling.
LabellingSession` (the page's logic) and one plain HTML page with no external assets, so it works offline.

FastAPI rather than Gradio: the page is one queue of texts with keyboard shortcuts, which a plain page does in a
few lines, and a FastAPI app is what a team deploys behind its own proxy; Gradio would add a large dependency and
its own front end for it.
"""

from __future__ import annotations

import secrets
from importlib import resources

from st_contrastive.active.labelling import LabellingSession, Refused
from st_contrastive.extras import require_extra

fastapi = require_extra("fastapi", "active")
responses = require_extra("fastapi.responses", "active")
pydantic = require_extra("pydantic", "active")

PAGE = resources.files("st_contrastive.active").joinpath("labelling_page.html")


class LabelRequest(pydantic.BaseModel):
    round: int
    id: int
    label: str


class SkipRequest(pydantic.BaseModel):
    round: int
    id: int


class UndoRequest(pydantic.BaseModel):
    round: int


def new_token() -> str:
    """An access token for a page served beyond localhost (``--host``)."""
    return secrets.token_urlsafe(24)


def create_app(session: LabellingSession, token: str | None = None):
    """The page at ``/`` and its JSON API under ``/api``; with ``token`` every request must carry it (``?token=``
    or the ``X-Token`` header), others get 403."""
    app = fastapi.FastAPI(title="st-contrastive labelling", docs_url=None, redoc_url=None, openapi_url=None)

    @app.middleware("http")
    async def require_token(request, call_next):
        given = request.query_params.get("token") or request.headers.get("x-token") or ""
        if token and not secrets.compare_digest(given.encode(), token.encode()):
            return responses.PlainTextResponse(
                "403: this page needs the token printed when the server started (open the URL it printed)",
                status_code=403,
            )
        return await call_next(request)

    @app.exception_handler(Refused)
    async def refused(request, error: Refused):
        return responses.JSONResponse({"error": str(error)}, status_code=409 if error.conflict else 400)

    @app.get("/", response_class=responses.HTMLResponse)
    def page() -> str:
        return PAGE.read_text(encoding="utf-8")

    @app.get("/api/status")
    def status() -> dict:
        return session.status()

    @app.post("/api/label")
    def label(request: LabelRequest) -> dict:
        return session.label(request.round, request.id, request.label)

    @app.post("/api/undo")
    def undo(request: UndoRequest) -> dict:
        return session.undo(request.round)

    @app.post("/api/skip")
    def skip(request: SkipRequest) -> dict:
        return session.skip(request.round, request.id)

    @app.get("/api/export")
    def export():
        return responses.FileResponse(session.export(), media_type="text/csv", filename="labelled.csv")

    return app
