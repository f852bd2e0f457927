"""Questions embedded through ONNX Runtime equal PyTorch's embeddings (within 1e-4 cosine)."""

import numpy as np
import pytest

QUESTIONS = ["what else did ben franklin invent?", "which person directed the films starred by Ewan McGregor",
             "what timezone is nashville tn", "ß ünïcödé 東京 🙂", "a " * 400]


def test_onnx_and_pytorch_embeddings_agree(tmp_path, monkeypatch):
    pytest.importorskip("onnxruntime")
    monkeypatch.setenv("GQA_HOME", str(tmp_path))
    from gretriever_neo4j.embedding.embedder import Embedder

    embedder = Embedder()
    reference = embedder._model.encode(QUESTIONS, convert_to_numpy=True, normalize_embeddings=True,
                                       show_progress_bar=False)
    assert embedder._query_encoder() is not None and list((tmp_path / "onnx").glob("*.onnx"))
    quick = np.stack([embedder.embed_query(q).vector for q in QUESTIONS])  # one at a time, as questions come
    cosines = (quick * reference).sum(axis=1)
    assert np.all(cosines > 1 - 1e-4), cosines
    assert embedder.embed_query(QUESTIONS[-1]).truncated  # past max_seq_length: cut the same way as PyTorch


def test_a_batch_through_onnx_equals_pytorch_in_the_callers_order(tmp_path, monkeypatch):
    """Ingest embeds batches through ONNX Runtime in length order; rows come back in the order asked."""
    pytest.importorskip("onnxruntime")
    monkeypatch.setenv("GQA_HOME", str(tmp_path))
    from gretriever_neo4j.embedding.embedder import Embedder

    texts = [f"{word} {i}" * (1 + i % 7) for i, word in enumerate(["Heat", "directed_by", "Ewan McGregor"] * 50)]
    texts += QUESTIONS
    embedder = Embedder()
    embedder.ONNX_BATCH = 16  # several batches, each of mixed lengths before sorting
    reference = embedder._model.encode(texts, convert_to_numpy=True, normalize_embeddings=True,
                                       show_progress_bar=False)
    batch = embedder.embed(texts)
    assert embedder._query_encoder() is not None and batch.shape == reference.shape
    cosines = (batch * reference).sum(axis=1)
    assert np.all(cosines > 1 - 1e-4), cosines.min()


def test_idle_threads_do_not_spin(tmp_path, monkeypatch):
    """A question runs three sessions in turn (the embedder, the walk encoder, the hop reader): threads one session
    left spinning take the cores the next one needs (grounded p50 on a read graph 182 -> 114 ms when they sleep)."""
    pytest.importorskip("onnxruntime")
    monkeypatch.setenv("GQA_HOME", str(tmp_path))
    from gretriever_neo4j.embedding.embedder import Embedder

    session = Embedder()._query_encoder().session
    assert session.get_session_options().get_session_config_entry("session.intra_op.allow_spinning") == "0"


def test_it_can_be_turned_off(tmp_path, monkeypatch):
    monkeypatch.setenv("GQA_HOME", str(tmp_path))
    monkeypatch.setenv("GQA_ONNX", "0")
    from gretriever_neo4j.embedding.embedder import Embedder

    embedder = Embedder()
    assert embedder._query_encoder() is None
    assert embedder.embed_query("who?").vector.shape == (384,)
