"""The ``nlpfeat`` command line: parses arguments and calls the public API.

Each subcommand lives in a small function registered in :func:`build_parser`;
errors the user can fix are reported as one line through ``parser.error`` (exit 2),
never as a traceback.
"""
import argparse
import sys

from nlpfeat import __version__


def build_parser():
    parser = argparse.ArgumentParser(
        prog="nlpfeat",
        description="Classical NLP features and kernel regression: attention is kernel regression.",
    )
    parser.add_argument("--version", action="version", version=f"nlpfeat {__version__}")
    parser.add_subparsers(dest="command", metavar="COMMAND")
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 0
    return args.func(args, parser) or 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
