"""Text embeddings: `Embedder` (sentence-transformers, thread-safe, cached, texts embedded once at ingest) and
the ONNX Runtime encoder for questions (`onnx_encoder`: the same model in milliseconds, exported locally once)."""
