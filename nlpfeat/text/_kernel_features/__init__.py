"""Text features built on :mod:`nlpfeat.kernels`: kernel attention pooling and the locally
weighted bag of words (the only wing of ``nlpfeat.text`` that imports the kernels)."""
