"""declutr_input_examples: DeCLUTR's spans drawn once as frozen InputExamples, for sentence-transformers' legacy
``model.fit``, which trains on them."""

from st_contrastive.data import SpanSampler, load_documents, prepare_declutr_dataset
from st_contrastive.data_dir import data_file
from st_contrastive.losses import DeCLUTRLoss


def test_legacy_fit_trains_on_frozen_examples(tmp_path, tiny_model):
    from torch.utils.data import DataLoader

    from st_contrastive.data import declutr_input_examples

    sampler = SpanSampler(num_anchors=2, num_positives=2, min_length=8, max_length=32)
    documents = prepare_declutr_dataset(
        load_documents(data_file("corpus/docs.jsonl.gz"), limit=8), tiny_model.tokenizer, sampler
    )
    examples = declutr_input_examples(documents, tiny_model.tokenizer, sampler, seed=0)
    assert len(examples) == 16 and all(len(e.texts) == 3 for e in examples)
    assert [e.texts for e in examples] == [
        e.texts for e in declutr_input_examples(documents, tiny_model.tokenizer, sampler, seed=0)
    ]
    before = tiny_model.encode(["a test sentence"])
    loss = DeCLUTRLoss(tiny_model)
    tiny_model.fit(
        train_objectives=[(DataLoader(examples, batch_size=4, shuffle=True), loss)],
        epochs=1,
        output_path=str(tmp_path / "fit"),
        show_progress_bar=False,
    )
    assert not (tiny_model.encode(["a test sentence"]) == before).all()
