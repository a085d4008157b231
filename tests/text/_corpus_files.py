"""Gzip-compressed corpus files (one document per line) for the streaming tests."""
import gzip


def write_gzip_lines(path, lines, end="\n"):
    """Write ``lines`` to the gzip file ``path``, each followed by ``end``; returns
    ``str(path)``."""
    with gzip.open(path, "wt", encoding="utf-8", newline="") as fh:
        fh.write("".join(line + end for line in lines))
    return str(path)
