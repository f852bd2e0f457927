// Which of these graph ids have a (:Graph) record: a graph without one has nothing stored yet (the record is
// written by the first batch that writes to the graph).
// params: $ids
UNWIND $ids AS id
MATCH (g:Graph {id: id})
RETURN id
