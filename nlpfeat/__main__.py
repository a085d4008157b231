"""``python -m nlpfeat``: the same as the ``nlpfeat`` command."""
import sys

from nlpfeat.cli import main

sys.exit(main())
