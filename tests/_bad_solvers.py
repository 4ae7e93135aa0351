"""Deliberately broken solvers for the grid-runner tests (named as ``tests._bad_solvers:Class``)."""

import time

from s3vm_bench.solvers.svm import SVM


class Raiser(SVM):
    """Fails in fit."""

    def fit(self, X, y):
        raise RuntimeError("deliberate failure in fit")


class Sleeper(SVM):
    """Runs far past any sensible cell time limit."""

    def fit(self, X, y):
        time.sleep(30)
        return super().fit(X, y)


class Dozer(SVM):
    """Runs 1.5 s: past a 0.5 s limit, which a thread cannot interrupt."""

    def fit(self, X, y):
        time.sleep(1.5)
        return super().fit(X, y)


class Killer(SVM):
    """Kills its own process in fit when ``C`` is 13 (a segfault-like death), else is an SVM."""

    def fit(self, X, y):
        if self.C == 13.0:
            import os
            import signal

            os.kill(os.getpid(), signal.SIGKILL)
        return super().fit(X, y)


class Asleep(SVM):
    """Ignores the cell's alarm and waits forever without using the CPU (a solver blocked in compiled code)."""

    def fit(self, X, y):
        import signal

        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        while True:
            time.sleep(0.05)


class Stuck(SVM):
    """Ignores the cell's alarm and never returns (a solver stuck in compiled code)."""

    def fit(self, X, y):
        import signal

        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        while True:  # burns CPU, as a loop in compiled code would
            pass


class Waiter(SVM):
    """Marks that it runs (a file named by its process id in the folder ``WAITER_PID_DIR``), then
    waits until its process is ended."""

    def fit(self, X, y):
        import os
        from pathlib import Path

        Path(os.environ["WAITER_PID_DIR"], str(os.getpid())).touch()
        while True:
            time.sleep(0.05)


class Warner(SVM):
    """Warns in fit (from the worker process that runs its cell)."""

    def fit(self, X, y):
        import warnings

        warnings.warn(f"deliberate warning from a worker ({type(self).__name__})", UserWarning)
        return super().fit(X, y)
