"""Real-size models for the scale benchmarks: plain JAX, no framework.

``transformer_step`` (a 12-layer pre-LN transformer train step, unrolled),
``scan_step`` (the same with the layers under ``lax.scan``), ``gpt2_forward``
(GPT-2-small or -XL sized forward pass), ``sharded_step`` (the transformer
step on a 2x4 mesh) and ``wide_update`` (an SGD update of thousands of small
parameter arrays: a program whose signature is thousands of inputs long). Each builder returns ``(jitted_fn, args)``; arguments are
``jax.ShapeDtypeStruct`` where ``abstract=True`` so an XL-sized program can be
lowered and compiled without allocating its parameters.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp


@dataclass(frozen=True)
class Size:
    layers: int
    width: int
    heads: int
    vocab: int
    seq: int
    batch: int


# Small batches keep the run itself short next to the compile, so its noise does not swamp the comparison.
TRANSFORMER = Size(layers=12, width=512, heads=8, vocab=8192, seq=64, batch=2)
GPT2_SMALL = Size(layers=12, width=768, heads=12, vocab=50257, seq=64, batch=1)
GPT2_XL = Size(layers=48, width=1600, heads=25, vocab=50257, seq=256, batch=1)


def _layer_shapes(s: Size) -> dict[str, tuple[int, ...]]:
    w = s.width
    return {"ln1": (w,), "wq": (w, w), "wk": (w, w), "wv": (w, w), "wo": (w, w),
            "ln2": (w,), "w1": (w, 4 * w), "b1": (4 * w,), "w2": (4 * w, w), "b2": (w,)}


def _params(s: Size, *, stacked: bool, abstract: bool):
    def leaf(shape, key):
        if abstract:
            return jax.ShapeDtypeStruct(shape, jnp.float32)
        return jax.random.normal(key, shape, jnp.float32) * (0.02 if len(shape) > 1 else 1.0)

    keys = iter(jax.random.split(jax.random.key(0), 16 * s.layers + 4))
    shapes = _layer_shapes(s)
    if stacked:
        layers = {k: leaf((s.layers, *v), next(keys)) for k, v in shapes.items()}
    else:
        layers = [{k: leaf(v, next(keys)) for k, v in shapes.items()} for _ in range(s.layers)]
    return {"embed": leaf((s.vocab, s.width), next(keys)), "pos": leaf((s.seq, s.width), next(keys)),
            "layers": layers, "ln_f": leaf((s.width,), next(keys))}


def _norm(x, g):
    x = x - x.mean(-1, keepdims=True)
    return x * jax.lax.rsqrt((x * x).mean(-1, keepdims=True) + 1e-5) * g


def _block(x, p, heads: int):
    b, t, w = x.shape
    h = _norm(x, p["ln1"])
    q, k, v = (jnp.reshape(h @ p[n], (b, t, heads, w // heads)) for n in ("wq", "wk", "wv"))
    scores = jnp.einsum("bthd,bshd->bhts", q, k) / jnp.sqrt(w / heads)
    scores = jnp.where(jnp.tril(jnp.ones((t, t), bool)), scores, -1e9)
    attn = jnp.einsum("bhts,bshd->bthd", jax.nn.softmax(scores), v).reshape(b, t, w)
    x = x + attn @ p["wo"]
    h = _norm(x, p["ln2"])
    return x + jax.nn.gelu(h @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]


def _logits(params, tokens, heads: int, *, stacked: bool):
    x = params["embed"][tokens] + params["pos"]
    if stacked:
        x, _ = jax.lax.scan(lambda x, p: (_block(x, p, heads), None), x, params["layers"])
    else:
        for p in params["layers"]:
            x = _block(x, p, heads)
    return _norm(x, params["ln_f"]) @ params["embed"].T


def _tokens(s: Size, *, abstract: bool):
    if abstract:
        return jax.ShapeDtypeStruct((s.batch, s.seq), jnp.int32)
    return jax.random.randint(jax.random.key(1), (s.batch, s.seq), 0, s.vocab)


def _train_step(heads: int, stacked: bool):
    def loss_fn(params, tokens):
        logits = _logits(params, tokens, heads, stacked=stacked)
        targets = jnp.roll(tokens, -1, axis=1)
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), targets[..., None], -1))

    def train_step(params, tokens):
        loss, grads = jax.value_and_grad(loss_fn)(params, tokens)
        return jax.tree.map(lambda p, g: p - 1e-3 * g, params, grads), loss

    return train_step


def transformer_step(size: Size = TRANSFORMER, *, abstract: bool = False):
    """The unrolled 12-layer train step, params donated."""
    fn = jax.jit(_train_step(size.heads, stacked=False), donate_argnums=0)
    return fn, (_params(size, stacked=False, abstract=abstract), _tokens(size, abstract=abstract))


def scan_step(size: Size = TRANSFORMER, *, abstract: bool = False):
    """The same train step with the layers stacked under ``lax.scan``."""
    fn = jax.jit(_train_step(size.heads, stacked=True), donate_argnums=0)
    return fn, (_params(size, stacked=True, abstract=abstract), _tokens(size, abstract=abstract))


def gpt2_forward(size: Size = GPT2_SMALL, *, abstract: bool = False):
    """A GPT-2-shaped forward pass returning the logits."""
    heads = size.heads

    def forward(params, tokens):
        return _logits(params, tokens, heads, stacked=False)

    return jax.jit(forward), (_params(size, stacked=False, abstract=abstract), _tokens(size, abstract=abstract))


def sharded_step(size: Size = TRANSFORMER):
    """The transformer step on a ('data', 'model') = 2x4 mesh of Auto axes: batch over data, weights over model.

    Needs 8 devices (``XLA_FLAGS=--xla_force_host_platform_device_count=8`` before JAX starts).
    """
    from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    fn, (params, tokens) = transformer_step(size)

    def spec(path, leaf):
        name = jax.tree_util.keystr(path[-1:])
        if leaf.ndim == 2 and any(k in name for k in ("wq", "wk", "wv", "w1")):
            return P(None, "model")
        if leaf.ndim == 2 and any(k in name for k in ("wo", "w2")):
            return P("model", None)
        return P()

    params = jax.tree.map_with_path(lambda path, leaf: jax.device_put(leaf, NamedSharding(mesh, spec(path, leaf))), params)
    tokens = jax.device_put(tokens, NamedSharding(mesh, P("data", None)))
    return fn, (params, tokens)


def wide_update(leaves: int = 2_000, *, abstract: bool = False):
    """``params - 0.01 * grads`` over ``leaves`` parameter arrays of 4 and 2 elements: 2 x ``leaves`` inputs, ``leaves`` outputs."""
    def make(shape, value):
        return jax.ShapeDtypeStruct(shape, jnp.float32) if abstract else jnp.full(shape, value, jnp.float32)

    params = {f"layer_{i}": {"w": make((4,), 1.0), "b": make((2,), 0.0)} for i in range(leaves // 2)}
    grads = jax.tree.map(lambda p: make(p.shape, 0.5), params)
    return jax.jit(lambda params, grads: jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)), (params, grads)


BUILDERS = {"transformer": transformer_step, "scan": scan_step, "gpt2-small": gpt2_forward,
            "gpt2-xl": lambda **kw: gpt2_forward(GPT2_XL, **kw), "sharded": sharded_step, "wide": wide_update}
