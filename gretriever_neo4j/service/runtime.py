"""What the service holds for its whole life: one Neo4j driver, the embedder, retrievers and models (`qa.QA`),
and the queue of generations.

Retrieval and answering are synchronous (the Neo4j driver, torch); the service runs them in worker threads so the
event loop keeps serving. LLM generations take turns (`Answering.llm_lock`: one CPU-bound LLM at a time is as fast
as it gets), and the answers under way are bounded (`max_queue`), so an overloaded server says 429 at once instead
of letting requests time out.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from gretriever_neo4j.errors import BusyError, DatabaseError, InputError


@dataclass(frozen=True)
class ServiceConfig:
    host: str = "127.0.0.1"
    port: int = 8765
    token: str | None = None  # required when bound to a non-loopback address
    max_question_chars: int = 1000
    max_body_bytes: int = 16_384
    max_queue: int = 8  # generations running or waiting; more get 429
    embedder: str | None = None
    llm: str | None = None
    device: str = "auto"
    preload: tuple[str, ...] = ()  # graphs whose models are loaded at start
    neo4j_retry_s: float = 3.0  # how long a statement waits for an unreachable Neo4j before the request gets 503


def is_loopback(host: str) -> bool:
    return host in ("127.0.0.1", "localhost", "::1") or host.startswith("127.")


class Runtime:
    def __init__(self, config: ServiceConfig, store, qa):
        self.config = config
        self.store = store
        self.qa = qa
        self.started = time.time()
        self._tickets = 0
        self._tickets_lock = threading.Lock()
        self.served = 0
        self._stats: tuple[tuple, float, dict] | None = None  # (store fingerprint, when, stats)
        self._stats_lock = threading.Lock()

    # -- the generation queue --------------------------------------------------------------------------
    def ticket(self) -> Ticket:
        """A place among the `max_queue` answers under way, or BusyError (429)."""
        with self._tickets_lock:
            if self._tickets >= self.config.max_queue:
                raise BusyError(f"{self._tickets} answers are being generated or waiting (at most "
                                f"{self.config.max_queue}); try again shortly")
            self._tickets += 1
        return Ticket(self)

    def _return_ticket(self) -> None:
        with self._tickets_lock:
            self._tickets = max(self._tickets - 1, 0)

    @property
    def queued(self) -> int:
        return self._tickets

    # -- work -----------------------------------------------------------------------------------------------
    def check_question(self, question: str) -> str:
        text = (question or "").strip()
        if not text:
            raise InputError("the question is empty", field="question")
        if len(text) > self.config.max_question_chars:
            raise InputError(f"the question has {len(text)} characters (at most {self.config.max_question_chars})",
                             field="question")
        return text

    def retrieve(self, question: str, graph: str | None, kind: str, record: bool = True):
        """(the retrieval, what retrieved it in words)."""
        retriever = self.qa.retriever(graph, kind)
        return retriever.retrieve(self.check_question(question), graph=graph, record=record), retriever.description

    def answer(self, retrieval, *, mode: str = "auto", llm_when: str = "auto", streamer=None, cancel=None):
        answering = self.qa.answering.variant(mode=mode, llm_when=llm_when)
        return self.qa.answer(retrieval, answering=answering, streamer=streamer, cancel=cancel)

    def graphs(self, max_age_s: float = 600.0) -> dict[str, Any]:
        """The store's statistics: {"graphs": one row per graph (`overview.graph_rows`), "datasets": per dataset}.
        Computing them scans every node and relationship (seconds on a large
        store), so they are kept until the store's fingerprint changes (any ingest, sync or drop) or they are
        `max_age_s` old (question splits can change without a fingerprint change); one caller computes, others
        wait for it."""
        with self._stats_lock:
            fingerprint = self.store.fingerprint()
            if (self._stats is not None and self._stats[0] == fingerprint
                    and time.monotonic() - self._stats[1] < max_age_s):
                return self._stats[2]
            from gretriever_neo4j.qa.overview import graph_rows

            scanned = self.store.statistics()
            stats = {"datasets": scanned["datasets"], "graphs": graph_rows(scanned["graphs"])}
            self._stats = (fingerprint, time.monotonic(), stats)
            return stats

    def readiness(self) -> dict[str, Any]:
        """Neo4j reachable, the graphs held in memory, and `models`: per graph, the `created` stamp of what
        `gqa train` trained for it, which the next answer uses (a training run while the server is up included:
        the page says "models updated" when it changes)."""
        from gretriever_neo4j.artifacts.freshness import trained_stamps

        try:
            embedder = self.store.embedder_info()
            cache = getattr(self, "cache", None)
            return {"ready": True, "neo4j": True, "embedder": embedder and embedder[0],
                    "uptime_s": round(time.time() - self.started, 1), "queued": self.queued,
                    "graphs_in_memory": cache.cached_graphs() if cache is not None else {},
                    "models": trained_stamps()}
        except DatabaseError as error:
            return {"ready": False, "neo4j": False, "detail": str(error)}
        except Exception as error:  # the driver raises its own errors when the server went away
            return {"ready": False, "neo4j": False, "detail": f"{error.__class__.__name__}: {error}"}


class Ticket:
    """A place in the generation queue, held while an answer is computed, not while it is sent: a client that
    reads slowly, or asks again as soon as it has its answer, must not find its own place still taken.

    Released once, by whichever comes first: the worker thread that ran the answer (`run`), or the request when
    no worker ever started (`release`)."""

    def __init__(self, runtime: Runtime):
        self._runtime = runtime
        self._lock = threading.Lock()
        self.started = False
        self._returned = False

    def run(self, work, *args, **kwargs):
        self.started = True
        try:
            return work(*args, **kwargs)
        finally:
            self.release()

    def release(self) -> None:
        with self._lock:
            if self._returned:
                return
            self._returned = True
        self._runtime._return_ticket()


class TokenStream:
    """A `transformers`-style streamer (put/end) that hands decoded text deltas to an asyncio consumer."""

    def __init__(self, tokenizer=None):
        self.tokenizer = tokenizer
        self.ids: list[int] = []
        self.text = ""
        self.deltas: queue.Queue[str | None] = queue.Queue()
        self._first = True

    def bind(self, tokenizer) -> None:
        """The LLM is chosen (and loaded) while answering; it tells its tokenizer here."""
        self.tokenizer = tokenizer

    def put(self, value) -> None:
        if self._first:  # generate() first hands over the prompt (empty with input embeddings)
            self._first = False
            if getattr(value, "numel", lambda: 1)() == 0:
                return
        self.ids.extend(int(t) for t in value.reshape(-1).tolist())
        text = self.tokenizer.decode(self.ids, skip_special_tokens=True)
        if len(text) > len(self.text) and not text.endswith("\ufffd"):  # wait for a whole UTF-8 character
            self.deltas.put(text[len(self.text):])
            self.text = text

    def end(self) -> None:
        self.deltas.put(None)


@dataclass
class StreamState:
    cancel: threading.Event = field(default_factory=threading.Event)
    tokens: TokenStream | None = None
