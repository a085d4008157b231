"""What each subcommand does: read the input, call the public API, print or write the result.

Each ``cmd_<name>(args, parser)`` is the ``func`` its parser sets; heavy modules (numpy,
scikit-learn, the estimators) are imported inside, so that ``nlpfeat --help`` stays quick.
"""
import os
import sys
import warnings

from nlpfeat.cli._dask import dask_client, document_bag, features_on_dask, n_workers
from nlpfeat.cli._io import (
    CsrWriter,
    Lowercased,
    UsageError,
    decode,
    is_special_file,
    open_documents,
    open_output,
    output_path,
    write_in_chunks,
)
from nlpfeat.datasets._corpus import split_lines


def _text_options(args):
    tokenizer = args.tokenizer
    if getattr(args, "keep_punctuation", False) and tokenizer in ("char", "jieba"):
        from nlpfeat.text import get_tokenizer

        tokenizer = get_tokenizer(tokenizer, keep_punctuation=True)
    return {"tokenizer": tokenizer, "lowercase": not args.keep_case}


def cmd_compare(args, parser):
    from nlpfeat.compare import run_comparison

    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise UsageError(f"--out {args.out}: is an existing file; --out names a folder.")
    parent = os.path.dirname(os.path.abspath(args.out))
    if not os.path.isdir(parent):
        raise UsageError(f"--out {args.out}: the folder {parent} does not exist; create it "
                         f"first or choose another path.")
    run_comparison(
        tasks=args.task, models=args.models, out=args.out, seed=args.seed,
        quick=args.quick, with_torch=args.with_torch, plots=not args.no_plots,
        progress=args.progress,
    )


_VECTORIZERS = {"bow": "BagOfWords", "pbow": "PositionalBagOfWords", "tfidf": "TfidfVectorizer"}


def cmd_features(args, parser):
    """Fit on a lazy pass over the corpus, then transform and write the matrix in chunks.

    Memory holds the model, one chunk of ``--chunk-docs`` documents and the document ids,
    never the corpus or the whole matrix: the chunks' arrays go to temporary files next to
    the output, then into the .npz one block at a time. With ``--scheduler`` or
    ``--dask-workers`` the counting and the transform run on Dask, a partition per task.
    """
    from nlpfeat import text

    output = output_path(args.output, ".npz")
    opts = dict(_text_options(args), ngram_range=tuple(args.ngram))
    with dask_client(args) as client, open_documents(args) as docs:
        if args.kind == "pmi":
            return _features_pmi(args, output, docs, client)
        estimator = getattr(text, _VECTORIZERS[args.kind])(min_df=args.min_df,
                                                           max_df=args.max_df, **opts)
        writer = CsrWriter(output)
        with writer:
            if client is None:
                estimator.fit(docs)
                docs.report_skipped()
                write_in_chunks(estimator, docs, writer, args.chunk_docs)
            else:
                features_on_dask(args, docs, estimator, client, writer)
            features = estimator.get_feature_names_out()
            writer.close(features)
        where = "" if client is None else f", counted on {n_workers(client)} Dask worker(s)"
    print(f"wrote a {writer.n_rows} x {len(features)} {args.kind} document x feature matrix "
          f"({writer.nnz} non-zeros{where}) to {output}; read it with scipy.sparse.load_npz, "
          "and np.load(...)['feature_names'] / ['doc_ids'] (row i is document i of the input)",
          file=_report_stream(output))


def _report_stream(output):
    """Where the line saying what was written goes: stdout, or stderr when the output is a
    device or a pipe (``-o /dev/stdout``), so that the data stays a valid archive."""
    return sys.stderr if is_special_file(output) else sys.stdout


def _features_pmi(args, output, docs, client):
    """``features --kind pmi``: the PPMI word x word matrix of streamed co-occurrence counts."""
    import numpy as np
    from scipy import sparse

    from nlpfeat.text import cooccurrence, pmi

    corpus = docs if client is None else document_bag(args, docs)
    if not args.keep_case:
        corpus = Lowercased(docs) if client is None else corpus.map(str.lower)
    counts, vocabulary = cooccurrence(corpus, window=args.window, min_count=args.min_count,
                                      tokenizer=_text_options(args)["tokenizer"])
    docs.report_skipped()
    matrix = sparse.csr_matrix(pmi(counts, kind="ppmi"))
    names = np.asarray(sorted(vocabulary, key=vocabulary.get), dtype=str)
    with open_output(output) as fh:
        np.savez_compressed(fh, format=np.array("csr"), shape=np.array(matrix.shape),
                            data=matrix.data, indices=matrix.indices, indptr=matrix.indptr,
                            feature_names=names, row_names=names)
    print(f"wrote a {matrix.shape[0]} x {matrix.shape[1]} pmi word x word matrix "
          f"({matrix.nnz} non-zeros) to {output}; read it with scipy.sparse.load_npz, and "
          "np.load(...)['feature_names'] / ['row_names']", file=_report_stream(output))


def cmd_collocations(args, parser):
    from nlpfeat.text import Collocations

    model = Collocations(measure=args.measure, min_count=args.min_count, threshold=None,
                         input="content", **_text_options(args))
    with dask_client(args) as client, open_documents(args) as docs:
        model.fit(docs if client is None else document_bag(args, docs))
        docs.report_skipped()
    if not model.scores_:
        print(f"no phrase occurs {args.min_count} times or more; lower --min-count.")
        return
    print(f"{'rank':>4}  {'score':>10}  phrase  ({args.measure}, min_count={args.min_count})")
    for rank, (ngram, value) in enumerate(model.scores_[: _topn(args, "top")], start=1):
        print(f"{rank:>4}  {value:>10.4f}  {' '.join(ngram)}")


def _stop_words(args):
    """The stop-word list for ``topics``: removed by default, in the tokenizer's language."""
    if args.keep_stop_words:
        return None
    if args.stop_words is not None:
        return args.stop_words
    return "chinese" if args.tokenizer in ("jieba", "char") else "english"


def cmd_topics(args, parser):
    from nlpfeat.text import BagOfWords, TopicModel

    stop_words = _stop_words(args)
    bow = BagOfWords(min_df=args.min_df, max_df=args.max_df, stop_words=stop_words,
                     **_text_options(args))
    with dask_client(args) as client, open_documents(args) as docs:
        if client is None:
            X = bow.fit_transform(docs)
        else:           # counted on the workers; the document-term matrix comes back
            bag = document_bag(args, docs)
            X = bow.fit(bag).transform(bag).compute()
        docs.report_skipped()
    model = TopicModel(n_components=args.k, method=args.method, backend=args.backend,
                       random_state=args.seed, coherence=args.coherence,
                       vocabulary=bow.vocabulary_, verbose=int(args.progress)).fit(X)
    for k, words in enumerate(model.top_words(_topn(args, "n_words"))):
        print(f"topic {k:>2}  {args.coherence}={model.coherence_[k]:+.3f}  {' '.join(words)}")
    print(f"mean coherence ({args.coherence}, higher is better): {model.coherence_.mean():+.4f}")
    if stop_words is None:
        print("note: stop words were kept (--keep-stop-words); coherence scores reward topics "
              "of frequent function words, so compare them only between runs that keep them.")


def cmd_neighbors(args, parser):
    from nlpfeat.text import PMIEmbedding

    model = PMIEmbedding(n_components=args.dim, window=args.window, min_count=args.min_count,
                         random_state=args.seed, **_text_options(args))
    with dask_client(args) as client, open_documents(args) as docs:
        model.fit(docs if client is None else document_bag(args, docs))
        docs.report_skipped()
    found = 0
    for word in args.words:
        key = word if args.keep_case else word.lower()
        try:
            neighbours = model.most_similar(key, topn=args.topn)
        except KeyError:
            print(f"{word}: not in the vocabulary (min_count={args.min_count})")
            continue
        found += 1
        print(f"{word}: " + ", ".join(f"{w} ({s:.3f})" for w, s in neighbours))
    if not found:
        raise UsageError(f"none of the query words is in the vocabulary of {args.file} "
                         f"(min_count={args.min_count}); lower --min-count or check spelling.")


#: Tick labels per axis of ``attention``'s heatmap at most (``--max-tokens 0`` on a long text).
_MAX_TICKS = 40


def cmd_attention(args, parser):
    from nlpfeat.compare import sentence_attention
    from nlpfeat.compare._sentence import sentence_tokens

    output = output_path(args.output) if args.output else None
    sentence = args.sentence
    if sentence == "-":
        sentence = " ".join(split_lines(decode(sys.stdin.buffer.read(), "<stdin>")))
    if not sentence.strip():
        raise UsageError("the sentence is empty.")
    n_tokens = len(sentence_tokens(sentence, args.tokenizer))
    cap = args.max_tokens if 0 < args.max_tokens < n_tokens else None
    tokens, weights = sentence_attention(sentence, n_heads=args.heads, seed=args.seed,
                                         tokenizer=args.tokenizer, max_tokens=cap)
    col = max(max(len(t) for t in tokens), 6) + 1
    width = max(len(t) for t in tokens) + 1
    print("Self-attention of an untrained model (seeded weights) over PMI token vectors and "
          "sinusoidal positions; see examples/fat_cat_attention.py for a hand-built head.")
    if cap:
        print(f"the text has {n_tokens} tokens: the model attends over the first {cap} "
              f"(--max-tokens {cap}; --max-tokens 0 for all of them).")
    for h in range(weights.shape[0]):
        print(f"head {h} (rows: queries, columns: keys)")
        print(" " * width + "".join(f"{t:>{col}}" for t in tokens))
        for t, row in zip(tokens, weights[h]):
            print(f"{t:<{width}}" + "".join(f"{v:{col}.3f}" for v in row))
    if output:
        from nlpfeat.viz import plot_attention

        try:
            fig = plot_attention(weights, tokens, tokens, max_ticks=_MAX_TICKS)
            # About 0.18 inch (13 points) per labelled token, for the labels not to overlap
            # (plot_attention's panels are 3 inches, for a sentence).
            fig.set_size_inches(fig.get_size_inches()
                                * max(1.0, 0.18 * min(len(tokens), _MAX_TICKS) / 3.0))
        except ImportError as exc:
            raise UsageError(str(exc)) from None
        fig.savefig(output, dpi=120, bbox_inches="tight")
        print(f"saved the heatmap to {output}")


def _topn(args, old):
    """``--topn``, or its deprecated spelling ``old`` (an ``args`` attribute) with a
    FutureWarning on stderr."""
    value = getattr(args, old)
    if value is None:
        return args.topn
    flag = "--" + old.replace("_", "-")
    warnings.warn(f"{flag} was renamed --topn in 0.2 and will be removed in 0.3; use "
                  "--topn.", FutureWarning, stacklevel=2)
    return value
