"""The questions file of `gqa ask --questions`: one question per line, or `question<TAB>answer1|answer2`; or a
CSV (`.csv`) or JSON-lines (`.jsonl`, `.json`, `.ndjson`) file as `gqa ingest questions` reads it, the answers
optional (`loaders.questions.asked_questions`), so a file ingested as a graph's questions can be asked as it is.

Blank lines are skipped, and so is a first line that is a header naming the columns (`question`, or
`question<TAB>answers`, or the aliases `gqa ingest questions` accepts, such as `answer`), so one file serves
both. A line with more than one TAB, an empty question, or a TAB followed by no answer is an error naming the file
and line; the whole file is read and checked before anything is asked.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gretriever_neo4j.errors import InputError
from gretriever_neo4j.records import QUESTION_REQUIRED, question_column

HEADERS = ([QUESTION_REQUIRED[0]], list(QUESTION_REQUIRED))  # a first line naming the columns, not a question


@dataclass(frozen=True)
class QuestionLine:
    line: int
    question: str
    answers: list[str] | None  # None when the line gives no gold answers


def read_questions_file(path: str | Path) -> list[QuestionLine]:
    from gretriever_neo4j.loaders.questions import asked_questions, file_format

    path = Path(path)
    if not path.is_file():
        raise InputError("no such file", source=path)
    if file_format(path) == "tsv":
        out = _tsv_lines(path)
    else:
        out = [QuestionLine(line, question, answers) for line, question, answers in asked_questions(path)]
    if not out:
        raise InputError("holds no question", source=path)
    return out


def _tsv_lines(path: Path) -> list[QuestionLine]:
    """The questions of `gqa ask`'s own format (the module docstring), the first bad line raising."""
    from gretriever_neo4j.loaders._common import numbered_lines
    from gretriever_neo4j.loaders.questions import question_text

    out: list[QuestionLine] = []
    try:
        lines = list(numbered_lines(path))
    except OSError as error:
        raise InputError(f"cannot read it ({error.strerror})", source=path) from None
    for number, text in lines:
        if not text.strip():
            continue
        fields = text.split("\t")
        if not out and [question_column(f) for f in fields] in HEADERS:
            continue
        if len(fields) > 2:
            raise InputError(f"expected 'question' or 'question<TAB>answer1|answer2', found {len(fields) - 1} TABs",
                             source=path, line=number)
        try:
            question = question_text({"question": fields[0]})
        except ValueError as error:
            raise InputError(str(error), source=path, line=number) from None
        answers = None
        if len(fields) == 2:
            answers = [a.strip() for a in fields[1].split("|") if a.strip()]
            if not answers:
                raise InputError("a TAB but no answer after it (give answer1|answer2, or drop the TAB)",
                                 source=path, line=number)
        out.append(QuestionLine(line=number, question=question, answers=answers))
    return out
