"""Kernels, unlabeled-mean centering (JMLR 2008 eq. 13) and the kernel-PCA map."""

import numpy as np
import pytest
import scipy.sparse as sp

from s3vm_bench.solvers.numerics import (
    KernelCentering,
    center_kernel,
    gaussian_kernel,
    kernel_pca_map,
    linear_kernel,
)


def _data(seed=0, n=25, m=7, d=6, density=0.4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < density)
    Y = rng.normal(size=(m, d)) * (rng.random((m, d)) < density)
    return X, Y


def _direct_gaussian(X, Y, sigma):
    D = ((X[:, None, :] - Y[None, :, :]) ** 2).sum(-1)
    return np.exp(-D / (2 * sigma**2))


@pytest.mark.parametrize("sigma", [0.3, 1.0, 7.4])
def test_gaussian_matches_direct_formula(sigma):
    X, Y = _data()
    np.testing.assert_allclose(gaussian_kernel(X, Y, sigma=sigma), _direct_gaussian(X, Y, sigma), atol=1e-12)
    K = gaussian_kernel(X, sigma=sigma)
    np.testing.assert_allclose(K, _direct_gaussian(X, X, sigma), atol=1e-12)
    np.testing.assert_array_equal(np.diag(K), 1.0)
    np.testing.assert_array_equal(K, K.T)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_gaussian_dense_equals_sparse(fmt):
    X, Y = _data(1)
    Xs, Ys = sp.csr_matrix(X).asformat(fmt), sp.csr_matrix(Y).asformat(fmt)
    ref = gaussian_kernel(X, Y, sigma=1.5)
    for a, b in [(Xs, Ys), (Xs, Y), (X, Ys)]:
        K = gaussian_kernel(a, b, sigma=1.5)
        assert isinstance(K, np.ndarray) and K.shape == (25, 7)
        np.testing.assert_allclose(K, ref, atol=1e-13)
    np.testing.assert_allclose(gaussian_kernel(Xs, sigma=1.5), gaussian_kernel(X, sigma=1.5), atol=1e-13)
    # sparse arrays (not only matrices)
    np.testing.assert_allclose(gaussian_kernel(sp.csr_array(X), sigma=1.5), gaussian_kernel(X, sigma=1.5), atol=1e-13)


def test_gaussian_distances_clipped_for_duplicates():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(1, 50)) * 1e3
    X = np.vstack([x, x, x + 1e-9])
    K = gaussian_kernel(X, X.copy(), sigma=0.5)
    assert np.all(K <= 1.0) and np.all(np.isfinite(K))


def test_linear_kernel_dense_equals_sparse():
    X, Y = _data(3)
    np.testing.assert_allclose(linear_kernel(X, Y), X @ Y.T, atol=1e-13)
    np.testing.assert_allclose(linear_kernel(sp.csr_matrix(X), sp.csc_matrix(Y)), X @ Y.T, atol=1e-13)
    np.testing.assert_allclose(linear_kernel(sp.csr_matrix(X)), X @ X.T, atol=1e-13)


@pytest.mark.parametrize("sigma,err", [(0.0, ValueError), (-1.0, ValueError), (np.nan, ValueError),
                                       (np.inf, ValueError), ("a", TypeError), (None, TypeError)])
def test_gaussian_bad_sigma(sigma, err):
    X, _ = _data()
    with pytest.raises(err, match="sigma"):
        gaussian_kernel(X, sigma=sigma)


@pytest.mark.parametrize("sigma", [1e-160, 1e-200, 5e-324])
def test_gaussian_sigma_whose_square_underflows_is_refused(sigma):
    """2 sigma^2 underflows: the kernel would be 0/0 = NaN on the diagonal, or a ZeroDivisionError."""
    X, Y = _data()
    for args in ((X,), (X, Y)):
        with pytest.raises(ValueError, match="too small: 2 sigma"):
            gaussian_kernel(*args, sigma=sigma)
    Z = np.random.default_rng(1).normal(size=(6, 3))  # distinct points
    K = gaussian_kernel(Z, sigma=1e-100)  # the smallest widths that do not underflow still work
    np.testing.assert_array_equal(K, np.eye(6))


def test_kernel_bad_inputs():
    X, Y = _data()
    with pytest.raises(ValueError, match="same number of features"):
        gaussian_kernel(X, Y[:, :3], sigma=1.0)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        gaussian_kernel(Xn, sigma=1.0)
    with pytest.raises(ValueError, match="NaN"):
        linear_kernel(sp.csr_matrix(np.where(np.isnan(Xn), np.inf, X)))
    with pytest.raises(ValueError, match="2-D"):
        linear_kernel(X[0])


# ---------------------------------------------------------------- centering
def _split(n=25, seed=4):
    rng = np.random.default_rng(seed)
    unl = np.zeros(n, dtype=bool)
    unl[rng.choice(n, size=15, replace=False)] = True
    return unl


def test_centered_gram_unlabeled_means_vanish():
    X, _ = _data(5)
    unl = _split()
    K = gaussian_kernel(X, sigma=2.0)
    Kc, cen = center_kernel(K, unl)
    np.testing.assert_allclose(Kc[:, unl].mean(axis=1), 0.0, atol=1e-14)
    np.testing.assert_allclose(Kc[unl].mean(axis=0), 0.0, atol=1e-14)
    np.testing.assert_allclose(Kc, Kc.T, atol=1e-15)
    # so the mean output over unlabeled points is the bias alone (JMLR eq. 12)
    beta = np.random.default_rng(0).normal(size=K.shape[0])
    f = Kc @ beta + 0.37
    assert f[unl].mean() == pytest.approx(0.37, abs=1e-13)
    # integer indices are equivalent to the mask
    Kc2, _ = center_kernel(K, np.flatnonzero(unl))
    np.testing.assert_array_equal(Kc, Kc2)
    assert isinstance(cen, KernelCentering)


def test_centering_equals_translating_by_unlabeled_mean():
    X, Y = _data(6)
    unl = _split()
    mu = X[unl].mean(axis=0)
    Kc, cen = center_kernel(linear_kernel(X), unl)
    np.testing.assert_allclose(Kc, (X - mu) @ (X - mu).T, atol=1e-12)
    # new points use the same centering
    np.testing.assert_allclose(cen.transform(linear_kernel(Y, X)), (Y - mu) @ (X - mu).T, atol=1e-12)
    # transforming the training rows reproduces the centered Gram matrix
    np.testing.assert_allclose(cen.transform(linear_kernel(X)), Kc, atol=1e-13)


def test_centering_new_points_gaussian_consistent():
    X, Y = _data(7)
    unl = _split()
    K = gaussian_kernel(X, sigma=1.3)
    Kc, cen = center_kernel(K, unl)
    Knew = cen.transform(gaussian_kernel(np.vstack([X[:4], Y]), X, sigma=1.3))
    np.testing.assert_allclose(Knew[:4], Kc[:4], atol=1e-14)
    np.testing.assert_allclose(Knew[:, unl].mean(axis=1), 0.0, atol=1e-14)


def test_centering_bad_inputs():
    K = np.eye(5)
    with pytest.raises(ValueError, match="empty"):
        center_kernel(K, np.zeros(5, dtype=bool))
    with pytest.raises(ValueError, match="shape"):
        center_kernel(K, np.ones(4, dtype=bool))
    with pytest.raises(ValueError, match="square"):
        center_kernel(np.ones((5, 4)), [0, 1])
    with pytest.raises(ValueError, match=r"\[0, 5\)"):
        center_kernel(K, [0, 7])
    _, cen = center_kernel(K, [1, 2])
    with pytest.raises(ValueError, match="shape"):
        cen.transform(np.ones((2, 3)))


# ---------------------------------------------------------------- kernel PCA map
@pytest.mark.parametrize("method", ["eigh", "cholesky"])
def test_kernel_pca_map_reproduces_kernel(method):
    X, Y = _data(8, n=30, m=9, density=1.0)
    K = gaussian_kernel(X, sigma=1.5)
    Z, zmap = kernel_pca_map(K, method=method)
    np.testing.assert_allclose(Z @ Z.T, K, atol=1e-10)
    # the map of a training point is its own feature vector
    np.testing.assert_allclose(zmap.transform(K), Z, atol=1e-8)
    # and new points are consistent with the kernel: z(x) . z(x_i) = k(x, x_i)
    Knew = gaussian_kernel(Y, X, sigma=1.5)
    np.testing.assert_allclose(zmap.transform(Knew) @ Z.T, Knew, atol=1e-8)


def test_kernel_pca_map_rank_deficient():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(20, 3))
    K = linear_kernel(X)  # rank 3
    Z, zmap = kernel_pca_map(K)
    assert zmap.n_components == 3 and Z.shape == (20, 3)
    np.testing.assert_allclose(Z @ Z.T, K, atol=1e-10)
    Y = rng.normal(size=(4, 3))
    np.testing.assert_allclose(zmap.transform(linear_kernel(Y, X)) @ Z.T, Y @ X.T, atol=1e-10)
    Zc, cmap = kernel_pca_map(K, method="cholesky")
    assert cmap.jitter > 0
    np.testing.assert_allclose(Zc @ Zc.T, K, atol=1e-6 * np.abs(K).max())


def test_kernel_pca_map_bad_method():
    with pytest.raises(ValueError, match="method"):
        kernel_pca_map(np.eye(3), method="svd")


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_estimator_kernel_matrix_is_its_kernel(kernel):
    """``kernel_matrix`` of an estimator (fitted or not) is the direct formula of its kernel."""
    from s3vm_bench.solvers import get_solver

    X, Y = _data(5)
    est = get_solver("s3vm_light")(kernel=kernel, sigma=1.3 if kernel == "rbf" else None)
    expected = _direct_gaussian(X, Y, 1.3) if kernel == "rbf" else X @ Y.T
    np.testing.assert_allclose(est.kernel_matrix(X, Y), expected, atol=1e-12)
    y = np.where(X[:, 0] > 0, 1, 0)
    y[2:] = -1  # the suite's convention: -1 marks an unlabeled point
    y[:2] = [0, 1]
    est.fit(X, y)
    np.testing.assert_allclose(est.kernel_matrix(Y), _direct_gaussian(Y, Y, 1.3) if kernel == "rbf" else Y @ Y.T,
                               atol=1e-12)


def test_centering_and_the_feature_map_refuse_a_kernel_that_is_not_symmetric():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((6, 3))
    K = gaussian_kernel(X, sigma=1.0)
    bad = K + np.triu(np.ones((6, 6)), 1)  # Z Z^T could only give its symmetric part
    for call in (lambda: kernel_pca_map(bad), lambda: kernel_pca_map(bad, "cholesky"),
                 lambda: KernelCentering.fit(bad, np.arange(2, 6))):
        with pytest.raises(ValueError, match=r"K must be a symmetric kernel matrix"):
            call()
    Z, _ = kernel_pca_map(K)
    np.testing.assert_allclose(Z @ Z.T, K, atol=1e-10)  # the symmetric kernel is accepted as before


@pytest.mark.parametrize("i,j", [(0, 599), (599, 0), (300, 257), (511, 512), (598, 599)])
def test_the_symmetry_check_finds_one_asymmetric_pair_anywhere_at_its_tolerance(i, j):
    """|K - K^T| <= 1e-8 max|K|, whichever row block of a matrix larger than one block holds the pair."""
    from s3vm_bench.solvers._validation import check_symmetric_kernel

    X = np.random.default_rng(1).standard_normal((600, 4))
    K = -3.0 * gaussian_kernel(X, sigma=2.0)  # max |K| = 3, from the negative diagonal
    near = K.copy()
    near[i, j] += 0.9e-8 * 3.0
    assert check_symmetric_kernel(near) is not None
    far = K.copy()
    far[i, j] += 1.1e-8 * 3.0
    with pytest.raises(ValueError, match=r"K must be a symmetric kernel matrix"):
        check_symmetric_kernel(far)


@pytest.mark.parametrize("rtol", [-1.0, 1.0, 2, "0.1", np.nan])
def test_kernel_pca_map_refuses_an_rtol_outside_0_1(rtol):
    from s3vm_bench.solvers.numerics import kernel_pca_map

    K = gaussian_kernel(np.random.default_rng(0).normal(size=(10, 2)), sigma=1.0)
    with pytest.raises(ValueError, match=r"rtol must be a number in \[0, 1\)"):
        kernel_pca_map(K, rtol=rtol)


def test_centering_refuses_a_01_integer_mask_read_as_repeated_indices():
    from s3vm_bench.solvers.numerics import center_kernel

    K = gaussian_kernel(np.random.default_rng(0).normal(size=(6, 2)), sigma=1.0)
    mask01 = np.array([0, 0, 1, 1, 1, 1])
    with pytest.raises(ValueError, match=r"unlabeled indices repeat .*\(an integer 0/1 mask is read as indices\)"):
        center_kernel(K, mask01)
    np.testing.assert_array_equal(center_kernel(K, mask01.astype(bool))[0], center_kernel(K, np.arange(2, 6))[0])
