"""The session model's Hessian as a block-arrow matrix, solved and inverted by blocks.

H = [[A, B], [B^T, D]]: A = diag(A_1..A_G), one block per item's random effects u_g; B_g the
cross block of item g with the core (theta_0, the raters' rho, lambda); D the core block. With
F_g = A_g^-1 B_g and the Schur complement S = D - sum_g B_g^T F_g,

    H^-1 = [[A^-1 + F S^-1 F^T, -F S^-1], [-S^-1 F^T, S^-1]],   log det H = sum_g log det A_g + log det S,

so a Newton step or any block of H^-1 costs G q^3 + n_core^3 instead of (G q + n_core)^3.

The random effects are the items' u_g and the raters' rho; their posterior covariance (the
inverse of the penalised Hessian, the fixed parameters integrated out) is

    Cov(u_g, u_h) = [g = h] A_g^-1 + F_g S^-1 F_h^T,
    Cov(u_g, rho) = -F_g S^-1 E_rho^T,   Cov(rho, rho) = E_rho S^-1 E_rho^T,

E_rho selecting rho from the core. `moments` reduces it to what the variance
components need: per component k (each kind of item effect, rater) the number of effects n_k, sum u^2,
trace Var(u_k), and sum_{i in k, j in l} Cov(u_i, u_j)^2 for every pair k, l, without forming the
n_u x n_u matrix.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.model.session.design import Design, Layout, group_products


@dataclass
class BlockMatrix:
    """items (Gb, q, q), cross (Gb, q, n_core), core (n_core, n_core)."""

    items: np.ndarray
    cross: np.ndarray
    core: np.ndarray

    @classmethod
    def zeros(cls, layout: Layout) -> BlockMatrix:
        g, q, n = layout.item_blocks, layout.q, layout.n_core
        return cls(np.zeros((g, q, q)), np.zeros((g, q, n)), np.zeros((n, n)))

    def dense(self) -> np.ndarray:
        """The full matrix (for tests and small sessions)."""
        g, q, _ = self.items.shape
        n = self.core.shape[0]
        out = np.zeros((g * q + n, g * q + n))
        for k in range(g):
            rows = slice(k * q, (k + 1) * q)
            out[rows, rows] = self.items[k]
            out[rows, g * q :] = self.cross[k]
            out[g * q :, rows] = self.cross[k].T
        out[g * q :, g * q :] = self.core
        return out


def information(d: Design, p: np.ndarray, weights: np.ndarray) -> BlockMatrix:
    """The information of -L (the Hessian of the reads' part of the objective) as blocks:
    each (item, rater) group's two terms (`group_products`) summed into the places
    `Design.category_targets` and `Design.targets` hold, by one bincount each."""
    layout = d.layout
    g_count, q, n = layout.item_blocks, layout.q, layout.n_core
    total = g_count * q * q + g_count * q * n + n * n
    first, second = group_products(d, p, weights)
    flat = np.bincount(d.category_targets.ravel(), first.ravel(), minlength=total + 1)
    flat -= np.bincount(d.targets.ravel(), second.ravel(), minlength=total + 1)
    cross_at = g_count * q * q
    return BlockMatrix(
        flat[:cross_at].reshape(g_count, q, q),
        flat[cross_at : cross_at + g_count * q * n].reshape(g_count, q, n),
        flat[cross_at + g_count * q * n : total].reshape(n, n),
    )


def split(vector: np.ndarray, layout: Layout) -> tuple[np.ndarray, np.ndarray]:
    """A global vector as (Gb, q) item parts and its core part."""
    n = layout.n_item_params
    return vector[:n].reshape(layout.item_blocks, layout.q), vector[n:]


class BlockFactor:
    """The factorisation of a positive definite block-arrow matrix (see the module docstring)."""

    def __init__(self, m: BlockMatrix):
        if m.items.shape[0]:
            self.items_inv = np.linalg.inv(m.items)
            self.f = self.items_inv @ m.cross
            schur = m.core - np.tensordot(m.cross, self.f, axes=([0, 1], [0, 1]))
            item_logdet = float(np.sum(np.linalg.slogdet(m.items)[1]))
        else:
            self.items_inv, self.f = m.items, m.cross
            schur, item_logdet = m.core.copy(), 0.0
        schur = (schur + schur.T) / 2
        chol = np.linalg.cholesky(schur)  # raises LinAlgError when not positive definite
        self.schur_inv = np.linalg.inv(schur)
        self.logdet = item_logdet + 2.0 * float(np.sum(np.log(np.diag(chol))))

    def solve(self, b_items: np.ndarray, b_core: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """H^-1 b for b given as (Gb, q) item parts and the core part: S x_core = b_core -
        sum_g F_g^T b_g, then x_g = A_g^-1 b_g - F_g x_core."""
        core = self.schur_inv @ (b_core - np.tensordot(self.f, b_items, axes=([0, 1], [0, 1])))
        items = (self.items_inv @ b_items[:, :, None])[:, :, 0] - self.f @ core
        return items, core

    def item_core_covariance(self) -> np.ndarray:
        """(Gb, q, n_core): the item-core blocks of H^-1, -F_g S^-1."""
        return -self.f @ self.schur_inv

    def item_covariance_diagonal(self) -> np.ndarray:
        """(Gb, q): the diagonal of each item block of H^-1, diag(A_g^-1 + F_g S^-1 F_g^T)."""
        low_rank = np.sum((self.f @ self.schur_inv) * self.f, axis=2)
        return np.einsum("gqq->gq", self.items_inv) + low_rank


@dataclass(frozen=True)
class Moments:
    """Per variance component k: n (K,) effects, sum_sq (K,) sum of u^2 at the mode, trace (K,)
    sum of Var(u_j), and squares (K, K): sum_{i in k, j in l} Cov(u_i, u_j)^2."""

    n: np.ndarray
    sum_sq: np.ndarray
    trace: np.ndarray
    squares: np.ndarray


def _selectors(layout: Layout, factor: BlockFactor) -> list[np.ndarray]:
    """K_k (n_k, n_core) per component, so that Cov(u_k, u_l) = K_k S^-1 K_l^T plus the items'
    own A_g^-1 blocks: F_g's rows of the kind for item effects, -E_rho for the raters."""
    out = []
    n = layout.n_core
    if layout.item_effects:
        for part in layout.kind_slices().values():
            out.append(factor.f[:, part].reshape(-1, n))
    if layout.rater_effects:
        count = layout.n_rater_params
        e = np.zeros((count, n))
        e[np.arange(count), layout.rater_start + np.arange(count)] = -1.0
        out.append(e)
    return out


def moments(factor: BlockFactor, layout: Layout, w: np.ndarray) -> Moments:
    """The random effects' moments under the Laplace posterior (module docstring)."""
    items, core = split(w, layout)
    parts = list(layout.kind_slices().values()) if layout.item_effects else []
    effects = [items[:, part] for part in parts]
    if layout.rater_effects:
        effects.append(core[layout.rater_start : layout.rater_start + layout.n_rater_params])
    selectors = _selectors(layout, factor)
    s_inv = factor.schur_inv
    low = [s_inv @ (k.T @ k) for k in selectors]
    count = len(selectors)
    squares = np.array([[np.sum(low[a] * low[b].T) for b in range(count)] for a in range(count)])
    trace = np.array([np.sum((k @ s_inv) * k) for k in selectors])
    if parts:
        inv = factor.items_inv
        jsj = (factor.f @ s_inv) @ factor.f.transpose(0, 2, 1)
        own = inv**2 + 2 * inv * jsj
        for a, part_a in enumerate(parts):
            trace[a] += np.sum(np.einsum("gii->gi", inv[:, part_a, part_a]))
            for b, part_b in enumerate(parts):
                squares[a, b] += np.sum(own[:, part_a, part_b])
    return Moments(
        np.array([e.size for e in effects], dtype=float),
        np.array([float(np.sum(e**2)) for e in effects]),
        trace,
        squares,
    )
