"""DependencyBagOfWords across sentences and on enhanced graphs: DEPS, empty nodes, links."""
import pickle
import re

import numpy as np
import pytest
from sklearn.base import clone

from nlpfeat.datasets import load_dependency_sample
from nlpfeat.text import DependencyBagOfWords, cooccurrence

# "Sue likes coffee and Bill tea": the second "likes" is elided, an empty node (5.1) of the
# enhanced graph; the basic tree attaches "tea" to "Bill" as an orphan.
GAPPING = """# sent_id = gap
# text = Sue likes coffee and Bill tea
1\tSue\tSue\tPROPN\t_\t_\t2\tnsubj\t2:nsubj\t_
2\tlikes\tlike\tVERB\t_\t_\t0\troot\t0:root\t_
3\tcoffee\tcoffee\tNOUN\t_\t_\t2\tobj\t2:obj\t_
4\tand\tand\tCCONJ\t_\t_\t5\tcc\t5.1:cc\t_
5\tBill\tBill\tPROPN\t_\t_\t2\tconj\t5.1:nsubj\t_
5.1\tlikes\tlike\tVERB\t_\t_\t_\t_\t2:conj:and\tCopyOf=2
6\ttea\ttea\tNOUN\t_\t_\t5\torphan\t5.1:obj\t_
"""

CAT = """1\tThe\tthe\tDET\t_\t_\t3\tdet\t_\t_
2\tfat\tfat\tADJ\t_\t_\t3\tamod\t_\t_
3\tcat\tcat\tNOUN\t_\t_\t4\tnsubj\t_\t_
4\tsat\tsit\tVERB\t_\t_\t0\troot\t_\t_
"""

ALICE, BOB = "1", "3"       # word IDs of the two people in en-10


@pytest.fixture(scope="module")
def sample():
    return load_dependency_sample()


@pytest.fixture(scope="module")
def party(sample):
    """en-10 to en-12 joined: one document of three sentences."""
    return "\n".join(sample.data[sample.sent_id.index(s)] for s in ("en-10", "en-11", "en-12"))


def names(est, docs):
    return est.fit(docs).get_feature_names_out().tolist()


def swap_former_latter(doc):
    """The same document with "the former" and "the latter" exchanged, links following the
    words: "the latter chatted" (Bob), "the former ignored the latter" (Alice ignored Bob)."""
    other = {"former": "latter", "latter": "former"}
    names_ = {"former": ALICE, "latter": BOB}
    lines = []
    for line in doc.split("\n"):
        cols = line.split("\t")
        if len(cols) == 10 and cols[1] in other:
            cols[1] = cols[2] = other[cols[1]]
            cols[9] = re.sub(r"/\d+:", f"/{names_[cols[1]]}:", cols[9])
        lines.append("\t".join(cols))
    return "\n".join(lines)


def who_did_what(features):
    """(predicate, person) pairs of the paths ``predicate|nsubj|x|coref|person``."""
    parts = (f.split("|") for f in features)
    return {(p[0], p[4]) for p in parts if len(p) == 5 and p[1] == "nsubj" and p[3] == "coref"}


def window_counts(doc, words, window):
    """Window co-occurrence counts of ``words`` in ``doc`` (all its sentences in order)."""
    tokens = [line.split("\t")[1].lower() for line in doc.split("\n")
              if line and line[0] != "#"]
    counts, vocabulary = cooccurrence([tokens], window=window, vocabulary=words)
    return counts.toarray(), vocabulary


# -- across sentences --------------------------------------------------------------------
def test_links_find_who_did_what_where_windows_cannot(party):
    """Swapping "the former" and "the latter" swaps who chatted; no window notices."""
    swapped = swap_former_latter(party)
    est = DependencyBagOfWords(features=("path2",), graph="enhanced", sentence_links=("misc",))
    assert who_did_what(names(est, [party])) == {
        ("chatted", "alice"), ("ignored", "bob"), ("tasted", "bob")}
    assert who_did_what(names(est, [swapped])) == {
        ("chatted", "bob"), ("ignored", "alice"), ("tasted", "alice")}
    assert "ignored|obj|former|coref|alice" in names(est, [party])
    words = ["alice", "bob", "chatted", "ignored", "tasted"]
    n_tokens = sum(1 for line in party.split("\n") if line and line[0] != "#")
    for window in range(1, n_tokens + 1):
        a, vocabulary = window_counts(party, words, window)
        b, _ = window_counts(swapped, words, window)
        people = [vocabulary["alice"], vocabulary["bob"]]
        acts = [vocabulary[w] for w in ("chatted", "ignored", "tasted")]
        np.testing.assert_array_equal(a[np.ix_(people, acts)], b[np.ix_(people, acts)])
    assert (a[np.ix_(people, acts)] > 0).all()     # the widest window sees them all alike
    assert who_did_what(names(DependencyBagOfWords(features=("path2",)), [party])) == set()


def test_chinese_original_links_within_its_sentence(sample):
    zh = sample.data[sample.sent_id.index("zh-8")]
    est = DependencyBagOfWords(features=("triple", "path2"), graph="enhanced",
                               sentence_links=("misc",))
    got = set(names(est, [zh]))
    assert {"前者|coref|张三", "后者|coref|李四"} <= got
    assert who_did_what(got) == {("聊天", "张三"), ("理", "李四"), ("品尝", "李四")}
    assert "理|obj|前者|coref|张三" in got


def test_roots_join_consecutive_sentences(party, sample):
    est = DependencyBagOfWords(features=("triple", "path2"), sentence_links=("roots",))
    got = set(names(est, [party]))
    assert {"went|next|chatted", "chatted|next|ignored"} <= got
    assert "went|next|chatted|nsubj|former" in got and "went|next|ignored" not in got
    alone = [sample.data[sample.sent_id.index("en-11")]]
    assert not any("|next|" in f for f in names(est, alone))    # one sentence: no arc
    no_next = DependencyBagOfWords(features=("triple", "path2"), sentence_links=("roots",),
                                   exclude_relations=("punct", "next"))
    assert not any("|next|" in f for f in names(no_next, [party]))


def test_a_document_is_its_sentences_plus_the_links_between_them(party):
    """Sentences are neither merged nor dropped: without links a document counts the sum of
    its sentences; the links add exactly their own arcs."""
    sentences = [b + "\n" for b in party.strip("\n").split("\n\n")]
    for options in [{}, {"graph": "enhanced"}, {"features": ("triple", "path2")}]:
        whole = DependencyBagOfWords(**options).fit([party])
        per = whole.transform(sentences).toarray().sum(axis=0)
        np.testing.assert_array_equal(whole.transform([party]).toarray()[0], per)
    linked = DependencyBagOfWords(sentence_links=("roots", "misc")).fit([party])
    plain = set(names(DependencyBagOfWords(), [party]))
    assert set(linked.get_feature_names_out()) - plain == {
        "went|next|chatted", "chatted|next|ignored", "former|coref|alice",
        "latter|coref|bob"}
    X = linked.transform([party]).toarray()[0]
    assert X[linked.vocabulary_["former|coref|alice"]] == 2      # "former" twice, both links


def test_spacy_like_doc_joins_its_sentence_roots():
    class Tok:
        def __init__(self, i, text, dep):
            self.i, self.text, self.lemma_, self.pos_, self.dep_ = i, text, text, "X", dep

    class Doc:
        def __init__(self):
            t = [Tok(0, "cats", "nsubj"), Tok(1, "purr", "ROOT"), Tok(2, "dogs", "nsubj"),
                 Tok(3, "bark", "ROOT")]
            t[0].head, t[1].head, t[2].head, t[3].head = t[1], t[1], t[3], t[3]
            self.sents = [t[:2], t[2:]]

    est = DependencyBagOfWords(sentence_links=("roots", "misc"), graph="enhanced")
    assert names(est, [Doc()]) == ["ROOT|root|bark", "ROOT|root|purr", "bark|nsubj|dogs",
                                   "purr|next|bark", "purr|nsubj|cats"]


@pytest.mark.parametrize("misc, message", [
    ("Link=-1/1:coref", (r"line 1: Link to sentence -1 from sentence 0 lies outside this "
                         r"document, which has 2 sentences")),
    ("Link=1/9:coref", r"line 1: Link to word 9 of sentence 1, which has 4 words"),
    ("Link=1/2", r"line 1: MISC Link '1/2' is not offset/word:relation"),
    ("SpaceAfter=No|Link=+1/2:coref,x", r"line 1: MISC Link 'x' is not offset/word:relation"),
])
def test_malformed_links_name_the_line(misc, message):
    doc = CAT.replace("\t3\tdet\t_\t_", f"\t3\tdet\t_\t{misc}") + "\n" + CAT
    with pytest.raises(ValueError, match="CoNLL-U document 0, sentence 0, " + message):
        DependencyBagOfWords(sentence_links=("misc",)).fit([doc])
    DependencyBagOfWords().fit([doc])       # not read unless asked for: no error


def test_link_offsets_are_relative_so_documents_can_be_concatenated(party):
    """The same links whatever comes before the document in one text."""
    est = DependencyBagOfWords(features=("path2",), sentence_links=("misc",))
    alone = who_did_what(names(est, [party]))
    assert alone == who_did_what(names(est, [CAT + "\n" + party])) == {
        ("chatted", "alice"), ("ignored", "bob")}


# -- the enhanced graph --------------------------------------------------------------------
def test_enhanced_graph_reads_deps(sample, party):
    basic = set(names(DependencyBagOfWords(), [party]))
    enhanced = set(names(DependencyBagOfWords(graph="enhanced"), [party]))
    assert {"tasted|nsubj|latter", "went|nsubj|bob", "went|obl:to|party",
            "tasted|obl:with|care", "alice|conj:and|bob"} <= enhanced
    assert not {"tasted|nsubj|latter", "went|nsubj|bob"} & basic
    universal = names(DependencyBagOfWords(graph="enhanced", universal_relations=True),
                      [party])
    assert "went|obl|party" in universal and "alice|conj|bob" in universal
    no_deps = list(sample.data[:9])           # no DEPS: the enhanced graph is the basic tree
    assert names(DependencyBagOfWords(graph="enhanced"), no_deps) == names(
        DependencyBagOfWords(), no_deps)


def test_propagate_conj_applies_to_basic_trees_only(party):
    enhanced = DependencyBagOfWords(graph="enhanced")
    assert names(clone(enhanced).set_params(propagate_conj=True), [party]) == names(
        enhanced, [party])
    tree = CAT + "\n" + CAT
    assert names(DependencyBagOfWords(graph="enhanced", propagate_conj=True), [tree]) == \
        names(DependencyBagOfWords(propagate_conj=True), [tree])


def test_empty_nodes_are_nodes_of_the_enhanced_graph_only():
    est = DependencyBagOfWords(features=("triple", "path2"), graph="enhanced")
    got = set(names(est, [GAPPING]))
    assert {"likes|conj:and|likes", "likes|nsubj|bill", "likes|obj|tea",
            "likes|conj:and|likes|obj|tea", "likes|cc|and"} <= got
    assert "bill|orphan|tea" not in got
    basic = set(names(DependencyBagOfWords(features=("triple", "path2")), [GAPPING]))
    assert "bill|orphan|tea" in basic and "likes|obj|tea" not in basic
    lemma = names(DependencyBagOfWords(graph="enhanced", word="lemma"), [GAPPING])
    assert "like|conj:and|like" in lemma
    no_form = GAPPING.replace("5.1\tlikes\tlike\t", "5.1\t_\tlike\t")
    assert "likes|conj:and|like" in names(DependencyBagOfWords(graph="enhanced"), [no_form])
    nothing = GAPPING.replace("5.1\tlikes\tlike\t", "5.1\t_\t_\t")
    assert "likes|conj:and|ELIDED" in names(DependencyBagOfWords(graph="enhanced"), [nothing])


@pytest.mark.parametrize("old, new, message", [
    ("\t2:obj\t", "\t2obj\t", r"line 5: DEPS item '2obj' is not head:deprel"),
    ("\t2:obj\t", "\t9:obj\t", (r"line 5: DEPS item '9:obj' .* a word ID 1 to 6 or an "
                                r"empty node of this sentence \(\['5.1'\]\)")),
    ("\t5.1:obj\t", "\t5.2:obj\t", r"line 9: DEPS item '5.2:obj'"),
    ("\t5.1:cc\t", "\t_\t", r"line 6: DEPS of 4 is '_' while other lines"),
    ("5.1\tlikes", "9.1\tlikes", r"line 8: empty node ID '9.1' is not valid"),
    ("\t2:obj\t", "\t2:obj|\t", r"line 5: DEPS item ''"),
])
def test_malformed_deps_name_the_line(old, new, message):
    bad = GAPPING.replace(old, new)
    with pytest.raises(ValueError, match="CoNLL-U document 1, sentence 0, sent_id 'gap', "
                                         + message):
        DependencyBagOfWords(graph="enhanced").fit([GAPPING, bad])
    DependencyBagOfWords().fit([bad])          # the basic tree does not read DEPS


# -- parameters ----------------------------------------------------------------------------
def test_new_parameters_follow_scikit_learn_conventions(party):
    est = DependencyBagOfWords(graph="enhanced", sentence_links=["roots", "misc"])
    assert est.get_params()["sentence_links"] == ["roots", "misc"]       # stored verbatim
    assert clone(est).get_params() == est.get_params()
    X = est.fit_transform([party])
    restored = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(restored.transform([party]).toarray(), X.toarray())
    once = iter([party])
    np.testing.assert_array_equal(clone(est).fit_transform(once).toarray(), X.toarray())
    assert list(once) == [] and est.transform([]).shape == (0, X.shape[1])
    with pytest.raises(ValueError, match=r"sentence_links=\('next',\): expected a tuple of "
                                         r"\['roots', 'misc'\].*unknown \['next'\]"):
        DependencyBagOfWords(sentence_links=("next",)).fit([party])
    with pytest.raises(ValueError, match="'graph' parameter of DependencyBagOfWords"):
        DependencyBagOfWords(graph="full").fit([party])
    with pytest.raises(ValueError, match="'sentence_links' parameter"):
        DependencyBagOfWords(sentence_links="roots").fit([party])


def test_propagate_conj_keeps_the_tree_paths(sample):
    """A conjunct has two heads with propagate_conj; paths through it follow both (the
    propagated head used to replace the tree's, dropping ``方方正正|conj|光滑|nsubj|表面``)."""
    zh = sample.data[sample.sent_id.index("zh-1")]
    got = set(names(DependencyBagOfWords(features=("path2",), propagate_conj=True), [zh]))
    assert {"方方正正|conj|光滑|nsubj|表面", "盒子|acl|光滑|nsubj|表面"} <= got
    assert set(names(DependencyBagOfWords(features=("path2",)), [zh])) <= got
