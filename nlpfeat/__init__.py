"""nlpfeat: classical NLP features and kernel regression as scikit-learn estimators.

Attention is kernel regression: Nadaraya-Watson with a Gaussian kernel is softmax
attention. nlpfeat puts text features (``nlpfeat.text``), kernel regression
(``nlpfeat.kernels``) and torch-free neural attention (``nlpfeat.attention``) side by
side in one scikit-learn ``Pipeline``. Every public estimator is importable from the
top level as well as from its subpackage.
"""
__version__ = "0.1.0"

from nlpfeat import attention, kernels, text  # noqa: E402
from nlpfeat.attention import *  # noqa: E402,F401,F403
from nlpfeat.kernels import *  # noqa: E402,F401,F403
from nlpfeat.text import *  # noqa: E402,F401,F403

# Estimators, functions and classes; the submodules attention.functional/layers/optim
# stay under nlpfeat.attention.
__all__ = ["__version__"] + [
    name for name in (*attention.__all__, *kernels.__all__, *text.__all__)
    if name not in ("functional", "layers", "optim")
]
for _module in ("functional", "layers", "optim"):
    globals().pop(_module, None)
del _module
