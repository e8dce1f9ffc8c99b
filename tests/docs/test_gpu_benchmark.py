"""benchmarks/gpu_step.py, run where the suite runs (the CPU) with a tiny encoder, so that the GPU benchmark cannot
rot between the rare runs on a GPU. Its figures here mean nothing; what it must do is run every pair in both
precisions and write what a GPU run would."""

import json


def test_the_gpu_benchmark_runs_every_pair_in_both_precisions_on_the_cpu(tiny_mlm_dir, parsed_books, tmp_path):
    from benchmarks import gpu_step

    output = tmp_path / "gpu.json"
    results = gpu_step.main(
        [
            "--device",
            "cpu",
            "--encoders",
            tiny_mlm_dir,
            "--precisions",
            "fp32",
            "bf16",
            "--batch-documents",
            "2",
            "--batch-pairs",
            "8",
            "--max-length",
            "48",
            "--repeats",
            "1",
            "--batch-sentences",
            "8",
            "--parsed",
            parsed_books,
            "--find-syncs",
            "--output",
            str(output),
        ]
    )
    assert json.loads(output.read_text()) == json.loads(json.dumps(results))
    assert results["device"] == "cpu"
    assert [(r["pair"], r["precision"]) for r in results["rows"]] == [
        (pair, precision) for pair in gpu_step.PAIRS for precision in ("fp32", "bf16")
    ]
    for row in results["rows"]:
        assert row["method_over_baseline"] > 0 and min(row["examples_per_second"].values()) > 0
        assert row["peak_mib"] is None  # peak memory is read on CUDA only
        assert row["device_waits"] == {"method": [], "baseline": []}  # CUDA's debug mode alone sees them
    declutr = [r for r in results["rows"] if r["pair"].startswith("declutr")]
    assert all(r["method_tflops"] > 0 and r["mfu_of_bf16_peak"] is None for r in declutr)  # no card, no peak
    assert [0 < r.get("mlm_share_of_flops", 0) < 0.5 for r in declutr] == [True, True, False, False]  # MLM on, off
