"""The labelling page over HTTP: a small FastAPI app around a :class:`~st_contrastive.active.labelling.
LabellingSession` (the page's logic) and one plain HTML page with no external assets, so it works offline.

FastAPI rather than Gradio: the page is one queue of texts with keyboard shortcuts, which a plain page does in a
few lines, and a FastAPI app is what a team deploys behind its own proxy; Gradio would add a large dependency and
its own front end for it.
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
import urllib.parse
from importlib import resources

from st_contrastive.active.labelling import LabellingSession, Refused
from st_contrastive.active.predictions import PREDICTIONS
from st_contrastive.extras import require_extra

fastapi = require_extra("fastapi", "active")
responses = require_extra("fastapi.responses", "active")
pydantic = require_extra("pydantic", "active")

PAGE = resources.files("st_contrastive.active").joinpath("labelling_page.html")


# A label name, a round or a row id: a request is a few dozen bytes, so anything near this is not the page's.
MAX_BODY_BYTES = 16 * 1024
MAX_LABEL_CHARS = 200
MAX_NAME_CHARS = 60
# The header the page sends each person's name in (URL-encoded: a header carries Latin-1 only).
ANNOTATOR_HEADER = "x-annotator"
COOKIE = "st_contrastive_token"
# The names a browser on this machine uses for a server on the loopback address.
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


class LabelRequest(pydantic.BaseModel):
    round: int
    id: int
    label: str = pydantic.Field(max_length=MAX_LABEL_CHARS)


class RowRequest(pydantic.BaseModel):
    round: int
    id: int


class UndoRequest(pydantic.BaseModel):
    round: int


class EditRequest(pydantic.BaseModel):
    id: int
    label: str = pydantic.Field(max_length=MAX_LABEL_CHARS)


def new_token() -> str:
    """The page's access token, printed in the URL the server starts with (as Jupyter's)."""
    return secrets.token_urlsafe(24)


def _hash(code: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(code.encode()).digest()).decode() + "'"


def content_security_policy(page: str) -> str:
    """The page's own inline script and style, by hash, and nothing else: no other script, no frame around it."""
    inline = {tag: re.search(rf"<{tag}>(.*?)</{tag}>", page, re.DOTALL).group(1) for tag in ("script", "style")}
    return (
        f"default-src 'none'; script-src {_hash(inline['script'])}; style-src {_hash(inline['style'])}; "
        "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )


def host_name(host_header: str) -> str:
    """``Host: [::1]:8000`` -> ``::1``; ``localhost:8000`` -> ``localhost``."""
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _refuse(status: int, message: str):
    return responses.PlainTextResponse(f"{status}: {message}", status_code=status)


def create_app(
    session: LabellingSession,
    token: str,
    hosts: frozenset[str] = LOCAL_HOSTS,
    *,
    secure: bool = False,
    ask_names: bool = False,
):
    """The page at ``/`` and its JSON API under ``/api``, guarded as Jupyter guards its server:

    - every request carries ``token``: in the URL the server printed (``?token=``, traded at once for an HttpOnly,
      SameSite=Strict cookie and dropped from the address bar), the cookie, or an ``X-Token`` header;
    - its ``Host`` is one of ``hosts`` (a DNS-rebinding page names its own);
    - a request that changes anything comes from the page itself: a same-origin ``Origin`` or
      ``Sec-Fetch-Site``, a declared body of at most ``MAX_BODY_BYTES``;
    - every response forbids other scripts and frames (CSP, ``X-Frame-Options``).

    ``secure``: served over TLS, so the cookie is ``Secure``. ``ask_names``: several people label (a server for
    other machines), so the page asks each for a name, sent with each request and recorded with each label;
    otherwise every label is the session's annotator's."""
    app = fastapi.FastAPI(title="st-contrastive labelling", docs_url=None, redoc_url=None, openapi_url=None)
    page = PAGE.read_text(encoding="utf-8")
    headers = {
        "Content-Security-Policy": content_security_policy(page),
        "X-Frame-Options": "DENY",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
    }

    def refusal(request) -> object | None:
        if host_name(request.headers.get("host", "")) not in hosts:
            return _refuse(403, f"Host {request.headers.get('host', '')!r} is not this server's address")
        given = request.query_params.get("token") or request.headers.get("x-token") or request.cookies.get(COOKIE, "")
        if not secrets.compare_digest(given.encode(), token.encode()):
            return _refuse(403, "this page needs the token printed when the server started (open the URL it printed)")
        if request.method not in ("GET", "HEAD"):
            origin = request.headers.get("origin")
            own = f"{request.url.scheme}://{request.headers.get('host', '')}"
            if origin != own and request.headers.get("sec-fetch-site") != "same-origin":
                return _refuse(403, "a request that changes labels must come from the labelling page itself")
            length = request.headers.get("content-length")
            if length is None or not length.isdigit():
                return _refuse(411, "a request body must declare its length")
            if int(length) > MAX_BODY_BYTES:
                return _refuse(413, f"a request body is at most {MAX_BODY_BYTES} bytes")
        return None

    @app.middleware("http")
    async def guard(request, call_next):
        response = refusal(request)
        if response is None:
            if request.method == "GET" and request.url.path == "/" and "token" in request.query_params:
                response = responses.RedirectResponse("/", status_code=303)  # the token leaves the address bar
            else:
                response = await call_next(request)
            if request.cookies.get(COOKIE) != token:
                response.set_cookie(COOKIE, token, httponly=True, samesite="strict", secure=secure)
        response.headers.update(headers)
        return response

    @app.exception_handler(Refused)
    async def refused(request, error: Refused):
        return responses.JSONResponse({"error": str(error)}, status_code=409 if error.conflict else 400)

    def annotator(request) -> str | None:
        """Who sent ``request``: the name the page asked for (with ``ask_names``), or the session's annotator."""
        if not ask_names:
            return session.annotator
        name = urllib.parse.unquote(request.headers.get(ANNOTATOR_HEADER, "")).strip()
        if len(name) > MAX_NAME_CHARS or not name.isprintable():
            raise Refused(f"a name is at most {MAX_NAME_CHARS} printable characters")
        return name or None

    def person(request) -> str:
        who = annotator(request)
        if who is None:
            raise Refused("tell the page your name first: it is recorded with each of your labels")
        return who

    @app.get("/", response_class=responses.HTMLResponse)
    def index() -> str:
        return page

    @app.get("/api/status")
    def status(request: fastapi.Request) -> dict:
        who = annotator(request)
        return {"ask_name": who is None} | session.status(who, show_item=who is not None)

    @app.post("/api/label")
    def label(body: LabelRequest, request: fastapi.Request) -> dict:
        return session.label(body.round, body.id, body.label, person(request))

    @app.post("/api/ignore")
    def ignore(body: RowRequest, request: fastapi.Request) -> dict:
        return session.ignore(body.round, body.id, person(request))

    @app.post("/api/undo")
    def undo(body: UndoRequest, request: fastapi.Request) -> dict:
        return session.undo(body.round, person(request))

    @app.post("/api/skip")
    def skip(body: RowRequest, request: fastapi.Request) -> dict:
        return session.skip(body.round, body.id, person(request))

    @app.get("/api/review")
    def review() -> list[dict]:
        return session.review()

    @app.post("/api/edit")
    def edit(body: EditRequest, request: fastapi.Request) -> dict:
        return session.edit(body.id, body.label, person(request))

    @app.post("/api/train-now")
    def train_now() -> dict:
        return session.train_now()

    @app.post("/api/retry")
    def retry() -> dict:
        return session.retry()

    @app.post("/api/predictions")
    def write_predictions() -> dict:
        return {"path": str(session.write_predictions())}

    @app.get("/api/predictions")
    def predictions() -> dict:
        return session.prediction_preview()

    @app.get("/api/predictions.csv")
    def predictions_file():
        session.prediction_preview(0)  # refused when there are none yet
        return responses.FileResponse(session.run_dir / PREDICTIONS, media_type="text/csv", filename=PREDICTIONS)

    @app.get("/api/export")
    def export():
        return responses.FileResponse(session.export(), media_type="text/csv", filename="labelled.csv")

    return app
