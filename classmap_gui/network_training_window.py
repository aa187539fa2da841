"""The window network: one fully convolutional pass per pyramid level embeds every window of it.

Training side (PyTorch, the ``[train]`` extra) of :mod:`.network_training`'s ``--arch dense``; the app runs
the exported ONNX file (:mod:`.core.features.network`), nothing there imports torch.

Input: a grey image normalised by :func:`~.core.features.network_input.local_contrast` (a whole pyramid
level at run time; a crop with its context in training). A *window* is :data:`WINDOW` pixels square at the
network's scale, placed on the trunk's cell grid (stride :data:`STRIDE`).

- Trunk: MobileNet's recipe: a 3x3 stride-2 convolution, then depthwise-separable blocks (3x3 depthwise,
  1x1 pointwise, each with batch norm and ReLU), two of stride 2: cells of 8 x 8 pixels, ``C`` channels.
- Window pooling: a window is 8 x 8 cells; each of its four quadrants (4 x 4 cells) is averaged (Coates
  et al.'s quadrant pooling), the four means concatenated: ``4C`` numbers that keep where in the window
  the fingers are.
- Head: a 1 x 1 convolution ``4C -> E`` with batch norm and ReLU: the embedding the classifier banks read.

Exported (:func:`export_dense_onnx`), the graph computes the embedding of *every* window position at once:
input ``(n, 1, H, W)`` -> output ``(n, E, H/8 - 7, W/8 - 7)``, the window whose top-left cell is ``(i, j)``
at ``[:, :, i, j]``. A crop with its context (:data:`CONTEXT` pixels each side of the window) has its window
at cell ``(CONTEXT/8, CONTEXT/8)`` of that output; that is the crop's embedding.

Training crops: the window's hand rendered inside a :data:`CROP` x :data:`CROP` image (the window plus its
context: the forearm, the clutter around it), plus background crops and near misses (the same hands
shifted or scaled out of the window: a neighbouring window of a frame), which teach the background class
to say where the hand is *not*.
"""
from __future__ import annotations

import os
from pathlib import Path

import cv2
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .core.data.hand_pose import N_ORIENTATIONS, N_SHAPES, render_block
from .core.detect.window_crops import context_style, near_misses
from .core.features.network_input import CONTEXT, CROP, STRIDE, WINDOW, local_contrast

N_CLASSES = N_SHAPES * N_ORIENTATIONS
#: trunk channels (stem, first block, after the second stride, after the third)
WIDTHS = {"small": (12, 24, 48, 96), "base": (16, 32, 64, 128), "wide": (24, 48, 96, 192)}


def _dws(i: int, o: int, s: int) -> list[nn.Module]:
    return [nn.Conv2d(i, i, 3, s, 1, groups=i, bias=False), nn.BatchNorm2d(i), nn.ReLU(inplace=True),
            nn.Conv2d(i, o, 1, 1, 0, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True)]


class WindowNet(nn.Module):
    """Trunk, window pooling, head (the module docstring) and the three training heads."""

    def __init__(self, width=WIDTHS["base"], embedding: int = 512):
        super().__init__()
        c0, c1, c2, c3 = width
        layers = [nn.Conv2d(1, c0, 3, 2, 1, bias=False), nn.BatchNorm2d(c0), nn.ReLU(inplace=True)]
        layers += _dws(c0, c1, 1) + _dws(c1, c2, 2) + _dws(c2, c2, 1) + _dws(c2, c3, 2) + _dws(c3, c3, 1)
        layers += _dws(c3, c3, 1)
        self.trunk = nn.Sequential(*layers)
        self.head = nn.Sequential(nn.Conv2d(4 * c3, embedding, 1, bias=False), nn.BatchNorm2d(embedding),
                                  nn.ReLU(inplace=True))
        self.classes = nn.Linear(embedding, N_CLASSES + 1)
        self.shapes = nn.Linear(embedding, N_SHAPES + 1)
        self.orientations = nn.Linear(embedding, N_ORIENTATIONS)

    def dense(self, x):
        """``(n, 1, H, W)`` -> ``(n, E, H/8 - 7, W/8 - 7)``: every window position's embedding."""
        q = F.avg_pool2d(self.trunk(x), 4, 1)
        quads = torch.cat([q[:, :, :-4, :-4], q[:, :, :-4, 4:], q[:, :, 4:, :-4], q[:, :, 4:, 4:]], 1)
        return self.head(quads)

    def embed(self, x):
        """``(n, 1, CROP, CROP)`` crops with context -> ``(n, E)``: the central window's embedding."""
        c = CONTEXT // STRIDE
        cells = self.trunk(x)
        q = [cells[:, :, c + a:c + a + 4, c + b:c + b + 4].mean((2, 3), keepdim=True) for a in (0, 4) for b in (0, 4)]
        return self.head(torch.cat(q, 1)).flatten(1)

    def forward(self, x):
        e = self.embed(x)
        return self.classes(e), self.shapes(e), self.orientations(e)


def multiply_adds(width=WIDTHS["base"], embedding: int = 512, side: int = WINDOW) -> dict:
    """Multiply-adds of the trunk over a ``side`` x ``side`` image (per crop-equivalent) and of the head per
    window: the cost model behind the choice of a width."""
    c0, c1, c2, c3 = width
    s = side // 2
    trunk = s * s * c0 * 9
    for i, o, st in ((c0, c1, 1), (c1, c2, 2), (c2, c2, 1), (c2, c3, 2), (c3, c3, 1), (c3, c3, 1)):
        s //= st
        trunk += s * s * (i * 9 + i * o)
    return {"trunk_per_crop_equivalent": trunk, "head_per_window": 4 * c3 * embedding,
            "bank_per_window_2431_classes": 2431 * embedding}


def dense_batch(step: int, seed: int, batch: int, background: int, style, near: float = 0.5):
    """The crops of one training step (with context): uint8 ``(batch, CROP, CROP)``, labels ``(batch,)`` int64
    (``N_CLASSES`` = background; ``near`` of the background crops are near misses)."""
    from .core.detect.background import background_images

    rng = np.random.default_rng([seed, step, 11])
    hands = batch - background
    n_near = int(round(background * near))
    cls = rng.integers(0, N_CLASSES, hands + n_near)
    img = render_block(step, cls // N_ORIENTATIONS, cls % N_ORIENTATIONS, (CROP, CROP), seed, context_style(style))
    parts, labels = [img[:hands]], [cls[:hands]]
    if n_near:
        parts.append(near_misses(img[hands:], rng))
        labels.append(np.full(n_near, N_CLASSES))
    if background - n_near:
        parts.append(background_images(background - n_near, (CROP, CROP), seed=int(seed) * 1_000_003 + step))
        labels.append(np.full(background - n_near, N_CLASSES))
    img, cls = np.concatenate(parts), np.concatenate(labels)
    order = rng.permutation(batch)
    return img[order], cls[order].astype(np.int64)


def validation_crops(seed: int, per_class: int = 2, background: int = 400):
    """Fixed validation crops with context of their own seed: the varied style (not the training framing),
    class-major, plus background crops (half near misses)."""
    from .core.data.hand_style import VARIED
    from .core.detect.background import background_images

    n = N_CLASSES * per_class
    labels = np.repeat(np.arange(N_CLASSES), per_class)
    style = context_style(VARIED)
    ims = [render_block(10_000 + b, labels[a:a + 256] // N_ORIENTATIONS, labels[a:a + 256] % N_ORIENTATIONS,
                        (CROP, CROP), seed, style) for b, a in enumerate(range(0, n, 256))]
    rng = np.random.default_rng([seed, 5])
    near = near_misses(np.concatenate(ims)[rng.choice(n, background // 2, replace=False)], rng)
    bg = background_images(background - len(near), (CROP, CROP), seed=seed + 1)
    return (np.concatenate(ims + [near, bg]),
            np.concatenate([labels, np.full(background, N_CLASSES)]).astype(np.int64))


def export_dense_onnx(model: WindowNet, path: Path) -> None:
    """The dense graph (module docstring): input ``image (n, 1, H, W)``, output ``windows (n, E, H/8-7, W/8-7)``,
    every size dynamic."""

    class _Dense(nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, x):
            return self.m.dense(x)

    m = _Dense(model.cpu().eval())
    tmp = path.with_suffix(".tmp")
    torch.onnx.export(m, torch.zeros(1, 1, CROP, CROP), str(tmp), input_names=["image"], output_names=["windows"],
                      dynamic_axes={"image": {0: "n", 2: "h", 3: "w"}, "windows": {0: "n", 2: "rows", 3: "cols"}},
                      opset_version=17, dynamo=False)
    os.replace(tmp, path)


def head_classes() -> list[str]:
    """The class head's class names in its row order: hand-pose class ``shape * 30 + orientation``, then
    the background class."""
    from .core.data.hand_pose import class_name, orientations, shape_names
    from .core.data.imageset import BACKGROUND_CLASS

    return [class_name(s, *o) for s in shape_names() for o in orientations()] + [BACKGROUND_CLASS]


def export_head(state: dict, path: Path) -> None:
    """The class head (``classes``: 2430 hand classes + background over the embedding) as ``path``, an ``.npz``
    without pickles: ``classes (C,)`` names, ``coef (C, E) float32``, ``intercept (C,) float32`` — what
    ``NetworkHeadBank`` (``bank network-head``) scores a window's embedding with. ``state``: the model's state dict."""
    coef = state["classes.weight"].detach().cpu().numpy().astype(np.float32)
    intercept = state["classes.bias"].detach().cpu().numpy().astype(np.float32)
    names = np.array(head_classes())
    if len(names) != len(coef):
        raise ValueError(f"the class head has {len(coef)} rows for {len(names)} classes")
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez_compressed(tmp, classes=names, coef=coef, intercept=intercept)
    os.replace(tmp, path)


def input_of(images: np.ndarray) -> np.ndarray:
    """What the network reads: :func:`local_contrast` of uint8 crops."""
    return local_contrast(images)


__all__ = ["CONTEXT", "CROP", "STRIDE", "WIDTHS", "WINDOW", "WindowNet", "dense_batch", "dense_parity", "export_dense_onnx",
           "multiply_adds", "validation_crops"]


def dense_parity(model: WindowNet, path: Path, crops: np.ndarray) -> dict:
    """Largest absolute difference between PyTorch's crop embedding and each ONNX run time's (the exported
    dense graph's window at the context cell) on uint8 ``crops (n, CROP, CROP)``."""
    import onnxruntime as ort

    model.cpu().eval()
    x = input_of(crops)
    with torch.no_grad():
        ref = model.embed(torch.from_numpy(x)).numpy()
    c = CONTEXT // STRIDE
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    got = {"onnxruntime": np.concatenate([sess.run(None, {"image": x[a:a + 256]})[0][:, :, c, c]
                                          for a in range(0, len(x), 256)])}
    net = cv2.dnn.readNetFromONNX(str(path))
    outs = []
    for a in range(0, len(x), 256):
        net.setInput(x[a:a + 256])
        outs.append(net.forward()[:, :, c, c])
    got["opencv"] = np.concatenate(outs)
    return {k: float(np.abs(v - ref).max()) for k, v in got.items()}
