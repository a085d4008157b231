"""gensim backend of :class:`~nlpfeat.text.TopicModel`: what gensim's removed ``sklearn_api``
wrappers (``LdaTransformer``, ``LsiTransformer``, ``NmfTransformer``) gave.

``method="lda"`` wraps ``gensim.models.LdaModel`` (online variational Bayes, float64),
``"lsi"`` wraps ``LsiModel`` and ``"nmf"`` wraps ``gensim.models.Nmf``. The CSR matrix is
handed to ``LdaModel`` once as gensim's bag-of-words format (a list of ``(column, count)``
lists), to ``Nmf``, which accepts it, as a terms x documents CSC matrix, and to
``LsiModel`` as the CSC chunks its one-pass training would build from the bag of words.
gensim's inference draws random numbers (LDA's initial gamma, NMF's coordinate order), which
would make a document's topics depend on the other documents of the batch; ``transform`` and
``perplexity`` therefore run it with fixed draws: gamma starts at its mean, 1, as in
scikit-learn's ``transform``, and coordinates are visited in order.
"""
from contextlib import contextmanager

import numpy as np
import scipy.sparse as sp
from scipy.special import digamma, gammaln, logsumexp

from nlpfeat._chunking import gen_row_chunks
from nlpfeat._persist import decode, encode, import_classes
from nlpfeat._progress import progress_bar
from nlpfeat._validation import import_optional

__all__ = ["GensimTopicBackend", "lda_bound", "to_bow"]

#: The gensim classes a fitted model is made of, saved as their attributes (skops would list
#: them as untrusted types) and rebuilt from them, as skops rebuilds a trusted type.
_SAVED_CLASSES = {"gensim.models.ldamodel": ["LdaModel", "LdaState"],
                  "gensim.models.nmf": ["Nmf"],
                  "gensim.models.lsimodel": ["LsiModel", "Projection"],
                  "gensim.utils": ["FakeDict"]}
_MODEL_CLASSES = {"lda": "LdaModel", "nmf": "Nmf", "lsi": "LsiModel"}


class _FixedDraws:
    """Stands in for the RandomState of a gensim model during inference: no randomness."""

    @staticmethod
    def gamma(shape, scale, size):
        return np.full(size, shape * scale)                    # the Gamma(shape, scale) mean

    @staticmethod
    def permutation(n):
        return np.arange(n)


@contextmanager
def _fixed_draws(model):
    saved, model.random_state = model.random_state, _FixedDraws()
    try:
        yield model
    finally:
        model.random_state = saved


def _dirichlet_expectation(params):
    """E[log x] under Dirichlet(params), row-wise."""
    return digamma(params) - digamma(params.sum(axis=1, keepdims=True))


def lda_bound(X, gamma, lam, alpha, eta, *, working_memory=None):
    """Variational lower bound E_q[log p(X, theta, beta)] - E_q[log q] of an LDA model.

    The bound of gensim's ``LdaModel.bound`` (Hoffman et al., 2010, eq. 4), vectorised over
    the non-zeros of ``X`` (gensim loops over documents and words, and fails in float64).

    Parameters
    ----------
    X : sparse matrix of shape (n_samples, n_features)
    gamma : ndarray of shape (n_samples, n_topics)
        Document-topic variational parameters.
    lam : ndarray of shape (n_topics, n_features)
        Topic-word variational parameters (lambda).
    alpha : ndarray of shape (n_topics,)
    eta : float or ndarray of shape (n_features,)
    working_memory : float, default=None
        MiB for the (non-zeros x n_topics) temporary, chunked.

    Returns
    -------
    bound : float
    """
    X = X.tocoo()
    e_theta, e_beta = _dirichlet_expectation(gamma), _dirichlet_expectation(lam)
    score = 0.0
    for rows in gen_row_chunks(X.nnz, 8 * gamma.shape[1], working_memory):
        d, w = X.row[rows], X.col[rows]
        score += X.data[rows] @ logsumexp(e_theta[d] + e_beta[:, w].T, axis=1)
    score += np.sum((alpha - gamma) * e_theta) + np.sum(gammaln(gamma) - gammaln(alpha))
    score += np.sum(gammaln(alpha.sum()) - gammaln(gamma.sum(axis=1)))
    eta_full = np.broadcast_to(np.asarray(eta, dtype=np.float64), (lam.shape[1],))
    score += np.sum((eta_full - lam) * e_beta) + np.sum(gammaln(lam) - gammaln(eta_full))
    score += np.sum(gammaln(eta_full.sum()) - gammaln(lam.sum(axis=1)))
    return float(score)


def to_bow(X):
    """CSR matrix -> gensim corpus: one list of ``(column, value)`` pairs per document."""
    pairs, indptr = list(zip(X.indices.tolist(), X.data.tolist())), X.indptr.tolist()
    return [pairs[a:b] for a, b in zip(indptr[:-1], indptr[1:])]


class BowStream:
    """A CSR matrix as a re-iterable gensim corpus, converted a block of rows at a time.

    gensim reads its training corpus document by document (once per pass), so the
    Python lists of the bag of words (about 120 bytes per non-zero) exist for one block
    only; the sparse matrix is the memory bound.
    """

    def __init__(self, X, block=2048, verbose=0):
        self.X, self.block, self.verbose = X, block, verbose

    def __len__(self):
        return self.X.shape[0]

    def __iter__(self):                   # with ``verbose``, a bar per pass of gensim's
        with progress_bar(self.verbose, "TopicModel: pass over the documents",
                          total=len(self), unit="doc") as bar:
            for start in range(0, self.X.shape[0], self.block):
                block = to_bow(self.X[start : start + self.block])
                yield from block
                bar.update(len(block))


class GensimTopicBackend:
    """Fit one gensim topic model with TopicModel's parameter names.

    Parameter mapping: ``n_topics`` -> ``num_topics``; ``max_iter`` -> ``passes`` (LDA,
    NMF: epochs over the corpus) or ``power_iters`` (LSI); ``alpha`` / ``eta`` -> ``alpha``
    / ``eta`` (symmetric scalars; ``None`` = gensim's ``'symmetric'``, 1 / n_topics);
    ``random_state`` -> ``random_state`` (LDA, NMF: the same RandomState, so
    ``random_state=0`` fits exactly what gensim fits with ``random_state=0``; LSI: an int
    ``random_seed`` drawn from it). ``None`` keeps gensim's
    defaults (1 pass, 2 power iterations). LDA runs in float64; LDA and NMF get
    ``eval_every=None`` (gensim's per-update perplexity, which only feeds its log, is skipped);
    pass ``backend_params={"eval_every": 10}`` to restore it.
    """

    def __init__(self, method, n_topics, *, max_iter, alpha, eta, random_state, params):
        models = import_optional("gensim.models", "gensim", f"TopicModel(method={method!r}, "
                                 "backend='gensim')")
        self.method, self.n_topics, self.rng = method, n_topics, random_state
        kwargs = {"num_topics": n_topics}
        self.cls = getattr(models, _MODEL_CLASSES[method])
        if method == "lda":
            # eval_every=None: no perplexity estimate after each update (it only logs)
            kwargs.update(dtype=np.float64, random_state=random_state, eval_every=None)
            if alpha is not None:
                kwargs["alpha"] = np.full(n_topics, alpha, dtype=np.float64)
            if eta is not None:
                kwargs["eta"] = float(eta)
            if max_iter is not None:
                kwargs["passes"] = max_iter
        elif method == "nmf":
            kwargs.update(random_state=random_state, eval_every=None)
            if max_iter is not None:
                kwargs["passes"] = max_iter
        else:
            kwargs.update(dtype=np.float64, random_seed=random_state.randint(2**31 - 1))
            if max_iter is not None:
                kwargs["power_iters"] = max_iter
        kwargs.update(params)
        self.kwargs = kwargs

    def __getstate__(self):
        state = dict(vars(self), cls=None)                       # the class, by ``method``
        if "model" in state:
            state["model"] = encode(state["model"], import_classes(_SAVED_CLASSES))
        return state

    def __setstate__(self, state):
        models = import_optional("gensim.models", "gensim", "loading a gensim TopicModel")
        vars(self).update(state, cls=getattr(models, _MODEL_CLASSES[state["method"]]))
        if "model" in state:
            self.model = decode(state["model"], import_classes(_SAVED_CLASSES))

    def fit(self, X, verbose=0):
        """Fit on the CSR matrix ``X``; ``verbose``: a bar over the documents of each pass
        of LDA and of LSI's one pass (gensim's NMF reads the matrix whole: no bar)."""
        from gensim.utils import FakeDict

        self.n_terms = X.shape[1]
        if (self.method == "lsi" and self.kwargs.get("onepass", True)
                and not self.kwargs.get("distributed", False)):
            self.model = self._fit_lsi_one_pass(X, verbose)
        else:
            # Nmf takes a terms x documents CSC matrix as it is (same topics as from the bag
            # of words, without the conversion); LdaModel gets the bag of words, streamed.
            corpus = sp.csc_matrix(X.T) if self.method == "nmf" else BowStream(X, verbose=verbose)
            self.model = self.cls(corpus, id2word=FakeDict(self.n_terms), **self.kwargs)
        del self.rng
        self.n_iter_ = self.kwargs.get("power_iters" if self.method == "lsi" else "passes",
                                       2 if self.method == "lsi" else 1)
        return self

    def _fit_lsi_one_pass(self, X, verbose=0):
        """``LsiModel(bow)`` without the bag of words: the same one-pass updates.

        For a bag-of-words corpus, ``LsiModel.add_documents`` (one-pass, serial) turns each
        chunk of ``chunksize`` documents into a terms x documents CSC matrix and merges its
        ``Projection`` into the model. The chunks are taken here straight from ``X``: the
        same matrices, hence the same model (tested), without the round trip through Python
        lists. (gensim's own sparse-matrix input would not pass ``random_seed`` on.)
        """
        from gensim.models.lsimodel import Projection
        from gensim.utils import FakeDict

        model = self.cls(None, id2word=FakeDict(self.n_terms), **self.kwargs)
        Xt = sp.csc_matrix(X.T, dtype=model.dtype)                   # terms x documents
        with progress_bar(verbose, "TopicModel: LSI over the documents", total=X.shape[0],
                          unit="doc") as bar:
            for start in range(0, X.shape[0], model.chunksize):
                chunk = Xt[:, start:start + model.chunksize]
                update = Projection(model.num_terms, model.num_topics, chunk,
                                    extra_dims=model.extra_samples,
                                    power_iters=model.power_iters, dtype=model.dtype,
                                    random_seed=model.random_seed)
                model.projection.merge(update, decay=model.decay)
                bar.update(chunk.shape[1])
        model.docs_processed += X.shape[0]
        return model

    @property
    def components_(self):
        if self.method == "lda":
            return self.model.state.get_lambda()              # pseudo-counts, as scikit-learn's
        if self.method == "nmf":
            return np.asarray(self.model.get_topics(normalize=False), dtype=np.float64)
        u = np.asarray(self.model.projection.u, dtype=np.float64).T
        out = np.zeros((self.n_topics, self.n_terms))      # gensim drops topics beyond the rank
        out[: len(u)] = u[: self.n_topics]
        return out

    @property
    def singular_values_(self):
        s = np.zeros(self.n_topics)                         # zero beyond the rank, as above
        s[: len(self.model.projection.s)] = self.model.projection.s[: self.n_topics]
        return s

    def _gamma(self, X):
        with _fixed_draws(self.model) as model:
            return model.inference(to_bow(X))[0]

    def transform(self, X):
        if self.method == "lsi":                              # gensim's unscaled projection X U
            return np.asarray(X @ self.components_.T)
        if self.method == "lda":
            gamma = self._gamma(X)
            return gamma / gamma.sum(axis=1, keepdims=True)
        from gensim.matutils import sparse2full

        with _fixed_draws(self.model) as model:
            rows = [sparse2full(model.get_document_topics(doc, 0.0), self.n_topics)
                    for doc in to_bow(X)]
        return np.vstack(rows).astype(np.float64) if rows else np.zeros((0, self.n_topics))

    def perplexity(self, X):
        m = self.model
        bound = lda_bound(X, self._gamma(X), m.state.get_lambda(), m.alpha, m.eta)
        return float(np.exp(-bound / X.sum()))
