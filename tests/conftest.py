"""Shared fixtures: a real WordPiece tokenizer and a tiny random BERT, built in seconds, and two books parsed by
spaCy; nothing committed."""

from __future__ import annotations

import gzip
import itertools
import json
import os
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
if os.environ.get("PYTEST_XDIST_WORKER"):
    # One pytest-xdist worker per core: a thread each (and in the ranks they launch) does more than every worker's
    # threads fighting over every core. Set before torch is imported.
    os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest

# Light imports only: pytest-xdist's controller loads this file too, and runs no test (torch and
# sentence-transformers are imported in the fixtures, by the workers).
from st_contrastive.data_dir import data_file


def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile`` (setup.cfg) keeps a file's tests on one pytest-xdist worker, so its module fixtures are
    built once; here the files that use the session's pair of DDP ranks (``two_ranks``) also share one worker, so
    the session starts one pair, not one per worker. (pytest-xdist's loadgroup would say it with marks, but it
    names the group through ``Item._nodeid``, which pytest 9 no longer reads.)"""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    # Node ids name a file by its path from the rootdir (tests/losses/test_supcon.py): two files may share a name.
    root = Path(config.rootpath).resolve()
    with_ranks = {
        path.resolve().relative_to(root).as_posix()
        for path in Path(__file__).resolve().parent.rglob("test_*.py")
        if "two_ranks" in path.read_text()
    }

    class FilesAndTheirRanks(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            file = super()._split_scope(nodeid)
            return "two-ranks" if file in with_ranks else file

    return FilesAndTheirRanks(config, log)


@pytest.fixture(scope="session")
def wiki_texts() -> list[str]:
    """The first 64 Wikipedia articles of the shared corpus."""
    with gzip.open(data_file("corpus/docs.jsonl.gz"), "rt", encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in itertools.islice(f, 64)]


def fixed_wordpiece_tokenizer(texts: list[str], vocab_size: int):
    """A BERT tokenizer whose vocabulary is a pure function of ``texts``: the special tokens, every character alone
    and as a continuation, then the most frequent words (ties by spelling).

    tokenizers' WordPiece trainer breaks ties between equally frequent merges in hash order, which changes with
    every process: each test session got other tokens (3 builds, 3 vocabularies), and a DDP tolerance test that
    passed with one failed with another. Tests need the same inputs every time. (``train_wordpiece_tokenizer`` is
    deterministic since it names the ``##`` pieces first; this fixture predates that, and keeps the tests' models.)
    """
    from tokenizers import normalizers, pre_tokenizers
    from transformers import BertTokenizerFast

    from st_contrastive.pretraining.wordpiece import SPECIAL_TOKENS

    normalize, split = normalizers.BertNormalizer(lowercase=True), pre_tokenizers.BertPreTokenizer()
    counts = Counter(word for text in texts for word, _ in split.pre_tokenize_str(normalize.normalize_str(text)))
    characters = sorted({character for word in counts for character in word})
    vocabulary = SPECIAL_TOKENS + characters + ["##" + character for character in characters]
    known = set(vocabulary)
    words = [word for word, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0])) if word not in known]
    vocabulary += words[: vocab_size - len(vocabulary)]
    return BertTokenizerFast(
        vocab={token: i for i, token in enumerate(vocabulary)}, do_lower_case=True, model_max_length=512
    )


@pytest.fixture(scope="session")
def tiny_mlm_dir(tmp_path_factory, wiki_texts) -> str:
    """A saved tokenizer + random ``BertForMaskedLM`` (2 layers, hidden 32), the same in every session."""
    import torch

    from st_contrastive.pretraining import build_masked_lm

    path = tmp_path_factory.mktemp("tiny-bert")
    tokenizer = fixed_wordpiece_tokenizer(wiki_texts, vocab_size=2000)
    torch.manual_seed(0)
    model = build_masked_lm(tokenizer, hidden_size=32, num_layers=2, num_heads=2, max_position_embeddings=256)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


def sentence_model(masked_lm_dir: str):
    """A SentenceTransformer (Transformer + mean Pooling) over a saved masked LM, the same for the same seed."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer

    torch.manual_seed(0)
    transformer = Transformer(masked_lm_dir, max_seq_length=128)
    pooling = Pooling(transformer.get_embedding_dimension(), pooling_mode="mean")
    return SentenceTransformer(modules=[transformer, pooling], device="cpu")


@pytest.fixture()
def tiny_model(tiny_mlm_dir):
    """A fresh SentenceTransformer (Transformer + mean Pooling) over the tiny BERT."""
    return sentence_model(tiny_mlm_dir)


@pytest.fixture()
def base_model(tiny_model, tmp_path) -> str:
    """The tiny sentence model saved as a folder: what a round loads as its base model."""
    path = tmp_path / "base"
    tiny_model.save(str(path))
    return str(path)


@pytest.fixture()
def short_rounds():
    """Rounds of at least 2 steps instead of the fixed 10 (support_tickets.short_rounds)."""
    from support_tickets import short_rounds

    with short_rounds():
        yield


@pytest.fixture(scope="session")
def human_run(tmp_path_factory, tiny_mlm_dir) -> str:
    """A support-ticket run of `active --oracle human` whose round 1 waits for labels (support_tickets.py); tests
    label a copy of it (``copy_of_run``)."""
    from support_tickets import start_human_run

    return start_human_run(tmp_path_factory.mktemp("human-run"), sentence_model(tiny_mlm_dir))


@pytest.fixture(scope="session")
def human_run_without_test_split(tmp_path_factory, tiny_mlm_dir) -> str:
    """:func:`human_run` on a file without a test split: what a person with only their own texts has."""
    from support_tickets import start_human_run

    return start_human_run(tmp_path_factory.mktemp("human-run"), sentence_model(tiny_mlm_dir), held_out=False)


@pytest.fixture(scope="session")
def two_ranks(tmp_path_factory):
    """Two gloo ranks in one process group, started once for the session's DDP checks (two_ranks.py)."""
    from two_ranks import TwoRanks

    ranks = TwoRanks(tmp_path_factory.mktemp("two-ranks"))
    yield ranks
    ranks.close()


@pytest.fixture(scope="session")
def parsed_books(tmp_path_factory) -> str:
    """The first two documents of the shared books corpus, parsed by spaCy (a few hundred sentences)."""
    pytest.importorskip("spacy")
    from filelock import FileLock

    from st_contrastive.parsing import make_parser, parse_corpus

    # Parsed once for every pytest-xdist worker of this run: the first one parses, the others wait and read it.
    folder = tmp_path_factory.getbasetemp()
    folder = (folder.parent if os.environ.get("PYTEST_XDIST_WORKER") else folder) / "books"
    output = folder / "cache" / "parsed.jsonl.gz"  # a folder that does not exist yet
    folder.mkdir(exist_ok=True)
    with FileLock(str(folder / "parsing.lock")):
        if not output.exists():
            corpus = folder / "books.jsonl.gz"
            with (
                gzip.open(data_file("corpus/books.jsonl.gz"), "rt", encoding="utf-8") as f,
                gzip.open(corpus, "wt", encoding="utf-8") as out,
            ):
                for line in itertools.islice(f, 2):
                    out.write(line)
            parse_corpus(corpus, output, make_parser("spacy"))
    return str(output)


@pytest.fixture()
def fake_hub(monkeypatch) -> dict:
    """The Hub's two HTTP calls replaced by a record of what they were asked (the rest is the real code path)."""
    calls = {}

    def create_repo(self, repo_id, **kwargs):
        calls["created"] = (repo_id, kwargs.get("private"), kwargs.get("exist_ok"))
        return SimpleNamespace(repo_id=repo_id)

    def upload_folder(self, repo_id, folder_path, **kwargs):
        calls["uploaded"] = sorted(path.name for path in Path(folder_path).iterdir())
        calls["card"] = (Path(folder_path) / "README.md").read_text()
        return SimpleNamespace(commit_url=f"https://huggingface.co/{repo_id}/commit/0")

    monkeypatch.setattr("huggingface_hub.HfApi.create_repo", create_repo)
    monkeypatch.setattr("huggingface_hub.HfApi.upload_folder", upload_folder)
    return calls


@pytest.fixture()
def every_cut(monkeypatch):
    """Length groups cut wherever padding is saved, whatever an encoder call costs on this device
    (``length_groups.CALL_TOKENS``): a test of the grouped path then runs it even on a tiny batch."""
    from st_contrastive.losses import length_groups

    monkeypatch.setitem(length_groups.CALL_TOKENS, "cpu", 0)


@pytest.fixture()
def host_reads(monkeypatch):
    """``reads(encoder)``: a context in which the package's code records each read of a tensor's value on the host
    (``int()``, ``float()``, ``bool()``, ``.item()``, ``.tolist()``), as ``"NAME in FILE:LINE"``. On a GPU each such
    read makes the host wait for the device; with ``encoder``, only the reads after its forward has started count
    (a read of the batch before the encoder runs waits for the batch's copy alone)."""
    import contextlib
    import sys

    import torch

    @contextlib.contextmanager
    def reads(encoder=None):
        found, started = [], [encoder is None]

        def spy(name, original):
            def read(self, *args, **kwargs):
                frame = sys._getframe(1)
                if started[0] and "st_contrastive" in frame.f_code.co_filename:
                    found.append(f"{name} in {frame.f_code.co_filename}:{frame.f_lineno}")
                return original(self, *args, **kwargs)

            return read

        hook = encoder.register_forward_pre_hook(lambda *_: started.__setitem__(0, True)) if encoder else None
        for name in ("item", "__int__", "__float__", "__bool__", "__index__", "tolist"):
            monkeypatch.setattr(torch.Tensor, name, spy(name, getattr(torch.Tensor, name)))
        try:
            yield found
        finally:
            monkeypatch.undo()
            if hook is not None:
                hook.remove()
        assert started[0], "the encoder never ran: no read was watched"

    return reads
