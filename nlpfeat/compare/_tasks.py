"""The comparison's tasks: their data, their folds and the models that apply to each.

Each fact lives here once: the harness fits what this module builds, and the figures
reuse the data and folds the harness reports, so a heatmap's columns line up with the
training rows the model saw.
"""
import numpy as np

TASKS = {
    "sine": "the textbook task y = 2 sin(x) + x^0.8 + noise, x in [0, 5)",
    "diabetes": "scikit-learn's diabetes data (442 patients, 10 standardised features)",
    "polarity": "sentence polarity (200 movie-review sentences), text features",
    "lee": "Lee document similarity: correlation with mean human ratings (1225 pairs)",
}

REGRESSION_TASKS = ("sine", "diabetes")
ALL_MODELS = {
    "nw-gaussian": "Nadaraya-Watson, Gaussian kernel, leave-one-out bandwidth",
    "nw-epanechnikov": "Nadaraya-Watson, Epanechnikov kernel, leave-one-out bandwidth",
    "nw-gaussian-ard": "Nadaraya-Watson, Gaussian kernel, per-feature bandwidths (loo-ard)",
    "nw-epanechnikov-ard": "Nadaraya-Watson, Epanechnikov kernel, per-feature bandwidths",
    "attn-gaussian-1h": "AttentionRegressor, Gaussian score (learned metric), 1 head",
    "attn-gaussian-4h": "AttentionRegressor, Gaussian score, 4 heads",
    "attn-additive-1h": "AttentionRegressor, additive score, 1 head",
    "attn-additive-4h": "AttentionRegressor, additive score, 4 heads",
    "attn-scaled_dot-1h": "AttentionRegressor, scaled dot-product score, 1 head",
    "attn-scaled_dot-4h": "AttentionRegressor, scaled dot-product score, 4 heads",
    "knn": "k nearest neighbours (k chosen by inner CV)",
    "kernel-ridge": "kernel ridge regression, RBF kernel (alpha, gamma by inner CV)",
    "ridge": "ridge regression (alpha by inner CV)",
    "logistic": "logistic regression on TF-IDF",
    "pmi-mean": "PMI embeddings, mean pooling",
    "pmi-attention": "PMI embeddings, kernel attention pooling (Nadaraya-Watson over tokens)",
    "bow": "bag of words, cosine",
    "tfidf": "TF-IDF, cosine",
    "logentropy-lsi": "log-entropy weights + LSI (200 topics), cosine",
    "torch-mha": "PyTorch nn.MultiheadAttention of the same shape, trained the same way",
}

TASK_MODELS = {
    "sine": [m for m in ALL_MODELS if m.startswith(("nw-", "attn-"))]
    + ["knn", "kernel-ridge", "ridge", "torch-mha"],
    "diabetes": [m for m in ALL_MODELS if m.startswith(("nw-", "attn-"))]
    + ["knn", "kernel-ridge", "ridge", "torch-mha"],
    "polarity": ["nw-gaussian", "nw-epanechnikov", "knn", "logistic", "pmi-mean", "pmi-attention"],
    "lee": ["bow", "tfidf", "logentropy-lsi", "pmi-mean", "pmi-attention"],
}


def select_models(task, models, with_torch):
    """The models to run on ``task``: those asked for (all by default) that apply to it."""
    names = [m for m in TASK_MODELS[task] if models is None or m in models]
    if "torch-mha" in names and not with_torch:
        names.remove("torch-mha")
    return names


# ----------------------------------------------------------------------------- data
def regression_data(task, quick, seed):
    """``(X, y, metric, scoring)`` of a regression task (the sizes used everywhere)."""
    if task == "sine":
        from nlpfeat.datasets import make_nw_regression

        X, y = make_nw_regression(60 if quick else 200, noise=0.5, random_state=seed)
        return X, y, "mse", "neg_mean_squared_error"
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    if quick:
        X, y = X[:150], y[:150]
    return X, y, "r2", "r2"


def regression_cv(quick, seed):
    """The cross-validation splitter of the regression tasks."""
    from sklearn.model_selection import KFold

    return KFold(3 if quick else 5, shuffle=True, random_state=seed)


def sine_truth(x):
    """The noise-free sine task, ``2 sin(x) + x ** 0.8``."""
    return 2 * np.sin(x) + x ** 0.8


# ----------------------------------------------------------------------------- models
def _attention_params(quick, seed):
    # Each training step attends over at most 128 random memory slots (prediction uses all).
    return dict(max_iter=20 if quick else 60, learning_rate=1e-2, batch_size=32,
                max_memory=128, random_state=seed)


def regression_model(name, n_features, quick, seed):
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.linear_model import RidgeCV
    from sklearn.model_selection import GridSearchCV
    from sklearn.neighbors import KNeighborsRegressor

    from nlpfeat.attention import AttentionRegressor
    from nlpfeat.kernels import NadarayaWatsonRegressor

    if name.startswith("nw-"):
        kernel = name.split("-")[1]
        return NadarayaWatsonRegressor(kernel=kernel,
                                       bandwidth="loo-ard" if name.endswith("ard") else "loo")
    if name.startswith("attn-"):
        _, score, heads = name.split("-")
        return AttentionRegressor(score_func=score, n_heads=int(heads[:-1]),
                                  d_k=8 if score == "additive" else None,
                                  **_attention_params(quick, seed))
    if name == "knn":
        return GridSearchCV(KNeighborsRegressor(), {"n_neighbors": [3, 5, 10, 20]}, cv=3)
    if name == "kernel-ridge":
        return GridSearchCV(KernelRidge(kernel="rbf"),
                            {"alpha": [1e-2, 1e-1, 1.0], "gamma": np.array([0.1, 1.0, 10.0]) / n_features},
                            cv=3)
    if name == "ridge":
        return RidgeCV(alphas=np.logspace(-3, 3, 13))
    if name == "torch-mha":
        from nlpfeat.compare._torch_baseline import TorchAttentionRegressor

        return TorchAttentionRegressor(n_heads=4, **_attention_params(quick, seed))
    raise KeyError(name)


def pmi_embedding(docs, seed, quick):
    from nlpfeat.text import PMIEmbedding

    return PMIEmbedding(n_components=50 if quick else 200, window=5, min_count=2,
                        stop_words="english", random_state=seed).fit(docs)


def pooling(name, embedding):
    """Mean pooling, or Nadaraya-Watson attention pooling (median bandwidth, idf query).

    The fitted embedding goes in as gensim KeyedVectors: scikit-learn's ``clone`` (run by
    ``cross_validate``) would turn a fitted estimator parameter into an unfitted one.
    """
    from nlpfeat.text import KernelAttentionPooling

    embedding = embedding.to_keyedvectors()
    if name == "pmi-mean":
        return KernelAttentionPooling(embedding, input="content", stop_words="english",
                                      query="mean", bandwidth=1e6)
    return KernelAttentionPooling(embedding, input="content", stop_words="english",
                                  query="idf", bandwidth="median")


def polarity_model(name, embedding, seed):
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline

    from nlpfeat.kernels import NadarayaWatsonClassifier
    from nlpfeat.text import TfidfVectorizer

    if name.startswith("nw-"):
        clf = NadarayaWatsonClassifier(kernel=name.split("-")[1], metric="cosine", bandwidth="loo")
        return make_pipeline(TfidfVectorizer(), clf), "tfidf"
    if name == "knn":
        return make_pipeline(TfidfVectorizer(), KNeighborsClassifier(10, metric="cosine")), "tfidf"
    if name == "logistic":
        return make_pipeline(TfidfVectorizer(), LogisticRegression(max_iter=1000)), "tfidf"
    return make_pipeline(pooling(name, embedding), LogisticRegression(max_iter=1000)), \
        "pmi-embedding"


def lee_vectorizer(name, seed, quick):
    from sklearn.pipeline import make_pipeline

    from nlpfeat.text import BagOfWords, TfidfVectorizer, TopicModel

    if name == "bow":
        return BagOfWords(stop_words="english")
    if name == "tfidf":
        return TfidfVectorizer(stop_words="english")
    if name == "logentropy-lsi":
        return make_pipeline(TfidfVectorizer(weighting="logentropy", stop_words="english"),
                             TopicModel(n_components=50 if quick else 200, method="lsi",
                                        backend="gensim", random_state=seed))
    return "pmi"
