"""load_documents and prepare_declutr_dataset on real shared documents and local files."""

import gzip
import json

import pytest
from datasets import Dataset

from st_contrastive.data import SpanSampler, load_documents, prepare_declutr_dataset
from st_contrastive.data_dir import data_file


def test_shared_wikipedia_documents():
    documents = load_documents(data_file("corpus/docs.jsonl.gz"), limit=5)
    assert len(documents) == 5
    assert documents[0]["id"].startswith("enwiki-") and len(documents[0]["text"].split()) >= 500


def test_corrupt_line_names_file_and_line(tmp_path):
    path = tmp_path / "docs.jsonl.gz"
    with gzip.open(path, "wt") as f:
        f.write(json.dumps({"text": "fine"}) + "\n" + '{"text": "broken\n')
    with pytest.raises(ValueError, match=r"docs.jsonl.gz, line 2: not valid JSON"):
        load_documents(path)


def test_text_field_and_missing_field(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text(json.dumps({"body": "one"}) + "\n" + json.dumps({"body": "two"}) + "\n")
    assert load_documents(path, text_field="body")["text"] == ["one", "two"]
    with pytest.raises(ValueError, match=r"no 'text' field; fields are \['body'\]"):
        load_documents(path)


def test_txt_lines_and_blocks(tmp_path):
    lines = tmp_path / "lines.txt"
    lines.write_text("first document\nsecond document\n")
    assert load_documents(lines)["text"] == ["first document", "second document"]
    blocks = tmp_path / "blocks.txt"
    blocks.write_text("para one\nstill one\n\n\npara two\n")
    assert load_documents(blocks)["text"] == ["para one\nstill one", "para two"]
    assert load_documents(blocks, txt_documents="line")["text"] == ["para one", "still one", "para two"]


def test_saved_dataset_folder_and_hub_loader(tmp_path):
    Dataset.from_dict({"content": ["a b c", "d e f"]}).save_to_disk(str(tmp_path / "saved"))
    assert load_documents(tmp_path / "saved", text_field="content")["text"] == ["a b c", "d e f"]
    # A local folder of data files goes through datasets.load_dataset, the same path a Hub id takes.
    (tmp_path / "hub").mkdir()
    (tmp_path / "hub" / "train.jsonl").write_text(json.dumps({"text": "x y"}) + "\n")
    assert load_documents(tmp_path / "hub")["text"] == ["x y"]


def test_prepare_tokenizes_once_and_reports_short_documents(tiny_model, tmp_path):
    path = tmp_path / "docs.jsonl"
    rows = [{"id": "long", "text": "word " * 400}, {"id": "tiny", "text": "too short"}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    documents = load_documents(path)
    with pytest.raises(ValueError, match=r"row 1 \(id='tiny'\) with \d+ tokens"):
        prepare_declutr_dataset(documents, tiny_model.tokenizer, SpanSampler(max_length=64, short_documents="error"))
    kept = prepare_declutr_dataset(documents, tiny_model.tokenizer, SpanSampler(max_length=64))  # skip: the default
    assert kept.column_names == ["token_ids"] and len(kept) == 1
    assert kept[0]["token_ids"] == tiny_model.tokenizer("word " * 400, add_special_tokens=False)["input_ids"]


def test_documents_kept_after_a_skip_give_sentence_transformers_readable_rows(tiny_model, tmp_path):
    """sentence-transformers' model card (run when a trainer is built) keeps the dataset's string columns, none
    here, and reads sample rows: behind a select()'s indices mapping that was a table of zero rows."""
    from sentence_transformers.sentence_transformer.model_card import SentenceTransformerModelCardData

    path = tmp_path / "docs.jsonl"
    texts = ["too short", "word " * 400, "also short", "more words " * 200, "word " * 300]
    path.write_text("".join(json.dumps({"text": text}) + "\n" for text in texts))
    kept = prepare_declutr_dataset(load_documents(path), tiny_model.tokenizer, SpanSampler(max_length=64))
    assert len(kept) == 3 and kept._indices is None
    tokenize = tiny_model.tokenizer
    assert [row["token_ids"] for row in kept] == [
        tokenize(t, add_special_tokens=False)["input_ids"] for t in texts[1:2] + texts[3:]
    ]
    SentenceTransformerModelCardData().set_widget_examples(kept)  # ZeroDivisionError before the fix
