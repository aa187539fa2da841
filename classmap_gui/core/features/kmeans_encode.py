"""How single-layer k-means features encode patches: the grid of patch positions, how the work is cut
(images per parallel task, patch rows per cache-sized distance block) and one chunk's encoding, one
distance GEMM per block followed by the fused numba pass (:mod:`.kmeans_kernels`) or numpy's.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import kmeans_kernels

_BLOCK_BYTES = 1 << 19  # (rows x K) float32 distance block kept within half a core's L2
_CHUNK_PATCHES = 1 << 14  # patches per parallel task (its normalised patch matrix is ~2 MB at p=6)
#: the live path's one distance GEMM may hold up to this many bytes (64x64 frames, K = 1600: 22 MB)
LIVE_BLOCK_BYTES = 1 << 25


@dataclass(frozen=True)
class PatchGrid:
    """Patch positions of an image: n_h x n_w positions, quadrant boundaries half_h / half_w."""

    n_h: int
    n_w: int

    @property
    def n_pos(self) -> int:
        """Number of patch positions, ``n_h * n_w``."""
        return self.n_h * self.n_w

    @property
    def half_h(self) -> int:
        """Rows of positions in the top quadrants (the bottom ones start here)."""
        return (self.n_h + 1) // 2

    @property
    def half_w(self) -> int:
        """Columns of positions in the left quadrants (the right ones start here)."""
        return (self.n_w + 1) // 2


def chunking(grid: PatchGrid, k: int) -> tuple[int, int]:
    """``(images per parallel task, patch rows per distance block)`` for ``k`` centroids."""
    return max(1, _CHUNK_PATCHES // grid.n_pos), int(np.clip(_BLOCK_BYTES // (4 * k), 16, 4096))


def encode_chunk(X: np.ndarray, grid: PatchGrid, ct, cc, out, block: int, encoder: str, use_numba: bool) -> None:
    """Add the code of each whitened patch of ``X (rows, dim) float32`` (a chunk of images, positions in
    ``grid`` order) into its image's quadrant in ``out (n, 4, K)``: one distance GEMM per ``block`` rows with
    ``ct = -2 C^T``, then the fused numba pass (or numpy's) while the block is in cache."""
    xx = np.einsum("ij,ij->i", X, X)
    buf = np.empty((block, ct.shape[1]), dtype=np.float32)
    if use_numba:
        kern = kmeans_kernels.triangle_pool if encoder == "triangle" else kmeans_kernels.hard_pool
    for r0 in range(0, X.shape[0], block):
        r1 = min(X.shape[0], r0 + block)
        G = np.matmul(X[r0:r1], ct, out=buf[: r1 - r0])
        args = (G, xx[r0:r1], cc, r0, grid.n_pos, grid.n_w, grid.half_h, grid.half_w, out)
        if use_numba:
            kern(*args)
        else:
            kmeans_kernels.numpy_pool(*args, encoder=encoder)
