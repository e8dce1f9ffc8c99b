"""The labelling page's wait between rounds: from the last label of a round to the next round's first query, on a
TREC-6 pool, against the loop's own time for that round (training, evaluation and acquisition as the run records
them, what `st-contrastive active --resume-from-checkpoint` spends). The ratio says what the page adds on top.

    python benchmarks/labelling_round_trip.py [--pool-size 1500] [--rounds 2]

A person is played by the gold labels, sent through the page's HTTP API in-process (FastAPI's TestClient); the
run is `st-contrastive active --oracle human` at its defaults (SCALe, entropy acquisition, 1 % of the pool a
round) on a file of the pool's texts without labels and TREC's test split.
"""

from __future__ import annotations

import argparse
import csv
import json
import tempfile
import time
from pathlib import Path

from st_contrastive.active import ActiveLearningConfig, ArmState
from st_contrastive.data.text_classification import load_text_classification

RESULTS = Path(__file__).parent / "results" / "labelling_round_trip.json"


def user_file(path: Path, pool_size: int) -> list[str]:
    """TREC's pool texts unlabelled and its test split labelled, as a person's CSV; returns the pool's gold labels."""
    trec = load_text_classification("trec").subset_pool(pool_size, seed=0)
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["text", "label", "split"])
        writer.writerows([text, "", "train"] for text in trec.train_texts)
        writer.writerows(
            [text, trec.label_names[label], "test"]
            for text, label in zip(trec.test_texts, trec.test_labels, strict=True)
        )
    return [trec.label_names[label] for label in trec.train_labels]


def main(argv: list[str] | None = None) -> dict:
    from fastapi.testclient import TestClient

    from st_contrastive.active.labelling import LabellingSession
    from st_contrastive.active.labelling_app import create_app
    from st_contrastive.active.labelling_settings import LabellingSettings
    from st_contrastive.commands.active import run

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pool-size", type=int, default=1500)
    parser.add_argument("--rounds", type=int, default=2, help="rounds to label and time")
    args = parser.parse_args(argv)

    folder = Path(tempfile.mkdtemp(prefix="labelling-round-trip-"))
    gold = user_file(folder / "trec.csv", args.pool_size)
    config = ActiveLearningConfig(dataset=str(folder / "trec.csv"), oracle="human", output=str(folder / "run"))
    run(config)  # round 0's random queries
    # No grace period: the wait measured is the page's and the loop's, not the time a person has to undo.
    session = LabellingSession(config.output, annotator="benchmark", settings=LabellingSettings(grace_seconds=0))
    token = "benchmark"  # the page's client: its token and its own origin on every request
    client = TestClient(
        create_app(session, token, frozenset({"testserver"})), headers={"X-Token": token, "Origin": "http://testserver"}
    )
    rows = []
    for _ in range(args.rounds):
        status = client.get("/api/status").json()
        round_number = status["round"]
        while status["item"] is not None:
            item = status["item"]
            labelled_at = time.perf_counter()  # the last one's time is the wait's start
            status = client.post(
                "/api/label", json={"round": round_number, "id": item["id"], "label": gold[item["id"]]}
            ).json()
        while status["item"] is None and status["phase"] == "training":
            time.sleep(0.05)
            status = client.get("/api/status").json()
        waited = time.perf_counter() - labelled_at
        record = ArmState.load(session.folder).rounds[-1]
        loop = record["train_seconds"] + record["acquire_seconds"] + record.get("eval_seconds", 0.0)
        rows.append(
            {
                "round_labelled": round_number,
                "labelled": record["labelled"],
                "wait_seconds": round(waited, 2),
                "loop_seconds": round(loop, 2),
                "wait_over_loop": round(waited / loop, 3),
                "accuracy": record.get("accuracy"),
            }
        )
        print(
            f"round {round_number} labelled ({record['labelled']} labels): next query after {waited:.1f} s; the "
            f"loop's own round {loop:.1f} s (x{waited / loop:.2f}); test accuracy {record.get('accuracy')}"
        )
    result = {"pool_size": args.pool_size, "rounds": rows, "run": config.output}
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
