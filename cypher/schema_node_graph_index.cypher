// Whole-graph fetches for per-sample graphs and per-graph filtering of vector hits.
// params:
CREATE INDEX node_graph IF NOT EXISTS FOR (n:Node) ON (n.graph)
