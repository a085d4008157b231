"""The ``nlpfeat`` command line: parses arguments and calls the public API.

Subcommands: ``compare`` (the side-by-side comparison of kernel and neural attention),
``features``, ``collocations``, ``topics``, ``neighbors`` and ``attention`` for a user's own
corpora. Errors a user can fix (a missing or empty file, an undecodable line, a bad option
value) are reported as argparse's usage line plus one error line, exit status 2, never a
traceback.

The corpus commands stream their input: a file, folder or glob is read lazily by
:class:`nlpfeat.datasets.Corpus` (twice where fitting and transforming need two passes;
stdin is first copied to a temporary file), and ``features`` writes its matrix to disk
chunk by chunk, so memory holds the model and one chunk, not the corpus. With
``--scheduler ADDRESS`` (a running Dask cluster) or ``--dask-workers N`` (a local one),
the counting runs on Dask over partitions of the files read on the workers by the same
rule of a line (``"\\n"`` only; compression told by the magic bytes), so that the rows
and their ids are those of the local run.

Progress bars (the bytes of the input read, in MB/s, a bar per pass; the models of
``compare``) go to stderr when it is a terminal, never into a log file or a pipe;
``--no-progress`` turns them off on a terminal too.

This module is the parser (one ``_add_<command>`` per subcommand); ``_commands`` does what
each subcommand does, ``_io`` reads the input and writes the output, ``_dask`` is the Dask
pipeline.
"""
import argparse
import re
import signal
import sys
import threading

from nlpfeat import __version__
from nlpfeat.cli._io import UsageError

__all__ = ["UsageError", "build_parser", "main"]


class _Formatter(argparse.ArgumentDefaultsHelpFormatter):
    """Options' help with their defaults, except a required option's (it has none)."""

    def _get_help_string(self, action):
        if action.required:
            return action.help
        return super()._get_help_string(action)


_FORMATTER = _Formatter

#: One line per subcommand: what ``nlpfeat --help`` lists.
_SUMMARIES = {
    "compare": "kernel attention vs neural attention, side by side",
    "features": "document-feature matrix of a corpus",
    "collocations": "ranked collocations (phrases) of a corpus",
    "topics": "topic model with coherence per topic",
    "neighbors": "nearest neighbours in PMI-embedding space",
    "attention": "attention weights of a small untrained model over a sentence",
}


def _tokenizers():
    from nlpfeat.text._base._tokenize import TOKENIZERS

    return TOKENIZERS


def _add_text_options(p):
    p.add_argument("--tokenizer", default="regexp", choices=_tokenizers(),
                   help="tokenizer (jieba, for Chinese words, needs nlpfeat[zh])")
    p.add_argument("--keep-case", action="store_true", help="do not lower-case the text")
    p.add_argument("--keep-punctuation", action="store_true",
                   help="with --tokenizer char or jieba, keep punctuation tokens (，。、...)")
    p.add_argument("--skip-blank", action="store_true",
                   help="drop blank lines (reported on stderr); by default a blank line is "
                   "an empty document, so that row i of the output is line i of the input")


def _positive(convert, expected):
    """An argparse ``type``: ``convert(value)``, which must be positive and finite."""
    def check(value):
        try:
            number = convert(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {value!r}") from None
        if not 0 < number < float("inf"):
            raise argparse.ArgumentTypeError(f"expected {expected}, got {value!r}")
        return number

    check.__name__ = f"positive_{convert.__name__}"
    return check


_positive_int = _positive(int, "a positive integer")


def _non_negative_int(value):
    """An argparse ``type``: an integer >= 0."""
    try:
        number = int(value)
    except ValueError:
        number = -1
    if number < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {value!r}")
    return number
_positive_float = _positive(float, "a positive number")


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


_CORPUS_HELP = ("text file (one document per line; .gz, .bz2 and .xz read as such), folder of "
                ".txt files (one document per file; --pattern for others), glob pattern such as 'news-*.txt.gz' "
                "(quoted), or - for stdin; read lazily, never held in memory")


#: Parameters of ``Corpus`` that its error messages name, and the flags that set them.
_INPUT_FLAGS = {"encoding": "--encoding", "errors": "--errors"}


def _add_input_options(p):
    """Options of the commands that read a corpus: its decoding and where it is counted."""
    p.add_argument("--pattern", default="*.txt",
                   help="with a folder: which of its files (and its sub-folders') are read, a "
                   "glob on the file name, quoted (e.g. '*' or '*.txt.gz'); each file is one "
                   "document")
    p.add_argument("--encoding", default="utf-8", help="text encoding of the input")
    p.add_argument("--errors", default="strict", choices=["strict", "replace", "ignore"],
                   help="what to do with bytes that do not decode: stop with an error naming "
                   "the file and line, replace them with U+FFFD, or drop them")
    dask = p.add_mutually_exclusive_group()
    dask.add_argument("--scheduler", metavar="ADDRESS", default=None,
                      help="run the counting on the Dask cluster of this scheduler (e.g. "
                      "tcp://10.0.0.5:8786; its workers need nlpfeat and must see the input "
                      "files); needs nlpfeat[dask]")
    dask.add_argument("--dask-workers", metavar="N", type=_positive_int, default=None,
                      help="run the counting on a local Dask cluster of N worker processes; "
                      "needs nlpfeat[dask]")
    p.add_argument("--blocksize", metavar="MIB", type=_positive_float, default=32.0,
                   help="with --scheduler or --dask-workers: MiB of a text file per Dask "
                   "partition (compressed files, and files of UTF-16 or UTF-32, are one "
                   "partition each)")


def _add_compare(sub):
    from nlpfeat.compare import ALL_MODELS, TASKS

    p = sub.add_parser(
        "compare", help=_SUMMARIES["compare"],
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
    _add_progress_option(p)
    p.set_defaults(subparser=p, flags={})


def _add_progress_option(p):
    """``--no-progress``, which every subcommand takes (bars: see :func:`_show_progress`)."""
    p.add_argument("--no-progress", action="store_true",
                   help="no progress bars on stderr (shown by default when stderr is a "
                   "terminal; never in a log file or a pipe)")


def _show_progress(args):
    """Whether this call shows progress bars: on a terminal, unless ``--no-progress``."""
    from nlpfeat._progress import stderr_is_terminal

    return not getattr(args, "no_progress", False) and stderr_is_terminal()


def _corpus_parser(sub, name, summary, description, epilog):
    """The parser of a subcommand that reads a corpus, its ``file`` argument first."""
    p = sub.add_parser(name, help=summary, description=description, epilog=epilog,
                       formatter_class=_FORMATTER)
    p.add_argument("file", help=_CORPUS_HELP)
    return p


def _end_corpus_parser(p, flags=()):
    """The options every corpus command ends with."""
    _add_text_options(p)
    _add_input_options(p)
    _add_progress_option(p)
    p.set_defaults(subparser=p, flags={**dict(flags), **_INPUT_FLAGS})


def _add_df_options(p, noun, min_df):
    p.add_argument("--min-df", type=_positive_int, default=min_df,
                   help=f"drop {noun} in fewer documents than this")
    p.add_argument("--max-df", type=_max_df, default=1.0,
                   help=f"drop {noun} in more documents than this (a proportion, or a count)")


def _add_features(sub):
    p = _corpus_parser(sub, "features", _SUMMARIES["features"],
                       "Write the document x feature matrix of a corpus (or the PPMI word x "
                       "word matrix) to a .npz file; row i is line i.",
                       "example: nlpfeat features corpus.txt --kind tfidf --ngram 1 2 -o X.npz")
    p.add_argument("--kind", choices=["bow", "pbow", "tfidf", "pmi"], default="tfidf",
                   help="bag of words, positional bag of words, TF-IDF, or PPMI word vectors")
    p.add_argument("--ngram", nargs=2, type=_positive_int, default=[1, 1], metavar=("MIN", "MAX"),
                   help="smallest and largest word n-gram")
    _add_df_options(p, "features", min_df=1)
    p.add_argument("--min-count", type=_positive_int, default=1,
                   help="for --kind pmi: drop words seen fewer times")
    p.add_argument("--window", type=_positive_int, default=5,
                   help="for --kind pmi: co-occurrence window (words on each side)")
    p.add_argument("-o", "--output", required=True,
                   help="output .npz file (the suffix is added if missing; a device or a "
                   "pipe, such as /dev/stdout, is written as given)")
    p.add_argument("--stream", action="store_true",
                   help="accepted for compatibility: the input is always read lazily twice "
                   "(fit, then transform) and the matrix written in chunks")
    p.add_argument("--chunk-docs", type=_positive_int, default=10000,
                   help="documents transformed and written per chunk (without Dask; with "
                   "it, a chunk is a partition)")
    _end_corpus_parser(p, {"ngram_range": "--ngram"})


def _add_collocations(sub):
    from nlpfeat.text._association._collocations import MEASURES

    p = _corpus_parser(sub, "collocations", _SUMMARIES["collocations"],
                       "Rank the word pairs of a corpus by an association measure.",
                       "example: nlpfeat collocations corpus.txt --measure llr --top 20")
    p.add_argument("--measure", choices=list(MEASURES), default="pmi",
                   help="association measure")
    p.add_argument("--topn", type=_positive_int, default=30, help="how many phrases to print")
    p.add_argument("--top", type=_positive_int, default=None,
                   help="deprecated spelling of --topn (removed in 0.3)")
    p.add_argument("--min-count", type=_positive_int, default=5,
                   help="ignore pairs seen fewer times")
    _end_corpus_parser(p)


def _add_topics(sub):
    from nlpfeat.text._topics._coherence import COHERENCE_MEASURES
    from nlpfeat.text._topics._model import BACKENDS, METHODS

    p = _corpus_parser(sub, "topics", _SUMMARIES["topics"],
                       "Fit a topic model and print each topic's top words with its "
                       "coherence. Stop words are removed unless --keep-stop-words.",
                       "example: nlpfeat topics corpus.txt -k 10 --method lda --backend gensim")
    p.add_argument("-k", type=_positive_int, default=10, help="number of topics")
    p.add_argument("--method", choices=METHODS, default=METHODS[0], help="topic model")
    p.add_argument("--backend", choices=BACKENDS, default=BACKENDS[0],
                   help="library that fits the model")
    p.add_argument("--coherence", choices=COHERENCE_MEASURES, default=COHERENCE_MEASURES[0],
                   help="coherence measure printed per topic")
    p.add_argument("--topn", type=_positive_int, default=10, help="top words per topic")
    p.add_argument("--n-words", type=_positive_int, default=None,
                   help="deprecated spelling of --topn (removed in 0.3)")
    _add_df_options(p, "words", min_df=2)
    p.add_argument("--stop-words", choices=["english", "chinese"], default=None,
                   help="stop-word list (None: english, or chinese with the jieba and char "
                   "tokenizers)")
    p.add_argument("--keep-stop-words", action="store_true", help="keep stop words")
    p.add_argument("--seed", type=int, default=0, help="random seed of the model")
    _end_corpus_parser(p, {"n_components": "-k"})


def _add_neighbors(sub):
    p = _corpus_parser(sub, "neighbors", _SUMMARIES["neighbors"],
                       "Fit PPMI-SVD word vectors and print the nearest neighbours of each "
                       "query word.",
                       "example: nlpfeat neighbors corpus.txt good king --topn 5")
    p.add_argument("words", nargs="+", help="query words")
    p.add_argument("--topn", type=_positive_int, default=10, help="neighbours per word")
    p.add_argument("--dim", type=_positive_int, default=50, help="embedding size")
    p.add_argument("--window", type=_positive_int, default=5,
                   help="co-occurrence window (words on each side)")
    p.add_argument("--min-count", type=_positive_int, default=2,
                   help="drop words seen fewer times")
    p.add_argument("--seed", type=int, default=0, help="random seed of the SVD")
    _end_corpus_parser(p, {"n_components": "--dim"})


def _add_attention(sub):
    p = sub.add_parser("attention", help=_SUMMARIES["attention"],
                       description="Print (and plot) the self-attention weights of a small "
                       "untrained model over the tokens of a sentence.",
                       epilog='example: nlpfeat attention "the fat cat sat on the mat" '
                       '--heads 4 -o fig.png',
                       formatter_class=_FORMATTER)
    p.add_argument("sentence", help="the sentence, or - to read it from stdin")
    p.add_argument("--heads", type=_positive_int, default=1, help="attention heads")
    p.add_argument("--seed", type=int, default=0, help="random seed of the weights")
    p.add_argument("--tokenizer", default="regexp", choices=_tokenizers(), help="tokenizer")
    p.add_argument("--max-tokens", metavar="N", type=_non_negative_int, default=40,
                   help="attend over the first N tokens only, so that the table and the "
                   "heatmap stay readable (0: every token)")
    p.add_argument("-o", "--output", help="save a heatmap (needs matplotlib)")
    _add_progress_option(p)
    p.set_defaults(subparser=p, flags={})


def build_parser(command=None):
    """The command line's parser; with ``command``, only that subcommand's options.

    The other subcommands are listed by name and summary only, so that a call imports
    what its own command uses (``nlpfeat --help`` and ``--version`` import no library
    module; the options' choices come from the library). ``None`` builds every one.
    """
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
    adders = {"compare": _add_compare, "features": _add_features,
              "collocations": _add_collocations, "topics": _add_topics,
              "neighbors": _add_neighbors, "attention": _add_attention}
    for name, add in adders.items():
        if command is None or name == command:
            add(sub)
        else:
            sub.add_parser(name, help=_SUMMARIES[name])
    return parser


def _command_of(argv):
    """The subcommand a command line names ('' for none): its first word that is not an
    option (the top level's options take no value)."""
    argv = sys.argv[1:] if argv is None else argv
    return next((str(word) for word in argv if not str(word).startswith("-")), "")


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
    """Run the command line; returns the exit status (130 after Ctrl-C).

    Everything beyond the standard library is imported inside, so that Ctrl-C while the
    modules load (seconds on a busy machine) is caught here too. An interrupt that lands
    inside a compiled module's import can surface as a different exception (numpy turns
    it into an ``ImportError``), so the signal itself is noted and decides.
    """
    interrupted = []

    def on_interrupt(signum, frame):
        interrupted.append(signum)
        signal.default_int_handler(signum, frame)

    previous = None
    if (threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler):
        previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        return _run(argv)
    except BaseException as exc:
        if not (interrupted or isinstance(exc, KeyboardInterrupt)):
            raise
        # Results already written stay; no traceback for a deliberate interruption.
        print("nlpfeat: interrupted", file=sys.stderr)
        return 130
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def _run(argv):
    parser = build_parser(_command_of(argv))
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    from nlpfeat.cli import _commands

    args.progress = _show_progress(args)
    sub_parser = args.subparser
    try:
        getattr(_commands, f"cmd_{args.command}")(args, sub_parser)
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
