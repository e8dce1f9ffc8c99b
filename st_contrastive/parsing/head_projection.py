"""A constituency tree derived from a dependency parse by head projection, where no constituency parser exists.

Each token heads one constituent: itself and the constituents of its dependents, in sentence order, labelled by
its POS tag + ``P`` (a ``NOUN`` projects a ``NOUNP``). A token without dependents is a leaf. The result goes
through :func:`~st_contrastive.parsing.binarize.binarize` like a parser's tree; saved configs record that the
trees were derived (``constituency_source="head-projection"``).
"""

from __future__ import annotations

from st_contrastive.parsing.parsed_sentence import ParsedSentence, Tree


def project_heads(sentence: ParsedSentence) -> Tree | int:
    """The (n-ary) constituency tree of ``sentence``'s dependency parse; a position for a one-word sentence."""
    dependents = sentence.dependents()

    def constituent(head: int) -> Tree | int:
        if not dependents[head]:
            return head
        left = [constituent(d) for d in dependents[head] if d < head]
        right = [constituent(d) for d in dependents[head] if d > head]
        return Tree(f"{sentence.pos[head]}P", [*left, head, *right])

    return constituent(sentence.root)
