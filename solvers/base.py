"""The public base class for writing an S3VM solver on the suite's machinery.

A solver only has to be a scikit-learn classifier: ``fit(X, y)`` with ``y == -1`` marking the
unlabeled points, and ``decision_function`` (or ``predict_proba``, or ``predict``); the harness
reads ``n_iter_`` and ``stop_reason_`` when present, and calls ``check_params()`` when present
(:meth:`BaseS3VM.check_params`) to refuse a bad parameter value before any split runs. Subclassing
:class:`BaseS3VM` is optional and gives, for free, input validation (dense or sparse ``X``, any
label type), the Gaussian or linear kernel matrix, one-versus-rest for more than two classes (JMLR
2008 Sec. 5.2), ``decision_function``/``predict`` and the fitted attributes: a subclass implements
one binary problem in :meth:`BaseS3VM._fit_binary` and returns a :class:`BinaryFit`. Its class
attribute ``balance`` tells the protocol how the balance constraint (JMLR 2008 eq. 3) is met:
``"threshold"`` (the harness shifts the outputs to exactly ``round(u r)`` positives),
``"mean_output"`` (a dichotomic search on the threshold r~ of the mean-output constraint, eq. 12, by
the harness or, with ``_internal_search = True``, by the solver), ``"soft"`` (eq. 12 at r~ = r only:
the count is not forced) or absent (no balance: a supervised baseline). With ``"threshold"`` and
``"mean_output"`` equal outputs at the threshold are assigned by position, so the count is always
exact (:func:`s3vm_bench.harness.protocol.break_ties`).

Helpers re-exported here for such solvers:

* balance: :func:`exact_r`, :func:`estimate_r`, :func:`n_positive`, :func:`threshold_to_count`,
  :func:`threshold_shift`, :func:`dichotomic_search` (the bisection on r~ of JMLR 2008 Sec. 4);
* kernels: :func:`gaussian_kernel`, :func:`linear_kernel`, :func:`center_kernel` and
  :class:`KernelCentering` (centering on the unlabeled mean, JMLR 2008 eq. 13);
* the primal L2-SVM solvers and the losses are in :mod:`s3vm_bench.solvers.numerics` and
  :mod:`s3vm_bench.solvers.losses`.

A solver whose one-versus-rest fits gain from running together sets the class attribute
``batched_ovr = True``: the protocol then runs the binary problems of a split as members of one
group (:func:`run_together`, in threads), and the solver may gather their work through
:func:`current_group` (nabla-S3VM and cS3VM evaluate objective (14) of all the classes in one pass
over the shared features). The results must be those of the fits run one after another.

``examples/my_s3vm.py`` is a complete solver on this class.
"""

from ._balance import dichotomic_search, estimate_r, exact_r, n_positive, threshold_shift, threshold_to_count
from ._base import UNLABELED, BaseS3VM, BinaryFit
from .batch import PassGroup, current_group, run_together
from ._kernels import KernelCentering, center_kernel, gaussian_kernel, linear_kernel

__all__ = ["BaseS3VM", "BinaryFit", "UNLABELED", "exact_r", "estimate_r", "n_positive", "threshold_to_count",
           "threshold_shift", "dichotomic_search", "gaussian_kernel", "linear_kernel", "center_kernel",
           "KernelCentering", "PassGroup", "current_group", "run_together"]
