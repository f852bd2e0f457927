// One node per (graph, key): what makes node upserts idempotent.
// params:
CREATE CONSTRAINT node_graph_key IF NOT EXISTS FOR (n:Node) REQUIRE (n.graph, n.key) IS UNIQUE
