"""`gqa serve`: the HTTP API and the web page, over the same library calls as the CLI (`qa.QA`).

    GET  /health                 liveness (no token needed)
    GET  /ready                  Neo4j reachable, models loaded
    GET  /api/graphs             what each stored dataset holds
    POST /api/retrieve           {question, graph?, retriever?} -> the retrieved subgraph, recorded
    POST /api/ask                {question, graph?, retriever?, mode?, llm_when?} -> subgraph and answer
    POST /api/ask/stream         the same as Server-Sent Events: retrieval, token…, answer (or error), done
    GET  /api/retrievals/{id}    a recorded retrieval with its Neo4j Browser statement and link
    GET  /                       the web page; /docs the OpenAPI documentation

Errors are JSON `{"detail": …}` with 4xx codes: 422 bad input (question empty or too long), 404 unknown graph or
retrieval, 413 body too large, 429 generation queue full, 401 missing or wrong token, 503 Neo4j unavailable.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import AsyncIterable
from importlib import resources
from typing import Literal

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import FileResponse, JSONResponse
from fastapi.sse import EventSourceResponse, ServerSentEvent
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from ..errors import ConfigError, DatabaseError, GqaError, InputError
from .runtime import Busy, Runtime, StreamState, TokenStream

STATIC = resources.files("gretriever_neo4j.service") / "static"


class Ask(BaseModel):
    question: str = Field(..., min_length=1, description="the question")
    graph: str | None = Field(None, description="a stored graph (default: the graph of the best-matching node)")
    retriever: Literal["auto", "static", "learned"] = "auto"
    mode: Literal["auto", "free-text"] = "auto"
    llm_when: Literal["auto", "always", "never"] = "auto"


class Retrieve(BaseModel):
    question: str = Field(..., min_length=1)
    graph: str | None = None
    retriever: Literal["auto", "static", "learned"] = "auto"


def status_for(error: GqaError) -> int:
    if isinstance(error, Busy):
        return 429
    if isinstance(error, InputError):
        return 422
    if isinstance(error, DatabaseError):
        return 503
    if isinstance(error, ConfigError) and ("no stored graph" in str(error) or "no retrieval" in str(error)):
        return 404
    return 400


def create_app(runtime: Runtime) -> FastAPI:
    app = FastAPI(title="gqa", version="0.2.0", description=__doc__, max_body_size=runtime.config.max_body_bytes)
    app.state.runtime = runtime
    config = runtime.config

    @app.exception_handler(GqaError)
    async def gqa_error(request: Request, error: GqaError):
        return JSONResponse({"detail": str(error)}, status_code=status_for(error))

    @app.middleware("http")
    async def auth(request: Request, call_next):
        # Body size: FastAPI's own limit (max_body_size) answers 413, chunked bodies included.
        if config.token and request.url.path.startswith("/api/"):
            given = request.headers.get("authorization", "")
            if not secrets.compare_digest(given.encode(), f"Bearer {config.token}".encode()):
                return JSONResponse({"detail": "a valid 'Authorization: Bearer <token>' header is required"},
                                    status_code=401, headers={"WWW-Authenticate": "Bearer"})
        return await call_next(request)

    def ticket():
        """A place in the generation queue for the whole response (streamed ones included), or 429."""
        runtime.take_ticket()
        try:
            yield
        finally:
            runtime.return_ticket()

    @app.get("/health")
    async def health() -> dict:
        return {"status": "ok"}

    @app.get("/ready")
    async def ready():
        state = await run_in_threadpool(runtime.readiness)
        return JSONResponse(state, status_code=200 if state["ready"] else 503)

    @app.get("/api/graphs")
    async def graphs() -> dict:
        stats = await run_in_threadpool(runtime.graphs)
        return {"datasets": stats}

    # Large answers go out as plain JSON: FastAPI's response validation of a nested dict costs more than retrieval.
    @app.post("/api/retrieve")
    async def retrieve(body: Retrieve):
        retrieval, described = await run_in_threadpool(runtime.retrieve, body.question, body.graph, body.retriever)
        return JSONResponse({**retrieval.to_dict(), "retriever_model": described})

    @app.post("/api/ask")
    async def ask(body: Ask, _: None = Depends(ticket)):
        retrieval, described = await run_in_threadpool(runtime.retrieve, body.question, body.graph, body.retriever)
        answer = await run_in_threadpool(_answer, runtime, retrieval, body, None)
        return JSONResponse({**retrieval.to_dict(), "retriever_model": described, "answer": answer.to_dict()})

    @app.post("/api/ask/stream", response_class=EventSourceResponse)
    async def ask_stream(body: Ask, request: Request, _: None = Depends(ticket)
                         ) -> AsyncIterable[ServerSentEvent]:
        runtime.check_question(body.question)
        state = StreamState(tokens=TokenStream())
        try:
            try:
                retrieval, described = await run_in_threadpool(runtime.retrieve, body.question, body.graph,
                                                               body.retriever)
            except GqaError as error:
                yield ServerSentEvent(event="error", data={"status": status_for(error), "detail": str(error)})
                return
            yield ServerSentEvent(event="retrieval", data={**retrieval.to_dict(), "retriever_model": described})
            work = asyncio.ensure_future(run_in_threadpool(_answer, runtime, retrieval, body, state))
            while True:  # relay the LLM's tokens as they come
                delta = await asyncio.get_running_loop().run_in_executor(None, _next_delta, state, work)
                if delta is None:
                    break
                yield ServerSentEvent(event="token", data={"text": delta})
            try:
                answer = await work
            except GqaError as error:
                yield ServerSentEvent(event="error", data={"status": status_for(error), "detail": str(error)})
                return
            yield ServerSentEvent(event="answer", data=answer.to_dict())
            yield ServerSentEvent(event="done", data={"retrieval_id": retrieval.id})
        finally:
            state.cancel.set()  # a client that went away stops its generation; the lock frees for the others

    @app.get("/api/retrievals/{retrieval_id}")
    async def retrieval(retrieval_id: str) -> dict:
        from ..retriever import browser_link, browser_statement
        from ..settings import Neo4jSettings

        statement = browser_statement(retrieval_id)
        record = await run_in_threadpool(runtime.store.retrieval, retrieval_id)
        if record is None:
            raise HTTPException(404, f"no retrieval {retrieval_id!r} is recorded")
        browser = Neo4jSettings.from_env().browser_url
        return {**record, "browser_statement": statement, "browser_url": browser_link(browser, statement)}

    @app.get("/", include_in_schema=False)
    async def page():
        return FileResponse(str(STATIC / "index.html"))

    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")
    return app


def _answer(runtime: Runtime, retrieval, body: Ask, state: StreamState | None):
    answering = runtime.qa.answering.variant(mode=body.mode, llm_when=body.llm_when)
    try:
        return answering.answer(retrieval, streamer=state.tokens if state else None,
                                cancel=state.cancel if state else None)
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
