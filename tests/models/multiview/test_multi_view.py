"""Multi-view structured encoders end to end: the bilinear context loss against a hand computation, the block
sampler, training through the real trainer on parsed books, save → reload, encode on raw strings, bad input."""

import gzip
import json

import pytest
import torch
from sentence_transformers import SentenceTransformer

from st_contrastive.data import ContextBlockBatchSampler, load_sentence_corpus
from st_contrastive.losses import MultiViewBilinearLoss
from st_contrastive.models import multiview_model
from st_contrastive.parsing import make_parser
from st_contrastive.training import TrainSettings, train

pytest.importorskip("spacy")


@pytest.fixture(scope="module")
def corpus(parsed_books):
    return load_sentence_corpus(parsed_books)


def small_model(sentences, views=("dep", "seq"), parser="spacy"):
    torch.manual_seed(0)
    model = multiview_model(list(views), sentences, parser=parser, word_dim=16, dim=12)
    model[0].add_parses(sentences)
    return model


def naive_context_loss(f, g, W, positions, context_size=1, symmetric=True):
    """Per anchor i: −mean over its context sentences p of log softmax_{j≠i} f_iᵀ W g_j, averaged; both ways
    unless not ``symmetric`` (the paper's objective)."""

    def one_way(a, b, M):
        losses = []
        for i in range(len(a)):
            scores = torch.stack([a[i] @ M @ b[j] for j in range(len(b)) if j != i])
            others = [j for j in range(len(b)) if j != i]
            log_p = torch.log_softmax(scores, 0)
            positives = [k for k, j in enumerate(others) if abs(positions[i] - positions[j]) <= context_size]
            if positives:
                losses.append(-log_p[positives].mean())
        return torch.stack(losses).mean()

    return (one_way(f, g, W) + one_way(g, f, W.T)) / 2 if symmetric else one_way(f, g, W)


def test_loss_equals_a_hand_computation_across_a_document_boundary(corpus):
    dataset, sentences = corpus
    model = small_model(sentences)
    loss = MultiViewBilinearLoss(model)
    with torch.no_grad():  # scores far from zero, so that which sentences are positives shows in the loss
        loss.bilinear.normal_(0.0, 30.0)
    texts = dataset["sentence"][:6]
    # Two documents: positions 0-2 and 1_000_000-1_000_002; no context crosses the boundary.
    positions = torch.tensor([0, 1, 2, 1_000_000, 1_000_001, 1_000_002])
    features = model.preprocess(texts)
    value = loss([features], positions)
    f, g = model(model.preprocess(texts))["view_embeddings"]
    expected = naive_context_loss(f, g, loss.bilinear, positions.tolist())
    assert torch.allclose(value, expected, atol=1e-5)
    one_document = loss([model.preprocess(texts)], torch.arange(6))
    assert not torch.allclose(one_document, value, atol=1e-4)  # the boundary changes the positives
    assert torch.allclose(loss([model.preprocess(texts)], None), one_document, atol=1e-6)


def test_one_direction_is_the_papers_objective_and_a_recipe_option(corpus):
    dataset, sentences = corpus
    model = small_model(sentences)
    both, one = MultiViewBilinearLoss(model), MultiViewBilinearLoss(model, symmetric=False)
    with torch.no_grad():
        both.bilinear.normal_(0.0, 30.0)
        one.bilinear.copy_(both.bilinear)
    texts, positions = dataset["sentence"][:6], torch.arange(6)
    f, g = model(model.preprocess(texts))["view_embeddings"]
    expected = naive_context_loss(f, g, one.bilinear, positions.tolist(), symmetric=False)
    assert torch.allclose(one([model.preprocess(texts)], positions), expected, atol=1e-5)
    assert not torch.allclose(both([model.preprocess(texts)], positions), expected, atol=1e-3)
    assert (one.get_config_dict()["symmetric"], both.get_config_dict()["symmetric"]) == (False, True)

    from st_contrastive.commands.multiview import MultiViewConfig, build_parser
    from st_contrastive.commands.options import config_from_args

    assert config_from_args(MultiViewConfig, build_parser().parse_args([])).symmetric  # the default: both directions
    assert not config_from_args(MultiViewConfig, build_parser().parse_args(["--no-symmetric"])).symmetric


@pytest.mark.parametrize("positions", [[0, 10, 20], [7]], ids=["one-sentence documents", "one sentence"])
def test_a_batch_without_any_context_sentence_gives_a_zero_that_keeps_the_graph(corpus, caplog, positions):
    _, sentences = corpus
    model = small_model(sentences)
    loss = MultiViewBilinearLoss(model)
    texts = [s.text for s in sentences if len(s.tokens) > 3][: len(positions)]  # every cell of the trees in use
    with caplog.at_level("WARNING"):
        value = loss([model.preprocess(texts)], torch.tensor(positions))
    assert value.item() == 0.0 and value.requires_grad
    assert "No sentence of this batch has a context sentence" in caplog.text
    value.backward()  # reaches every parameter (DDP's all-reduce needs each rank's backward), with zero gradients
    trained = [p for p in [*model.parameters(), loss.bilinear] if p.requires_grad]
    assert all(p.grad is not None and not p.grad.any() for p in trained)


def test_the_step_reads_nothing_back_from_the_device_once_the_views_run(corpus, host_reads, caplog):
    # On a GPU each read of a tensor's value on the host waits for the device: the no-context warning is decided
    # from the positions before the view encoders start.
    _, sentences = corpus
    model = small_model(sentences)
    loss = MultiViewBilinearLoss(model)
    texts = [s.text for s in sentences if len(s.tokens) > 3][:3]
    with host_reads(model[1]) as reads, caplog.at_level("WARNING"):
        loss([model.preprocess(texts)], torch.tensor([0, 1, 2])).backward()
    assert reads == [] and "has a context sentence" not in caplog.text


# Four sentences on two ranks: rank 0 holds three of one document, rank 1 a one-sentence document (no context on
# any rank). Rank 1's loss must still reach backward, and the ranks' average must be the one-process loss.
LONELY_POSITIONS = torch.tensor([0, 1, 2, 1_000_000])
RANK_ROWS = (slice(0, 3), slice(3, 4))


def _handmade_model_and_loss(gather: bool):
    from st_contrastive.parsing import ParsedSentence

    words = [["the", "cat", "sat"], ["a", "dog", "ran", "off"], ["it", "rained"], ["birds", "sang", "loudly"]]
    sentences = [
        ParsedSentence(w, ["X"] * len(w), [2] + [0] + [2] * (len(w) - 2), ["dep"] * len(w), id=str(i))
        for i, w in enumerate(words)
    ]
    torch.manual_seed(0)
    model = multiview_model(["dep", "seq"], sentences, parser=None, word_dim=8, dim=6)
    loss = MultiViewBilinearLoss(model, gather_across_devices=gather)
    with torch.no_grad():
        loss.bilinear.normal_(0.0, 3.0)
    return model, loss, sentences


def _gradients(model, loss) -> dict[str, torch.Tensor]:
    named = {"bilinear": loss.bilinear, **dict(model.named_parameters())}
    return {name: p.grad.clone() for name, p in named.items() if p.grad is not None}


def _rank_without_context(rank):
    model, loss, sentences = _handmade_model_and_loss(gather=True)
    rows = RANK_ROWS[rank]
    value = loss([model[0].features(sentences[rows])], LONELY_POSITIONS[rows])
    value.backward()
    return {"loss": value.item(), "grads": _gradients(model, loss)}


@pytest.mark.distributed
def test_a_rank_without_context_trains_on_and_the_global_mean_stays_exact(two_ranks):
    ranks = two_ranks.run(_rank_without_context)
    model, loss, sentences = _handmade_model_and_loss(gather=False)
    value = loss([model[0].features(sentences)], LONELY_POSITIONS)  # one process: the lone sentence drops out
    value.backward()
    expected = _gradients(model, loss)
    assert ranks[1]["loss"] == 0.0
    # DDP averages the ranks' gradients (ContrastiveTrainer does for W): the average is the one-process gradient.
    assert sum(r["loss"] for r in ranks) / 2 == pytest.approx(value.item(), rel=1e-5)
    assert set(ranks[1]["grads"]) == set(expected)  # rank 1's backward reached every parameter
    for name, grad in expected.items():
        torch.testing.assert_close(
            (ranks[0]["grads"][name] + ranks[1]["grads"][name]) / 2, grad, atol=1e-6, rtol=1e-4, msg=name
        )


def test_block_sampler_keeps_sentences_together_and_shuffles_blocks():
    from datasets import Dataset

    dataset = Dataset.from_dict({"sentence": [str(i) for i in range(23)], "label": list(range(23))})
    sampler = ContextBlockBatchSampler(dataset, batch_size=5, seed=3)
    first = list(sampler)
    assert sorted(i for batch in first for i in batch) == list(range(23))
    assert all(batch == list(range(batch[0], batch[0] + len(batch))) for batch in first)
    assert [b[0] for b in first] != sorted(b[0] for b in first) or len(first) < 3
    sampler.set_epoch(1)
    assert list(sampler) != first  # a new block order each epoch
    assert first == list(ContextBlockBatchSampler(dataset, batch_size=5, seed=3))
    assert len(ContextBlockBatchSampler(dataset, batch_size=5, drop_last=True)) == 4


@pytest.mark.parametrize(("rows", "sizes"), [(801, [400, 401]), (800, [400, 400]), (802, [2, 400, 400])])
def test_a_one_sentence_last_block_joins_the_block_before_it(rows, sizes):
    from datasets import Dataset

    dataset = Dataset.from_dict({"sentence": [str(i) for i in range(rows)], "label": list(range(rows))})
    blocks = list(ContextBlockBatchSampler(dataset, batch_size=400))
    assert sorted(len(b) for b in blocks) == sizes and sorted(i for b in blocks for i in b) == list(range(rows))
    assert all(b == list(range(b[0], b[0] + len(b))) for b in blocks)
    assert [len(b) for b in ContextBlockBatchSampler(dataset, batch_size=400, drop_last=True)] == [400, 400]


def test_training_801_sentences_at_batch_400_runs_every_step(corpus, tmp_path):
    """The sampler's last block of one sentence once crashed the loss ("no sentence of the batch has a context")."""
    from datasets import concatenate_datasets

    dataset, sentences = corpus
    copies = -(-801 // len(dataset))  # the corpus repeated as further documents, their positions past the first's
    dataset = concatenate_datasets(
        [dataset.map(lambda row, k=k: {"label": row["label"] + k * 10**8}) for k in range(copies)]
    ).select(range(801))
    model = small_model(sentences, ("seq", "seq"))
    run = train(
        model,
        MultiViewBilinearLoss(model),
        dataset,
        TrainSettings(output_dir=str(tmp_path / "checkpoints"), batch_size=400, epochs=1, warmup_ratio=0.0),
        batch_sampler=ContextBlockBatchSampler,
    )
    assert run.steps == 2 and run.log_history[-1]["train_loss"] > 1.0  # one epoch: blocks of 400 and 401


@pytest.mark.parametrize("views", [("dep", "seq"), ("dep", "const"), ("seq", "seq")])
def test_a_sentence_embeds_the_same_alone_and_in_a_batch(corpus, views):
    """Padding, packing and tree batching must not leak between sentences."""
    dataset, sentences = corpus
    model = small_model(sentences, views)
    texts = dataset["sentence"][:12]
    together = model.encode(texts, convert_to_tensor=True, batch_size=12)
    alone = torch.stack([model.encode([t], convert_to_tensor=True)[0] for t in texts])
    assert torch.allclose(together, alone, atol=1e-5)


def test_training_lowers_the_loss_and_the_checkpoint_reloads_identically(corpus, tmp_path):
    dataset, sentences = corpus
    model = small_model(sentences, ("dep", "const"))
    loss = MultiViewBilinearLoss(model)
    W = loss.bilinear.detach().clone()
    run = train(
        model,
        loss,
        dataset,
        TrainSettings(
            output_dir=str(tmp_path / "checkpoints"),
            batch_size=32,
            learning_rate=5e-3,
            max_steps=40,
            warmup_ratio=0.0,
            save_steps=40,
        ),
        batch_sampler=ContextBlockBatchSampler,
    )
    losses = [row["loss"] for row in run.log_history if "loss" in row]
    assert sum(losses[-3:]) / 3 < sum(losses[:3]) / 3 - 0.05, losses
    assert not torch.equal(W, loss.bilinear.detach())  # the loss-owned W trained, and is checkpointed with it
    saved = torch.load(tmp_path / "checkpoints" / "checkpoint-40" / "loss_state.pt", weights_only=True)
    assert torch.equal(saved["loss"]["bilinear"], loss.bilinear.detach())

    model.save(str(tmp_path / "model"))
    config = json.loads((tmp_path / "model" / "config_sentence_transformers.json").read_text())
    assert "st-contrastive" in config["requirements"]
    texts = [s.text for s in sentences[:16]]  # raw strings: the reloaded model parses them, the trained one looks up
    reloaded = SentenceTransformer(str(tmp_path / "model"), trust_remote_code=True, device="cpu")
    assert torch.equal(model.encode(texts, convert_to_tensor=True), reloaded.encode(texts, convert_to_tensor=True))
    with pytest.raises(ValueError, match="trust_remote_code"):
        SentenceTransformer(str(tmp_path / "model"), device="cpu")


# "Time flies like an arrow" read two ways: flies the verb, or "time flies" the subject of "like".
TIME_FLIES = (
    "1\tTime\ttime\tNOUN\tNN\t_\t2\tnsubj\t_\t_\n2\tflies\tfly\tVERB\tVBZ\t_\t0\troot\t_\t_\n"
    "3\tlike\tlike\tADP\tIN\t_\t5\tcase\t_\t_\n4\tan\ta\tDET\tDT\t_\t5\tdet\t_\t_\n"
    "5\tarrow\tarrow\tNOUN\tNN\t_\t2\tobl\t_\t_\n\n"
    "1\tTime\ttime\tNOUN\tNN\t_\t2\tcompound\t_\t_\n2\tflies\tfly\tNOUN\tNNS\t_\t3\tnsubj\t_\t_\n"
    "3\tlike\tlike\tVERB\tVBP\t_\t0\troot\t_\t_\n4\tan\ta\tDET\tDT\t_\t5\tdet\t_\t_\n"
    "5\tarrow\tarrow\tNOUN\tNN\t_\t3\tobj\t_\t_\n\n"
)


def _write_parsed(path, sentences):
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.writelines(json.dumps(s.to_dict()) + "\n" for s in sentences)
    return path


@pytest.mark.parametrize("texts", ["none, as read from CoNLL-U", "identical"])
def test_each_sentence_of_a_parsed_corpus_encodes_its_own_parse(tmp_path, texts):
    """Parses are keyed by sentence id: CoNLL-U sentences (no text) and equal texts parsed differently stay apart."""
    from st_contrastive.parsing import ParsedSentence, read_conllu

    sentences = read_conllu(text=TIME_FLIES)
    assert sentences[0].id != sentences[1].id and sentences[0].heads != sentences[1].heads
    assert not sentences[0].text  # CoNLL-U without "# text": every row's text was "", so one parse served both
    for sentence in sentences:
        sentence.text = "" if texts.startswith("none") else "Time flies like an arrow"
    dataset, loaded = load_sentence_corpus(_write_parsed(tmp_path / "parsed.jsonl.gz", sentences))
    model = small_model(loaded, ("dep", "const"), parser=None)
    embeddings = model.encode(dataset["sentence"], convert_to_tensor=True)
    assert not torch.allclose(embeddings[0], embeddings[1], atol=1e-4)
    for row, sentence in enumerate(sentences):  # each row equals its own parse encoded directly
        torch.testing.assert_close(embeddings[row], model.encode([sentence], convert_to_tensor=True)[0])
    clash = ParsedSentence.from_dict(sentences[1].to_dict() | {"id": sentences[0].id})
    with pytest.raises(ValueError, match=f"two different parses have the sentence id '{sentences[0].id}'"):
        model[0].add_parses([clash])
    with pytest.raises(ValueError, match=f"sentence 2 repeats the id '{sentences[0].id}'"):
        load_sentence_corpus(_write_parsed(tmp_path / "clash.jsonl.gz", [sentences[0], clash]))


def test_a_missing_plugin_version_names_what_to_install(corpus, tmp_path):
    _, sentences = corpus
    small_model(sentences).save(str(tmp_path))
    path = tmp_path / "config_sentence_transformers.json"
    config = json.loads(path.read_text())
    config["requirements"]["st-contrastive"]["specifier"] = ">=99"
    path.write_text(json.dumps(config))
    with pytest.raises(ImportError, match="st-contrastive"):
        SentenceTransformer(str(tmp_path), trust_remote_code=True, device="cpu")


NEW_CLASS_PATHS = [
    "st_contrastive.models.multiview.parsed_text_input.ParsedTextInput",
    "st_contrastive.models.multiview.multi_view.MultiView",
]


def test_a_save_records_the_modules_new_class_paths(corpus, tmp_path):
    _, sentences = corpus
    small_model(sentences).save(str(tmp_path))
    modules = json.loads((tmp_path / "modules.json").read_text())
    assert [module["type"] for module in modules] == NEW_CLASS_PATHS


def test_encode_parses_raw_strings_and_accepts_parsed_records(corpus):
    _, sentences = corpus
    model = small_model(sentences)
    new = "A completely new sentence about parsing trees."
    embedding = model.encode([new])
    assert embedding.shape == (1, 24)
    parsed = model[0].parse([new])[0]
    assert parsed.tokens[:3] == ["A", "completely", "new"]
    assert new not in model[0].parses  # on-the-fly parses are not kept
    as_record = model.encode([parsed.to_dict()])
    assert torch.allclose(torch.tensor(embedding), torch.tensor(as_record), atol=1e-6)


def test_bad_inputs_are_named(corpus):
    _, sentences = corpus
    model = small_model(sentences, parser=None)
    with pytest.raises(ValueError, match="no parse for 'Never parsed before.'"):
        model.encode(["Never parsed before."])
    with pytest.raises(ValueError, match="views"):
        multiview_model(["dep", "tree"], sentences)
    empty = {"id": "doc:3:1", "tokens": [], "pos": [], "heads": [], "relations": []}
    with pytest.raises(ValueError, match="'doc:3:1' has no tokens"):
        model.encode([empty])
    with pytest.raises(TypeError, match="strings or parsed sentences, not int"):
        model.encode([3])


def test_cli_rejects_bad_views_in_one_line(capsys):
    from st_contrastive.commands.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["multiview", "--views", "dep,tree"])
    assert "--views dep,tree" in str(exit_info.value)
    assert "Traceback" not in capsys.readouterr().err


def test_the_recipe_trains_evaluates_and_records_derived_trees(parsed_books, tmp_path):
    from dataclasses import replace

    from st_contrastive.commands.multiview import MultiViewConfig, train_multiview

    config = MultiViewConfig(
        views="dep,const",
        parsed=parsed_books,
        word_dim=16,
        dim=12,
        eval_tasks=["trec", "sick-test"],
        eval_max_rows=100,
        eval_folds=2,
        parse_cache=str(tmp_path / "parsed"),
        output=str(tmp_path / "run"),
        symmetric=False,
    )
    config = replace(config, training=replace(config.training, batch_size=32, max_steps=4, eval_steps=2))
    results = train_multiview(config)
    saved = json.loads((tmp_path / "run" / "results.json").read_text())
    assert saved["train"]["steps"] == 4 and set(saved["after"]) == {"trec", "sick-test"}
    # --eval-steps: STS-B dev scored at steps 2 and 4, on the --eval-max-rows the final scores read.
    assert [step for step, _ in saved["eval_curves"]["sts-b-dev"]] == [2, 4]
    assert saved["train"]["loss"]["symmetric"] is False  # the recipe's option reached the loss
    assert saved["config"]["constituency"].endswith("derived by head projection")
    assert results["after"]["trec"]["accuracy"] == saved["after"]["trec"]["accuracy"]
    # The evaluation sentences were parsed once into the cache, exactly the evaluated subsets.
    assert list((tmp_path / "parsed").glob("evaluation-*.jsonl.gz"))
    reloaded = SentenceTransformer(str(tmp_path / "run"), trust_remote_code=True, device="cpu")
    assert reloaded.encode(["A new sentence."]).shape == (1, 24)


def test_a_parse_cache_parses_each_text_once_across_models(corpus, tmp_path, monkeypatch):
    _, sentences = corpus
    texts = ["The cache keeps this sentence.", "And this one too."]
    first = small_model(sentences)
    first[0].cache_parses_in(tmp_path / "parses.jsonl.gz")
    expected = first.encode(texts)
    second = small_model(sentences)
    second[0].cache_parses_in(tmp_path / "parses.jsonl.gz")
    second[0]._parser = make_parser("spacy")
    monkeypatch.setattr(second[0]._parser, "parse", lambda texts: pytest.fail(f"parsed again: {texts}"))
    assert torch.allclose(torch.tensor(second.encode(texts)), torch.tensor(expected), atol=1e-6)
