"""scripts/ovr_binaries.py: solver parsing, kernel components, and one end-to-end row."""

import numpy as np
import pytest

from tests._toy import load_script


def _script():
    return load_script("ovr_binaries")


def test_parse_solver_reads_registry_names_user_classes_and_typed_params():
    from s3vm_bench.solvers.cs3vm import CS3VM

    mod = _script()
    label, cls, params = mod.parse_solver("cs3vm:n_smooth=30:final_smoothing=0.001:kernel_map=eigh")
    assert cls is CS3VM and label.startswith("cs3vm:")
    assert params == {"n_smooth": 30, "final_smoothing": 0.001, "kernel_map": "eigh"}
    assert isinstance(params["n_smooth"], int)
    # "package.module:Class" keeps its colon; parameters may follow it.
    assert mod.parse_solver("solvers.cs3vm:CS3VM:n_smooth=3")[1:] == (CS3VM, {"n_smooth": 3})
    for bad in ("cs3vm:n_smooth=3:oops", "cs3vm:=3"):
        with pytest.raises(ValueError, match="name=value"):
            mod.parse_solver(bad)


def test_leading_components_are_kernel_pca_of_the_centered_matrix():
    mod = _script()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3)) * np.array([5.0, 2.0, 0.5])
    K = X @ X.T  # linear kernel: kernel PCA = PCA of the centered points
    vals, vecs = mod.leading_components(K, 2)
    Xc = X - X.mean(axis=0)
    U, S, _ = np.linalg.svd(Xc, full_matrices=False)
    np.testing.assert_allclose(vals, S[:2] ** 2, rtol=1e-10)
    for i in range(2):
        assert abs(abs(vecs[:, i] @ U[:, i]) - 1.0) < 1e-10
    with pytest.raises(ValueError, match="components"):
        mod.leading_components(K, 41)


def test_cli_prints_one_row_per_class_and_solver(data_env, capsys):
    mod = _script()
    mod.main(["2moons", "--split", "0", "--classes", "1", "--solver", "svm", "--solver", "newton", "--pc", "2"])
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("class 1 ")]
    assert [r.split()[2] for r in rows] == ["svm", "newton"]
    for r in rows:
        fields = r.split()
        objective, error = float(fields[fields.index("objective") + 1]), float(fields[fields.index("error") + 1][:-1])
        assert objective > 0 and 0 <= error <= 100
    assert out.count("corr(outputs, PC1..2)") == 2 and "corr(true labels, PC1..2)" in out
    with pytest.raises(SystemExit):
        mod.main(["2moons", "--classes", "5", "--solver", "svm"])
