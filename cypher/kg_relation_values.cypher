// How many edges, distinct heads and distinct tails each relation text of one graph has: a relation whose values
// are few and shared by many heads (genres, years) answers "what kind of …" questions. One pass over the graph's
// edges, asked once per process and graph, and only when a question asks for a category.
// params: $graph
MATCH (h:Node)-[r:REL {graph: $graph}]->(t:Node)
RETURN r.text AS text, count(*) AS edges, count(DISTINCT h) AS heads, count(DISTINCT t) AS tails
