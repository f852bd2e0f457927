// Bumps a graph's version without writing to it otherwise (deletions by `gqa drop` and `--sync`), so that the
// in-memory caches of `gqa serve` drop what they hold of it.
// params: $graph
MATCH (g:Graph {id: $graph})
SET g.version = coalesce(g.version, 0) + 1
RETURN g.version AS version
