// Every stored graph's record (empty graphs included), for per-graph statistics: its dataset, kind and where an
// ingest read it from (source, source_query; null for a graph written before gqa recorded them).
// params:
MATCH (g:Graph)
RETURN g.id AS graph, g.dataset AS dataset, g.kind AS kind, g.source AS source, g.source_query AS source_query
