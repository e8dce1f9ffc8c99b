"""Local data files read with every problem named by file and line: st_contrastive/data/table_file.py."""

from __future__ import annotations

import gzip

import pytest

from st_contrastive.data.table_file import (
    check_text_file,
    json_lines,
    read_rows,
    spreadsheet_text,
    write_csv_atomically,
)


def test_a_byte_order_mark_is_dropped_and_a_spreadsheet_csv_reads_its_first_column(tmp_path):
    path = tmp_path / "texts.csv"
    path.write_bytes("\ufefftext,label\nhello,a\n".encode())  # Excel's "CSV UTF-8"
    assert read_rows(path) == [{"text": "hello", "label": "a"}]


def test_a_byte_that_is_not_utf8_is_named_with_file_line_and_column(tmp_path):
    path = tmp_path / "docs.jsonl.gz"
    with gzip.open(path, "wb") as f:
        f.write(b'{"text": "fine"}\n{"text": "caf\xe9"}\n')
    with pytest.raises(ValueError, match=r"docs.jsonl.gz, line 2: not UTF-8 text \(byte 0xe9 at column 14\)"):
        json_lines(path)


def test_json_that_is_not_an_object_is_named_by_line(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text('{"text": "a"}\n\n[1, 2]\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"docs.jsonl, line 3: expected a JSON object, got list"):
        json_lines(path)
    assert json_lines(path, limit=1) == [{"text": "a"}]


def test_the_light_check_finds_an_empty_file_a_missing_field_and_a_bad_byte(tmp_path):
    empty, other, latin = tmp_path / "empty.jsonl", tmp_path / "other.jsonl", tmp_path / "latin.txt"
    empty.write_text("\n", encoding="utf-8")
    other.write_text('{"body": "x"}\n', encoding="utf-8")
    latin.write_bytes(b"caf\xe9\n")
    with pytest.raises(ValueError, match=r"empty.jsonl: no rows"):
        check_text_file(empty)
    with pytest.raises(ValueError, match=r"other.jsonl: no 'text' field; its fields are \['body'\]"):
        check_text_file(other, ("text",))
    with pytest.raises(ValueError, match=r"latin.txt, line 1: not UTF-8"):
        check_text_file(latin)
    check_text_file(other, ("body",))  # a good file passes


@pytest.mark.parametrize("text", ['=HYPERLINK("http://x")', "+1", "-1", "@SUM(A1)", "\tcmd", "plain", "'quoted"])
def test_cells_a_spreadsheet_would_run_are_escaped_and_read_back_as_written(tmp_path, text):
    path = tmp_path / "queries.csv"
    write_csv_atomically(path, ("id", "text"), [{"id": 1, "text": text}])
    cell = read_rows(path)[0]["text"]
    assert cell == ("'" + text if text[0] in "=+-@\t" else text)  # a spreadsheet shows it and never runs it
    assert spreadsheet_text(cell) == text
