"""The estimator base every solver shares (scikit-learn API, ``y == -1`` means unlabeled).

A solver subclasses :class:`BaseS3VM` and implements :meth:`BaseS3VM._fit_binary`, which solves
one binary problem with labels ``y_pm`` in {-1, +1} on labeled points and 0 on unlabeled ones and
returns a :class:`BinaryFit`: expansion coefficients over the training points (kernel) or a
weight vector (linear kernel), the bias, iteration count and stop reason. The base does the
rest once for all: input validation, kernel matrices, one-versus-rest for more than two classes
(JMLR 2008 Sec. 5.2), ``decision_function``/``predict``, and the fitted attributes.

Work that depends only on the training points is shared between fits in one process
(:func:`shared_work`): the protocol fits one estimator per one-versus-rest class on the same
points, and the Gaussian Gram matrix -- and, in the solvers that build them, its centering and
kernel-PCA map -- is then computed once per split instead of once per class. Outputs on a block
of the training points (the unlabeled ones, as the protocol asks for them) are read from that
Gram matrix instead of being recomputed.

Positive class: for two classes the positive one (output > 0) is ``classes_[1]``, the larger
label in sorted order, as in scikit-learn; it is never "whichever label appears first".
"""

from __future__ import annotations

import hashlib
import threading
import warnings
from collections import OrderedDict
from dataclasses import dataclass
from numbers import Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from ._kernels import gaussian_kernel, linear_kernel
from ._validation import Interval, Options, validate_params

__all__ = ["BaseS3VM", "BinaryFit", "UNLABELED", "array_digest", "shared_work"]

#: Version of the results this module's numerics produce: part of the cache key of every cell
#: that runs this code (harness.grid.cell_key). Bump it when a change moves any result.
RESULT_VERSION = 1

UNLABELED = -1

#: The values :func:`shared_work` keeps, most recently used last.
_SHARED: OrderedDict = OrderedDict()
#: How many it keeps: a Gram matrix and the per-fit preparations built from it (each at most a
#: few n x n arrays), so memory stays bounded by one split's work.
_SHARED_MAX = 4
#: Held while a value is looked up or computed: the one-versus-rest fits of a split that run
#: together (solvers.batch) compute each shared value once, the others wait for it.
_SHARED_LOCK = threading.RLock()


def array_digest(X) -> str:
    """SHA-1 of an array's or a sparse matrix's contents and shape (a key for :func:`shared_work`)."""
    h = hashlib.sha1()
    if sp.issparse(X):
        for part in (X.data, X.indices, X.indptr):
            h.update(np.ascontiguousarray(part).tobytes())
    else:
        h.update(np.ascontiguousarray(X).tobytes())
    h.update(repr((str(X.dtype), X.shape)).encode())
    return h.hexdigest()


def shared_work(key: tuple, compute):
    """``compute()``, or its value from an earlier call with the same ``key`` while it is among
    the last :data:`_SHARED_MAX` keys used in this process.

    The key must name everything the value depends on (a digest of the data, the parameters
    used); the value must not be modified by its users. Arrays are returned read-only.
    """
    with _SHARED_LOCK:
        value = _SHARED.get(key)
        if value is None:
            value = compute()
            if isinstance(value, np.ndarray):
                value.setflags(write=False)
            _SHARED[key] = value
            while len(_SHARED) > _SHARED_MAX:
                _SHARED.popitem(last=False)
        else:
            _SHARED.move_to_end(key)
        return value


@dataclass
class BinaryFit:
    """The solution of one binary problem.

    ``coef`` is ``w`` (shape (d,)) for the linear kernel, else ``beta`` over ``X_fit_`` so that
    ``f(x) = sum_i beta_i k(x, x_i) + b``.
    """

    coef: np.ndarray
    intercept: float
    n_iter: int = 0
    stop_reason: str = ""
    info: dict | None = None


def _text_labels(y) -> np.ndarray:
    """Text class labels as a str array, unlabeled points (``-1`` or ``"-1"``) as ``"-1"``.

    Raises ValueError when numbers other than the marker -1 are mixed with text labels.
    """
    flat = y.ravel()
    others = [v for v in flat if not isinstance(v, str) and not (isinstance(v, Real) and v == UNLABELED)]
    if others:
        raise ValueError(f"y mixes text class labels with values that are not text ({others[0]!r}): use text "
                         f"labels (str) for every class, and {UNLABELED} or '{UNLABELED}' for unlabeled points")
    # The marker may be any number equal to -1 (-1, -1.0, np.int8(-1)): all of them become "-1".
    return np.array([v if isinstance(v, str) else str(UNLABELED) for v in flat]).reshape(y.shape)


#: Stop reasons that name a limit rather than a convergence criterion (a prefix ``max_`` does too).
_LIMIT_REASONS = ("node_limit", "time_limit")


def _stopped_by_limit(reason) -> bool:
    """Whether a solver's ``stop_reason`` says an iteration, node or time limit stopped it."""
    text = str(reason or "")
    return any(part.strip().startswith("max_") or part.strip() in _LIMIT_REASONS or "LIMIT" in part
               for part in text.split(";"))


class BaseS3VM(ClassifierMixin, BaseEstimator):
    """Shared machinery of the solvers; not used directly.

    Subclasses set the class attributes:

    ``_accepts_sparse``
        whether scipy.sparse X is supported (otherwise a ``TypeError`` asks for dense input);
    ``_needs_unlabeled``
        whether the solver's problem involves unlabeled points (every S3VM's does; a supervised
        baseline's does not). Given a fully labeled ``y``, such a solver fits the supervised
        problem instead (:meth:`_fit_supervised`), as scikit-learn's semi-supervised estimators do.
    ``_parameter_constraints``
        what each ``__init__`` parameter may be (:mod:`solvers._validation`), checked by
        :func:`~solvers._validation.validate_params` at the start of ``fit``. The base declares
        the parameters most solvers share (``kernel``, ``sigma``, ``C``, ``C_star``, ``r``); a
        solver declares all of its own, and a parameter without a constraint is not checked.
    """

    _accepts_sparse = True
    _needs_unlabeled = True
    #: Whether the protocol may run the one-versus-rest fits of a split together
    #: (:func:`solvers.batch.run_together`); they must give the results of separate fits.
    batched_ovr = False
    #: Version of this solver's results: part of the cache key of its cells
    #: (:func:`harness.grid.cell_key`), with the ``RESULT_VERSION`` of each shared module it
    #: imports. Bump it in the solver's class when a change moves any of its results; a change
    #: that moves none (a refactor, a faster path to the same numbers) leaves it as it is.
    result_version = 1
    _parameter_constraints: dict = {
        "kernel": [Options({"rbf", "linear"})],
        "sigma": [Interval(Real, 0, None, closed="neither"), None],  # None only with the linear kernel
        "C": [Interval(Real, 0, None, closed="neither")],
        "C_star": [Interval(Real, 0, None, closed="neither"), None],  # None: C* = C
        "r": [Interval(Real, 0, 1, closed="neither"), None],  # None: estimated from the labeled points
    }

    # ------------------------------------------------------------------ hooks
    def _fit_supervised(self, X, y_pm, gram):
        """One binary problem with every point labeled: the L2-SVM of JMLR 2008 eq. (1) without its
        unlabeled term (cost C on every point), by the primal solvers of :mod:`solvers._primal` --
        what an S3VM reduces to when there is nothing to transduce (scikit-learn's convention for a
        fully labeled ``y``)."""
        from ._primal import kernel_newton, l2svm_mfn

        if gram is None:
            res = l2svm_mfn(X, y_pm, float(self.C), lam=1.0, bias="free")
        else:
            res = kernel_newton(gram, y_pm, float(self.C))
        return BinaryFit(np.asarray(res.coef, dtype=float), float(res.intercept), res.n_iter, res.stop_reason,
                         {"objective": res.objective, "supervised": True})

    def _fit_binary(self, X, y_pm, labeled, gram):  # pragma: no cover - abstract
        """Solve one binary problem; ``gram`` is the training Gram matrix (None if linear)."""
        raise NotImplementedError

    def _expansion_mask(self, labeled):
        """Which training points carry expansion coefficients (all of them by default)."""
        return np.ones_like(labeled)

    def _check_params(self):
        """Validate the parameters: each against its declared constraints
        (:func:`~solvers._validation.validate_params`), then the rules that tie several together;
        subclasses extend the latter (raise ValueError/TypeError)."""
        validate_params(self)
        if getattr(self, "kernel", "rbf") == "rbf" and getattr(self, "sigma", 1.0) is None:
            raise ValueError(f"{type(self).__name__}: sigma must be a float > 0 with kernel='rbf', got None "
                             "(None is for the linear kernel)")

    def _validate_params(self):
        """scikit-learn's hook for parameter validation, on this suite's constraints (:meth:`_check_params`)."""
        self._check_params()

    def check_params(self):
        """Check the parameters as :meth:`fit` does first, without fitting.

        Lets a caller refuse a bad value before any work (the harness does, for the solver
        parameters given on the command line).

        Returns
        -------
        self

        Raises
        ------
        ValueError, TypeError
            The first refused parameter, its value and what is allowed.
        """
        self._check_params()
        return self

    # ----------------------------------------------------------------- kernels
    def kernel_matrix(self, A, B=None):
        """The kernel matrix ``k(A, B)`` (``k(A, A)`` when B is None) of this estimator.

        The kernel its ``fit`` and ``decision_function`` use: linear, or Gaussian of width
        ``sigma`` (JMLR 2008 Sec. 5.1), or the kernel a subclass puts in its place (for a
        deformed kernel, available once fitted).

        Parameters
        ----------
        A : array_like, shape (n_a, d)
        B : array_like, shape (n_b, d), optional

        Returns
        -------
        ndarray, shape (n_a, n_b)
        """
        return self._kernel(A, B)

    def _kernel(self, A, B=None):
        if self.kernel == "linear":
            return linear_kernel(A, B)
        return gaussian_kernel(A, B, sigma=self.sigma)

    # --------------------------------------------------------------------- fit
    def _validate_fit_input(self, X, y):
        if not self._accepts_sparse and sp.issparse(X):
            raise TypeError(f"{type(self).__name__} needs dense X; convert with X.toarray() "
                            "(the algorithm it implements is not sparse-aware)")
        X, y = validate_data(self, X, y, accept_sparse="csr" if self._accepts_sparse else False,
                             dtype=np.float64, y_numeric=False)
        if sp.issparse(X):
            X = X.copy() if not X.has_sorted_indices else X
            X.sort_indices()
        y = np.asarray(y)
        if y.dtype.kind in "US" or (y.dtype.kind == "O" and any(isinstance(v, str) for v in y.ravel())):
            y = _text_labels(y)
        elif y.dtype.kind == "O" and all(isinstance(v, Real) and not isinstance(v, bool) for v in y.ravel()):
            y = np.array(y.tolist())  # numbers held as objects (a pandas object column): their own dtype
        target = type_of_target(y, raise_unknown=True)  # "Unknown label type" for objects
        if target not in ("binary", "multiclass"):
            raise ValueError(f"Unknown label type: y must hold class labels with {UNLABELED} for unlabeled "
                             f"points; got a {target} target")
        return X, y

    @staticmethod
    def _labeled_mask(y) -> np.ndarray:
        """Which points are labeled: ``y != -1`` (``y != "-1"`` for text labels, which may be
        given as text or objects)."""
        y = np.asarray(y)
        if y.dtype.kind == "S" or (y.dtype.kind == "O" and any(isinstance(v, str) for v in y.ravel())):
            y = _text_labels(y)
        return y != (str(UNLABELED) if y.dtype.kind == "U" else UNLABELED)

    def fit(self, X, y):
        """Fit on labeled and unlabeled points.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels, numbers or text; ``-1`` marks an unlabeled point (scikit-learn's
            semi-supervised convention; with text labels ``-1`` or ``"-1"``), so it cannot be a
            class. Text labels mixed with other numbers are refused (ValueError). With no
            unlabeled point the supervised L2-SVM is fitted (:meth:`_fit_supervised`).

        Returns
        -------
        self
        """
        self._check_params()
        X_given = X
        X, y = self._validate_fit_input(X, y)
        labeled = self._labeled_mask(y)
        if not labeled.any():
            raise ValueError("no labeled point: at least one labeled point per class is needed (y == -1 marks unlabeled)")
        classes = np.unique(y[labeled])
        if classes.size < 2:
            marker = (f" ({UNLABELED} marks an unlabeled point, so it cannot be a class: give the classes other "
                      "labels, e.g. 0 and 1)") if not labeled.all() else ""
            raise ValueError(f"only one class ({classes[0].tolist()!r}) among the labeled points; label at least one "
                             f"point of each class{marker}")
        supervised = bool(labeled.all()) and self._needs_unlabeled
        self.classes_ = classes
        positives = classes[1:] if classes.size == 2 else classes
        keep = np.asarray(self._expansion_mask(labeled), dtype=bool)
        self.X_fit_ = X[keep] if self.kernel != "linear" else None
        self._gram_key = None
        gram = None
        if self.kernel != "linear":
            if type(self)._kernel is BaseS3VM._kernel:  # a plain kernel of the points: shared
                self._gram_key = ("gram", array_digest(self.X_fit_), self.kernel, float(self.sigma))
                gram = shared_work(self._gram_key, lambda: self._kernel(self.X_fit_))
            else:
                gram = self._kernel(self.X_fit_)
        fits = []
        for c in positives:
            y_pm = np.where(labeled, np.where(y == c, 1.0, -1.0), 0.0)
            fits.append(self._fit_supervised(X, y_pm, gram) if supervised else self._fit_binary(X, y_pm, labeled, gram))
        self.binary_fits_ = fits
        self.intercept_ = np.array([f.intercept for f in fits])
        self.n_iter_ = np.array([f.n_iter for f in fits])
        self.stop_reason_ = [f.stop_reason for f in fits]
        limited = [(i, str(r)) for i, r in enumerate(self.stop_reason_) if _stopped_by_limit(r)]
        if limited:
            warnings.warn(f"{type(self).__name__} stopped by a limit, not by its convergence criterion, in binary "
                          f"problem(s) {', '.join(f'{i} ({r})' for i, r in limited)}: the result is the last iterate; "
                          "raise the limit (max_iter and the like) for a converged one", ConvergenceWarning,
                          stacklevel=2)
        coefs = np.vstack([f.coef for f in fits])
        if self.kernel == "linear":
            self.coef_ = coefs
        else:
            self.dual_coef_ = coefs
        # predict() of X as given (a subclass may define its own), not of the validated array, which
        # has lost a DataFrame's column names (predict would warn that they are missing).
        self.transduction_ = np.where(labeled, y, self.predict(X_given))
        return self

    # ----------------------------------------------------------------- predict
    def decision_function(self, X):
        """Real-valued outputs ``f(x)``: shape (n,) for two classes, (n, n_classes) otherwise."""
        check_is_fitted(self, "binary_fits_")
        X = validate_data(self, X, accept_sparse="csr" if self._accepts_sparse else False,
                          dtype=np.float64, reset=False)
        if self.kernel == "linear":
            F = X @ self.coef_.T
        else:
            rows = self._training_rows(X)
            F = (self._kernel(X, self.X_fit_) if rows is None else rows) @ self.dual_coef_.T
        F = np.asarray(F) + self.intercept_
        return F[:, 0] if self.classes_.size == 2 else F

    def _training_rows(self, X):
        """The rows of the shared training Gram matrix for ``X`` when ``X`` is, value for value, the
        last ``len(X)`` training points (the unlabeled block, or all of them); else None."""
        key = getattr(self, "_gram_key", None)
        if key is not None and key[2:] != (self.kernel, float(self.sigma)):
            # Kernel parameters set after fit: every point's output uses the current ones.
            key = None
        gram = None if key is None else _SHARED.get(key)
        Xf = self.X_fit_
        if gram is None or sp.issparse(X) or sp.issparse(Xf) or X.shape[0] > Xf.shape[0]:
            return None
        start = Xf.shape[0] - X.shape[0]
        return gram[start:] if np.array_equal(X, Xf[start:]) else None

    def predict(self, X):
        """Class labels: ``classes_[1]`` where f > 0 for two classes, the argmax otherwise."""
        return self._labels_of(self.decision_function(X))

    def _labels_of(self, F):
        """The class labels of outputs ``F`` (see :meth:`predict`)."""
        if self.classes_.size == 2:
            return self.classes_[(F > 0).astype(int)]
        return self.classes_[np.argmax(F, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self._accepts_sparse
        return tags
