"""LapSVM and the LapSVM-S3VM-light hybrid (JMLR 2008 Sec. 5.6.2): the deformed kernel of
Sindhwani, Niyogi & Belkin (2005), the two solvers, the protocol's balance, bad inputs."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from sklearn.base import clone

from s3vm_bench.data_registry import g50c_like, jmlr2008_splits, two_moons
from s3vm_bench.harness.protocol import ProtocolSettings, run_split
from s3vm_bench.solvers import get_solver
from s3vm_bench.solvers._graph import DeformedKernel, knn_laplacian, laplacian_power
from s3vm_bench.solvers.lapsvm import LapSVM
from s3vm_bench.solvers.lapsvm_s3vm_light import LapSVMS3VMLight
from s3vm_bench.solvers.numerics import gaussian_kernel, n_positive
from s3vm_bench.solvers.s3vm_light import S3VMLight
from s3vm_bench.solvers.svm import SVM

from ._toy import BAD_INPUTS, small_clusters


def _points(seed=0, n=30, m=7, d=3):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)), rng.normal(size=(m, d))


def _direct(KAB, KAX, KXB, K, M):
    """k~(A, B) = k(A, B) - k(A, X) (I + M K)^{-1} M k(X, B), with a dense inverse (test only)."""
    return KAB - KAX @ np.linalg.inv(np.eye(K.shape[0]) + M @ K) @ M @ KXB


# ------------------------------------------------------------------------------ graph Laplacian
@pytest.mark.parametrize("weights", ["binary", "heat"])
@pytest.mark.parametrize("normalized", [True, False])
def test_knn_laplacian_is_a_symmetric_psd_laplacian(weights, normalized):
    X, _ = _points(n=40)
    L = knn_laplacian(X, 5, weights=weights, normalized=normalized)
    assert sp.issparse(L) and L.dtype == np.float64
    Ld = L.toarray()
    np.testing.assert_allclose(Ld, Ld.T, atol=1e-15)
    ev = np.linalg.eigvalsh(Ld)
    assert ev[0] > -1e-12 and abs(ev[0]) < 1e-12  # connected graph: one zero eigenvalue
    assert ev[1] > 1e-6
    if not normalized:
        np.testing.assert_allclose(Ld.sum(axis=1), 0.0, atol=1e-12)  # D - W
    else:
        assert ev[-1] <= 2.0 + 1e-12  # spectrum of I - D^-1/2 W D^-1/2 lies in [0, 2]
    # every point is joined to at least its 5 nearest neighbours ("or" rule)
    W = -(Ld - np.diag(np.diag(Ld)))
    assert np.all((W > 0).sum(axis=1) >= 5)


def test_knn_laplacian_keeps_duplicate_points_connected():
    X, _ = _points(n=20)
    X = np.vstack([X, X[:3]])  # distance-0 neighbours must still be edges
    L = knn_laplacian(X, 3, normalized=False).toarray()
    assert np.all(np.diag(L) >= 3)


def test_laplacian_power():
    X, _ = _points(n=25)
    L = knn_laplacian(X, 4)
    np.testing.assert_allclose(laplacian_power(L, 3), np.linalg.matrix_power(L.toarray(), 3), atol=1e-12)


# ------------------------------------------------------------------------------ deformed kernel
@pytest.mark.parametrize("gamma,p", [(0.1, 1), (10.0, 2), (1e3, 5)])
def test_deformed_gram_symmetric_psd_and_equals_direct_formula(gamma, p):
    X, Y = _points()
    base = functools.partial(gaussian_kernel, sigma=1.5)
    dk = DeformedKernel(base, n_neighbors=5, degree=p, gamma=gamma).fit(X)
    K = base(X)
    M = gamma * np.linalg.matrix_power(knn_laplacian(X, 5).toarray(), p)
    np.testing.assert_allclose(dk.M_, M, rtol=1e-10, atol=1e-10)
    G = dk.gram_
    np.testing.assert_array_equal(G, G.T)
    assert np.linalg.eigvalsh(G).min() > -1e-10 * np.abs(G).max()
    # The dense-inverse reference loses digits as gamma grows; ours is at least as accurate.
    tol = 1e-12 * max(1.0, gamma * 2.0**p)
    np.testing.assert_allclose(G, _direct(K, K, K, K, M), atol=tol)
    # k~ on new points: the direct formula, and consistency with the training Gram matrix
    KY, KYX = base(Y), base(Y, X)
    np.testing.assert_allclose(dk(Y), _direct(KY, KYX, KYX.T, K, M), atol=tol)
    np.testing.assert_allclose(dk(Y, X), dk.cross(Y), atol=tol)
    np.testing.assert_allclose(dk.cross(X), G, atol=tol)
    np.testing.assert_allclose(dk(X), G, atol=tol)
    np.testing.assert_allclose(dk(X[:4], Y), dk(Y, X[:4]).T, atol=tol)
    # the deformation shrinks the kernel: K - K~ = K (I + MK)^{-1} M K is positive semidefinite
    assert np.linalg.eigvalsh(K - G).min() > -1e-10


def test_deformed_kernel_with_given_m_and_zero_m_is_the_base_kernel():
    X, Y = _points()
    base = functools.partial(gaussian_kernel, sigma=0.7)
    dk = DeformedKernel(base).fit(X, M=np.zeros((30, 30)))
    np.testing.assert_allclose(dk.gram_, base(X), atol=1e-14)
    np.testing.assert_allclose(dk(Y, X), base(Y, X), atol=1e-14)


def test_deformed_kernel_sparse_input_equals_dense():
    X, Y = _points()
    base = functools.partial(gaussian_kernel, sigma=1.5)
    d = DeformedKernel(base, n_neighbors=4, degree=2, gamma=5.0).fit(X)
    s = DeformedKernel(base, n_neighbors=4, degree=2, gamma=5.0).fit(sp.csr_matrix(X))
    np.testing.assert_allclose(s.gram_, d.gram_, atol=1e-12)
    np.testing.assert_allclose(s.cross(sp.csr_matrix(Y)), d.cross(Y), atol=1e-12)


# ------------------------------------------------------------------------------ two moons
def _clean_moons(seed):
    """A two-moons realization whose 10-NN graph has exactly the two moons as components.

    Noise 0.05 and 200 unlabeled points; the premise is checked, not assumed.
    """
    ds = two_moons(seed=seed, n_unlabeled=200, noise=0.05)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        L = knn_laplacian(ds.X, 10)
    n_comp, comp = connected_components(L, directed=False)
    assert n_comp == 2 and np.all(comp == comp[0] ^ (ds.y != ds.y[0])), "premise: one component per moon"
    y = ds.y.copy()
    y[2:] = -1  # the two fixed labeled points, one per moon
    return ds, y


@pytest.mark.parametrize("seed", [0, 1])
def test_two_moons_lapsvm_separates_with_two_labels(seed):
    """When each moon is one graph component and gamma is large, the deformed RKHS contains (nearly)
    only functions constant on each component: f on the training points is fixed by the one label
    in each moon, so LapSVM labels every unlabeled point right and, the graph being dense along
    the moons, the extension to new points too. The Gaussian SVM with the same two points has
    no notion of the moons; its boundary is the bisector of the two labeled points, which cuts
    the tips of both moons (15-20 % error)."""
    ds, y = _clean_moons(seed)
    kw = dict(sigma=0.5, C=10.0)
    with pytest.warns(UserWarning, match="2 connected components"):
        lap = LapSVM(n_neighbors=10, gamma_ratio=1e4, **kw).fit(ds.X, y)
    svm = SVM(**kw).fit(ds.X, y)
    unl = y == -1
    lap_unl = np.mean(lap.predict(ds.X[unl]) != ds.y[unl])
    lap_test = np.mean(lap.predict(ds.X_test) != ds.y_test)
    svm_test = np.mean(svm.predict(ds.X_test) != ds.y_test)
    assert lap_unl <= 0.01 and lap_test <= 0.03
    assert svm_test >= 0.10  # the test can fail: without the graph the same two points do not suffice
    # the expansion is over the two labeled points, the graph over all 202
    assert lap.dual_coef_.shape == (1, 2) and lap.deformed_kernel_.gram_.shape == (202, 202)
    # decision_function reproduces the outputs on the training points through k~
    np.testing.assert_allclose(lap.decision_function(ds.X[:2]),
                               lap.deformed_kernel_.gram_[:2, :2] @ lap.dual_coef_[0] + lap.intercept_[0],
                               atol=1e-10)


def test_unlabeled_points_change_lapsvm():
    ds, y = _clean_moons(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        a = LapSVM(sigma=0.5, C=10.0, n_neighbors=10, gamma_ratio=1e4).fit(ds.X, y)
        b = LapSVM(sigma=0.5, C=10.0, n_neighbors=10, gamma_ratio=1e4).fit(ds.X[:120], y[:120])
    assert np.abs(a.decision_function(ds.X_test) - b.decision_function(ds.X_test)).max() > 1e-3


# ------------------------------------------------------------------------------ hybrid
@pytest.mark.parametrize("r_mode", ["exact", "estimated"])
def test_hybrid_meets_the_balance_exactly_under_the_protocol(r_mode):
    ds = g50c_like(seed=3, n=120, d=5)
    split = jmlr2008_splits(ds, n_splits=1, n_labeled=8)[0]
    settings = ProtocolSettings(sigma=3.0, C=5.0, r_mode=r_mode)
    res = run_split(LapSVMS3VMLight, {"n_neighbors": 8, "gamma_ratio": 10.0}, ds, split, settings)
    b = res.binary[0]
    u = split.unlabeled.size
    assert res.balance_exact and b.n_pos == n_positive(u, b.r) == int(np.sum(b.unlabeled_outputs > 0))
    if r_mode == "exact":
        assert b.n_pos == round(u * np.mean(ds.y[split.unlabeled] == 1))


def test_hybrid_is_s3vm_light_on_the_deformed_gram():
    """The composition adds nothing but the kernel: same labels and coefficients as S3VM-light run
    on the deformed Gram matrix directly."""
    X, y_true, y = small_clusters(seed=1, n=40)
    hyb = LapSVMS3VMLight(sigma=2.0, C=3.0, n_neighbors=12, laplacian_power=2, gamma_ratio=3.0).fit(X, y)
    G = hyb.deformed_kernel_.gram_

    class OnGram(S3VMLight):
        def _kernel(self, A, B=None):
            return G

    ref = OnGram(sigma=2.0, C=3.0).fit(X, y).binary_fits_[0]
    np.testing.assert_array_equal(hyb.assigned_labels_[0], ref.info["y_unlabeled"])
    np.testing.assert_allclose(hyb.dual_coef_[0], ref.coef, atol=1e-8)
    assert np.sum(hyb.assigned_labels_[0] > 0) == n_positive(34, 0.5)


def test_registered_and_sklearn_params():
    assert get_solver("lapsvm") is LapSVM and get_solver("lapsvm_s3vm_light") is LapSVMS3VMLight
    for cls in (LapSVM, LapSVMS3VMLight):
        est = cls(n_neighbors=7, laplacian_power=3, gamma_ratio=2.5, graph_weights="heat", normalized_laplacian=False)
        c = clone(est)
        assert c.get_params() == est.get_params()
        assert {"n_neighbors", "laplacian_power", "gamma_ratio", "graph_weights", "normalized_laplacian",
                "sigma", "C"} <= set(c.get_params())
    X, _, y = small_clusters(n=40)
    m = LapSVM(sigma=2.0, n_neighbors=5)
    p0 = m.get_params()
    f1 = m.fit(X, y).decision_function(X)
    f2 = m.fit(X, y).decision_function(X)
    np.testing.assert_array_equal(f1, f2)
    assert m.get_params() == p0


@pytest.mark.filterwarnings("ignore:.*connected components:UserWarning")  # three far-apart clusters
def test_multiclass_and_sparse_input():
    rng = np.random.default_rng(0)
    centers = np.array([[0, 0], [6, 0], [0, 6]])
    y_true = np.repeat([0, 1, 2], 20)
    X = centers[y_true] + rng.normal(size=(60, 2))
    y = np.full(60, -1)
    y[[0, 1, 20, 21, 40, 41]] = y_true[[0, 1, 20, 21, 40, 41]]
    m = LapSVM(sigma=2.0, C=5.0, n_neighbors=6, gamma_ratio=10.0).fit(X, y)
    assert np.mean(m.predict(X) == y_true) > 0.95
    ms = LapSVM(sigma=2.0, C=5.0, n_neighbors=6, gamma_ratio=10.0).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(ms.decision_function(X), m.decision_function(X), atol=1e-9)


# ------------------------------------------------------------------------------ bad inputs
@pytest.mark.parametrize("cls", [LapSVM, LapSVMS3VMLight])
@pytest.mark.parametrize("mutate,err,match", BAD_INPUTS)
def test_bad_inputs_rejected(cls, mutate, err, match):
    X, _, y = small_clusters()
    Xb, yb = mutate(X, y)
    with pytest.raises(err, match=match):
        cls(n_neighbors=5).fit(Xb, yb)


@pytest.mark.parametrize("cls", [LapSVM, LapSVMS3VMLight])
@pytest.mark.parametrize("params,err,match", [
    ({"n_neighbors": 40}, ValueError, "n_neighbors=40 must be smaller than the number of points n=40"),
    ({"n_neighbors": 0}, ValueError, "n_neighbors must be an int >= 1"),
    ({"n_neighbors": 2.5}, ValueError, "n_neighbors"),
    ({"laplacian_power": 0}, ValueError, "laplacian_power"),
    ({"gamma_ratio": 0.0}, ValueError, "gamma_ratio must be a float > 0"),
    ({"gamma_ratio": -1.0}, ValueError, "gamma_ratio must be a float > 0"),
    ({"graph_weights": "cosine"}, ValueError, "graph_weights"),
    ({"normalized_laplacian": "yes"}, ValueError, "normalized_laplacian"),
    ({"kernel": "linear"}, ValueError, "kernel must be 'rbf'"),
    ({"sigma": 0.0}, ValueError, "sigma"),
])
def test_bad_params(cls, params, err, match):
    X, _, y = small_clusters(n=40)
    with pytest.raises(err, match=match):
        cls(**params).fit(X, y)


def test_lapsvm_with_every_point_labeled_fits_the_supervised_problem():
    X, y, _ = small_clusters()
    est = LapSVM().fit(X, y)
    assert est.binary_fits_[0].info["supervised"] and est.score(X, y) > 0.9


def test_disconnected_graph_warns():
    X, _, y = small_clusters(n=40)
    X = np.vstack([X, X + 1e3])
    y = np.r_[y, np.full(40, -1)]
    with pytest.warns(UserWarning, match="has 2 connected components"):
        a = LapSVM(n_neighbors=3).fit(X, y)
    with pytest.warns(UserWarning, match="has 2 connected components"):  # the cached kernel warns too
        b = LapSVM(n_neighbors=3).fit(X, y)
    assert b.deformed_kernel_ is a.deformed_kernel_  # one-versus-rest refits reuse the kernel
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    with pytest.warns(UserWarning, match="connected components"):
        assert LapSVM(n_neighbors=4).fit(X, y).deformed_kernel_ is not a.deformed_kernel_


def test_deformed_kernel_bad_inputs():
    X, _ = _points()
    base = functools.partial(gaussian_kernel, sigma=1.0)
    with pytest.raises(ValueError, match="must be smaller than the number of points"):
        DeformedKernel(base, n_neighbors=30).fit(X)
    with pytest.raises(ValueError, match="gamma must be > 0"):
        DeformedKernel(base, gamma=0.0).fit(X)
    with pytest.raises(ValueError, match="p must be an integer >= 1"):
        DeformedKernel(base, degree=0).fit(X)
    with pytest.raises(ValueError, match="weights must be one of"):
        DeformedKernel(base, weights="cosine").fit(X)
    with pytest.raises(ValueError, match="M has shape"):
        DeformedKernel(base).fit(X, M=np.eye(3))
    with pytest.raises(TypeError, match="callable"):
        DeformedKernel("rbf")
    with pytest.raises(RuntimeError, match="not fitted"):
        DeformedKernel(base)(X)
    with pytest.raises(ValueError, match="NaN"):
        DeformedKernel(base).fit(np.where(np.eye(30, 3, dtype=bool), np.nan, X))


# ------------------------------------------------------------------------ balanced LapSVM (NIPS 2006)
def test_balanced_lapsvm_meets_the_count_and_only_moves_the_bias():
    from s3vm_bench.solvers.lapsvm_balanced import BalancedLapSVM

    assert get_solver("lapsvm_balanced") is BalancedLapSVM
    X, _, y_semi = small_clusters(seed=4, n=60)
    unl = y_semi == -1
    plain = LapSVM(sigma=1.5, C=2.0, n_neighbors=5).fit(X, y_semi)
    for r in (0.3, 0.5, 0.7):
        bal = BalancedLapSVM(sigma=1.5, C=2.0, n_neighbors=5, r=r).fit(X, y_semi)
        target = n_positive(int(unl.sum()), r)
        assert np.sum(bal.decision_function(X[unl]) > 0) == target
        assert np.sum(bal.predict(X[unl]) == bal.classes_[1]) == target
        info = bal.binary_fits_[0].info
        assert info["n_pos_target"] == target and info["r"] == r
        # LapSVM's classifier, its bias moved by the recorded shift: a constant difference everywhere.
        np.testing.assert_allclose(plain.decision_function(X) - bal.decision_function(X), info["bias_shift"],
                                   rtol=0, atol=1e-9)
    with pytest.raises(ValueError, match="kernel must be 'rbf'"):
        BalancedLapSVM(kernel="linear").fit(X, y_semi)


def test_balanced_lapsvm_under_the_protocol_meets_the_exact_balance():
    # NIPS 2006 Table 1's problem (harness.reference_sets): LapSVM alone need not meet it.
    from s3vm_bench.harness.reference_sets import get_reference_set

    ref = get_reference_set("two_moons")
    exact = []
    for i in range(3):
        ds, split = ref.make(i)
        res = run_split(get_solver("lapsvm_balanced"), {}, ds, split, ref.settings)
        exact.append(res.balance_exact)
    assert all(exact)
