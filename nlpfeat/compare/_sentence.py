"""The demo behind ``nlpfeat attention``: self-attention of a small untrained model."""
import numpy as np


def sentence_attention(sentence, n_heads=1, seed=0, tokenizer="regexp", d_model=16,
                       max_tokens=None):
    """Self-attention weights of a small untrained multi-head model over one sentence.

    Token vectors are PMI embeddings fitted on the bundled toy corpus (English, or Chinese
    when the sentence holds CJK characters) plus sinusoidal positions; a
    :class:`~nlpfeat.attention.MultiHeadAttention` with seeded initial weights attends from
    every token to every token. What a head attends to here reflects the embeddings'
    similarity through random projections, not training.

    ``max_tokens`` keeps the first tokens only (None: all): the model then attends over
    those, so each row of weights still sums to one, and a long text gives a table and a
    heatmap that can be read.

    Returns
    -------
    tokens : list of str
    weights : ndarray of shape (n_heads, n_tokens, n_tokens)

    Examples
    --------
    >>> tokens, w = sentence_attention("the fat cat sat on the mat", n_heads=2)
    >>> tokens[:3], w.shape
    (['the', 'fat', 'cat'], (2, 7, 7))
    """
    from nlpfeat.attention import MultiHeadAttention
    from nlpfeat.attention.layers import SinusoidalPositionalEncoding
    from nlpfeat.datasets import load_toy_corpus
    from nlpfeat.text import PMIEmbedding

    tokens = sentence_tokens(sentence, tokenizer)
    if max_tokens is not None:
        if not (isinstance(max_tokens, (int, np.integer)) and max_tokens > 0):
            raise ValueError(f"max_tokens must be a positive integer or None; got "
                             f"{max_tokens!r}.")
        tokens = tokens[:max_tokens]
    if not tokens:
        raise ValueError(f"the sentence {sentence!r} has no tokens under tokenizer={tokenizer!r}.")
    if d_model % n_heads:
        d_model = n_heads * int(np.ceil(d_model / n_heads))
    chinese = any("\u4e00" <= ch <= "\u9fff" for ch in sentence)
    corpus = list(load_toy_corpus("zh" if chinese else "en").data) + [sentence]
    emb = PMIEmbedding(n_components=d_model, window=3, min_count=1, tokenizer=tokenizer,
                       random_state=seed).fit(corpus)
    vectors = np.stack([emb.embeddings_[emb.vocabulary_[t]] if t in emb.vocabulary_
                        else np.zeros(emb.embeddings_.shape[1]) for t in tokens])
    # Unit variance per coordinate (norm sqrt(d)), the scale LayerNorm gives a transformer.
    vectors = vectors * np.sqrt(d_model) / (np.linalg.norm(vectors, axis=1, keepdims=True) + 1e-12)
    x = SinusoidalPositionalEncoding(vectors.shape[1]).forward(vectors[None])
    mha = MultiHeadAttention(vectors.shape[1], n_heads, rng=np.random.default_rng(seed))
    _, weights = mha.forward(x, x, x, need_weights=True, average_attn_weights=False)
    return tokens, weights[0]


def sentence_tokens(sentence, tokenizer="regexp"):
    """The tokens :func:`sentence_attention` attends over (lower-cased), before any cap."""
    from nlpfeat.text import get_tokenizer

    return get_tokenizer(tokenizer)(sentence.lower())
