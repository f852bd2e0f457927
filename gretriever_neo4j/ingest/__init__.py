"""Ingest: loaders' records (and a user's questions, linked to the graph's nodes) embedded once and written into
Neo4j in batched, idempotent, resumable transactions through the store (`graphs`, `questions`)."""
