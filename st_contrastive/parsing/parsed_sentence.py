"""One parsed sentence: tokens, POS, a dependency tree and a constituency tree, as the view encoders read them."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Tree:
    """A constituency node: a label and children that are sub-trees or token positions (0-based leaves)."""

    label: str
    children: list[Tree | int] = field(default_factory=list)

    def leaves(self) -> list[int]:
        """Token positions under this node, left to right as the children list them."""
        return [leaf for child in self.children for leaf in (child.leaves() if isinstance(child, Tree) else [child])]

    def is_binary(self) -> bool:
        """Every node has exactly two children (what the binary Tree-LSTM needs)."""
        return len(self.children) == 2 and all(c.is_binary() for c in self.children if isinstance(c, Tree))

    def bracketed(self, tokens: list[str] | None = None) -> str:
        """``(S (NP 0 1) 2)``, or with ``tokens`` the words instead of their positions."""
        parts = [
            c.bracketed(tokens) if isinstance(c, Tree) else (tokens[c] if tokens else str(c)) for c in self.children
        ]
        return f"({self.label} {' '.join(parts)})"

    def to_list(self) -> list:
        """JSON form: ``[label, child, ...]`` with ints for leaves."""
        return [self.label, *(c.to_list() if isinstance(c, Tree) else c for c in self.children)]

    @classmethod
    def from_list(cls, data: list | int) -> Tree | int:
        if isinstance(data, int):
            return data
        return cls(data[0], [cls.from_list(c) for c in data[1:]])


@dataclass
class ParsedSentence:
    """A sentence with its parses. ``heads`` are 1-based positions of each token's head, 0 for the root (the
    CoNLL-U convention); ``constituency`` is a tree over token positions, or a single position for a one-word
    sentence; ``constituency_source`` says where it came from: ``"parser"`` or ``"head-projection"`` (derived
    from the dependency parse where no constituency parser is available); ``text`` is the raw sentence, when known."""

    tokens: list[str]
    pos: list[str]
    heads: list[int]
    relations: list[str]
    constituency: Tree | int | None = None
    constituency_source: str | None = None
    id: str = ""
    text: str = ""

    def __post_init__(self) -> None:
        self.check()

    def check(self) -> None:
        """One root, heads in range, no cycles; an error names the sentence ``id``."""
        where = f"sentence {self.id!r}" if self.id else "a sentence"
        n = len(self.tokens)
        if n == 0:
            raise ValueError(f"{where} has no tokens")
        if not len(self.pos) == len(self.heads) == len(self.relations) == n:
            raise ValueError(
                f"{where}: {n} tokens but {len(self.pos)} POS tags, {len(self.heads)} heads and "
                f"{len(self.relations)} relations"
            )
        if any(not 0 <= h <= n for h in self.heads):
            raise ValueError(f"{where}: a head outside 0..{n}: {self.heads}")
        if self.heads.count(0) != 1:
            raise ValueError(f"{where}: {self.heads.count(0)} roots (heads equal to 0); a dependency tree has one")
        for start in range(n):  # follow heads upward; more than n steps means a cycle
            node, steps = start, 0
            while self.heads[node] != 0:
                node, steps = self.heads[node] - 1, steps + 1
                if steps > n:
                    raise ValueError(f"{where}: the heads {self.heads} form a cycle")

    @property
    def root(self) -> int:
        """0-based position of the root token."""
        return self.heads.index(0)

    def dependents(self) -> list[list[int]]:
        """0-based dependents of each token, in sentence order."""
        children: list[list[int]] = [[] for _ in self.tokens]
        for position, head in enumerate(self.heads):
            if head:
                children[head - 1].append(position)
        return children

    def to_dict(self) -> dict:
        constituency = self.constituency.to_list() if isinstance(self.constituency, Tree) else self.constituency
        return {
            "id": self.id,
            "tokens": self.tokens,
            "pos": self.pos,
            "heads": self.heads,
            "relations": self.relations,
            "constituency": constituency,
            "constituency_source": self.constituency_source,
            "text": self.text,
        }

    @classmethod
    def from_dict(cls, data: dict) -> ParsedSentence:
        constituency = data.get("constituency")
        return cls(
            data["tokens"],
            data["pos"],
            data["heads"],
            data["relations"],
            None if constituency is None else Tree.from_list(constituency),
            data.get("constituency_source"),
            data.get("id", ""),
            data.get("text", ""),
        )
