"""The FastAPI application: documents, jobs, ask (JSON and SSE), OpenAI chat, health, metrics."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import os
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import anyio
from fastapi import APIRouter, Depends, FastAPI, File, Query, Request, Response, UploadFile
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from prometheus_client import CONTENT_TYPE_LATEST
from pydantic import BaseModel, Field, model_validator
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hybrid_rag._display import NO_ANSWER, citations_block, cited_text
from hybrid_rag.errors import (
    DocumentExistsError,
    DocumentNotFoundError,
    DocumentTooLargeError,
    HybridRAGError,
    InputError,
    InvalidDocIdError,
    LLMError,
    StoreError,
)
from hybrid_rag.ingest.inputs import no_lone_surrogates, safe_text
from hybrid_rag.models import Answer, ChatMessage, DocumentInfo, IngestReport
from hybrid_rag.server import _openai as oai
from hybrid_rag.server._jobs import Job, JobTable
from hybrid_rag.server._metrics import Metrics
from hybrid_rag.server._stream import Delta, answer_parts

if TYPE_CHECKING:
    from hybrid_rag.rag import HybridRAG

__all__ = ["API_KEYS_ENV", "AskRequest", "UploadAccepted", "create_app"]

log = logging.getLogger("hybrid_rag.server")

API_KEYS_ENV = "HYBRID_RAG_API_KEYS"
"""Comma-separated API keys; when set, every route needs a bearer key (``/health`` then
answers only ``{"status": ...}`` to a caller without one)."""

Mode = Literal["hybrid", "kg", "vector"]


class AskRequest(BaseModel):
    """``POST /ask`` and ``POST /ask/stream``."""

    question: str = Field(min_length=1, max_length=4000)
    docs: list[str] | None = None
    mode: Mode = "hybrid"
    history: list[ChatMessage] | None = None
    top_k: int | None = Field(default=None, ge=1, le=100)
    timeout: float | None = Field(
        default=None,
        gt=1,
        allow_inf_nan=False,
        description="Seconds for this question (routing, retrieval and the answer); "
        "default: the service's.",
    )

    @model_validator(mode="before")
    @classmethod
    def _unicode(cls, data: Any) -> Any:
        return no_lone_surrogates(data)


class UploadAccepted(BaseModel):
    """``202`` answer of ``POST /documents``: poll ``status_url``."""

    job_id: str
    status_url: str
    files: list[str]


@dataclass
class _Service:
    rag: HybridRAG
    keys: tuple[str, ...]
    jobs: JobTable = field(default_factory=JobTable)
    tasks: set[asyncio.Task[None]] = field(default_factory=set)
    metrics: Metrics = field(init=False)
    uploaders: dict[str, str] = field(default_factory=dict)  # doc id -> last client

    def __post_init__(self) -> None:
        self.metrics = Metrics(lambda: float(len(self.rag.catalog.list())))

    def key_of(self, request: Request) -> str | None:
        """The API key the request carries when it is one of ours, else ``None``."""
        given = request.headers.get("authorization", "")
        token = given[7:].strip().encode() if given.lower().startswith("bearer ") else b""
        return next((k for k in self.keys if hmac.compare_digest(token, k.encode())), None)

    def client_of(self, request: Request) -> str:
        """Who sent the request, for upload reports: the key's fingerprint, or the host."""
        key = self.key_of(request)
        if key is not None:
            return "key " + hashlib.sha256(key.encode()).hexdigest()[:8]
        host = request.client.host if request.client else "unknown"
        return f"client {host}"


def create_app(
    rag: HybridRAG,
    *,
    api_keys: Sequence[str] | None = None,
    max_upload_bytes: int = 50 * 2**20,
    api_docs: bool = True,
) -> FastAPI:
    """A FastAPI app serving ``rag``; mount it or run it with uvicorn.

    The app does not close ``rag`` (the caller owns it); on shutdown it waits up to 30 s
    for running upload jobs. Malformed requests get a JSON 4xx (422 with the field at
    fault), never a 500.

    Args:
        rag: the ``HybridRAG`` to serve.
        api_keys: accepted bearer keys; ``None`` reads ``HYBRID_RAG_API_KEYS``
            (comma-separated). No keys: no authentication.
        max_upload_bytes: the largest request body accepted (413 above it).
        api_docs: serve ``/docs`` and ``/openapi.json``; with API keys they need a key
            like every other route. ``False``: not served (404).

    Returns:
        The application. Routes: ``POST /documents`` (202 + job; ``?replace=true`` to
        replace documents of the same ids), ``GET /jobs/{id}``, ``GET /documents``,
        ``DELETE /documents/{id}``, ``POST /ask``, ``POST /ask/stream`` (server-sent
        events), ``POST /v1/chat/completions``, ``GET /v1/models``, ``GET /health``,
        ``GET /metrics``, and ``GET /docs``, ``GET /openapi.json``.
    """
    if api_keys is None:
        api_keys = os.environ.get(API_KEYS_ENV, "").split(",")
    svc = _Service(rag=rag, keys=tuple(k.strip() for k in api_keys if k.strip()))

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        if svc.tasks:
            await asyncio.wait(set(svc.tasks), timeout=30)

    app = FastAPI(
        title="hybrid_rag",
        summary="Documents -> knowledge graph + chunks; answers with page citations.",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    _install_errors(app, svc)
    app.add_middleware(_LengthGuard, limit=max_upload_bytes, svc=svc)
    router = APIRouter(dependencies=[Depends(_auth(svc))])
    _document_routes(router, svc)
    _ask_routes(router, svc)
    _openai_routes(router, svc)
    _ops_routes(app, router, svc)
    if api_docs:
        _docs_routes(app, router)
    app.include_router(router)
    return app


def _docs_routes(app: FastAPI, router: APIRouter) -> None:
    """``/openapi.json`` and ``/docs`` behind the same key as every other route."""

    @router.get("/openapi.json", include_in_schema=False)
    async def openapi() -> JSONResponse:
        return JSONResponse(app.openapi())

    @router.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(openapi_url="/openapi.json", title="hybrid_rag API")


# --- auth and errors --------------------------------------------------------------------------


_BEARER = HTTPBearer(auto_error=False)


def _auth(svc: _Service) -> Any:
    async def check(
        creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_BEARER)],
    ) -> None:
        if not svc.keys:
            return
        given = creds.credentials.encode() if creds is not None else b""
        if not any(hmac.compare_digest(given, k.encode()) for k in svc.keys):
            raise HTTPException(401, "missing or unknown API key (Authorization: Bearer <key>)")

    return check


_STATUS: list[tuple[type[HybridRAGError], int]] = [
    (DocumentNotFoundError, 404),
    (DocumentExistsError, 409),
    (DocumentTooLargeError, 413),
    (InputError, 400),
    (StoreError, 503),
    (LLMError, 502),
]


def _status_of(exc: HybridRAGError) -> int:
    for cls, status in _STATUS:
        if isinstance(exc, cls):
            return status
    return 400 if isinstance(exc, ValueError) else 500


def _message(exc: BaseException) -> str:
    """The error's own words (a ``KeyError`` would add quotes around them)."""
    if isinstance(exc, KeyError) and len(exc.args) == 1 and isinstance(exc.args[0], str):
        return exc.args[0]
    return str(exc)


def _error_body(exc: BaseException) -> dict[str, str]:
    return {"detail": safe_text(_message(exc)), "type": type(exc).__name__}


def _openai_error(exc: BaseException, status: int) -> dict[str, Any]:
    """``/v1/*`` errors in OpenAI's shape, so that OpenAI clients show the message."""
    if isinstance(exc, HybridRAGError):
        doc = isinstance(exc, (DocumentNotFoundError, InvalidDocIdError))
        param = "docs" if doc else "messages" if isinstance(exc, InputError) else None
        return oai.error_body(_message(exc), status=status, param=param, code=oai.error_code(exc))
    return oai.error_body("internal error", status=status)


def _openai_http_error(request: Request, exc: HTTPException) -> dict[str, Any]:
    status, detail = exc.status_code, str(exc.detail)
    if status in (404, 405) and detail in ("Not Found", "Method Not Allowed"):
        detail = (
            f"Invalid URL ({request.method} {request.url.path}): this service offers "
            "POST /v1/chat/completions and GET /v1/models"
        )
    code = {401: "invalid_api_key", 413: "request_too_large"}.get(status)
    return oai.error_body(detail, status=status, code=code)


def _openai_invalid(exc: RequestValidationError) -> dict[str, Any]:
    first = exc.errors()[0] if exc.errors() else {}
    param = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or None
    message = f"{param}: {first.get('msg', 'invalid')}" if param else "invalid request body"
    return oai.error_body(message, status=422, param=param, code="invalid_value")


def _invalid_body(exc: RequestValidationError) -> dict[str, Any]:
    """What was wrong with a request, by field; the input itself is never echoed."""
    fields = [
        {
            "loc": [safe_text(str(p)) for p in e.get("loc", ())],
            "msg": safe_text(str(e.get("msg", ""))),
            "type": str(e.get("type", "")),
        }
        for e in exc.errors()
    ]
    return {"detail": fields, "type": "RequestValidationError"}


def _install_errors(app: FastAPI, svc: _Service) -> None:
    async def typed(request: Request, exc: Exception) -> JSONResponse:
        status = _status_of(exc) if isinstance(exc, HybridRAGError) else 500
        svc.metrics.http_errors.labels(status=str(status)).inc()
        if oai.is_openai_path(request.scope):
            return JSONResponse(_openai_error(exc, status), status_code=status)
        return JSONResponse(_error_body(exc), status_code=status)

    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error in %s %s", request.method, request.url.path)
        svc.metrics.http_errors.labels(status="500").inc()
        if oai.is_openai_path(request.scope):
            return JSONResponse(_openai_error(exc, 500), 500)
        return JSONResponse({"detail": "internal error", "type": type(exc).__name__}, 500)

    async def http(request: Request, exc: Exception) -> JSONResponse:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        svc.metrics.http_errors.labels(status=str(status)).inc()
        headers = getattr(exc, "headers", None)
        if oai.is_openai_path(request.scope) and isinstance(exc, HTTPException):
            return JSONResponse(_openai_http_error(request, exc), status, headers=headers)
        detail = exc.detail if isinstance(exc, HTTPException) else "error"
        return JSONResponse({"detail": detail}, status, headers=headers)

    async def invalid(request: Request, exc: Exception) -> JSONResponse:
        svc.metrics.http_errors.labels(status="422").inc()
        assert isinstance(exc, RequestValidationError)
        if oai.is_openai_path(request.scope):
            return JSONResponse(_openai_invalid(exc), 422)
        return JSONResponse(_invalid_body(exc), 422)

    app.add_exception_handler(HybridRAGError, typed)
    app.add_exception_handler(HTTPException, http)
    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(Exception, unexpected)


class _LengthGuard:
    """Request bodies over the limit get a JSON 413: at once when ``Content-Length`` says so,
    else as soon as the streamed body passes the limit (the route never sees it)."""

    def __init__(self, app: ASGIApp, *, limit: int, svc: _Service) -> None:
        self.app, self.limit, self.svc = app, limit, svc

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = Headers(scope=scope).get("content-length", "")
        if length.isdigit() and int(length) > self.limit:
            self.svc.metrics.http_errors.labels(status="413").inc()
            body: dict[str, Any] = self._body()
            if oai.is_openai_path(scope):
                body = oai.error_body(body["detail"], status=413, code="request_too_large")
            await JSONResponse(body, 413)(scope, receive, send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                raise HTTPException(413, self._body()["detail"])
            return message

        await self.app(scope, counted, send)

    def _body(self) -> dict[str, str]:
        return {"detail": f"request body over the {self.limit}-byte limit", "type": "TooLarge"}


# --- documents and jobs -----------------------------------------------------------------------


def _document_routes(router: APIRouter, svc: _Service) -> None:
    @router.post("/documents", status_code=202, response_model=UploadAccepted)
    async def upload(
        request: Request,
        files: Annotated[list[UploadFile], File()],
        replace: Annotated[bool, Query()] = False,
    ) -> UploadAccepted:
        """Accept one or more files (multipart ``files``); ingest them in the background.

        A file whose document id is taken by a document with other content is not
        ingested (its status says which document holds the id) unless ``replace=true``;
        then its status is ``replaced`` and says what it replaced and who uploaded that.
        """
        items = [
            (safe_text(Path(f.filename or "").name) or "document", await f.read()) for f in files
        ]
        job = svc.jobs.new([name for name, _ in items], client=svc.client_of(request))
        task = asyncio.create_task(_run_job(svc, job, items, replace=replace))
        svc.tasks.add(task)
        task.add_done_callback(svc.tasks.discard)
        return UploadAccepted(
            job_id=job.job_id, status_url=f"/jobs/{job.job_id}", files=[n for n, _ in items]
        )

    @router.get("/jobs/{job_id}", response_model=Job)
    async def job_status(job_id: str) -> Job:
        """Status of an upload job, per file (ingested / skipped / replaced / failed)."""
        job = svc.jobs.get(job_id)
        if job is None:
            raise HTTPException(404, f"unknown job id {job_id!r}")
        return job

    @router.get("/documents", response_model=list[DocumentInfo])
    async def list_documents() -> list[DocumentInfo]:
        """Every ingested document (the catalog), ordered by id."""
        return list(await anyio.to_thread.run_sync(svc.rag.documents))

    @router.delete("/documents/{doc_id}", status_code=204)
    async def delete_document(doc_id: str) -> Response:
        """Remove a document from the catalog, the graph and the vectors."""
        await svc.rag.aforget(doc_id)
        return Response(status_code=204)


async def _run_job(
    svc: _Service, job: Job, items: list[tuple[str, bytes]], *, replace: bool
) -> None:
    job.status = "running"
    for entry, (name, data) in zip(job.files, items, strict=True):
        t0 = time.perf_counter()
        old = await _entry_for(svc.rag, name)
        report = await _ingest_file(svc.rag, name, data, replace=replace)
        svc.metrics.ingested(report, time.perf_counter() - t0)
        entry.status, entry.error = report.status, report.error
        entry.doc_id = report.doc_id or None
        previous = svc.uploaders.get(report.doc_id)
        if report.status in ("ingested", "replaced"):
            svc.uploaders[report.doc_id] = job.client or ""
        if report.status == "replaced" and old is not None:
            by = f" uploaded by {previous}" if previous else ""
            entry.replaced = f"{old.source}{by}, ingested {old.updated_at:%Y-%m-%d %H:%M} UTC"
            log.warning("%s replaced %s (%s)", job.client, report.doc_id, entry.replaced)
    job.status = "done"


async def _entry_for(rag: HybridRAG, name: str) -> DocumentInfo | None:
    """The catalog entry the file's id names now (for the job's report), if any."""
    from hybrid_rag.ingest.load import doc_id_from_name

    try:
        return await anyio.to_thread.run_sync(lambda: rag.catalog.get(doc_id_from_name(name)))
    except HybridRAGError:
        return None


async def _ingest_file(rag: HybridRAG, name: str, data: bytes, *, replace: bool) -> IngestReport:
    try:
        report = await rag.aingest(data, name=name, replace=replace)
    except DocumentExistsError as exc:
        return _failed(name, f"{type(exc).__name__}: {exc} (upload with ?replace=true)")
    except HybridRAGError as exc:
        return _failed(name, f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # a bug must not take the job (or the process) down
        log.exception("ingest of %s failed", name)
        return _failed(name, f"internal error: {type(exc).__name__}")
    return report if isinstance(report, IngestReport) else report[0]


def _failed(name: str, error: str) -> IngestReport:
    return IngestReport(doc_id="", source=name, status="failed", content_hash="", error=error)


# --- ask --------------------------------------------------------------------------------------


def _ask_routes(router: APIRouter, svc: _Service) -> None:
    @router.post("/ask", response_model=Answer)
    async def ask(body: AskRequest) -> Answer:
        """Answer a question from the documents in scope; the ``Answer`` as JSON."""
        t0 = time.perf_counter()
        answer = await svc.rag.aask(
            body.question,
            docs=body.docs,
            mode=body.mode,
            top_k=body.top_k,
            history=body.history,
            timeout=body.timeout,
        )
        svc.metrics.asked("ask", answer, time.perf_counter() - t0)
        return answer

    @router.post("/ask/stream")
    async def ask_stream(body: AskRequest) -> StreamingResponse:
        """Server-sent events: ``delta`` events (``{"delta": ...}``), then one ``answer``."""
        parts = answer_parts(
            svc.rag,
            body.question,
            docs=body.docs,
            mode=body.mode,
            history=body.history,
            timeout=body.timeout,
        )
        return await _sse(svc, "ask_stream", parts, _ask_events)


def _sse_event(event: str, data: str) -> str:
    return f"event: {event}\ndata: {data}\n\n"


async def _ask_events(part: Delta | Answer) -> str:
    if isinstance(part, Answer):
        return _sse_event("answer", part.model_dump_json())
    return _sse_event("delta", json.dumps({"delta": part.delta}, ensure_ascii=False))


async def _sse(
    svc: _Service,
    route: str,
    parts: AsyncIterator[Delta | Answer],
    render: Any,
    *,
    openai: bool = False,
) -> StreamingResponse:
    """Stream ``parts`` as events; errors before the first part are ordinary 4xx answers."""
    t0 = time.perf_counter()
    first = await anext(parts)  # a bad question or scope raises here, before any byte is sent

    async def events() -> AsyncIterator[str]:
        part: Delta | Answer | None = first
        try:
            while part is not None:
                if isinstance(part, Answer):
                    svc.metrics.asked(route, part, time.perf_counter() - t0)
                yield await render(part)
                part = await anext(parts, None)
        except Exception as exc:  # headers are sent: report in-band, never crash
            log.exception("stream failed")
            if openai:
                status = _status_of(exc) if isinstance(exc, HybridRAGError) else 500
                yield oai.error_event(_openai_error(exc, status))
            else:
                yield _sse_event("error", json.dumps(_error_body(exc)))

    return StreamingResponse(events(), media_type="text/event-stream")


# --- OpenAI-compatible chat -------------------------------------------------------------------


def _openai_routes(router: APIRouter, svc: _Service) -> None:
    @router.get("/v1/models")
    async def models() -> dict[str, Any]:
        """The one model this service offers (for chat UIs that list models)."""
        return oai.models_body()

    @router.post("/v1/chat/completions", response_model=None)
    async def chat(body: oai.ChatRequest) -> dict[str, Any] | StreamingResponse:
        """OpenAI-compatible chat over the documents; the reply ends with its citations."""
        question, history = oai.split_messages(body.messages)
        parts = answer_parts(svc.rag, question, docs=body.docs, mode=body.mode, history=history)
        if body.stream:
            return await _sse(svc, "chat", parts, _ChatChunks(body.model).render, openai=True)
        t0 = time.perf_counter()
        answer = await _final(parts)
        svc.metrics.asked("chat", answer, time.perf_counter() - t0)
        return oai.completion_body(answer, cited_text(answer), model=body.model)


async def _final(parts: AsyncIterator[Delta | Answer]) -> Answer:
    async for p in parts:
        if isinstance(p, Answer):
            return p
    raise RuntimeError("the answer stream ended without an Answer")


class _ChatChunks:
    """Renders deltas as ``chat.completion.chunk`` events; the answer adds its citations."""

    def __init__(self, model: str) -> None:
        self.model, self.cid, self.started = model, oai.new_id(), False

    async def render(self, part: Delta | Answer) -> str:
        out = ""
        if not self.started:
            out += oai.chunk_event(self.cid, self.model, {"role": "assistant", "content": ""})
        if isinstance(part, Delta):
            self.started = True
            return out + oai.chunk_event(self.cid, self.model, {"content": part.delta})
        tail = "" if self.started else NO_ANSWER
        block = citations_block(part)
        tail += f"\n\n{block}" if block else ""
        if tail:
            out += oai.chunk_event(self.cid, self.model, {"content": tail})
        return out + oai.chunk_event(self.cid, self.model, {}, "stop") + "data: [DONE]\n\n"


# --- operations -------------------------------------------------------------------------------


def _ops_routes(app: FastAPI, router: APIRouter, svc: _Service) -> None:
    @app.get("/health")
    async def health(request: Request) -> JSONResponse:
        """Liveness and store reachability; never needs an API key.

        Without a key (when keys are set) it says only ``{"status": "ok"}`` or
        ``{"status": "error"}`` (503): the document count and the error's text are for
        callers with a key.
        """
        told = not svc.keys or svc.key_of(request) is not None
        try:
            n = len(await svc.rag.adocuments())
        except HybridRAGError as exc:
            return JSONResponse({"status": "error", **(_error_body(exc) if told else {})}, 503)
        return JSONResponse({"status": "ok", **({"documents": n} if told else {})})

    @router.get("/metrics")
    async def metrics() -> Response:
        """Prometheus text: documents, ingests, asks, latencies, chain errors, LLM usage."""
        body = await anyio.to_thread.run_sync(svc.metrics.render)
        return Response(body, media_type=CONTENT_TYPE_LATEST)
