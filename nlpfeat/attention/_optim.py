"""Optimisers (SGD, Adam, AdamW), gradient clipping and learning-rate schedules.

The update rules are those of ``torch.optim`` (same order of operations), so a numpy model and
a torch model fed the same gradients follow the same trajectory.
"""
import math

import numpy as np

__all__ = ["SCHEDULES", "SGD", "Adam", "AdamW", "Optimizer", "clip_grad_norm", "make_schedule"]

SCHEDULES = ("constant", "linear_warmup", "warmup_cosine")


def make_schedule(name="constant", total_steps=None, warmup_fraction=0.0):
    """Learning-rate multiplier ``factor(step)`` for step 0, 1, ... (``torch`` ``LambdaLR`` style).

    Parameters
    ----------
    name : {"constant", "linear_warmup", "warmup_cosine"}, default="constant"
        ``"linear_warmup"``: ``step / n_warmup`` during the first ``n_warmup`` steps, then 1.
        ``"warmup_cosine"``: the same warm-up, then ``0.5 (1 + cos(pi * progress))`` down to 0
        at ``total_steps`` (Hugging Face's ``get_cosine_schedule_with_warmup``).
    total_steps : int, default=None
        Needed unless ``name="constant"``.
    warmup_fraction : float in [0, 1], default=0.0
        ``n_warmup = round(warmup_fraction * total_steps)``.

    Returns
    -------
    schedule : callable int -> float

    Examples
    --------
    >>> from nlpfeat.attention.optim import make_schedule
    >>> f = make_schedule("warmup_cosine", total_steps=10, warmup_fraction=0.2)
    >>> [round(f(t), 3) for t in range(0, 10, 2)]
    [0.0, 1.0, 0.854, 0.5, 0.146]
    """
    if name not in SCHEDULES:
        raise ValueError(f"Unknown schedule {name!r}; choose one of {SCHEDULES}.")
    if not 0.0 <= warmup_fraction <= 1.0:
        raise ValueError(f"warmup_fraction must be in [0, 1], got {warmup_fraction!r}.")
    if name == "constant":
        return _Schedule(name, 0, None)
    if total_steps is None or int(total_steps) < 1:
        raise ValueError(f"Schedule {name!r} needs total_steps >= 1, got {total_steps!r}.")
    return _Schedule(name, int(round(warmup_fraction * total_steps)), int(total_steps))


class _Schedule:
    """Picklable schedule (a closure would not pickle inside a fitted estimator)."""

    def __init__(self, name, n_warmup, total_steps):
        self.name, self.n_warmup, self.total_steps = name, n_warmup, total_steps

    def __call__(self, step):
        if step < self.n_warmup:
            return step / self.n_warmup
        if self.name != "warmup_cosine":
            return 1.0
        progress = (step - self.n_warmup) / max(1, self.total_steps - self.n_warmup)
        return max(0.0, 0.5 * (1.0 + math.cos(math.pi * progress)))

    def __repr__(self):
        return f"make_schedule({self.name!r}, n_warmup={self.n_warmup}, total={self.total_steps})"


def clip_grad_norm(grads, max_norm):
    """Scale gradients in place so that their global L2 norm is at most ``max_norm``.

    As ``torch.nn.utils.clip_grad_norm_``: coefficient ``min(1, max_norm / (norm + 1e-6))``.

    Parameters
    ----------
    grads : dict name -> ndarray
    max_norm : float

    Returns
    -------
    total_norm : float, the norm before clipping.

    Examples
    --------
    >>> from nlpfeat.attention.optim import clip_grad_norm
    >>> g = {"w": np.array([3.0, 4.0])}
    >>> clip_grad_norm(g, 1.0), g["w"].round(3)
    (5.0, array([0.6, 0.8]))
    """
    total = math.sqrt(sum(float(np.vdot(g, g)) for g in grads.values()))
    coef = max_norm / (total + 1e-6)
    if coef < 1.0:
        for g in grads.values():
            g *= coef
    return total


class Optimizer:
    """Base class: holds the parameter dict, the step count and the learning-rate schedule.

    Parameters
    ----------
    params : dict name -> ndarray
        Updated in place (pass ``layer.params``).
    lr : float
    lr_schedule : callable int -> float, default=None
        The learning rate of step ``t`` (0-based) is ``lr * lr_schedule(t)``.

    Examples
    --------
    >>> from nlpfeat.attention.optim import SGD, make_schedule
    >>> opt = SGD({"w": np.zeros(1)}, lr=0.1,
    ...           lr_schedule=make_schedule("linear_warmup", 10, warmup_fraction=0.5))
    >>> for _ in range(3):
    ...     opt.step({"w": np.ones(1)})
    >>> round(opt.current_lr(), 3), opt.params["w"].round(3)
    (0.06, array([-0.06]))
    """

    def __init__(self, params, lr, lr_schedule=None):
        if not isinstance(params, dict):
            raise TypeError(f"params must be a dict name -> ndarray (layer.params), got "
                            f"{type(params).__name__}.")
        if not lr >= 0.0:
            raise ValueError(f"lr must be non-negative, got {lr!r}.")
        self.params, self.lr, self.lr_schedule = params, float(lr), lr_schedule
        self.n_steps = 0
        self.state = {}

    def current_lr(self):
        """Learning rate of the next step."""
        return self.lr * (1.0 if self.lr_schedule is None else self.lr_schedule(self.n_steps))

    def step(self, grads):
        """Update the parameters in place from ``grads`` (dict name -> ndarray).

        Parameters without a gradient are skipped, as torch skips ``grad is None``.
        """
        lr = self.current_lr()
        self.n_steps += 1
        for name, param in self.params.items():
            grad = grads.get(name)
            if grad is not None:
                self._update(name, param, np.asarray(grad, dtype=param.dtype), lr)

    def _update(self, name, param, grad, lr):
        raise NotImplementedError


class SGD(Optimizer):
    """Stochastic gradient descent with momentum, as ``torch.optim.SGD``.

    Examples
    --------
    >>> from nlpfeat.attention.optim import SGD
    >>> p = {"w": np.array([1.0])}
    >>> SGD(p, lr=0.1).step({"w": np.array([2.0])}); p["w"]
    array([0.8])
    """

    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False, *, lr_schedule=None):
        super().__init__(params, lr, lr_schedule)
        self.momentum, self.dampening = float(momentum), float(dampening)
        self.weight_decay, self.nesterov = float(weight_decay), nesterov

    def _update(self, name, param, grad, lr):
        if self.weight_decay:
            grad = grad + self.weight_decay * param
        if self.momentum:
            buf = self.state.get(name)
            if buf is None:
                buf = self.state[name] = grad.copy()
            else:
                buf *= self.momentum
                buf += (1.0 - self.dampening) * grad
            grad = grad + self.momentum * buf if self.nesterov else buf
        param -= lr * grad


class Adam(Optimizer):
    """Adam with bias correction, as ``torch.optim.Adam`` (L2 ``weight_decay`` added to the grad).

    Notes
    -----
    m <- b1 m + (1 - b1) g; v <- b2 v + (1 - b2) g^2;
    p <- p - lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps).

    References
    ----------
    Kingma, D. P. and Ba, J. (2015). Adam: A method for stochastic optimization. ICLR.

    Examples
    --------
    >>> from nlpfeat.attention.optim import Adam
    >>> p = {"w": np.array([1.0])}
    >>> opt = Adam(p, lr=0.1)
    >>> opt.step({"w": np.array([5.0])}); p["w"].round(6)
    array([0.9])
    """

    _decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, *,
                 lr_schedule=None):
        super().__init__(params, lr, lr_schedule)
        self.betas, self.eps, self.weight_decay = tuple(betas), float(eps), float(weight_decay)

    def _update(self, name, param, grad, lr):
        beta1, beta2 = self.betas
        if self.weight_decay:
            if self._decoupled:
                param *= 1.0 - lr * self.weight_decay
            else:
                grad = grad + self.weight_decay * param
        if name not in self.state:
            self.state[name] = (np.zeros_like(param), np.zeros_like(param))
        exp_avg, exp_avg_sq = self.state[name]
        t = self.n_steps
        exp_avg += (1.0 - beta1) * (grad - exp_avg)  # torch: exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq *= beta2
        exp_avg_sq += (1.0 - beta2) * grad * grad
        step_size = lr / (1.0 - beta1 ** t)
        denom = np.sqrt(exp_avg_sq)
        denom /= math.sqrt(1.0 - beta2 ** t)
        denom += self.eps
        np.divide(exp_avg, denom, out=denom)
        denom *= step_size
        param -= denom


class AdamW(Adam):
    """Adam with decoupled weight decay, as ``torch.optim.AdamW``: ``p <- p (1 - lr wd)`` first.

    Examples
    --------
    >>> from nlpfeat.attention.optim import AdamW
    >>> p = {"w": np.array([1.0])}
    >>> AdamW(p, lr=0.1, weight_decay=0.5).step({"w": np.array([0.0])}); p["w"]
    array([0.95])
    """

    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, *,
                 lr_schedule=None):
        super().__init__(params, lr, betas, eps, weight_decay, lr_schedule=lr_schedule)
