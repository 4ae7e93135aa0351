"""Public loss functions of the papers (values and derivatives, elementwise; see :class:`LossEval`).

Labeled losses: :func:`hinge_loss` (L1), :func:`squared_hinge_loss` (L2), :func:`squared_loss`;
unlabeled losses: :func:`symmetric_squared_hinge_loss` (JMLR 2008 eq. 2 with p = 2),
:func:`exp_unlabeled_loss` (eq. 14, ``exp(-s t^2)``), :func:`flat_unlabeled_loss` (the flat
loss of Newton S3VM, Sec. 4.4), :func:`smoothed_exp_unlabeled_loss` (cS3VM's Gaussian smoothing, Sec. 4.3) and
:func:`cccp_convex_loss` (the convex part of one CCCP step, Sec. 4.1).
"""

from ._losses import (FLAT_LOSS_DEFAULTS, LossEval, SmoothedExpLoss, cccp_convex_loss, exp_unlabeled_loss,
                      flat_unlabeled_loss, hinge_loss, smoothed_exp_unlabeled_loss, squared_hinge_loss, squared_loss,
                      symmetric_squared_hinge_loss)

__all__ = ["LossEval", "hinge_loss", "squared_hinge_loss", "squared_loss", "symmetric_squared_hinge_loss",
           "exp_unlabeled_loss", "flat_unlabeled_loss", "FLAT_LOSS_DEFAULTS", "cccp_convex_loss",
           "smoothed_exp_unlabeled_loss", "SmoothedExpLoss"]
