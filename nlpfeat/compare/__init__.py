"""``nlpfeat compare``: classical kernel attention and learned attention, side by side.

Four tasks on bundled data, each a table of models with a cross-validated metric (mean and
standard deviation), fit and predict seconds and, for every learned-attention model, how
close its attention weights are to the Nadaraya-Watson weights on the same queries and
memory (mean KL divergence and correlation): does a learned score rediscover the kernel?

=========  ==========================================  ===============================
task       data                                        metric
=========  ==========================================  ===============================
sine       y = 2 sin(x) + x^0.8 + noise (textbook)     MSE against the noisy targets
diabetes   scikit-learn's diabetes data, standardised  R^2
polarity   200 movie-review sentences                  accuracy, repeated stratified CV
lee        Lee et al. (2005) news + human ratings      Pearson r with the ratings
=========  ==========================================  ===============================

Modules: ``_tasks`` (data, folds and models of each task), ``_harness`` (the runs),
``_attention`` (a model's attention weights and their agreement with the kernel's),
``_report`` (tables, CSV, JSON), ``_figures``, ``_torch_baseline`` (the PyTorch model of
``--with-torch``) and ``_sentence`` (the demo behind ``nlpfeat attention``).
"""
from nlpfeat.compare._attention import weight_agreement
from nlpfeat.compare._harness import run_comparison
from nlpfeat.compare._report import format_table
from nlpfeat.compare._sentence import sentence_attention
from nlpfeat.compare._tasks import ALL_MODELS, TASK_MODELS, TASKS

__all__ = ["ALL_MODELS", "TASKS", "TASK_MODELS", "format_table", "run_comparison",
           "sentence_attention", "weight_agreement"]
