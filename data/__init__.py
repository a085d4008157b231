"""Corpora owned by nlpfeat, installed as the package ``nlpfeat._data``.

Read them through :mod:`nlpfeat.datasets`; ``data/README.md`` describes each file.
"""
