"""The ``nlpfeat`` command line: parses arguments and calls the public API.

Subcommands: ``compare`` (the side-by-side comparison of kernel and neural attention),
``features``, ``collocations``, ``topics``, ``neighbors`` and ``attention`` for a user's own
corpora. Errors a user can fix (a missing or empty file, an undecodable line, a bad option
value) are reported as argparse's usage line plus one error line, exit status 2, never a
traceback.
"""
import argparse
import os
import re
import sys

from nlpfeat import __version__
from nlpfeat._corpus import split_lines

from nlpfeat.text._tokenize import TOKENIZERS


class UsageError(Exception):
    """An error the user can fix; printed as one line after the usage."""


# ----------------------------------------------------------------------------- input
def _decode(raw, name):
    """UTF-8 text of ``raw`` without a leading byte-order mark; a clear error otherwise."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise UsageError(
            f"{name}: line {line} is not valid UTF-8 ({exc.reason} at byte "
            f"{exc.start}); convert the file to UTF-8, e.g. with iconv -f latin1 -t utf-8."
        ) from None


def read_documents(source, skip_blank=False):
    """Read a corpus: one document per line of a UTF-8 file or stdin, or per .txt file of a folder.

    Returns ``(documents, ids)``: row i of every output is ``documents[i]``, whose id
    is its line number (1-based) or its file name in folder mode. Blank lines are kept
    as empty documents unless ``skip_blank``, in which case the number dropped is
    reported on stderr.
    """
    if source == "-":
        docs = split_lines(_decode(sys.stdin.buffer.read(), "<stdin>"))
        ids = list(range(1, len(docs) + 1))
    elif os.path.isdir(source):
        names = sorted(n for n in os.listdir(source) if n.endswith(".txt"))
        if not names:
            raise UsageError(f"{source}: the directory holds no .txt files.")
        docs, ids = [], names
        for name in names:
            with open(os.path.join(source, name), "rb") as fh:
                text = _decode(fh.read(), os.path.join(source, name))
            docs.append(" ".join(split_lines(text)))
    elif os.path.exists(source):
        with open(source, "rb") as fh:
            docs = split_lines(_decode(fh.read(), source))
        ids = list(range(1, len(docs) + 1))
    else:
        raise UsageError(f"{source}: no such file or directory.")
    if skip_blank:
        kept = [(doc, i) for doc, i in zip(docs, ids) if doc.strip()]
        dropped = len(docs) - len(kept)
        docs, ids = [d for d, _ in kept], [i for _, i in kept]
        if dropped:
            print(f"{source}: skipped {dropped} blank document(s) (--skip-blank)",
                  file=sys.stderr)
    if not any(doc.strip() for doc in docs):
        raise UsageError(f"{source}: no documents found (the input is empty or blank).")
    return docs, ids


def _output_path(path, suffix=None, *, flag="-o"):
    """Check an output file before any work: its folder exists; returns the name written."""
    if suffix and not path.endswith(suffix):
        path += suffix  # numpy adds the suffix itself; report the real name
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UsageError(f"{flag} {path}: the folder {os.path.dirname(path) or '.'} does not "
                         f"exist; create it first or choose another path.")
    if os.path.isdir(path):
        raise UsageError(f"{flag} {path}: is a folder; give a file name.")
    return path


def _text_options(args):
    tokenizer = args.tokenizer
    if getattr(args, "keep_punctuation", False) and tokenizer in ("char", "jieba"):
        from nlpfeat.text import get_tokenizer

        tokenizer = get_tokenizer(tokenizer, keep_punctuation=True)
    return {"tokenizer": tokenizer, "lowercase": not args.keep_case}


# ----------------------------------------------------------------------------- commands
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
        progress=not args.no_progress,
    )


def cmd_features(args, parser):
    import numpy as np
    from scipy import sparse

    from nlpfeat.text import BagOfWords, PositionalBagOfWords, TfidfVectorizer, cooccurrence, pmi

    output = _output_path(args.output, ".npz")
    opts = dict(_text_options(args), ngram_range=tuple(args.ngram))
    if args.stream:
        return _features_streamed(args, output, opts)
    docs, ids = read_documents(args.file, args.skip_blank)
    rows = None
    if args.kind == "pmi":
        texts = docs if args.keep_case else [d.lower() for d in docs]
        counts, vocabulary = cooccurrence(texts, window=args.window, min_count=args.min_count,
                                          tokenizer=_text_options(args)["tokenizer"])
        matrix = pmi(counts, kind="ppmi")
        names = sorted(vocabulary, key=vocabulary.get)
        features = rows = np.asarray(names, dtype=object)
    else:
        estimator = {"bow": BagOfWords, "pbow": PositionalBagOfWords,
                     "tfidf": TfidfVectorizer}[args.kind](min_df=args.min_df,
                                                          max_df=args.max_df, **opts)
        matrix = estimator.fit_transform(docs)
        features = estimator.get_feature_names_out()
    matrix = sparse.csr_matrix(matrix)
    payload = dict(format=np.array("csr"), shape=np.array(matrix.shape), data=matrix.data,
                   indices=matrix.indices, indptr=matrix.indptr,
                   feature_names=np.asarray(features, dtype=str),
                   doc_ids=np.asarray([str(i) for i in ids], dtype=str))
    if rows is not None:
        payload["row_names"] = np.asarray(rows, dtype=str)
    np.savez_compressed(output, **payload)
    what = "word x word" if args.kind == "pmi" else "document x feature"
    print(f"wrote a {matrix.shape[0]} x {matrix.shape[1]} {args.kind} {what} matrix "
          f"({matrix.nnz} non-zeros) to {output}; read it with scipy.sparse.load_npz, and "
          "np.load(...)['feature_names'] / ['doc_ids'] (row i is document i of the input)")


def _stream_corpus(source, skip_blank):
    """A re-iterable ``(id, document)`` reader of a file or folder, for ``--stream``."""
    from nlpfeat._corpus import Corpus

    if source == "-":
        raise UsageError("--stream reads the corpus twice (fit, then transform); it needs a "
                         "file or a folder, not stdin.")
    if not os.path.exists(source):
        raise UsageError(f"{source}: no such file or directory.")
    corpus = Corpus(source)
    folder = os.path.isdir(source)

    class Documents:
        skipped = 0

        def with_ids(self):
            self.skipped = 0
            for name, doc in corpus.iter_with_ids():
                if skip_blank and not doc.strip():
                    self.skipped += 1
                    continue
                yield (os.path.relpath(name, source) if folder else name[1]), doc

        def __iter__(self):
            return (doc for _, doc in self.with_ids())

    return Documents()


def _features_streamed(args, output, opts):
    """``features --stream``: fit on a lazy pass, then transform and write chunk by chunk.

    Memory holds the model, one chunk of ``--chunk-docs`` documents and the document ids,
    never the corpus or the whole matrix: the chunks' arrays go to temporary files next
    to the output, then into the .npz one block at a time.
    """
    import tempfile
    from itertools import islice

    import numpy as np

    from nlpfeat.text import BagOfWords, PositionalBagOfWords, TfidfVectorizer

    if args.kind == "pmi":
        raise UsageError("--stream applies to --kind bow, pbow and tfidf.")
    docs = _stream_corpus(args.file, args.skip_blank)
    estimator = {"bow": BagOfWords, "pbow": PositionalBagOfWords,
                 "tfidf": TfidfVectorizer}[args.kind](min_df=args.min_df, max_df=args.max_df,
                                                      **opts)
    estimator.fit(docs)
    if args.skip_blank and docs.skipped:
        print(f"{args.file}: skipped {docs.skipped} blank document(s) (--skip-blank)",
              file=sys.stderr)
    features = estimator.get_feature_names_out()
    n_rows, nnz, row_nnz, ids, dtype = 0, 0, [], [], None
    folder = os.path.dirname(os.path.abspath(output))
    with tempfile.TemporaryDirectory(dir=folder, prefix=".nlpfeat-") as tmp:
        data_path, indices_path = os.path.join(tmp, "data"), os.path.join(tmp, "indices")
        with open(data_path, "wb") as data_fh, open(indices_path, "wb") as indices_fh:
            pairs = docs.with_ids()
            while True:
                chunk = list(islice(pairs, args.chunk_docs))
                if not chunk:
                    break
                X = estimator.transform([doc for _, doc in chunk])
                dtype = X.dtype
                data_fh.write(X.data.tobytes())
                indices_fh.write(X.indices.astype(np.int32, copy=False).tobytes())
                row_nnz.append(np.diff(X.indptr))
                ids.extend(str(i) for i, _ in chunk)
                n_rows += X.shape[0]
                nnz += X.nnz
        indptr = np.concatenate([[0]] + row_nnz).cumsum(
            dtype=np.int32 if nnz < 2**31 else np.int64)
        arrays = dict(format=np.array("csr"), shape=np.array((n_rows, len(features))),
                      indptr=indptr, feature_names=np.asarray(features, dtype=str),
                      doc_ids=np.asarray(ids, dtype=str))
        raw = {"data": (data_path, np.dtype(dtype or np.float64), nnz),
               "indices": (indices_path, np.dtype(np.int32), nnz)}
        _write_npz(output, arrays, raw)
    print(f"wrote a {n_rows} x {len(features)} {args.kind} document x feature matrix "
          f"({nnz} non-zeros, in chunks of {args.chunk_docs} documents) to {output}; read it "
          "with scipy.sparse.load_npz, and np.load(...)['feature_names'] / ['doc_ids'] (row i "
          "is document i of the input)")


def _write_npz(path, arrays, raw, block=1 << 24):
    """A compressed .npz of ``arrays`` plus ``raw`` arrays copied from files block by block.

    ``raw`` maps a name to ``(file, dtype, length)``: the file holds the array's bytes.
    """
    import zipfile

    import numpy as np

    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, allowZip64=True) as zf:
        for name, array in arrays.items():
            with zf.open(name + ".npy", "w", force_zip64=True) as fh:
                np.lib.format.write_array(fh, np.asanyarray(array), allow_pickle=False)
        for name, (source, dtype, length) in raw.items():
            header = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False,
                      "shape": (int(length),)}
            with zf.open(name + ".npy", "w", force_zip64=True) as fh, open(source, "rb") as src:
                np.lib.format.write_array_header_2_0(fh, header)
                while True:
                    data = src.read(block)
                    if not data:
                        break
                    fh.write(data)


def cmd_collocations(args, parser):
    from nlpfeat.text import Collocations

    docs, _ = read_documents(args.file, args.skip_blank)
    model = Collocations(measure=args.measure, min_count=args.min_count, threshold=None,
                         input="content", **_text_options(args)).fit(docs)
    if not model.scores_:
        print(f"no phrase occurs {args.min_count} times or more; lower --min-count.")
        return
    print(f"{'rank':>4}  {'score':>10}  phrase  ({args.measure}, min_count={args.min_count})")
    for rank, (ngram, value) in enumerate(model.scores_[: args.top], start=1):
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

    docs, _ = read_documents(args.file, args.skip_blank)
    stop_words = _stop_words(args)
    bow = BagOfWords(min_df=args.min_df, max_df=args.max_df, stop_words=stop_words,
                     **_text_options(args))
    X = bow.fit_transform(docs)
    model = TopicModel(n_components=args.k, method=args.method, backend=args.backend,
                       random_state=args.seed, coherence=args.coherence,
                       vocabulary=bow.vocabulary_).fit(X)
    for k, words in enumerate(model.top_words(args.n_words)):
        print(f"topic {k:>2}  {args.coherence}={model.coherence_[k]:+.3f}  {' '.join(words)}")
    print(f"mean coherence ({args.coherence}, higher is better): {model.coherence_.mean():+.4f}")
    if stop_words is None:
        print("note: stop words were kept (--keep-stop-words); coherence scores reward topics "
              "of frequent function words, so compare them only between runs that keep them.")


def cmd_neighbors(args, parser):
    from nlpfeat.text import PMIEmbedding

    docs, _ = read_documents(args.file, args.skip_blank)
    model = PMIEmbedding(n_components=args.dim, window=args.window, min_count=args.min_count,
                         random_state=args.seed, **_text_options(args))
    model.fit(docs)
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


def cmd_attention(args, parser):
    from nlpfeat.compare import sentence_attention

    output = _output_path(args.output) if args.output else None
    sentence = args.sentence
    if sentence == "-":
        sentence = " ".join(split_lines(_decode(sys.stdin.buffer.read(), "<stdin>")))
    if not sentence.strip():
        raise UsageError("the sentence is empty.")
    tokens, weights = sentence_attention(sentence, n_heads=args.heads, seed=args.seed,
                                         tokenizer=args.tokenizer)
    col = max(max(len(t) for t in tokens), 6) + 1
    width = max(len(t) for t in tokens) + 1
    print("Self-attention of an untrained model (seeded weights) over PMI token vectors and "
          "sinusoidal positions; see examples/fat_cat_attention.py for a hand-built head.")
    for h in range(weights.shape[0]):
        print(f"head {h} (rows: queries, columns: keys)")
        print(" " * width + "".join(f"{t:>{col}}" for t in tokens))
        for t, row in zip(tokens, weights[h]):
            print(f"{t:<{width}}" + "".join(f"{v:{col}.3f}" for v in row))
    if output:
        from nlpfeat.viz import plot_attention

        try:
            fig = plot_attention(weights, tokens, tokens)
        except ImportError as exc:
            raise UsageError(str(exc)) from None
        fig.savefig(output, dpi=120, bbox_inches="tight")
        print(f"saved the heatmap to {output}")


# ----------------------------------------------------------------------------- parser
_FORMATTER = argparse.ArgumentDefaultsHelpFormatter


def _add_text_options(p):
    p.add_argument("--tokenizer", default="regexp", choices=TOKENIZERS,
                   help="tokenizer (jieba, for Chinese words, needs nlpfeat[zh])")
    p.add_argument("--keep-case", action="store_true", help="do not lower-case the text")
    p.add_argument("--keep-punctuation", action="store_true",
                   help="with --tokenizer char or jieba, keep punctuation tokens (，。、...)")
    p.add_argument("--skip-blank", action="store_true",
                   help="drop blank lines (reported on stderr); by default a blank line is "
                   "an empty document, so that row i of the output is line i of the input")


def _positive_int(value):
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value!r}")
    return number


def _max_df(value):
    """A document frequency: a proportion in (0, 1] or a count (an integer > 1)."""
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {value!r}") from None
    if not number > 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {value!r}")
    if number > 1:
        if number != int(number):
            raise argparse.ArgumentTypeError(
                f"expected a proportion in (0, 1] or a whole count, got {value!r}")
        return int(number)
    return number


_CORPUS_HELP = "UTF-8 text file (one document per line), folder of .txt files, or - for stdin"


def _add_compare(sub):
    from nlpfeat.compare import ALL_MODELS, TASKS

    p = sub.add_parser(
        "compare", help="kernel attention vs neural attention, side by side",
        description="Compare Nadaraya-Watson kernel regression with learned attention and "
        "baselines on bundled data; writes tables (CSV, JSON) and figures.",
        epilog="example: nlpfeat compare --task sine diabetes --quick --out results/",
        formatter_class=_FORMATTER,
    )
    p.add_argument("--task", nargs="+", choices=list(TASKS), default=list(TASKS),
                   help="tasks to run")
    p.add_argument("--models", nargs="+", choices=list(ALL_MODELS), default=None,
                   help="models to run (None: every model that applies to the task)")
    p.add_argument("--out", default="nlpfeat-compare", help="output folder")
    p.add_argument("--seed", type=int, default=0, help="random seed of data splits and models")
    p.add_argument("--quick", action="store_true", help="small sizes, for smoke tests and CI")
    p.add_argument("--with-torch", action="store_true",
                   help="add a PyTorch nn.MultiheadAttention model (needs torch)")
    p.add_argument("--no-plots", action="store_true", help="skip the figures")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_compare, subparser=p, flags={})


def _add_corpus_commands(sub):
    from nlpfeat.text._coherence import COHERENCE_MEASURES
    from nlpfeat.text._collocations import MEASURES
    from nlpfeat.text._topics import BACKENDS, METHODS

    p = sub.add_parser("features", help="document-feature matrix of a corpus",
                       description="Write the document x feature matrix of a corpus (or the "
                       "PPMI word x word matrix) to a .npz file; row i is line i.",
                       epilog="example: nlpfeat features corpus.txt --kind tfidf --ngram 1 2 -o X.npz",
                       formatter_class=_FORMATTER)
    p.add_argument("file", help=_CORPUS_HELP)
    p.add_argument("--kind", choices=["bow", "pbow", "tfidf", "pmi"], default="tfidf",
                   help="bag of words, positional bag of words, TF-IDF, or PPMI word vectors")
    p.add_argument("--ngram", nargs=2, type=_positive_int, default=[1, 1], metavar=("MIN", "MAX"),
                   help="smallest and largest word n-gram")
    p.add_argument("--min-df", type=_positive_int, default=1,
                   help="drop features in fewer documents than this")
    p.add_argument("--max-df", type=_max_df, default=1.0,
                   help="drop features in more documents than this (a proportion, or a count)")
    p.add_argument("--min-count", type=_positive_int, default=1,
                   help="for --kind pmi: drop words seen fewer times")
    p.add_argument("--window", type=_positive_int, default=5,
                   help="for --kind pmi: co-occurrence window (words on each side)")
    p.add_argument("-o", "--output", required=True,
                   help="output .npz file (the suffix is added if missing)")
    p.add_argument("--stream", action="store_true",
                   help="for large corpora: read the file or folder lazily twice (fit, then "
                   "transform) and write the matrix in chunks, so that memory holds the model "
                   "and one chunk, never the corpus or the whole matrix (bow, pbow, tfidf)")
    p.add_argument("--chunk-docs", type=_positive_int, default=10000,
                   help="with --stream: documents transformed and written per chunk")
    _add_text_options(p)
    p.set_defaults(func=cmd_features, subparser=p, flags={"ngram_range": "--ngram"})

    p = sub.add_parser("collocations", help="ranked collocations (phrases) of a corpus",
                       description="Rank the word pairs of a corpus by an association measure.",
                       epilog="example: nlpfeat collocations corpus.txt --measure llr --top 20",
                       formatter_class=_FORMATTER)
    p.add_argument("file", help=_CORPUS_HELP)
    p.add_argument("--measure", choices=list(MEASURES), default="pmi",
                   help="association measure")
    p.add_argument("--top", type=_positive_int, default=30, help="how many phrases to print")
    p.add_argument("--min-count", type=_positive_int, default=5,
                   help="ignore pairs seen fewer times")
    _add_text_options(p)
    p.set_defaults(func=cmd_collocations, subparser=p, flags={})

    p = sub.add_parser("topics", help="topic model with coherence per topic",
                       description="Fit a topic model and print each topic's top words with "
                       "its coherence. Stop words are removed unless --keep-stop-words.",
                       epilog="example: nlpfeat topics corpus.txt -k 10 --method lda --backend gensim",
                       formatter_class=_FORMATTER)
    p.add_argument("file", help=_CORPUS_HELP)
    p.add_argument("-k", type=_positive_int, default=10, help="number of topics")
    p.add_argument("--method", choices=METHODS, default=METHODS[0], help="topic model")
    p.add_argument("--backend", choices=BACKENDS, default=BACKENDS[0],
                   help="library that fits the model")
    p.add_argument("--coherence", choices=COHERENCE_MEASURES, default=COHERENCE_MEASURES[0],
                   help="coherence measure printed per topic")
    p.add_argument("--n-words", type=_positive_int, default=10, help="top words per topic")
    p.add_argument("--min-df", type=_positive_int, default=2,
                   help="drop words in fewer documents than this")
    p.add_argument("--max-df", type=_max_df, default=1.0,
                   help="drop words in more documents than this (a proportion, or a count)")
    p.add_argument("--stop-words", choices=["english", "chinese"], default=None,
                   help="stop-word list (None: english, or chinese with the jieba and char "
                   "tokenizers)")
    p.add_argument("--keep-stop-words", action="store_true", help="keep stop words")
    p.add_argument("--seed", type=int, default=0, help="random seed of the model")
    _add_text_options(p)
    p.set_defaults(func=cmd_topics, subparser=p, flags={"n_components": "-k"})

    p = sub.add_parser("neighbors", help="nearest neighbours in PMI-embedding space",
                       description="Fit PPMI-SVD word vectors and print the nearest neighbours "
                       "of each query word.",
                       epilog="example: nlpfeat neighbors corpus.txt good king --topn 5",
                       formatter_class=_FORMATTER)
    p.add_argument("file", help=_CORPUS_HELP)
    p.add_argument("words", nargs="+", help="query words")
    p.add_argument("--topn", type=_positive_int, default=10, help="neighbours per word")
    p.add_argument("--dim", type=_positive_int, default=50, help="embedding size")
    p.add_argument("--window", type=_positive_int, default=5,
                   help="co-occurrence window (words on each side)")
    p.add_argument("--min-count", type=_positive_int, default=2,
                   help="drop words seen fewer times")
    p.add_argument("--seed", type=int, default=0, help="random seed of the SVD")
    _add_text_options(p)
    p.set_defaults(func=cmd_neighbors, subparser=p, flags={"n_components": "--dim"})

    p = sub.add_parser("attention", help="attention weights of a small untrained model over a sentence",
                       description="Print (and plot) the self-attention weights of a small "
                       "untrained model over the tokens of a sentence.",
                       epilog='example: nlpfeat attention "the fat cat sat on the mat" --heads 4 -o fig.png',
                       formatter_class=_FORMATTER)
    p.add_argument("sentence", help="the sentence, or - to read it from stdin")
    p.add_argument("--heads", type=_positive_int, default=1, help="attention heads")
    p.add_argument("--seed", type=int, default=0, help="random seed of the weights")
    p.add_argument("--tokenizer", default="regexp", choices=TOKENIZERS, help="tokenizer")
    p.add_argument("-o", "--output", help="save a heatmap (needs matplotlib)")
    p.set_defaults(func=cmd_attention, subparser=p, flags={})


def build_parser():
    parser = argparse.ArgumentParser(
        prog="nlpfeat",
        description="Classical NLP features and kernel regression: attention is kernel regression.",
        epilog="Run 'nlpfeat COMMAND --help' for a command's options.",
        formatter_class=_FORMATTER,
    )
    parser.add_argument("--version", action="version", version=f"nlpfeat {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="show the full traceback of an error instead of one line")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_compare(sub)
    _add_corpus_commands(sub)
    return parser


def _flag_names(parser, extra):
    """Python parameter name -> command-line flag, for error messages."""
    names = {}
    for action in parser._actions:
        flags = [o for o in action.option_strings if o.startswith("--")] or action.option_strings
        if flags and "_" in action.dest:
            names[action.dest] = flags[0]
    names.update(extra)
    return names


def _in_flags(message, flags):
    """Speak of the command line's flags, not of the Python parameters behind them."""
    for name, flag in sorted(flags.items(), key=lambda kv: -len(kv[0])):
        message = re.sub(rf"(?<![\w-]){re.escape(name)}(?![\w])", flag, message)
    return message


def main(argv=None):
    """Run the command line; returns the exit status (130 after Ctrl-C)."""
    try:
        return _run(argv)
    except KeyboardInterrupt:
        # Results already written stay; no traceback for a deliberate interruption.
        print("nlpfeat: interrupted", file=sys.stderr)
        return 130


def _run(argv):
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stderr)
        return 2
    sub_parser = args.subparser
    try:
        args.func(args, sub_parser)
    except BrokenPipeError:  # pragma: no cover - e.g. piping into head
        return 0
    except UsageError as exc:
        if args.debug:
            raise
        sub_parser.error(str(exc))
    except (ValueError, ImportError, OSError) as exc:
        # Invalid parameter values, unreadable input, a missing optional package: the
        # user's to fix, shown as one line; --debug shows where it came from. Anything
        # else (a KeyError, TypeError, ... is a bug) keeps its traceback.
        if args.debug:
            raise
        sub_parser.error(_in_flags(str(exc), _flag_names(sub_parser, args.flags)))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
