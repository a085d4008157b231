"""The ``nlpfeat`` command line: parses arguments and calls the public API.

Subcommands: ``compare`` (the side-by-side comparison of kernel and neural attention),
``features``, ``collocations``, ``topics``, ``neighbors`` and ``attention`` for a user's own
corpora. Errors a user can fix (a missing or empty file, an undecodable line, a bad option
value) are reported as argparse's usage line plus one error line, exit status 2, never a
traceback.
"""
import argparse
import os
import sys

from nlpfeat import __version__

TOKENIZERS = ("regexp", "treebank", "wordpunct", "whitespace", "char", "jieba")


class UsageError(Exception):
    """An error the user can fix; printed as one line after the usage."""


# ----------------------------------------------------------------------------- input
def _decode_lines(raw, name):
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise UsageError(
            f"{name}: line {line} is not valid UTF-8 ({exc.reason} at byte "
            f"{exc.start}); convert the file to UTF-8, e.g. with iconv -f latin1 -t utf-8."
        ) from None
    return [line.strip() for line in text.splitlines() if line.strip()]


def read_documents(source):
    """Read documents: one per line of a UTF-8 file, one per .txt file of a directory, or stdin."""
    if source == "-":
        docs = _decode_lines(sys.stdin.buffer.read(), "<stdin>")
    elif os.path.isdir(source):
        names = sorted(n for n in os.listdir(source) if n.endswith(".txt"))
        if not names:
            raise UsageError(f"{source}: the directory holds no .txt files.")
        docs = []
        for name in names:
            with open(os.path.join(source, name), "rb") as fh:
                text = " ".join(_decode_lines(fh.read(), os.path.join(source, name)))
            if text:
                docs.append(text)
    elif os.path.exists(source):
        with open(source, "rb") as fh:
            docs = _decode_lines(fh.read(), source)
    else:
        raise UsageError(f"{source}: no such file or directory.")
    if not docs:
        raise UsageError(f"{source}: no documents found (the input is empty).")
    return docs


def _text_options(args):
    return {"tokenizer": args.tokenizer, "lowercase": not args.keep_case}


# ----------------------------------------------------------------------------- commands
def cmd_compare(args, parser):
    from nlpfeat.compare import run_comparison

    run_comparison(
        tasks=args.task, models=args.models, out=args.out, seed=args.seed,
        quick=args.quick, with_torch=args.with_torch, plots=not args.no_plots,
        progress=not args.no_progress,
    )


def cmd_features(args, parser):
    import numpy as np
    from scipy import sparse

    from nlpfeat.text import BagOfWords, PositionalBagOfWords, TfidfVectorizer, cooccurrence, pmi

    docs = read_documents(args.file)
    opts = dict(_text_options(args), ngram_range=tuple(args.ngram))
    rows = None
    if args.kind == "pmi":
        texts = docs if args.keep_case else [d.lower() for d in docs]
        counts, vocabulary = cooccurrence(texts, window=args.window, min_count=args.min_count,
                                          tokenizer=args.tokenizer)
        matrix = pmi(counts, kind="ppmi")
        names = sorted(vocabulary, key=vocabulary.get)
        features = rows = np.asarray(names, dtype=object)
    else:
        estimator = {"bow": BagOfWords, "pbow": PositionalBagOfWords,
                     "tfidf": TfidfVectorizer}[args.kind](min_df=args.min_df, **opts)
        matrix = estimator.fit_transform(docs)
        features = estimator.get_feature_names_out()
    matrix = sparse.csr_matrix(matrix)
    payload = dict(format=np.array("csr"), shape=np.array(matrix.shape), data=matrix.data,
                   indices=matrix.indices, indptr=matrix.indptr,
                   feature_names=np.asarray(features, dtype=str))
    if rows is not None:
        payload["row_names"] = np.asarray(rows, dtype=str)
    np.savez_compressed(args.output, **payload)
    print(f"wrote {matrix.shape[0]} x {matrix.shape[1]} {args.kind} matrix "
          f"({matrix.nnz} non-zeros) to {args.output}; read it with scipy.sparse.load_npz "
          "and np.load(...)['feature_names']")


def cmd_collocations(args, parser):
    from nlpfeat.text import Collocations

    docs = read_documents(args.file)
    model = Collocations(measure=args.measure, min_count=args.min_count, threshold=None,
                         input="content", **_text_options(args)).fit(docs)
    print(f"{'rank':>4}  {'score':>10}  phrase  ({args.measure}, min_count={args.min_count})")
    for rank, (ngram, value) in enumerate(model.scores_[: args.top], start=1):
        print(f"{rank:>4}  {value:>10.4f}  {' '.join(ngram)}")


def cmd_topics(args, parser):
    from nlpfeat.text import BagOfWords, TopicModel

    docs = read_documents(args.file)
    bow = BagOfWords(min_df=args.min_df, stop_words=args.stop_words, **_text_options(args))
    X = bow.fit_transform(docs)
    model = TopicModel(n_topics=args.k, method=args.method, backend=args.backend,
                       random_state=args.seed, coherence=args.coherence,
                       vocabulary=bow.vocabulary_).fit(X)
    for k, words in enumerate(model.top_words(args.n_words)):
        print(f"topic {k:>2}  {args.coherence}={model.coherence_[k]:+.3f}  {' '.join(words)}")
    print(f"mean coherence ({args.coherence}, higher is better): {model.coherence_.mean():+.4f}")


def cmd_neighbors(args, parser):
    from nlpfeat.text import PMIEmbedding

    docs = read_documents(args.file)
    model = PMIEmbedding(n_components=args.dim, window=args.window, min_count=args.min_count,
                         random_state=args.seed, **_text_options(args))
    model.fit(docs)
    for word in args.words:
        key = word if args.keep_case else word.lower()
        try:
            neighbours = model.most_similar(key, topn=args.topn)
        except KeyError:
            print(f"{word}: not in the vocabulary (min_count={args.min_count})")
            continue
        print(f"{word}: " + ", ".join(f"{w} ({s:.3f})" for w, s in neighbours))


def cmd_attention(args, parser):
    from nlpfeat.compare import sentence_attention

    tokens, weights = sentence_attention(args.sentence, n_heads=args.heads, seed=args.seed,
                                         tokenizer=args.tokenizer)
    width = max(len(t) for t in tokens) + 1
    print("Self-attention of an untrained model (seeded weights) over PMI token vectors and "
          "sinusoidal positions; see examples/fat_cat_attention.py for a hand-built head.")
    for h in range(weights.shape[0]):
        print(f"head {h} (rows: queries, columns: keys)")
        print(" " * width + "".join(f"{t[:6]:>7}" for t in tokens))
        for t, row in zip(tokens, weights[h]):
            print(f"{t:<{width}}" + "".join(f"{v:7.3f}" for v in row))
    if args.output:
        from nlpfeat.viz import plot_attention

        try:
            fig = plot_attention(weights, tokens, tokens)
        except ImportError as exc:
            raise UsageError(str(exc)) from None
        fig.savefig(args.output, dpi=120, bbox_inches="tight")
        print(f"saved the heatmap to {args.output}")


# ----------------------------------------------------------------------------- parser
def _add_text_options(p):
    p.add_argument("--tokenizer", default="regexp", choices=TOKENIZERS,
                   help="tokenizer (default: regexp; jieba for Chinese words needs nlpfeat[zh])")
    p.add_argument("--keep-case", action="store_true", help="do not lower-case the text")


def _positive_int(value):
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value!r}")
    return number


def _add_compare(sub):
    from nlpfeat.compare import ALL_MODELS, TASKS

    p = sub.add_parser(
        "compare", help="kernel attention vs neural attention, side by side",
        description="Compare Nadaraya-Watson kernel regression with learned attention and "
        "baselines on bundled data; writes tables (CSV, JSON) and figures.",
        epilog="example: nlpfeat compare --task sine diabetes --quick --out results/",
    )
    p.add_argument("--task", nargs="+", choices=list(TASKS), default=list(TASKS))
    p.add_argument("--models", nargs="+", choices=list(ALL_MODELS), default=None,
                   help="models to run (default: every model that applies to the task)")
    p.add_argument("--out", default="nlpfeat-compare", help="output folder (default: ./nlpfeat-compare)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="small sizes, for smoke tests and CI")
    p.add_argument("--with-torch", action="store_true",
                   help="add a PyTorch nn.MultiheadAttention model (needs torch)")
    p.add_argument("--no-plots", action="store_true", help="skip the figures")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_compare, subparser=p)


def _add_corpus_commands(sub):
    from nlpfeat.text._collocations import MEASURES
    p = sub.add_parser("features", help="document-feature matrix of a corpus",
                       epilog="example: nlpfeat features corpus.txt --kind tfidf --ngram 1 2 -o X.npz")
    p.add_argument("file", help="UTF-8 text file (one document per line), folder of .txt, or -")
    p.add_argument("--kind", choices=["bow", "pbow", "tfidf", "pmi"], default="tfidf")
    p.add_argument("--ngram", nargs=2, type=_positive_int, default=[1, 1], metavar=("MIN", "MAX"))
    p.add_argument("--min-df", type=_positive_int, default=1)
    p.add_argument("--min-count", type=_positive_int, default=1, help="for --kind pmi")
    p.add_argument("--window", type=_positive_int, default=5, help="for --kind pmi")
    p.add_argument("-o", "--output", required=True, help="output .npz file")
    _add_text_options(p)
    p.set_defaults(func=cmd_features, subparser=p)

    p = sub.add_parser("collocations", help="ranked collocations (phrases) of a corpus",
                       epilog="example: nlpfeat collocations corpus.txt --measure llr --top 20")
    p.add_argument("file")
    p.add_argument("--measure", choices=MEASURES, default="pmi")
    p.add_argument("--top", type=_positive_int, default=30)
    p.add_argument("--min-count", type=_positive_int, default=5)
    _add_text_options(p)
    p.set_defaults(func=cmd_collocations, subparser=p)

    p = sub.add_parser("topics", help="topic model with coherence per topic",
                       epilog="example: nlpfeat topics corpus.txt -k 10 --method lda --backend gensim")
    p.add_argument("file")
    p.add_argument("-k", type=_positive_int, default=10, help="number of topics")
    p.add_argument("--method", choices=["lda", "nmf", "lsi"], default="lda")
    p.add_argument("--backend", choices=["gensim", "sklearn"], default="gensim")
    p.add_argument("--coherence", choices=["c_npmi", "u_mass", "c_uci", "c_v"], default="c_npmi")
    p.add_argument("--n-words", type=_positive_int, default=10)
    p.add_argument("--min-df", type=_positive_int, default=2)
    p.add_argument("--stop-words", choices=["english", "chinese"], default=None)
    p.add_argument("--seed", type=int, default=0)
    _add_text_options(p)
    p.set_defaults(func=cmd_topics, subparser=p)

    p = sub.add_parser("neighbors", help="nearest neighbours in PMI-embedding space",
                       epilog="example: nlpfeat neighbors corpus.txt good king --topn 5")
    p.add_argument("file")
    p.add_argument("words", nargs="+")
    p.add_argument("--topn", type=_positive_int, default=10)
    p.add_argument("--dim", type=_positive_int, default=50, help="embedding size")
    p.add_argument("--window", type=_positive_int, default=5)
    p.add_argument("--min-count", type=_positive_int, default=2)
    p.add_argument("--seed", type=int, default=0)
    _add_text_options(p)
    p.set_defaults(func=cmd_neighbors, subparser=p)

    p = sub.add_parser("attention", help="attention weights of a small untrained model over a sentence",
                       epilog='example: nlpfeat attention "the fat cat sat on the mat" --heads 4 -o fig.png')
    p.add_argument("sentence")
    p.add_argument("--heads", type=_positive_int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tokenizer", default="regexp", choices=TOKENIZERS)
    p.add_argument("-o", "--output", help="save a heatmap (needs matplotlib)")
    p.set_defaults(func=cmd_attention, subparser=p)


def build_parser():
    parser = argparse.ArgumentParser(
        prog="nlpfeat",
        description="Classical NLP features and kernel regression: attention is kernel regression.",
        epilog="Run 'nlpfeat COMMAND --help' for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"nlpfeat {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_compare(sub)
    _add_corpus_commands(sub)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 0
    sub_parser = args.subparser
    try:
        args.func(args, sub_parser)
    except UsageError as exc:
        sub_parser.error(str(exc))
    except (ValueError, KeyError, ImportError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        sub_parser.error(str(message))
    except BrokenPipeError:  # pragma: no cover - e.g. piping into head
        return 0
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
