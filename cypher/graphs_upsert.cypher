// Creates the graphs a batch writes to and bumps their version (the in-memory caches of `gqa serve` reload a
// graph whose version changed).
// params: $graphs
UNWIND $graphs AS g
MERGE (x:Graph {id: g.id})
ON CREATE SET x.dataset = g.dataset, x.kind = g.kind, x.created = datetime()
SET x.version = coalesce(x.version, 0) + 1
