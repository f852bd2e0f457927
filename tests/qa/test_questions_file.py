"""`gqa ask --questions` files: formats, blank lines, and bad lines named by file and line."""

import pytest

from gretriever_neo4j.errors import InputError
from gretriever_neo4j.qa.questions_file import read_questions_file
from gretriever_neo4j.records import MAX_QUESTION_CHARS


def test_questions_file_formats_and_bad_lines(tmp_path):
    good = tmp_path / "q.tsv"
    good.write_text("\ufeffwho directed Heat\tMichael Mann\n\n  \nwhat is X?\nyears\t1990| 1991 |\n", encoding="utf-8")
    lines = read_questions_file(good)
    assert [(l.line, l.question, l.answers) for l in lines] == [
        (1, "who directed Heat", ["Michael Mann"]), (4, "what is X?", None), (5, "years", ["1990", "1991"])]
    for content, line, message in (("a\tb\tc\n", 1, "TABs"), ("ok\n\tanswer\n", 2, "empty"),
                                   ("q\t | \n", 1, "no answer"),
                                   (b"ok\n\xff\xfe\n", 2, "UTF-8"), ("\n\n", None, "no question")):
        bad = tmp_path / "bad.tsv"
        bad.write_bytes(content if isinstance(content, bytes) else content.encode())
        with pytest.raises(InputError, match=message) as caught:
            read_questions_file(bad)
        assert caught.value.line == line and str(bad) in str(caught.value)
    with pytest.raises(InputError, match="no such file"):
        read_questions_file(tmp_path / "missing.tsv")


def test_a_header_line_naming_the_columns_is_not_asked(tmp_path):
    path = tmp_path / "q.tsv"
    path.write_text("\ufeffQuestion\tAnswers\nwho directed Heat\tMichael Mann\n", encoding="utf-8")
    assert [(l.line, l.question) for l in read_questions_file(path)] == [(2, "who directed Heat")]
    path.write_text("\nquestion\nwhat is X?\n")
    assert [l.question for l in read_questions_file(path)] == ["what is X?"]
    path.write_text("what is X?\nquestion\tanswers\n")  # past the first question it is a question like any
    assert [l.question for l in read_questions_file(path)] == ["what is X?", "question"]
    path.write_text("question\tanswer\nwhat is X?\tY\n")  # an alias `gqa ingest questions` also reads as a header
    assert [(l.question, l.answers) for l in read_questions_file(path)] == [("what is X?", ["Y"])]
    path.write_text("question\tanswers\n")
    with pytest.raises(InputError, match="no question"):
        read_questions_file(path)


def test_csv_and_json_lines_files_are_read_as_gqa_ingest_questions_reads_them(tmp_path):
    csv_file = tmp_path / "q.csv"
    csv_file.write_text('Question,Answer,split\n"who directed Heat, the film",Michael Mann|M. Mann,test\n'
                        'what is X?,,\n')
    assert [(l.line, l.question, l.answers) for l in read_questions_file(csv_file)] == [
        (2, "who directed Heat, the film", ["Michael Mann", "M. Mann"]), (3, "what is X?", None)]
    csv_file.write_text("question\nwhat is X?\n")  # answers are optional for asking, not for ingesting
    assert [(l.question, l.answers) for l in read_questions_file(csv_file)] == [("what is X?", None)]
    jsonl = tmp_path / "q.jsonl"
    jsonl.write_text('{"question": "who directed Heat", "answers": ["Michael Mann"]}\n\n{"q_entity": "X", '
                     '"question": " what is X? "}\n')
    assert [(l.line, l.question, l.answers) for l in read_questions_file(jsonl)] == [
        (1, "who directed Heat", ["Michael Mann"]), (3, "what is X?", None)]
    for name, content, line, message in (
            ("bad.csv", "answers\nMichael Mann\n", 1, "must be a header"),
            ("bad.csv", "question,answer,when\nok,a,b\n", 1, "unknown column"),
            ("bad.csv", "question,answers\nok,a\n,b\n", 3, "empty"),
            ("bad.jsonl", '{"question": "ok"}\n{"question": 3}\n', 2, "must be a string"),
            ("bad.jsonl", '{"question": "ok"}\n{"question": \n', 2, "bad JSON"),
            ("bad.jsonl", '{"question": "ok", "answers": 5}\n', 1, "answers"),
            ("bad.csv", "question\n", None, "no question")):
        bad = tmp_path / name
        bad.write_text(content)
        with pytest.raises(InputError, match=message) as caught:
            read_questions_file(bad)
        assert caught.value.line == line and str(bad) in str(caught.value)


@pytest.mark.parametrize("name, line", [("q.tsv", "{}\n"), ("q.csv", "question\n{}\n"),
                                        ("q.jsonl", '{{"question": "{}"}}\n')])
def test_a_questions_length_is_counted_without_the_spaces_around_it_in_every_format(tmp_path, name, line):
    path = tmp_path / name
    longest = "x" * MAX_QUESTION_CHARS
    path.write_text(line.format(f"  {longest}  "))
    assert [l.question for l in read_questions_file(path)] == [longest]
    path.write_text(line.format(longest + "y"))
    with pytest.raises(InputError, match=f"at most {MAX_QUESTION_CHARS}") as caught:
        read_questions_file(path)
    assert caught.value.line == line.count("\n")
