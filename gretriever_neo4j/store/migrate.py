"""`gqa db migrate`: a store written before relation vectors were shared (layout 1: every edge carried its
relation text's 384-d vector, 1.5 KB per edge) becomes layout 2 (one `(:Relation {graph, text})` per text holds
the vector; edges keep only their text).

Re-runnable at any point: each step commits in batches and skips what is done (a relation that has its vector,
an edge that has none), and the layout is marked only once the counts check out, so a run that is cut short is
simply run again. Counts checked: edges before = after; every (graph, text) of the edges that had a vector has
a (:Relation) with one; no edge keeps a vector.

A store whose node vector index was built with Neo4j's default HNSW settings (before `NODE_INDEX_BUILD`) has it
built again: its reads were as good, its index inserts 2.5x slower. The nodes' vectors are not touched.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gretriever_neo4j.errors import DatabaseError
from gretriever_neo4j.progress import OnProgress, notify
from gretriever_neo4j.store.graph_store import LAYOUT, GraphStore, needs_migration


@dataclass
class MigrationReport:
    layout_before: int | None
    layout_after: int | None
    before: dict[str, int] = field(default_factory=dict)  # cypher/migrate_counts.cypher's row
    after: dict[str, int] = field(default_factory=dict)
    node_index_rebuilt: bool = False

    @property
    def migrated(self) -> bool:
        return self.layout_before != self.layout_after


def migrate(store: GraphStore, *, batch: int = 10_000, on_progress: OnProgress | None = None) -> MigrationReport:
    """Brings the store to `LAYOUT` and its node vector index to this version's build settings; a store already
    there (or empty) is left as it is."""
    layout = store.layout()
    info = store.embedder_info()
    rebuild = info is not None and store.node_index_outdated()
    if not needs_migration(layout) and not rebuild:
        return MigrationReport(layout, layout)
    # Every graph changes at once (its edges, or the index its seeds come from): readers keep what they hold.
    with store.changing([row["graph"] for row in store.read("stats_graph_records")]):
        report = (_share_relation_vectors(store, layout, batch, on_progress) if needs_migration(layout)
                  else MigrationReport(layout, layout))
        if rebuild:
            notify(on_progress, "node vector index rebuilt", 0, None)
            store.rebuild_node_index(info[1])
            report.node_index_rebuilt = True
    return report


def _share_relation_vectors(store: GraphStore, layout: int | None, batch: int,
                            on_progress: OnProgress | None) -> MigrationReport:
    before = store.read("migrate_counts")[0]
    info = store.embedder_info()
    store.ensure_structure()  # the (:Relation) key; its vector index comes last, once the vectors are in
    notify(on_progress, "relation vectors", 0, before["texts"])
    store.run_in_transactions("migrate_relations", batch=int(batch))
    notify(on_progress, "relation vectors", before["texts"], before["texts"])
    # Without its index first, removing 1.5 KB from every edge would also update an HNSW graph per edge.
    store.write("schema_drop_rel_vector_index")
    notify(on_progress, "edge vectors removed", 0, before["edge_vectors"])
    store.run_in_transactions("migrate_clear_edge_vectors", batch=int(batch))
    after = store.read("migrate_counts")[0]
    notify(on_progress, "edge vectors removed", before["edge_vectors"], before["edge_vectors"])
    problems = []
    if after["edges"] != before["edges"]:
        problems.append(f"{before['edges']:,} edges before, {after['edges']:,} after")
    if after["edge_vectors"]:
        problems.append(f"{after['edge_vectors']:,} edges still carry a vector")
    if after["texts"] != before["texts"] or after["relation_vectors"] < before["texts_carried"]:
        problems.append(f"{after['relation_vectors']:,} of {before['texts_carried']:,} relation texts have a vector")
    if problems:
        raise DatabaseError("the migration did not check out (" + "; ".join(problems) + "): nothing is marked "
                            "migrated, run `gqa db migrate` again")
    if info is not None:
        store.ensure_vector_indexes(info[1])
    store.write("schema_layout_set", layout=LAYOUT)
    return MigrationReport(layout, LAYOUT, before=dict(before), after=dict(after))

