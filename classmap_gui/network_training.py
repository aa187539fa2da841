"""``classmap train-network``: train the hand reader's convolutional network with PyTorch, export it to ONNX.

The only module that imports torch (the ``[train]`` extra: ``pip install torch==2.13.0``, the CPU build);
nothing the app, the CLI's predict or the installer runs imports it. The product runs the exported ONNX
file (:mod:`.core.features.network`).

Data: generated on the fly, never repeated. Step ``s`` renders one batch with the seed stream
``(seed, s)``: ``batch`` crops of random hand classes (81 shapes x 30 orientations) in :data:`TRAIN_STYLE`
(the ``varied`` style with looser framing, as the scan's voted boxes frame a hand) plus a share of
background crops (clutter and near misses). So a run resumed from a checkpoint sees exactly the batches
an uninterrupted run would. The ``camera`` style (its tiles, skins and ranges) is never drawn: it is the
held-out style.

Network (``--width``): a 5x5 stride-2 convolution, five 3x3 convolutions (two of stride 2), each with
batch norm and ReLU, global average pooling, then a fully connected layer to ``--embedding`` units
(batch norm, ReLU): the *embedding*, which the product exports and its banks read. Three training heads
sit on it: the 2430 classes + background, the 81 shapes + background, the 30 orientations (hands only);
the loss is their sum (orientation x 0.5). A window network's class head is exported beside it (``network-head.npz``:
the ``network-head`` bank); the other heads are not.

Validation: fixed crops of their own seed (2 per class, varied style, plus background crops), scored
every ``--eval-every`` steps by the class head (exact class, and the shape as the reader scores it: the
sum of a shape's 30 orientation probabilities). The curve goes to ``training.json`` beside the network.
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .core.data.hand_pose import N_ORIENTATIONS, N_SHAPES, render_block
from .core.data.hand_style import VARIED
from .core.features.network_input import standardise

#: the training domain: the varied style, its framing looser (a scan's voted box frames a hand loosely)
TRAIN_STYLE = dataclasses.replace(VARIED, scale_jitter=0.12, shift_jitter=0.07)
N_CLASSES = N_SHAPES * N_ORIENTATIONS  # 2430 hand classes; index N_CLASSES is the background
#: with a time budget (``minutes``), the steps ``RATE_FROM .. RATE_FROM + RATE_STEPS`` are timed to set the length
RATE_FROM, RATE_STEPS = 100, 200
WIDTHS = {"small": (16, 32, 64, 128), "base": (24, 48, 96, 192), "wide": (32, 64, 128, 256)}


class HandNet(nn.Module):
    """The trunk (to the embedding) and the three training heads."""

    def __init__(self, width=WIDTHS["base"], embedding: int = 512):
        super().__init__()
        c1, c2, c3, c4 = width

        def block(i, o, s):
            return [nn.Conv2d(i, o, 3, s, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True)]

        layers = [nn.Conv2d(1, c1, 5, 2, 2, bias=False), nn.BatchNorm2d(c1), nn.ReLU(inplace=True)]
        layers += block(c1, c2, 1) + block(c2, c3, 2) + block(c3, c3, 1) + block(c3, c4, 2) + block(c4, c4, 1)
        layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c4, embedding, bias=False),
                   nn.BatchNorm1d(embedding), nn.ReLU(inplace=True)]
        self.trunk = nn.Sequential(*layers)
        self.classes = nn.Linear(embedding, N_CLASSES + 1)
        self.shapes = nn.Linear(embedding, N_SHAPES + 1)
        self.orientations = nn.Linear(embedding, N_ORIENTATIONS)

    def forward(self, x):
        e = self.trunk(x)
        return self.classes(e), self.shapes(e), self.orientations(e)


def batch_for_step(step: int, seed: int, batch: int, background: int, size=(64, 64)):
    """The crops of one training step, from the seed stream ``(seed, step)``: uint8 ``(batch, h, w)``,
    class labels ``(batch,)`` int64 (``N_CLASSES`` = background)."""
    from .core.detect.background import background_images

    rng = np.random.default_rng([seed, step, 7])
    hands = batch - background
    cls = rng.integers(0, N_CLASSES, hands)
    img = render_block(step, cls // N_ORIENTATIONS, cls % N_ORIENTATIONS, size, seed, TRAIN_STYLE)
    if background:
        bg = background_images(background, size, seed=int(seed) * 1_000_003 + step)
        img = np.concatenate([img, bg])
        cls = np.concatenate([cls, np.full(background, N_CLASSES)])
    order = rng.permutation(batch)
    return img[order], cls[order].astype(np.int64)


def _arch(name: str):
    """``(model class, widths, batch fn(step, seed, batch, background), input fn, validation crops fn)``."""
    if name == "dense":
        from . import network_training_window as nd

        return (nd.WindowNet, nd.WIDTHS, lambda s, seed, b, bg: nd.dense_batch(s, seed, b, bg, TRAIN_STYLE),
                nd.input_of, nd.validation_crops)
    return HandNet, WIDTHS, batch_for_step, standardise, validation_crops


class _Stream(torch.utils.data.IterableDataset):
    """The steps ``start, start + 1, ...`` (up to ``stop``), each its own batch. With several loader
    workers, worker ``i`` of ``n`` renders steps ``start + i, start + i + n, ...``; the loader takes
    the workers in turn, so the batches arrive in step order whatever the number of workers."""

    def __init__(self, start, stop, seed, batch, background, arch="crop"):
        # the end is shared with the workers: a time budget sets it once the speed is measured
        self.stop = torch.multiprocessing.get_context("spawn").Value("q", stop)
        self.start, self.seed, self.batch, self.background, self.arch = start, seed, batch, background, arch

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        i, n = (info.id, info.num_workers) if info is not None else (0, 1)
        s = self.start + i
        _, _, batch_fn, input_fn, _ = _arch(self.arch)
        while s < self.stop.value:
            img, cls = batch_fn(s, self.seed, self.batch, self.background)
            s += n
            yield torch.from_numpy(input_fn(img)), torch.from_numpy(cls)


def validation_crops(seed: int, per_class: int = 2, background: int = 400):
    """Fixed validation crops of their own seed: varied style (not the training framing), class-major."""
    from .core.data.hand_pose import generate_hand_pose
    from .core.detect.background import background_images

    ims = generate_hand_pose(images_per_class=per_class, seed=seed, style="varied")
    bg = background_images(background, (64, 64), seed=seed + 1)
    return np.concatenate([ims.images, bg]), np.concatenate([ims.labels, np.full(background, N_CLASSES)])


def score(model: HandNet, images: np.ndarray, labels: np.ndarray, batch: int = 512, device="cpu",
          input_fn=standardise) -> dict:
    """Exact-class and shape accuracy of the class head (shape = the sum of its orientation classes'
    probabilities, background a shape of its own), over hands and background alike."""
    model.eval()
    preds, shapes = [], []
    with torch.no_grad():
        for a in range(0, len(images), batch):
            logits = model(torch.from_numpy(input_fn(images[a:a + batch])).to(device))[0]
            p = torch.softmax(logits.float(), 1).cpu()
            preds.append(p.argmax(1).numpy())
            per_shape = torch.cat([p[:, :N_CLASSES].reshape(len(p), N_SHAPES, N_ORIENTATIONS).sum(2),
                                   p[:, N_CLASSES:]], 1)
            shapes.append(per_shape.argmax(1).numpy())
    model.train()
    pred, shape = np.concatenate(preds), np.concatenate(shapes)
    true_shape = np.where(labels == N_CLASSES, N_SHAPES, labels // N_ORIENTATIONS)
    hand = labels < N_CLASSES
    return {"class_accuracy": float(np.mean(pred[hand] == labels[hand])),
            "shape_accuracy": float(np.mean(shape[hand] == true_shape[hand])),
            "background_accuracy": float(np.mean(pred[~hand] == N_CLASSES)),
            "hand_crops": int(hand.sum()), "background_crops": int((~hand).sum())}


def export_onnx(model: HandNet, path: Path, size=(64, 64)) -> None:
    """The trunk alone (input ``(n, 1, h, w)`` standardised crops -> ``(n, embedding)``), batch dynamic."""
    trunk = model.trunk.cpu().eval()
    dummy = torch.zeros(1, 1, *size)
    tmp = path.with_suffix(".tmp")
    torch.onnx.export(trunk, dummy, str(tmp), input_names=["crops"], output_names=["embedding"],
                      dynamic_axes={"crops": {0: "n"}, "embedding": {0: "n"}}, opset_version=17, dynamo=False)
    os.replace(tmp, path)


def onnx_parity(model: HandNet, path: Path, crops: np.ndarray) -> dict:
    """Largest absolute difference between PyTorch's embedding and each ONNX run time's on ``crops`` (uint8)."""
    from .core.features.network import NetworkFeatures

    model.cpu().eval()
    with torch.no_grad():
        ref = model.trunk(torch.from_numpy(standardise(crops))).numpy()
    return {rt: float(np.abs(NetworkFeatures(str(path), runtime=rt).fit().transform(crops) - ref).max())
            for rt in ("onnxruntime", "opencv")}


def _atomic_torch_save(obj, path: Path) -> None:
    tmp = path.with_suffix(".tmp")
    torch.save(obj, tmp)
    os.replace(tmp, path)


def _write_json(obj, path: Path) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(obj, indent=1) + "\n")
    os.replace(tmp, path)


def train(out: Path, *, steps: int, batch: int = 128, background: int = 8, seed: int = 36000,
          validation_seed: int = 36901, width: str = "base", embedding: int = 512, lr: float = 1e-3,
          warmup: int = 300, eval_every: int = 1000, checkpoint_every: int = 250, threads: int | None = None,
          validation_per_class: int = 2, device: str = "auto", workers: int = 1, minutes: float | None = None,
          command: str | None = None, progress=None, arch: str = "crop") -> dict:
    """Train (resuming from ``out/checkpoint.pt`` when it is there), export ``out/network.onnx`` and write
    ``out/training.json``. Returns the training record.

    ``device``: ``"cpu"``, ``"cuda"`` or ``"auto"`` (a GPU where PyTorch sees one). ``workers``: processes
    rendering the crops (each renders whole steps, so the batches do not depend on it). ``minutes``: a time
    budget instead of a length: the steps from :data:`RATE_FROM` to ``RATE_FROM + RATE_STEPS`` are timed and
    ``steps`` becomes what fits the budget at that rate (within the warm-up, before the cosine phase begins,
    so the schedule is one schedule); the record keeps the measured rate and the length, and ``--steps`` with that length
    repeats the run exactly."""
    net_class, widths, _, input_fn, val_fn = _arch(arch)
    if width not in widths:
        raise ValueError(f"train-network: width must be one of {', '.join(widths)}, got {width!r}")
    out.mkdir(parents=True, exist_ok=True)
    if threads:
        torch.set_num_threads(int(threads))
    dev = torch.device("cuda" if device == "auto" and torch.cuda.is_available() else
                       ("cpu" if device == "auto" else device))
    torch.manual_seed(seed)
    torch.backends.cudnn.benchmark = dev.type == "cuda"
    model = net_class(widths[width], embedding).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)

    def lr_at(s):  # linear warm-up, then cosine to zero
        return lr * (s + 1) / warmup if s < warmup else lr * 0.5 * (1 + math.cos(math.pi * (s - warmup) / max(1, steps - warmup)))

    ck = out / "checkpoint.pt"
    start, curve, seconds, resumes = 0, [], 0.0, []
    if ck.exists():
        state = torch.load(ck, weights_only=True, map_location=dev)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        start, seconds = int(state["step"]), float(state["seconds"])
        resumes = json.loads(state.get("resumes", "[]"))
        # a resumed run may be given another length: the schedule then follows the new one from here on
        resumes.append({"at_step": start, "steps_before": int(state["steps"]) if "steps" in state else None, "steps_after": steps})
        curve = json.loads((out / "curve.json").read_text()) if (out / "curve.json").exists() else []
    val_x, val_y = val_fn(validation_seed, validation_per_class)
    budget = None
    if minutes is not None and start == 0:
        budget = {"minutes": float(minutes), "timed_steps": RATE_STEPS, "steps_per_second": None}
        steps = max(steps, warmup + RATE_STEPS + 1)  # the stream's end until the budget sets the length
    stop = 2 ** 40 if budget else steps
    stream = _Stream(start, stop, seed, batch, background, arch)
    loader = torch.utils.data.DataLoader(stream, batch_size=None,
                                         num_workers=max(1, int(workers)), prefetch_factor=4,
                                         multiprocessing_context="spawn", pin_memory=dev.type == "cuda")
    recipe = {"seed": seed, "validation_seed": validation_seed, "validation_per_class": validation_per_class,
              "batch": batch, "background_per_batch": background, "steps": steps, "lr": lr, "warmup": warmup,
              "optimizer": "AdamW (weight decay 1e-4), linear warm-up then cosine", "width": width,
              "channels": list(widths[width]), "embedding": embedding, "arch": arch,
              "style": dataclasses.asdict(TRAIN_STYLE) | {"based_on": "varied"},
              "loss": "CE(2430 classes + background) + CE(81 shapes + background) + 0.5 CE(30 orientations, hands)",
              "resumed": resumes, "device": dev.type, "workers": int(workers)}
    t0 = time.perf_counter() - seconds
    t_rate = None
    model.train()
    step = start
    run_loss = None
    for x, y in loader:
        if step >= steps:
            break
        x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
        if budget is not None and budget["steps_per_second"] is None:
            if step == RATE_FROM:
                if dev.type == "cuda":
                    torch.cuda.synchronize()
                t_rate = time.perf_counter()
            elif step == RATE_FROM + RATE_STEPS:
                if dev.type == "cuda":
                    torch.cuda.synchronize()
                rate = RATE_STEPS / (time.perf_counter() - t_rate)
                left = budget["minutes"] * 60 - (time.perf_counter() - t0)
                steps = max(step + 1, step + int(rate * left))
                budget["steps_per_second"] = rate
                stream.stop.value = steps
                recipe["steps"] = steps
                recipe["steps_from_time_budget"] = budget
                eval_every = max(1, steps // 10)
                print(json.dumps({"budget": budget, "steps": steps}), file=sys.stderr, flush=True)
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        lc, ls, lo = model(x)
        hand = y < N_CLASSES
        shape_y = torch.where(hand, y // N_ORIENTATIONS, torch.full_like(y, N_SHAPES))
        loss = F.cross_entropy(lc, y) + F.cross_entropy(ls, shape_y)
        if hand.any():
            loss = loss + 0.5 * F.cross_entropy(lo[hand], y[hand] % N_ORIENTATIONS)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        step += 1
        lv = loss.item()
        run_loss = lv if run_loss is None else 0.98 * run_loss + 0.02 * lv
        if progress:
            progress(step / steps, f"step {step}/{steps} loss {run_loss:.3f}")
        if step % checkpoint_every == 0 or step == steps or step % eval_every == 0:
            if step % eval_every == 0 or step == steps:
                v = score(model, val_x, val_y, device=dev, input_fn=input_fn) | {"step": step, "crops_seen": step * batch,
                                                  "minutes": (time.perf_counter() - t0) / 60, "loss": run_loss}
                curve.append(v)
                _write_json(curve, out / "curve.json")
                print(json.dumps(v), file=sys.stderr, flush=True)
            _atomic_torch_save({"model": model.state_dict(), "optimizer": opt.state_dict(), "step": step,
                                "seconds": time.perf_counter() - t0, "steps": steps,
                                "resumes": json.dumps(resumes)}, ck)
    torch.save({k: v.cpu() for k, v in model.state_dict().items()}, out / "final.pt")
    parity_crops = val_x[:: max(1, len(val_x) // 1000)][:1000]
    if arch == "dense":
        from .network_training_window import dense_parity, export_dense_onnx, export_head, multiply_adds

        export_dense_onnx(model, out / "network.onnx")
        export_head(model.state_dict(), out / "network-head.npz")   # the class head: bank network-head
        parity = dense_parity(model, out / "network.onnx", parity_crops)
        recipe["multiply_adds"] = multiply_adds(widths[width], embedding)
    else:
        export_onnx(model, out / "network.onnx")
        parity = onnx_parity(model, out / "network.onnx", parity_crops)
    record = {"recipe": recipe, "training_seconds": time.perf_counter() - t0, "torch": torch.__version__,
              "threads": torch.get_num_threads(),
              "gpu": torch.cuda.get_device_name(0) if dev.type == "cuda" else None, "validation_curve": curve,
              "parameters_exported": int(sum(p.numel() for p in model.trunk.parameters())),
              "parity_max_abs_diff": max(parity.values()), "parity": parity, "parity_crops": int(len(parity_crops)),
              "bytes": (out / "network.onnx").stat().st_size,
              "sha256": hashlib.sha256((out / "network.onnx").read_bytes()).hexdigest(), "command": command}
    if arch == "dense":
        record["head"] = {"bytes": (out / "network-head.npz").stat().st_size,
                          "sha256": hashlib.sha256((out / "network-head.npz").read_bytes()).hexdigest()}
    _write_json(record, out / "training.json")
    return record


def run_command(a: argparse.Namespace) -> int:
    """``classmap train-network``: train (or resume), export, print the last validation score."""
    last = [0.0]

    def bar(f, stage):
        now = time.monotonic()
        if now - last[0] > 2 or f >= 1:
            last[0] = now
            print(f"\r[{'#' * int(30 * f):<30}] {100 * f:5.1f}% {stage}", end="", file=sys.stderr, flush=True)

    rec = train(a.out, steps=a.steps, batch=a.batch, background=a.background, seed=a.seed,
                validation_seed=a.validation_seed, width=a.width, embedding=a.embedding, lr=a.lr,
                eval_every=a.eval_every, threads=a.threads, validation_per_class=a.validation_per_class,
                device=a.device, workers=a.workers, minutes=a.minutes, progress=bar, arch=a.arch,
                command="classmap " + " ".join(sys.argv[1:]))
    print(file=sys.stderr)
    print(json.dumps(rec["validation_curve"][-1] if rec["validation_curve"] else {}, indent=1))
    return 0
