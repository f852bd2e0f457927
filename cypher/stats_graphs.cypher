// Graphs declared by ingest, including empty ones.
// params:
MATCH (g:Graph)
RETURN g.dataset AS dataset, g.kind AS kind, count(g) AS graphs
