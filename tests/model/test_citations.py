import pytest

from gretriever_neo4j.errors import InputError
from gretriever_neo4j.model.citations import (
    CITATION_INSTRUCTION,
    answer_text,
    check_citations,
    parse_citations,
    parse_textualized_graph,
    summarize_citations,
)

DESC = ("node_id,node_attr\n"
        "0,paris\n"
        "1,france\n"
        "2,\"lyon, rhône\"\n"
        "3,eiffel tower\n"
        "\n"
        "src,edge_attr,dst\n"
        "1,capital,0\n"
        "3,located in,0\n")


def test_parse_textualized_graph():
    graph = parse_textualized_graph(DESC)
    assert graph.nodes == {"0": "paris", "1": "france", "2": "lyon, rhône", "3": "eiffel tower"}
    assert graph.edges == (("1", "capital", "0"), ("3", "located in", "0"))
    assert graph.has_edge_between("0", "1") and graph.has_edge_between("1", "0")
    assert not graph.has_edge_between("1", "3")


def test_empty_and_edgeless_descriptions():
    assert parse_textualized_graph("").nodes == {}
    graph = parse_textualized_graph("node_id,node_attr\n\nsrc,edge_attr,dst\n")
    assert graph.nodes == {} and graph.edges == ()


def test_malformed_rows_name_the_line():
    with pytest.raises(InputError) as caught:
        parse_textualized_graph("node_id,node_attr\n0,a\n\nsrc,edge_attr,dst\n0,1\n")
    assert caught.value.field == "desc" and caught.value.line == 5


def test_parse_citations_format():
    cited = parse_citations("Paris.\nEvidence: nodes 0, 1 (France), 07; edges 1-0, 3->0, 2 → 1")
    assert cited.nodes == ("0", "1", "7")
    assert cited.edges == (("1", "0"), ("3", "0"), ("2", "1"))
    assert parse_citations("no evidence here").empty
    only_edges = parse_citations("x\nevidence: edges 1-0.")
    assert only_edges.nodes == () and only_edges.edges == (("1", "0"),)
    last_wins = parse_citations("Evidence: nodes 5\nthen\nEvidence: nodes 6")
    assert last_wins.nodes == ("6",)
    assert answer_text("Paris\nEvidence: nodes 0") == "Paris\n"
    assert "Evidence: nodes 3, 7; edges 3-7" in CITATION_INSTRUCTION


def test_explicit_citations_all_valid():
    check = check_citations(DESC, "Paris is the capital.\nEvidence: nodes 0, 1; edges 1-0")
    assert check.mode == "explicit"
    assert (check.nodes_valid_fraction, check.edges_valid_fraction, check.all_valid) == (1.0, 1.0, True)


def test_explicit_citations_with_hallucinated_ids():
    check = check_citations(DESC, "Paris.\nEvidence: nodes 0, 9, 12; edges 1-0, 1-3, 0-9")
    assert check.invalid_nodes == ("9", "12")
    assert check.nodes_valid_fraction == pytest.approx(1 / 3)
    assert check.invalid_edges == (("1", "3"), ("0", "9"))
    assert check.edges_valid_fraction == pytest.approx(1 / 3)
    assert not check.all_valid


def test_fallback_counts_node_texts_and_unsupported_mentions():
    check = check_citations(DESC, "Paris|Marseille|the Eiffel Tower")
    assert check.mode == "fallback"
    assert check.cited_nodes == ("0", "3")
    assert check.invalid_nodes == ("marseille",)
    assert check.node_citations == 3 and check.nodes_valid_fraction == pytest.approx(2 / 3)
    assert check.cited_edges == () and check.edges_valid_fraction == 1.0
    assert not check.all_valid


def test_fallback_accepts_node_and_edge_texts_and_stance_words():
    check = check_citations(DESC, "capital; support\nthe Eiffel Tower and Paris")
    assert check.mode == "fallback"
    assert check.invalid_nodes == ()  # 'capital' is an edge text, 'support' a stance, the rest node names
    assert check.cited_nodes == ("0", "3") and check.nodes_valid_fraction == 1.0 and check.all_valid


def test_fallback_fails_prose_that_names_no_node():
    # The Quickstart once answered this, and the old rule skipped prose as "not a mention".
    desc = "node_id,node_attr\n0,Benjamin Franklin\n1,Lightning rod\n\nsrc,edge_attr,dst\n0,law.inventor.inventions,1\n"
    check = check_citations(desc, "Benjamin Franklin was the inventor of the law of the light")
    assert check.mode == "fallback" and not check.all_valid
    assert check.invalid_nodes == ("benjamin franklin was inventor of law of light",)
    assert check_citations(desc, "Lightning rod").all_valid


def test_fallback_requires_whole_words():
    check = check_citations(DESC, "parisian")
    assert check.cited_nodes == () and check.invalid_nodes == ("parisian",)


def test_evidence_line_without_ids_falls_back():
    check = check_citations(DESC, "france\nEvidence: none")
    assert check.mode == "fallback" and check.cited_nodes == ("1",) and check.all_valid


def test_summary_is_a_micro_average():
    checks = [check_citations(DESC, "x\nEvidence: nodes 0, 9; edges 1-0"),
              check_citations(DESC, "Paris|Marseille"),
              check_citations(DESC, "x\nEvidence: nodes 1")]
    summary = summarize_citations(checks)
    assert summary.outputs == 3 and summary.fallback_outputs == 1
    assert summary.nodes_valid_fraction == pytest.approx(3 / 5)
    assert summary.edges_valid_fraction == 1.0
    assert summary.all_valid_fraction == pytest.approx(1 / 3)
