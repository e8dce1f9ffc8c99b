"""Whether a run may continue with the settings it is given now: the one comparison that every resumable run
(a training run folder, an MLM pretraining, an active-learning experiment) makes against what it recorded."""

from __future__ import annotations

import json


def flat(settings: dict, prefix: str = "") -> dict:
    """``{"training": {"batch_size": 8}}`` -> ``{"training.batch_size": 8}``, values as JSON gives them back (a
    tuple compares equal to the list it was saved as)."""
    result = {}
    for key, value in json.loads(json.dumps(settings, default=str)).items():
        if isinstance(value, dict) and key == "training":
            result |= flat(value, f"{prefix}{key}.")
        else:
            result[prefix + key] = value
    return result


def changed_settings(saved: dict, current: dict, ignored: frozenset[str] | set[str] = frozenset()) -> dict:
    """``{key: (saved, current)}`` for each setting recorded in both that differs, nested settings by their
    dotted key (``training.batch_size``); ``ignored`` keys are no settings of what is trained (where the run is)."""
    saved, current = flat(saved), flat(current)
    return {
        key: (saved[key], current[key])
        for key in sorted(saved.keys() & current.keys())
        if key not in ignored and saved[key] != current[key]
    }
