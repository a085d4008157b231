"""The PyTorch baseline of ``nlpfeat compare --with-torch``: ``nn.MultiheadAttention``
shaped and trained as :class:`~nlpfeat.attention.AttentionRegressor`. torch is imported
only when the model is fitted.
"""
import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin


class TorchAttentionRegressor(RegressorMixin, BaseEstimator):
    """A PyTorch ``nn.MultiheadAttention`` regressor shaped and trained as AttentionRegressor.

    Queries are the (standardised) samples, keys the training inputs, values the training
    targets, each embedded by a linear map to ``d_model``; each training query's own memory
    slot is masked (leave-one-out); minibatch Adam on the squared error, each step attending
    over at most ``max_memory`` random memory slots, as AttentionRegressor does. Only for
    ``nlpfeat compare --with-torch``; torch is imported when it is fitted.
    """

    def __init__(self, n_heads=4, *, d_model=16, max_iter=60, learning_rate=1e-2, batch_size=32,
                 max_memory=128, random_state=0):
        self.n_heads = n_heads
        self.d_model = d_model
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.max_memory = max_memory
        self.random_state = random_state

    def _forward(self, Xq, memory=None, mask=None, per_head=False):
        torch = self._torch
        Xm = self.Xm_ if memory is None else self.Xm_[memory]
        ym = self.ym_ if memory is None else self.ym_[memory]
        out, w = self.mha_(self.q_proj_(Xq)[None], self.k_proj_(Xm)[None],
                           self.v_proj_(ym)[None], attn_mask=mask, need_weights=True,
                           average_attn_weights=not per_head)
        return self.out_(out[0]), w[0] if w is not None else torch.empty(0)

    def _step(self, idx, memory, optimizer):
        torch = self._torch
        # Mask each query's own slot when it is in the memory drawn for this step.
        mask = torch.as_tensor(idx[:, None] == memory[None, :])
        pred, _ = self._forward(self.Xm_[idx], torch.as_tensor(memory), mask)
        loss = 0.5 * ((pred - self.ym_[idx]) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    def fit(self, X, y):
        from nlpfeat._validation import import_optional

        torch = self._torch = import_optional("torch", "torch", "TorchAttentionRegressor")
        torch.manual_seed(self.random_state)
        X, y = np.asarray(X, np.float64), np.asarray(y, np.float64).reshape(len(X), -1)
        self.mx_, self.sx_ = X.mean(0), np.where(X.std(0) > 0, X.std(0), 1.0)
        self.my_, self.sy_ = y.mean(0), np.where(y.std(0) > 0, y.std(0), 1.0)
        self.Xm_ = torch.tensor((X - self.mx_) / self.sx_)
        self.ym_ = torch.tensor((y - self.my_) / self.sy_)
        nn, d = torch.nn, self.d_model
        self.q_proj_ = nn.Linear(X.shape[1], d).double()
        self.k_proj_ = nn.Linear(X.shape[1], d).double()
        self.v_proj_ = nn.Linear(y.shape[1], d).double()
        self.mha_ = nn.MultiheadAttention(d, self.n_heads, batch_first=True).double()
        self.out_ = nn.Linear(d, y.shape[1]).double()
        params = [p for m in (self.q_proj_, self.k_proj_, self.v_proj_, self.mha_, self.out_)
                  for p in m.parameters()]
        optimizer = torch.optim.Adam(params, lr=self.learning_rate)
        rng = np.random.RandomState(self.random_state)
        n = len(X)
        for _ in range(self.max_iter):
            order = rng.permutation(n)
            for start in range(0, n, self.batch_size):
                memory = np.sort(rng.choice(n, size=min(n, self.max_memory), replace=False))
                self._step(order[start:start + self.batch_size], memory, optimizer)
        return self

    def predict(self, X):
        torch = self._torch
        with torch.no_grad():
            pred, _ = self._forward(torch.tensor((np.asarray(X, np.float64) - self.mx_) / self.sx_))
        out = pred.numpy() * self.sy_ + self.my_
        return out.ravel() if out.shape[1] == 1 else out

    def attention_weights(self, X, *, per_head=False):
        """(n_queries, n_samples_fit) weights averaged over heads, nlpfeat's convention.

        ``per_head=True`` gives (n_heads, n_queries, n_samples_fit), as nlpfeat's
        ``AttentionRegressor`` does.
        """
        torch = self._torch
        with torch.no_grad():
            _, w = self._forward(torch.tensor((np.asarray(X, np.float64) - self.mx_) / self.sx_),
                                 per_head=per_head)
        return w.numpy()
