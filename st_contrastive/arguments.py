"""How the library refuses a bad argument: one :class:`ArgumentError` that names the argument, its value and what
is allowed, as sentence-transformers' ``TrainingArguments.__post_init__`` does.

The rules themselves live beside the arguments they belong to (a loss's settings, ``SpanSampler``,
``TrainSettings``...); these are the words they are written in. The commands catch :class:`ArgumentError` and print
it with the option's name in place of the argument's. Nothing here imports torch.
"""

from __future__ import annotations

import math
from collections.abc import Iterable


class ArgumentError(ValueError):
    """``argument`` has a ``value`` outside what is ``allowed``. ``str()`` reads ``temperature=0: must be above 0``."""

    def __init__(self, argument: str, value, allowed: str) -> None:
        self.argument, self.value, self.allowed = argument, value, allowed
        super().__init__(f"{argument}={value!r}: {allowed}")


def require(argument: str, value, ok: bool, allowed: str) -> None:
    if not ok:
        raise ArgumentError(argument, value, allowed)


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def positive(argument: str, value) -> None:
    require(argument, value, is_number(value) and value > 0, "must be above 0")


def at_least(argument: str, value, minimum) -> None:
    require(argument, value, is_number(value) and value >= minimum, f"must be at least {minimum}")


def fraction(argument: str, value, *, one_included: bool = True) -> None:
    """A share: in [0, 1], or [0, 1) where 1 would leave nothing (a dropout rate)."""
    ok = is_number(value) and (0 <= value <= 1 if one_included else 0 <= value < 1)
    require(argument, value, ok, f"must be in [0, 1{']' if one_included else ')'}")


def one_of(argument: str, value, choices: Iterable) -> None:
    choices = tuple(choices)
    require(argument, value, value in choices, f"choose from {', '.join(map(str, choices))}")


def seed(argument: str, value) -> None:
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**32
    require(argument, value, ok, "must be an integer in [0, 2**32) (numpy takes 32-bit seeds)")
