// Every node of a source database that carries no label gqa owns (streamed), in element id order, at most
// $limit of them (null: all), with its labels and properties.
// params: $own, $limit
MATCH (n)
WHERE none(label IN labels(n) WHERE label IN $own)
WITH n ORDER BY elementId(n)
LIMIT coalesce($limit, 9223372036854775807)
RETURN elementId(n) AS id, labels(n) AS labels, properties(n) AS properties
