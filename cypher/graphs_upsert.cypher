// params: $graphs
UNWIND $graphs AS g
MERGE (x:Graph {id: g.id})
ON CREATE SET x.dataset = g.dataset, x.kind = g.kind, x.created = datetime()
