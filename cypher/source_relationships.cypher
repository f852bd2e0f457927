// Every relationship of a source database between nodes that carry no label gqa owns (streamed), with its type,
// properties and its ends' element ids and labels.
// params: $own, $own_types
MATCH (a)-[r]->(b)
WHERE NOT type(r) IN $own_types
  AND none(label IN labels(a) WHERE label IN $own) AND none(label IN labels(b) WHERE label IN $own)
RETURN elementId(r) AS id, elementId(a) AS src, type(r) AS type, properties(r) AS properties,
       elementId(b) AS dst, labels(b) AS dst_labels
