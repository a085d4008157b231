"""DependencyBagOfWords: hand-checked features, nltk parity, CoNLL-U errors, spaCy-like Docs."""
import copy
import io
import pickle
from collections import Counter

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline

from nlpfeat.datasets import load_dependency_sample
from nlpfeat.text import DependencyBagOfWords

CAT = """# sent_id = s1
# text = The fat cat sat on the mat.
1\tThe\tthe\tDET\t_\t_\t3\tdet\t_\t_
2\tfat\tfat\tADJ\t_\t_\t3\tamod\t_\t_
3\tcat\tcat\tNOUN\t_\t_\t4\tnsubj\t_\t_
4\tsat\tsit\tVERB\t_\t_\t0\troot\t_\t_
5\ton\ton\tADP\t_\t_\t7\tcase\t_\t_
6\tthe\tthe\tDET\t_\t_\t7\tdet\t_\t_
7\tmat\tmat\tNOUN\t_\t_\t4\tobl\t_\tSpaceAfter=No
8\t.\t.\tPUNCT\t_\t_\t4\tpunct\t_\t_
"""


@pytest.fixture(scope="module")
def sample():
    return load_dependency_sample()


def names(est, docs):
    return est.fit(docs).get_feature_names_out().tolist()


def test_triples_by_hand():
    assert names(DependencyBagOfWords(), [CAT]) == [
        "ROOT|root|sat", "cat|amod|fat", "cat|det|the", "mat|case|on", "mat|det|the",
        "sat|nsubj|cat", "sat|obl|mat"]
    X = DependencyBagOfWords().fit_transform([CAT, CAT + "\n" + CAT])
    assert X.toarray().tolist() == [[1] * 7, [2] * 7]


def test_other_feature_kinds_by_hand():
    dep = DependencyBagOfWords(features=("head_relation", "relation_dependent", "path2"),
                               word="lemma", exclude_relations=("punct", "root", "det"))
    assert names(dep, [CAT]) == [
        "_|amod|fat", "_|case|on", "_|nsubj|cat", "_|obl|mat", "cat|amod|_", "mat|case|_",
        "sit|nsubj|_", "sit|nsubj|cat|amod|fat", "sit|obl|_", "sit|obl|mat|case|on"]
    gen = DependencyBagOfWords(generalize="head", lowercase=False, exclude_relations=None)
    assert "NOUN|det|The" in names(gen, [CAT]) and "VERB|punct|." in gen.vocabulary_
    both = DependencyBagOfWords(generalize="both", exclude_relations=("punct", "det"))
    assert names(both, [CAT]) == ["NOUN|amod|ADJ", "NOUN|case|ADP", "ROOT|root|VERB",
                                  "VERB|nsubj|NOUN", "VERB|obl|NOUN"]


def test_every_modifier_of_the_box_is_recovered(sample):
    en, zh = sample.data[sample.sent_id.index("en-1")], sample.data[sample.sent_id.index("zh-1")]
    got = set(names(DependencyBagOfWords(), [en]))
    assert {"box|amod|square", "box|amod|smooth", "box|amod|heat-resistant", "box|amod|cheap",
            "box|compound|stainless-steel"} <= got
    basic = set(names(DependencyBagOfWords(), [zh]))
    assert "盒子|acl|方方正正" in basic and "盒子|acl|光滑" not in basic
    enhanced = set(names(DependencyBagOfWords(propagate_conj=True), [zh]))
    assert {f"盒子|acl|{w}" for w in ["方方正正", "光滑", "耐", "便宜"]} <= enhanced
    assert "盒子|compound|不锈钢" in enhanced
    path = set(names(DependencyBagOfWords(features=("path2",)), [zh]))
    assert "盒子|acl|方方正正|conj|光滑" in path


def test_propagate_conj_coordination(sample):
    doc = sample.data[sample.sent_id.index("en-9")]
    assert "box|amod|light" not in names(DependencyBagOfWords(), [doc])
    got = names(DependencyBagOfWords(propagate_conj=True), [doc])
    assert {"box|amod|small", "box|amod|light", "box|amod|cheap"} <= set(got)


def test_universal_relations_and_lemma_fallback():
    text = CAT.replace("\tnsubj\t", "\tnsubj:pass\t").replace("\tsit\t", "\t_\t")
    assert "sat|nsubj:pass|cat" in names(DependencyBagOfWords(word="lemma"), [text])
    assert "sat|nsubj|cat" in names(DependencyBagOfWords(universal_relations=True), [text])
    excluded = DependencyBagOfWords(exclude_relations=("nsubj",)).fit([text])
    assert not any("nsubj" in f for f in excluded.get_feature_names_out())


@pytest.mark.parametrize("index", range(20))
def test_triples_match_nltk_dependency_graph(sample, index):
    from nltk.parse import DependencyGraph

    block = sample.data[index]
    body = "\n".join(line for line in block.split("\n") if line and line[0] != "#")
    graph = DependencyGraph(body, top_relation_label="root")
    for generalize, pick in [(None, 0), ("both", 1)]:
        expected = Counter(f"{h[pick]}|{r}|{d[pick]}" for h, r, d in graph.triples())
        est = DependencyBagOfWords(lowercase=False, exclude_relations=("root",),
                                   generalize=generalize)
        X = est.fit_transform([block]).toarray()[0]
        assert dict(zip(est.get_feature_names_out(), X.tolist())) == dict(expected)


def test_multiword_tokens_and_empty_nodes_are_skipped():
    text = ("1-2\tdel\t_\t_\t_\t_\t_\t_\t_\t_\n1\tde\tde\tADP\t_\t_\t2\tcase\t_\t_\n"
            "2\tel\tel\tDET\t_\t_\t0\troot\t_\t_\n2.1\tx\tx\tX\t_\t_\t_\t_\t_\t_\n")
    assert names(DependencyBagOfWords(), [text]) == ["ROOT|root|el", "el|case|de"]


def test_inputs_string_bytes_file_filename_and_whole_file(sample, tmp_path):
    whole = "".join(block + "\n" for block in sample.data)
    path = tmp_path / "sample.conllu"
    path.write_text(whole, encoding="utf-8")
    per_sentence = DependencyBagOfWords().fit(sample.data)
    X = per_sentence.transform(sample.data)
    total = np.asarray(X.sum(axis=0)).ravel()
    for est, docs in [(DependencyBagOfWords(), [whole]),
                      (DependencyBagOfWords(), [whole.encode("utf-8")]),
                      (DependencyBagOfWords(input="filename"), [str(path)]),
                      (DependencyBagOfWords(input="filename"), [path]),
                      (DependencyBagOfWords(input="file"), [io.StringIO(whole)])]:
        got = est.fit_transform(docs)
        assert est.vocabulary_ == per_sentence.vocabulary_
        np.testing.assert_array_equal(got.toarray()[0], total)


@pytest.mark.parametrize("bad, message", [
    (CAT.replace("2\tfat\tfat\tADJ\t_\t_\t3\tamod\t_\t_", "2 fat fat ADJ _ _ 3 amod _ _"),
     r"document 1, sentence 0, sent_id 's1', line 4: a word line needs 10 .*got 1"),
    (CAT.replace("\t7\tcase\t", "\t9\tcase\t"),
     r"sentence 0, sent_id 's1', line 7: HEAD 9 is out of range; .* 8 words"),
    (CAT.replace("\t4\tnsubj\t", "\t2\tnsubj\t"),
     r"sent_id 's1', line 4: the heads form a cycle \(word 2"),
    (CAT.replace("\t3\tdet\t", "\tx\tdet\t"), r"line 3: HEAD 'x' is not an integer"),
    (CAT.replace("5\ton\t", "6\ton\t"), r"line 7: word ID 6 out of order; expected 5"),
])
def test_malformed_conllu_names_sentence_and_line(bad, message):
    with pytest.raises(ValueError, match=message):
        DependencyBagOfWords().fit([CAT, bad])
    with pytest.raises(ValueError, match="CoNLL-U document 1, "):
        DependencyBagOfWords().fit([CAT, bad])


def test_second_sentence_is_named():
    bad = CAT + "\n" + CAT.replace("s1", "s2").replace("\t7\tcase\t", "\t0\tcase\t"
                                                         ).replace("\t4\tnsubj\t", "\t3\tnsubj\t")
    with pytest.raises(ValueError, match=r"document 1, sentence 1, sent_id 's2', line 16: "
                                         r"the heads form a cycle \(word 3"):
        DependencyBagOfWords().fit([CAT, bad])


class _Token:
    def __init__(self, i, text, lemma, pos, dep):
        self.i, self.text, self.lemma_, self.pos_, self.dep_ = i, text, lemma, pos, dep


class _Doc:
    """The part of spaCy's Doc the transformer reads: sents of tokens with head/dep_/..."""

    def __init__(self, conllu, offset=0):
        rows = [line.split("\t") for line in conllu.split("\n") if line and line[0] != "#"]
        self.tokens = [_Token(offset + int(r[0]) - 1, r[1], r[2], r[3],
                              "ROOT" if r[7] == "root" else r[7]) for r in rows]
        for tok, r in zip(self.tokens, rows):
            tok.head = self.tokens[int(r[6]) - 1] if r[6] != "0" else tok

    @property
    def sents(self):
        yield self.tokens


def test_spacy_like_doc_gives_the_conllu_features(sample):
    docs = [_Doc(block) for block in sample.data]
    a = DependencyBagOfWords(word="lemma", features=("triple", "path2")).fit(sample.data)
    b = DependencyBagOfWords(word="lemma", features=("triple", "path2")).fit(docs)
    assert a.vocabulary_ == b.vocabulary_
    np.testing.assert_array_equal(a.transform(docs).toarray(), a.transform(sample.data).toarray())


def test_unparsed_doc_is_rejected_clearly():
    class Unparsed:
        @property
        def sents(self):
            raise ValueError("[E030] Sentence boundaries unset.")

    with pytest.raises(ValueError, match=r"Document 0 is a Doc without a dependency parse"):
        DependencyBagOfWords().fit([Unparsed()])


def test_real_spacy_doc():
    spacy = pytest.importorskip("spacy")
    from spacy.tokens import Doc

    doc = Doc(spacy.blank("en").vocab, words=["The", "fat", "cat", "sat"],
              heads=[2, 2, 3, 3], deps=["det", "amod", "nsubj", "ROOT"],
              pos=["DET", "ADJ", "NOUN", "VERB"], lemmas=["the", "fat", "cat", "sit"])
    assert names(DependencyBagOfWords(word="lemma"), [doc]) == [
        "ROOT|root|sit", "cat|amod|fat", "cat|det|the", "sit|nsubj|cat"]


def test_sklearn_protocol(sample):
    docs = list(sample.data)
    snapshot = copy.deepcopy(docs)
    est = DependencyBagOfWords(features=("triple", "relation_dependent"), min_df=1)
    assert clone(est).get_params() == est.get_params()
    with pytest.raises(NotFittedError):
        est.transform(docs)
    X = est.fit_transform(docs)
    assert docs == snapshot and X.format == "csr" and X.dtype == np.int64
    gen = iter(docs)
    again = clone(est).fit(gen)
    assert list(gen) == []
    restored = pickle.loads(pickle.dumps(again))
    np.testing.assert_array_equal(restored.transform(docs).toarray(), X.toarray())
    assert not hasattr(clone(again), "vocabulary_")
    assert est.transform([CAT]).shape == (1, X.shape[1])      # unseen features ignored
    top = DependencyBagOfWords(max_features=5, binary=True).fit(docs)
    assert len(top.vocabulary_) == 5 and top.transform(docs).max() == 1
    assert (np.asarray((DependencyBagOfWords(min_df=2).fit_transform(docs) > 0).sum(axis=0)) >= 2).all()
    y = (sample.language == "zh").astype(int)
    grid = GridSearchCV(make_pipeline(DependencyBagOfWords(), LogisticRegression()),
                        {"dependencybagofwords__generalize": [None, "both"]}, cv=2).fit(docs, y)
    assert grid.best_score_ >= 0.5


def test_bad_parameters_and_documents():
    with pytest.raises(ValueError, match=r"unknown \['quad'\]"):
        DependencyBagOfWords(features=("triple", "quad")).fit([CAT])
    with pytest.raises(ValueError, match="word"):
        DependencyBagOfWords(word="stem").fit([CAT])
    with pytest.raises(ValueError, match=r"Wrap a single CoNLL-U document in a list"):
        DependencyBagOfWords().fit(CAT)
    with pytest.raises(TypeError, match="Document 1 is of type int"):
        DependencyBagOfWords().fit([CAT, 3])
    with pytest.raises(ValueError, match="Empty vocabulary"):
        DependencyBagOfWords(exclude_relations=("root", "det", "amod", "nsubj", "case", "obl",
                                                "punct")).fit([CAT])


def test_loader_and_its_description(sample):
    assert sample.sent_id[:2] == ["en-1", "en-2"] and len(sample.data) == 20
    assert (sample.language == "en").sum() == 12
    assert sample.DESCR.startswith("## `load_dependency_sample(")
    assert "CC0" in sample.DESCR
    zh = load_dependency_sample("zh")
    assert zh.sent_id[0] == "zh-1" and set(zh.language) == {"zh"}
    with pytest.raises(ValueError, match="language"):
        load_dependency_sample("fr")


def test_sample_file_is_consistent(sample):
    """Each sentence's # text is its forms joined as MISC SpaceAfter says; one root each."""
    for block, text in zip(sample.data, sample.text):
        rows = [line.split("\t") for line in block.split("\n") if line and line[0] != "#"]
        assert all(len(r) == 10 for r in rows)
        joined = "".join(r[1] + ("" if "SpaceAfter=No" in r[9] else " ") for r in rows)
        assert joined.rstrip() == text
        assert [r[7] for r in rows].count("root") == 1
        assert [r[6] for r in rows].count("0") == 1
