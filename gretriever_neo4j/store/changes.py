"""`GraphChanges`, the part of `GraphStore` that changes what stored graphs hold: an ingest's reads of what is
stored already and its writes (batches, questions, re-embedding), removal (`gqa drop`, `--sync`), and the bracket
every such change of a graph is made in (`begin_change` / `end_change`: readers see a graph change in one step,
`retrievers.cached`).

A mixin, apart from `graph_store` only so that each reads in one sitting: it holds no state and runs statements
only through the store it is mixed into (`read`, `write`, `_driver`, `database`), whose driver errors
`said_unavailable` turns into `DatabaseError` for these methods too. `WRITING` and `DROPPING` (a graph's state
while a change is under way) are defined here and imported from `graph_store` as ever.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from gretriever_neo4j.errors import DatabaseError, InvariantError
from gretriever_neo4j.progress import OnProgress, notify
from gretriever_neo4j.store.rows import WriteBatch, statement, vectors_param

WRITING, DROPPING = "writing", "dropping"  # a (:Graph)'s state while a change is under way (`begin_change`)


class GraphChanges:
    # -- writing: `gqa ingest` (what is stored already, then what is not) ----------------------------
    def known_graphs(self, ids: Sequence[str]) -> set[str]:
        """Those of `ids` that have a (:Graph) record (anything written to them, ever)."""
        if not ids:
            return set()
        return {row["id"] for row in self.read("graphs_known", ids=list(ids))}

    def embedded_nodes(self, rows: Sequence[dict[str, Any]]) -> set[int]:
        """Indices of rows (graph, key, text, i) already stored with that text and a vector."""
        return self._stored_rows("nodes_embedded", rows)

    def embedded_edges(self, rows: Sequence[dict[str, Any]]) -> set[int]:
        """Indices of edge rows (graph, src, text, dst, i) already stored, with their relation's vector."""
        return self._stored_rows("edges_embedded", rows)

    def embedded_relations(self, rows: Sequence[dict[str, Any]]) -> set[int]:
        """Indices of relation rows (graph, text, i) already stored with a vector."""
        return self._stored_rows("relations_embedded", rows)

    def _stored_rows(self, name: str, rows: Sequence[dict[str, Any]]) -> set[int]:
        """The `i` of each of `rows` that statement `name` finds stored as it is (no query for no rows)."""
        if not rows:
            return set()
        return {r["i"] for r in self.read(name, rows=list(rows))}

    def write_batch(self, batch: WriteBatch) -> None:
        """One transaction: a failure leaves nothing of the batch behind."""

        def work(tx) -> None:
            if batch.graphs:
                self._tx(tx, "graphs_upsert", graphs=batch.graphs)
            if batch.nodes:
                written = self._tx(tx, "nodes_upsert", rows=batch.nodes, vectors=batch.node_vectors)
                _expect(written, len(batch.nodes), "nodes")
            if batch.relations:
                written = self._tx(tx, "relations_upsert", rows=batch.relations, vectors=batch.relation_vectors)
                _expect(written, len(batch.relations), "relation texts")
            if batch.edges:
                written = self._tx(tx, "edges_upsert", rows=batch.edges)
                _expect(written, len(batch.edges), "edges (an endpoint is missing)")
            if batch.questions:
                self._tx(tx, "questions_upsert", rows=batch.questions)

        with self._driver.session(database=self.database) as session:
            session.execute_write(work)

    @staticmethod
    def _tx(tx, name: str, **params: Any) -> int:
        records = list(tx.run(*statement(name, params)))
        return int(records[0]["written"]) if records and "written" in records[0].keys() else 0

    def reembed(self, embed, batch: int = 2000) -> int:
        """Embeds every node and relation text that has no vector (after an embedder change)."""
        done = 0
        for page_query, set_query in (("nodes_without_embedding", "nodes_set_embedding"),
                                      ("relations_without_embedding", "relations_set_embedding")):
            while rows := self.read(page_query, batch=batch):
                texts = list(dict.fromkeys(r["text"] or "" for r in rows))
                vectors = embed(texts)
                slot = {t: i for i, t in enumerate(texts)}
                self.write(set_query, rows=[{"id": r["id"], "vector": slot[r["text"] or ""]} for r in rows],
                           vectors=vectors_param(vectors))
                done += len(rows)
        return done

    def write_questions(self, rows: Sequence[dict[str, Any]], batch: int = 5000) -> int:
        """Upserts question rows (dataset, qid, text, answers, split, graph, topic_entities), one transaction per
        `batch` rows; returns how many were written."""
        written = 0
        for start in range(0, len(rows), batch):
            chunk = list(rows[start:start + batch])
            self.write_batch(WriteBatch(questions=chunk))
            written += len(chunk)
        return written

    # -- a change of a graph, and removal: `gqa drop`, `--sync` -----------------------------------------
    def begin_change(self, graphs: Sequence[Mapping[str, Any]], state: str = WRITING) -> None:
        """Opens a change of these graphs (rows: id, and dataset and kind for a graph not stored yet): until
        `end_change`, readers answer from the version the record names (a server's cached copy), and no cache
        loads the graph. A change that fails stays open: running it again (or `gqa drop`) closes it."""
        if state not in (WRITING, DROPPING):
            raise InvariantError(f"a change is {WRITING!r} or {DROPPING!r}, not {state!r}", field="state")
        rows = [{"id": g["id"], "dataset": g.get("dataset"), "kind": g.get("kind")} for g in graphs]
        if rows:
            self.write("graphs_change_begin", graphs=rows, state=state)

    def end_change(self, graphs: Sequence[str], *, changed: bool = True) -> None:
        """Closes a change: readers move to the new contents in one step. `changed`: something was written or
        deleted, so the graphs get a new version (a change that changed nothing leaves caches as they are)."""
        if graphs:
            self.write("graphs_change_end", graphs=sorted(set(graphs)), bump=bool(changed))

    @contextmanager
    def changing(self, graphs: Sequence[str], *, changed: bool = True) -> Iterator[None]:
        """`begin_change` / `end_change` of stored graphs around a block; left open if the block fails."""
        known = sorted(self.known_graphs(list(graphs)))
        self.begin_change([{"id": graph} for graph in known])
        yield
        self.end_change(known, changed=changed)

    def drop_graph(self, graph: str, *, batch: int = 10_000,
                   on_progress: OnProgress | None = None) -> dict[str, int]:
        """Deletes everything of `graph`, each kind in transactions of at most `batch` items (a large graph never
        has to fit in one transaction), edges before nodes, the graph record last (so an interrupted drop can be
        run again). The graph is marked `dropping` before anything is deleted: readers holding a copy answer from
        it, the others are told to retry, until the record is gone and the graph unknown. Retrievals recorded
        while it was dropping are deleted after the record. Returns the counts deleted."""
        if self.known_graphs([graph]):
            self.begin_change([{"id": graph}], DROPPING)
        deleted: dict[str, int] = {}
        for kind, name in (("edges", "drop_rels_batch"), ("relations", "drop_relations_batch"),
                           ("nodes", "drop_nodes_batch"),
                           ("questions", "drop_questions_batch"), ("retrievals", "drop_retrievals_batch")):
            deleted[kind] = 0
            while count := int(self.write(name, graph=graph, batch=int(batch))[0]["deleted"]):
                deleted[kind] += count
                notify(on_progress, kind, deleted[kind])
        deleted["graph_records"] = int(self.write("drop_graph_record", graph=graph)[0]["deleted"])
        while count := int(self.write("drop_retrievals_batch", graph=graph, batch=int(batch))[0]["deleted"]):
            deleted["retrievals"] += count
        return deleted

    def delete_edges(self, graph: str, rows: Sequence[dict[str, Any]], batch: int = 5000) -> int:
        """Deletes edges given as (src, text, dst) rows, one transaction per `batch`, then the relation texts no
        edge carries any more."""
        deleted = self._delete_in_batches("sync_delete_edges", "rows", rows, batch, graph=graph)
        if deleted:
            self.write("sync_delete_relations", graph=graph)
        return deleted

    def delete_nodes(self, graph: str, keys: Sequence[str], batch: int = 5000) -> int:
        return self._delete_in_batches("sync_delete_nodes", "keys", keys, batch, graph=graph)

    def question_ids(self, dataset: str, graph: str) -> set[str]:
        return {row["qid"] for row in self.read("question_ids", dataset=dataset, graph=graph)}

    def delete_questions(self, dataset: str, qids: Sequence[str], batch: int = 5000) -> int:
        return self._delete_in_batches("questions_delete", "qids", qids, batch, dataset=dataset)

    def delete_questions_except(self, dataset: str, graph: str, keep: set[str]) -> int:
        """--sync: deletes the questions of `dataset` over `graph` whose ids are not in `keep`."""
        return self.delete_questions(dataset, sorted(self.question_ids(dataset, graph) - keep))

    def _delete_in_batches(self, name: str, param: str, items: Sequence[Any], batch: int, **params: Any) -> int:
        """Runs the deleting query `name` over `items` passed as `param`, one transaction per `batch`; returns
        how many it deleted."""
        items = list(items)
        return sum(int(self.write(name, **params, **{param: items[start:start + batch]})[0]["deleted"])
                   for start in range(0, len(items), batch))


def _expect(written: int, wanted: int, what: str) -> None:
    if written != wanted:
        raise DatabaseError(f"wrote {written} of {wanted} {what}; the batch was rolled back")
