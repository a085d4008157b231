"""A tokenizer that fails on one document, for the tests of error reporting (importable,
so estimators holding it can be pickled)."""


class _boom_on:
    """A picklable tokenizer that fails on one document."""

    def __init__(self, bad):
        self.bad = bad

    def __call__(self, text):
        if text == self.bad:
            raise ValueError("cannot tokenize this")
        return text.split()
