"""The CJK ideographs, each of which nlpfeat's default tokenizer makes a token of its own.

One fact shared by the Python tokenizer (``text/_base/_tokenize.py``, a regular expression)
and the compiled one (``_compiled_tokens.py``); it lives in the counting engine, which
imports nothing above it.
"""

__all__ = ["CJK_IDEOGRAPHS"]

#: Character class of the CJK unified ideographs (basic block, extensions A-F, compatibility).
CJK_IDEOGRAPHS = (
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    "\U00020000-\U0002ebef\U0002f800-\U0002fa1f\U00030000-\U0003134f"
)
