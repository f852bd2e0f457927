"""`gqa serve`: the HTTP API and the web page, over the same library calls as the CLI (`qa.QA`).

    GET  /health                 liveness (no token needed)
    GET  /ready                  Neo4j reachable, graphs in memory, per graph the trained models' `created` stamp
    GET  /api/graphs             each stored graph (and dataset): its source, counts, questions, trained models
    POST /api/retrieve           {question, graph?, retriever?} -> the retrieved subgraph, recorded
    POST /api/ask                {question, graph?, retriever?, mode?, llm_when?} -> subgraph and answer
    POST /api/ask/stream         the same as Server-Sent Events: retrieval, token…, answer (or error), done
    GET  /api/retrievals/{id}    a recorded retrieval with its Neo4j Browser statement and link
    POST /api/feedback           {retrieval_id, verdict, answer?, shown?}: right/wrong, a train question (`feedback`)
    GET  /api/feedback?graph=G   the questions feedback made; GET /api/nodes?graph=G&q=…: names as typed
    GET  /api/feedback/unsure?graph=G&limit=N   answers not judged yet, least confident first; what feedback taught
    GET  /                       the web page; /docs the OpenAPI documentation

Errors are JSON `{"detail": …}`, their status chosen by the error's type (`errors.GqaError.http_status`): 422 bad
input, 404 unknown graph or retrieval, 409 feedback on a graph being dropped, 413 body too large, 429 generation
queue full, 503 Neo4j unreachable or a graph changing under the request (with a log id), all three with
Retry-After, 401 missing or wrong token; a failure of ours is 500 with a short log id whose traceback is in the
server's log, never in the response.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from collections.abc import AsyncIterable
from importlib import resources
from typing import Literal

from fastapi import Depends, FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.sse import EventSourceResponse, ServerSentEvent
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from gretriever_neo4j.errors import (
    DatabaseError,
    GqaError,
    GraphChangingError,
    NotFoundError,
    driver_unavailable,
    internal_failure,
    new_log_id,
)
from gretriever_neo4j.service.runtime import Runtime, StreamState, Ticket, TokenStream

log = logging.getLogger(__name__)

STATIC = resources.files("gretriever_neo4j.service") / "static"


class Ask(BaseModel):
    question: str = Field(..., min_length=1, description="the question")
    graph: str | None = Field(None, description="a stored graph (default: the graph of the best-matching node)")
    retriever: Literal["auto", "static", "learned", "paths"] = "auto"
    mode: Literal["auto", "free-text"] = "auto"
    llm_when: Literal["auto", "always", "never"] = "auto"


class Retrieve(BaseModel):
    question: str = Field(..., min_length=1)
    graph: str | None = None
    retriever: Literal["auto", "static", "learned", "paths"] = "auto"


def failure(error: BaseException, where: str) -> tuple[int, str, dict[str, str]]:
    """(status, detail, headers) for any exception a request met: the error's own status for ours, 503 for a
    Neo4j that went away, and 500 with a log id (traceback logged) for anything else. A task group's group of
    one error is that error."""
    while isinstance(getattr(error, "exceptions", None), tuple) and len(error.exceptions) == 1:  # 3.10: no builtin
        error = error.exceptions[0]
    if isinstance(error, GqaError) and error.http_status < 500:
        headers = {"Retry-After": str(error.retry_after_s)} if hasattr(error, "retry_after_s") else {}
        return error.http_status, str(error), headers
    if isinstance(error, GraphChangingError):  # a graph changing under the request: the same request soon works
        log_id = new_log_id()
        log.warning("%s: %s (log id %s)", where, error, log_id)
        return 503, f"{error} (log id {log_id})", {"Retry-After": str(error.retry_after_s)}
    if isinstance(error, DatabaseError) or driver_unavailable(error):
        log.warning("%s: Neo4j unavailable: %s", where, error)
        detail = str(error) if isinstance(error, DatabaseError) else "Neo4j is unreachable; try again shortly"
        return 503, detail, {"Retry-After": str(DatabaseError.retry_after_s)}
    log_id = internal_failure(error, where)
    return 500, f"internal error (log id {log_id}); the server's log has the details", {}


def error_response(error: BaseException, where: str) -> JSONResponse:
    status, detail, headers = failure(error, where)
    return JSONResponse({"detail": detail}, status_code=status, headers=headers)


def error_event(error: BaseException, where: str) -> ServerSentEvent:
    status, detail, _ = failure(error, where)
    return ServerSentEvent(event="error", data={"status": status, "detail": detail})


def create_app(runtime: Runtime) -> FastAPI:
    app = FastAPI(title="gqa", version="0.2.0", description=__doc__, max_body_size=runtime.config.max_body_bytes)
    app.state.runtime = runtime
    config = runtime.config

    @app.exception_handler(GqaError)
    async def gqa_error(request: Request, error: GqaError):
        return error_response(error, f"{request.method} {request.url.path}")

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, error: RequestValidationError):
        # Not FastAPI's default: that echoes the input back, and fails (500) on input it cannot encode (a lone
        # surrogate escaped in the JSON body); ASCII-escaped JSON carries any text.
        detail = [{key: entry[key] for key in ("type", "loc", "msg") if key in entry} for entry in error.errors()]
        return Response(json.dumps({"detail": detail}, ensure_ascii=True, default=str), status_code=422,
                        media_type="application/json")

    @app.middleware("http")
    async def guard(request: Request, call_next):
        # Body size: FastAPI's own limit (max_body_size) answers 413, chunked bodies included.
        if config.token and request.url.path.startswith("/api/"):
            given = request.headers.get("authorization", "")
            if not secrets.compare_digest(given.encode(), f"Bearer {config.token}".encode()):
                return JSONResponse({"detail": "a valid 'Authorization: Bearer <token>' header is required"},
                                    status_code=401, headers={"WWW-Authenticate": "Bearer"})
        try:
            return await call_next(request)
        except RecursionError:  # JSON nested deeper than the parser recurses: the body's fault, not ours
            return JSONResponse({"detail": "the JSON body is nested too deeply"}, status_code=422)
        except Exception as error:  # anything that escaped the endpoints: 5xx with a log id, never a traceback
            return error_response(error, f"{request.method} {request.url.path}")

    @app.get("/health")
    async def health() -> dict:
        return {"status": "ok"}

    @app.get("/ready")
    async def ready():
        state = await run_in_threadpool(runtime.readiness)
        return JSONResponse(state, status_code=200 if state["ready"] else 503)

    @app.get("/api/graphs")
    async def graphs() -> dict:
        return await run_in_threadpool(runtime.graphs)

    # Large answers go out as plain JSON: FastAPI's response validation of a nested dict costs more than retrieval.
    @app.post("/api/retrieve")
    async def retrieve(body: Retrieve):
        retrieval, described = await run_in_threadpool(runtime.retrieve, body.question, body.graph, body.retriever)
        return JSONResponse({**retrieval.to_dict(), "retriever_model": described})

    @app.post("/api/ask")
    async def ask(body: Ask):
        ticket = runtime.ticket()
        try:
            retrieval, described, answer = await run_in_threadpool(ticket.run, _retrieve_and_answer, runtime, body)
        finally:
            if not ticket.started:  # cancelled before a worker took it
                ticket.release()
        return JSONResponse({**retrieval.to_dict(), "retriever_model": described, "answer": answer.to_dict()})

    async def admitted(body: Ask):
        """The question checked and a place in the queue taken before the stream starts: once it has, an error
        can only be an event of a 200 response (raised inside the stream, FastAPI's producer task would turn a
        422 or 429 into a 500)."""
        runtime.check_question(body.question)
        ticket = runtime.ticket()
        try:
            yield ticket
        finally:
            if not ticket.started:  # the client went away before the stream began
                ticket.release()

    @app.post("/api/ask/stream", response_class=EventSourceResponse)
    async def ask_stream(body: Ask, request: Request,
                         ticket: Ticket = Depends(admitted)) -> AsyncIterable[ServerSentEvent]:
        state = StreamState(tokens=TokenStream())
        where = f"POST {request.url.path}"
        try:
            try:
                retrieval, described = await run_in_threadpool(runtime.retrieve, body.question, body.graph,
                                                               body.retriever)
            except Exception as error:
                yield error_event(error, where)
                return
            yield ServerSentEvent(event="retrieval", data={**retrieval.to_dict(), "retriever_model": described})
            work = asyncio.ensure_future(run_in_threadpool(ticket.run, _answer, runtime, retrieval, body, state))
            while True:  # relay the LLM's tokens as they come
                delta = await asyncio.get_running_loop().run_in_executor(None, _next_delta, state, work)
                if delta is None:
                    break
                yield ServerSentEvent(event="token", data={"text": delta})
            try:
                answer = await work
            except Exception as error:
                yield error_event(error, where)
                return
            yield ServerSentEvent(event="answer", data=answer.to_dict())
            yield ServerSentEvent(event="done", data={"retrieval_id": retrieval.id})
        finally:
            state.cancel.set()  # a client that went away stops its generation; the lock frees for the others
            if not ticket.started:
                ticket.release()

    @app.get("/api/retrievals/{retrieval_id}")
    async def retrieval(retrieval_id: str) -> dict:
        from gretriever_neo4j.retrievers.browser import browser_link, browser_statement

        statement = browser_statement(retrieval_id)
        record = await run_in_threadpool(runtime.store.retrieval, retrieval_id)
        if record is None:
            raise NotFoundError(f"no retrieval {retrieval_id!r} is recorded")
        browser = runtime.qa.browser_url or ""  # the server's Neo4j (`gqa serve --uri`), as for every retrieval
        return {**record, "browser_statement": statement,
                "browser_url": browser_link(browser, statement) if browser else None}

    from gretriever_neo4j.service.feedback import feedback_router

    app.include_router(feedback_router(runtime))

    @app.get("/", include_in_schema=False)
    async def page():
        return FileResponse(str(STATIC / "index.html"))

    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")
    return app


def _retrieve_and_answer(runtime: Runtime, body: Ask):
    retrieval, described = runtime.retrieve(body.question, body.graph, body.retriever)
    return retrieval, described, _answer(runtime, retrieval, body, None)


def _answer(runtime: Runtime, retrieval, body: Ask, state: StreamState | None):
    try:
        return runtime.answer(retrieval, mode=body.mode, llm_when=body.llm_when,
                              streamer=state.tokens if state else None, cancel=state.cancel if state else None)
    finally:
        if state is not None and state.tokens is not None:
            state.tokens.end()


def _next_delta(state: StreamState, work) -> str | None:
    """The next token text, or None when generation has ended (or never started: the reader answered)."""
    while True:
        try:
            return state.tokens.deltas.get(timeout=0.05)
        except Exception:
            if work.done() and state.tokens.deltas.empty():
                return None


def dumps(data) -> str:
    return json.dumps(data, default=str)
