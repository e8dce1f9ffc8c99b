"""Many L2-regularized logistic regressions on the same features, fitted together.

Each problem ``k`` minimizes scikit-learn's ``LogisticRegression(C=Cs[k])`` objective (lbfgs solver):
``sum_i CE(x_i W_k + b_k, y_i) + ||W_k||^2 / (2 C_k)`` over its own rows ``masks[k]``, intercept unpenalized,
multinomial for more than two classes and a single logit (sigmoid) for two. Three things make it fast on CPU:

* the problems share ``X``, so one L-BFGS step over all of them is one matrix product, not one matrix-vector
  product per problem (a C grid x 10 validation folds is ~60 problems);
* L-BFGS runs in preconditioned coordinates ``W_k = U diag(s_k) V_k``, where ``U diag(1 / s_k^2) U^T`` is the
  Hessian at ``W = 0`` (``X^T X / 4n + I / (C_k n)``): the same minimum in fewer iterations on correlated
  embedding dimensions;
* float32 arithmetic (the loss is summed in float64 so L-BFGS still sees progress) on one intra-op thread.

docs/data.md says how it compares with scikit-learn's fits, in time and in the C it picks.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F


@dataclass
class LogisticRegressions:
    """``K`` fitted classifiers: weights ``(K, d, c)``, intercepts ``(K, c)``; ``c`` is 1 for two classes.

    ``converged[k]`` says whether fit ``k`` reached the gradient tolerance within ``max_iter`` iterations.
    """

    weights: torch.Tensor
    intercepts: torch.Tensor
    classes: np.ndarray
    converged: np.ndarray

    def __len__(self) -> int:
        return self.weights.shape[0]

    def __getitem__(self, k: int) -> LogisticRegressions:
        return LogisticRegressions(
            self.weights[k : k + 1], self.intercepts[k : k + 1], self.classes, self.converged[k : k + 1]
        )

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Predicted labels, shape ``(K, n)``."""
        X = torch.as_tensor(np.asarray(X), dtype=self.weights.dtype)
        logits = torch.einsum("nd,kdc->knc", X, self.weights) + self.intercepts[:, None, :]
        best = (logits[..., 0] > 0).long() if logits.shape[-1] == 1 else logits.argmax(-1)
        return self.classes[best.numpy()]


def _preconditioner(X: torch.Tensor, Cs: torch.Tensor, n_classes: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``U`` and per-problem scales ``s`` with ``U diag(1 / s_k^2) U^T`` = the objective's Hessian at zero weights."""
    eigenvalues, U = torch.linalg.eigh(X.T @ X / len(X))
    # At zero weights the mean log-loss has curvature p (1 - p) = 1/4 (sigmoid), or 1/c for a softmax over c
    # classes (on class-centered weights); the penalty adds 1 / (C n) everywhere.
    loss_curvature = 0.25 if n_classes == 2 else 1.0 / n_classes
    curvature = eigenvalues.clamp_min(0)[None, :] * loss_curvature + 1.0 / (Cs[:, None] * len(X))
    return U, curvature.rsqrt()


def _mean_objectives(X, weights, intercepts, targets, rows, n_rows, Cs) -> torch.Tensor:
    """Each problem's scikit-learn objective divided by its row count, shape ``(K,)``."""
    logits = torch.einsum("nd,kdc->knc", X, weights) + intercepts[:, None, :]
    if logits.shape[-1] == 1:
        nll = F.binary_cross_entropy_with_logits(logits[..., 0], targets.to(X.dtype), reduction="none")
    else:
        nll = F.cross_entropy(logits.transpose(1, 2), targets, reduction="none")
    return ((nll * rows).sum(dim=1) + 0.5 / Cs * weights.pow(2).sum(dim=(1, 2))) / n_rows


@contextmanager
def _one_intra_op_thread():
    """L-BFGS runs dozens of tiny vector operations per step; with several intra-op threads each one pays a thread
    synchronization that dominates on a busy CPU (docs/data.md). One thread still
    runs the matrix products at full single-core speed."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def fit_logistic_regressions(
    X: np.ndarray,
    y: np.ndarray,
    Cs: Sequence[float],
    masks: np.ndarray | None = None,
    tol: float = 1e-4,
    max_iter: int = 300,
    dtype: torch.dtype = torch.float32,
) -> LogisticRegressions:
    """Fit ``len(Cs)`` classifiers; problem ``k`` uses regularization ``Cs[k]`` and the rows where ``masks[k]``.

    ``masks`` is a boolean ``(K, n)`` array (default: every problem uses all rows). A fit has converged when the
    largest gradient entry of its objective divided by its row count is at most ``tol`` (scikit-learn's default
    criterion); ``converged`` flags fits still above it after ``max_iter`` joint L-BFGS iterations (weak
    regularization on nearly separable data). The joint run moves at the pace of its slowest problem, hence
    ``max_iter=300`` rather than scikit-learn's 100 (TREC with all-MiniLM-L6-v2: all 77 fits converge within
    300; scikit-learn alone needs 113-167 iterations per fit). float32 (the default) is several times faster than
    float64 on CPU and changed no task's accuracy by more than a few examples in our checks; pass
    ``torch.float64`` to match scikit-learn to 1e-4.
    """
    with _one_intra_op_thread():
        return _fit(X, y, Cs, masks, tol, max_iter, dtype)


def _fit(X, y, Cs, masks, tol, max_iter, dtype) -> LogisticRegressions:
    classes, labels = np.unique(y, return_inverse=True)
    if len(classes) < 2:
        raise ValueError(f"Logistic regression needs at least two classes; got only {classes.tolist()}")
    masks = np.ones((len(Cs), len(y)), dtype=bool) if masks is None else np.asarray(masks, dtype=bool)
    if masks.shape != (len(Cs), len(y)):
        raise ValueError(f"masks must have shape {(len(Cs), len(y))}, got {masks.shape}")
    if not masks.any(axis=1).all():
        raise ValueError(f"problem(s) {np.flatnonzero(~masks.any(axis=1)).tolist()} have no training rows")

    X = torch.as_tensor(np.asarray(X), dtype=dtype)
    Cs = torch.as_tensor(Cs, dtype=dtype)
    U, scales = _preconditioner(X, Cs, len(classes))
    problem = {
        "targets": torch.as_tensor(labels).expand(len(Cs), -1),
        "rows": torch.as_tensor(masks, dtype=dtype),
        "n_rows": torch.as_tensor(masks.sum(axis=1), dtype=dtype),
        "Cs": Cs,
    }
    binary = len(classes) == 2
    V = torch.zeros(len(Cs), X.shape[1], 1 if binary else len(classes), dtype=dtype, requires_grad=True)
    intercepts = torch.zeros(len(Cs), V.shape[-1], dtype=dtype, requires_grad=True)
    optimizer = torch.optim.LBFGS(
        [V, intercepts],
        max_iter=max_iter,
        # A V-gradient entry is s times a (rotated) W-gradient entry: this bound keeps every W-entry below tol.
        tolerance_grad=tol * float(scales.min()),
        tolerance_change=1e-12,
        history_size=20,
        line_search_fn="strong_wolfe",
    )

    def weights_of(V: torch.Tensor) -> torch.Tensor:
        if not binary:
            # The softmax ignores a shift shared by all classes; the penalized optimum has class-centered weights.
            # Centering removes that direction, which the penalty alone makes very flat (slow L-BFGS).
            V = V - V.mean(dim=-1, keepdim=True)
        return torch.einsum("de,kec->kdc", U, scales[..., None] * V)

    def objective() -> torch.Tensor:
        optimizer.zero_grad()
        # Independent problems: their sum is minimized where each one is.
        total = _mean_objectives(X, weights_of(V), intercepts, **problem).double().sum()
        total.backward()
        return total

    optimizer.step(objective)
    weights = weights_of(V).detach().requires_grad_()
    intercepts = intercepts.detach().requires_grad_()
    _mean_objectives(X, weights, intercepts, **problem).sum().backward()
    gradient = torch.maximum(weights.grad.abs().amax(dim=(1, 2)), intercepts.grad.abs().amax(dim=1))
    return LogisticRegressions(weights.detach(), intercepts.detach(), classes, (gradient <= tol).numpy())
