"""Parsed sentences, binarization and head projection on hand-made parses; CoNLL-U and bracket readers."""

import pytest

from st_contrastive.parsing import ParsedSentence, Tree, binarize, project_heads, read_bracketed, read_conllu

# The cat sat on the mat .   (UD: cat <- sat -> mat, The <- cat, on/the <- mat, . <- sat)
CAT = ParsedSentence(
    tokens=["The", "cat", "sat", "on", "the", "mat", "."],
    pos=["DET", "NOUN", "VERB", "ADP", "DET", "NOUN", "PUNCT"],
    heads=[2, 3, 0, 6, 6, 3, 3],
    relations=["det", "nsubj", "root", "case", "det", "obl", "punct"],
    id="cat",
)

CONLLU = """# sent_id = s1
# text = The cat sat.
1	The	the	DET	DT	_	2	det	_	_
2	cat	cat	NOUN	NN	_	3	nsubj	_	_
3	sat	sit	VERB	VBD	_	0	root	_	SpaceAfter=No
4	.	.	PUNCT	.	_	3	punct	_	_

# sent_id = s2
1	Go	go	VERB	VB	_	0	root	_	_

"""


def test_head_projection_builds_one_constituent_per_head():
    tree = project_heads(CAT)
    assert tree.bracketed() == "(VERBP (NOUNP 0 1) 2 (NOUNP 3 4 5) 6)"
    assert sorted(tree.leaves()) == list(range(7))


def test_binarization_factors_to_the_left_and_collapses_unary_chains():
    assert (
        binarize(project_heads(CAT)).bracketed() == "(VERBP (@VERBP (@VERBP (NOUNP 0 1) 2) (NOUNP (@NOUNP 3 4) 5)) 6)"
    )
    ((tree, words, tags),) = read_bracketed(text="(ROOT (S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .)))")
    assert (words, tags) == (["The", "cat", "sat", "."], ["DT", "NN", "VBD", "."])
    binary = binarize(tree)
    assert binary.bracketed(words) == "(ROOT+S (@S (NP The cat) sat) .)"
    assert binary.is_binary() and binary.leaves() == [0, 1, 2, 3]


def test_single_word_chain_and_star_trees():
    one = ParsedSentence(["Go"], ["VERB"], [0], ["root"])
    assert project_heads(one) == 0 and binarize(project_heads(one)) == 0
    chain = ParsedSentence(["a", "b", "c", "d"], ["X"] * 4, [2, 3, 4, 0], ["dep"] * 3 + ["root"])
    assert binarize(project_heads(chain)).bracketed() == "(XP (XP (XP 0 1) 2) 3)"
    star = ParsedSentence(["a", "b", "c", "d"], ["X"] * 4, [0, 1, 1, 1], ["root"] + ["dep"] * 3)
    assert binarize(project_heads(star)).bracketed() == "(XP (@XP (@XP 0 1) 2) 3)"


def test_json_round_trip():
    sentence = ParsedSentence(
        **{**CAT.__dict__, "constituency": binarize(project_heads(CAT)), "constituency_source": "head-projection"}
    )
    assert ParsedSentence.from_dict(sentence.to_dict()) == sentence


@pytest.mark.parametrize(
    ("heads", "message"), [([0, 0, 1], "2 roots"), ([2, 3, 1], "0 roots"), ([0, 3, 2], "cycle"), ([0, 9, 1], "outside")]
)
def test_bad_parses_are_refused_naming_the_sentence(heads, message):
    with pytest.raises(ValueError, match=f"sentence 'bad'.*{message}"):
        ParsedSentence(["a", "b", "c"], ["X"] * 3, heads, ["dep"] * 3, id="bad")


def test_conllu_reader():
    first, second = read_conllu(text=CONLLU)
    assert (first.id, first.tokens, first.pos, first.heads) == (
        "s1",
        ["The", "cat", "sat", "."],
        ["DET", "NOUN", "VERB", "PUNCT"],
        [2, 3, 0, 3],
    )
    assert first.relations == ["det", "nsubj", "root", "punct"] and first.constituency is None
    assert (second.id, second.tokens, second.root) == ("s2", ["Go"], 0)
    assert isinstance(binarize(project_heads(first)), Tree)
