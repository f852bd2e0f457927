"""The feedback endpoints of `gqa serve` (`ingest.feedback` does the work):

    POST /api/feedback           {retrieval_id, verdict: right|wrong, answer?, shown?} -> the feedback question
    GET  /api/feedback?graph=G   the questions feedback made over G
    GET  /api/nodes?graph=G&q=…  nodes whose name starts as typed (the page's "the answer is …" completion)
    GET  /api/feedback/unsure?graph=G&limit=N   the answers over G nobody judged yet, least confident first, and
                                 what the last `gqa train` learned from feedback (`taught`): the page's "Help it learn"

Errors are the app's (`service.app`): 422 bad input naming its field, 404 unknown retrieval or graph, 409 a graph
being dropped. When the server requires a token, the feedback records who gave it as the token's fingerprint
(never the token).
"""

from __future__ import annotations

import hashlib
from typing import Literal

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from gretriever_neo4j.service.runtime import Runtime


class Feedback(BaseModel):
    retrieval_id: str = Field(..., min_length=1, max_length=64, description="the retrieval the answer came from")
    verdict: Literal["right", "wrong"]
    answer: str | None = Field(None, min_length=1, max_length=1000,
                               description="the answer: a node key, or a name one node of the graph carries")
    shown: list[str] | None = Field(None, max_length=100,
                                    description="the answers shown (node keys) the verdict is about [all of them]")


def token_fingerprint(token: str | None) -> str | None:
    """Who gave a feedback, as far as the server can tell: its token's fingerprint, None without a token."""
    return f"token:{hashlib.sha256(token.encode()).hexdigest()[:8]}" if token else None


def feedback_router(runtime: Runtime) -> APIRouter:
    from gretriever_neo4j.ingest.feedback import (
        MAX_AWAITING,
        answers_awaiting,
        complete_names,
        give_feedback,
        list_feedback,
        what_feedback_taught,
    )

    router = APIRouter()
    given_by = token_fingerprint(runtime.config.token)

    @router.post("/api/feedback")
    async def feedback(body: Feedback) -> dict:
        question = await run_in_threadpool(give_feedback, runtime.store, body.retrieval_id, body.verdict,
                                           answer=body.answer, shown=body.shown, given_by=given_by)
        return {"retrieval_id": body.retrieval_id, "verdict": body.verdict, "question": question.to_dict()}

    @router.get("/api/feedback")
    async def feedback_list(graph: str = Query(..., min_length=1, max_length=200)) -> dict:
        questions = await run_in_threadpool(list_feedback, runtime.store, graph)
        return {"graph": graph, "questions": [question.to_dict() for question in questions]}

    @router.get("/api/feedback/unsure")
    async def feedback_unsure(graph: str = Query(..., min_length=1, max_length=200),
                              limit: int = Query(20, ge=1, le=MAX_AWAITING)) -> dict:
        answers = await run_in_threadpool(answers_awaiting, runtime.store, graph, limit)
        taught = await run_in_threadpool(what_feedback_taught, graph)
        return {"graph": graph, "answers": [answer.to_dict() for answer in answers], "taught": taught}

    @router.get("/api/nodes")
    async def nodes(graph: str = Query(..., min_length=1, max_length=200),
                    q: str = Query("", max_length=200), limit: int = Query(10, ge=1, le=50)) -> dict:
        names = await run_in_threadpool(complete_names, runtime.store, graph, q, limit)
        return {"graph": graph, "nodes": [{"key": name.key, "text": name.text} for name in names]}

    return router
