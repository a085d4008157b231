"""Central finite-difference checks shared by the attention layer tests."""
import numpy as np


def rel_error(analytic, numeric, floor=1e-3):
    """||a - n|| / max(||a||, ||n||, floor).

    The floor only matters for gradients that vanish (a key bias under softmax, masked
    positions): there central differences return rounding noise of ~1e-10.
    """
    analytic, numeric = np.ravel(analytic), np.ravel(numeric)
    scale = max(np.linalg.norm(analytic), np.linalg.norm(numeric), floor)
    return float(np.linalg.norm(analytic - numeric) / scale)


def numeric_grad(loss, array, index, eps=1e-5):
    """Central differences of ``loss()`` in ``array.flat[index]`` (perturbed in place, restored)."""
    out = np.empty(len(index))
    for j, i in enumerate(index):
        old = array.flat[i]
        array.flat[i] = old + eps
        up = loss()
        array.flat[i] = old - eps
        down = loss()
        array.flat[i] = old
        out[j] = (up - down) / (2 * eps)
    return out


def sample_index(array, n_entries, rng):
    return rng.choice(array.size, size=min(n_entries, array.size), replace=False)


def check_layer_gradients(layer, inputs, kwargs=None, reset=None, n_entries=25, seed=0):
    """Compare ``layer.backward`` (inputs and every parameter) with central differences.

    ``inputs`` are passed positionally to ``forward`` (the same object several times for
    self-attention: its gradient is then the total). ``reset`` is called before every forward
    (to replay a dropout mask). Returns {name: relative error}.
    """
    kwargs = kwargs or {}
    reset = reset or (lambda: None)
    rng = np.random.default_rng([seed, 2024])  # not the stream the tests draw inputs from

    def run():
        reset()
        out = layer.forward(*inputs, **kwargs)
        return out[0] if isinstance(out, tuple) else out

    g_out = rng.normal(size=run().shape)
    d_inputs = layer.backward(g_out)
    d_inputs = d_inputs if isinstance(d_inputs, tuple) else (d_inputs,)
    grads = {name: value.copy() for name, value in layer.grads.items()}

    def loss():
        return float(np.sum(run() * g_out))

    errors, seen = {}, []
    for i, (x, dx) in enumerate(zip(inputs, d_inputs)):
        if any(x is s for s in seen) or dx is None:
            continue
        seen.append(x)
        idx = sample_index(x, n_entries, rng)
        errors[f"input{i}"] = rel_error(np.ravel(dx)[idx], numeric_grad(loss, x, idx))
    for name, param in layer.params.items():
        idx = sample_index(param, n_entries, rng)
        errors[name] = rel_error(grads[name].ravel()[idx], numeric_grad(loss, param, idx))
    return errors


def replay(generator):
    """A ``reset`` callable that rewinds ``generator`` to its current state."""
    state = generator.bit_generator.state

    def reset():
        generator.bit_generator.state = state

    return reset
