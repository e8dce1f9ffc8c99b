"""The word vocabulary of the structured view encoders: words ↔ ids, built from a corpus or from word vectors."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path

PAD, UNK = "[PAD]", "[UNK]"
VOCAB_FILE = "vocab.txt"


class Vocabulary:
    """Words with ids: 0 is ``[PAD]``, 1 is ``[UNK]``, then ``words`` in the order given.

    Unknown words map predictably (:meth:`lookup`): the exact word if present, else its lowercased form if that is
    present, else ``[UNK]``. Saved as ``vocab.txt``, one word per line in id order (specials included); a word
    containing a newline cannot be written that way and :meth:`save` refuses it with a ValueError naming it.
    """

    def __init__(self, words: Iterable[str] = ()) -> None:
        self._words = [PAD, UNK]
        self._ids = {PAD: 0, UNK: 1}
        for word in words:
            if word in self._ids:
                raise ValueError(f"the vocabulary lists {word!r} twice (ids 0 and 1 are {PAD!r} and {UNK!r})")
            self._ids[word] = len(self._words)
            self._words.append(word)

    @classmethod
    def build(cls, token_lists: Iterable[list[str]], max_size: int = 50_000, min_count: int = 1) -> Vocabulary:
        """The ``max_size`` most frequent tokens seen at least ``min_count`` times (``max_size`` excludes the two
        specials), most frequent first, ties in order of first occurrence. Tokens spelled ``[PAD]``/``[UNK]``
        are not added again: they already have ids 0 and 1."""
        counts = Counter(token for tokens in token_lists for token in tokens)  # insertion order = first occurrence
        ranked = sorted(counts.items(), key=lambda item: -item[1])  # stable: ties keep first-occurrence order
        kept = [word for word, count in ranked if count >= min_count and word not in (PAD, UNK)]
        return cls(kept[:max_size])

    @property
    def words(self) -> list[str]:
        """All words in id order, specials included: ``words[i]`` has id i."""
        return list(self._words)

    def __len__(self) -> int:
        return len(self._words)

    def __contains__(self, word: object) -> bool:
        return word in self._ids

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocabulary) and self._words == other._words

    def __repr__(self) -> str:
        return f"Vocabulary({len(self)} words)"

    def lookup(self, token: str) -> int:
        """The id of ``token``; else of ``token.lower()``; else of ``[UNK]`` (1)."""
        found = self._ids.get(token)
        if found is None:
            found = self._ids.get(token.lower(), 1)
        return found

    def encode(self, tokens: Iterable[str]) -> list[int]:
        return [self.lookup(token) for token in tokens]

    def save(self, directory: str | Path) -> Path:
        """Write ``directory/vocab.txt``; returns its path."""
        for word in self._words:
            if "\n" in word:
                raise ValueError(f"cannot save the word {word!r}: vocab.txt holds one word per line")
        path = Path(directory) / VOCAB_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        # newline="\n" and newline="" on reading: only "\n" separates words ("\r" stays part of a word).
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write("".join(word + "\n" for word in self._words))
        return path

    @classmethod
    def load(cls, directory: str | Path) -> Vocabulary:
        path = Path(directory) / VOCAB_FILE
        with open(path, encoding="utf-8", newline="") as f:
            words = f.read().split("\n")
        if words[-1] == "":
            words.pop()  # the final newline
        if words[:2] != [PAD, UNK]:
            raise ValueError(f"{path}: the first two lines must be {PAD!r} and {UNK!r}, got {words[:2]!r}")
        return cls(words[2:])
