"""Where many independent tasks run: local processes by default, an existing Dask
cluster when asked. `verify sweep` and `benchmarks/campaigns/differential.py` share it.

Both go through joblib: locally its loky backend (worker processes that survive
a crashed task, killed outright when a run is stopped), on a cluster its dask
backend, which hands the same tasks to a `distributed.Client`. A task is a
module-level function and plain data (spec text, numbers); what it returns is
plain data too. Z3 objects never travel: every task parses its spec and builds
its solvers in the worker.
"""

from __future__ import annotations

import contextlib
import warnings
from dataclasses import dataclass

import joblib

from verify.errors import SpecError

ARGS = "<args>"
CONNECT_SECONDS = 10


@dataclass(frozen=True)
class Engine:
    """`jobs` local worker processes (1: in this process), or the Dask cluster whose
    scheduler listens at `dask` (``tcp://host:8786``), with every core it has."""

    jobs: int = 1
    dask: str | None = None

    def describe(self) -> str:
        if self.dask:
            return f"dask cluster at {self.dask}"
        return "this process" if self.jobs == 1 else f"{self.jobs} local processes"

    @contextlib.contextmanager
    def run(self, task, items, one_per_worker: bool = False):
        """A `Run` of task(item) for every item; leaving the block stops it.

        With `one_per_worker`, each worker holds one item at a time and joblib
        dispatches them in the order given, so the first `Run.workers` items not
        finished are those running (what the campaign lists when stopped);
        otherwise joblib batches items as it sees fit, which pays for short tasks."""
        batching = {"batch_size": 1, "pre_dispatch": "n_jobs"} if one_per_worker else {}
        n_jobs = -1 if self.dask else self.jobs
        with self._backend():
            parallel = joblib.Parallel(n_jobs=n_jobs, return_as="generator_unordered", **batching)
            found = Run(parallel, task, items, joblib.effective_n_jobs(n_jobs))
            try:
                yield found
            finally:
                found.stop()

    @contextlib.contextmanager
    def _backend(self):
        if self.dask is None:
            with joblib.parallel_config(backend="loky"):
                yield
            return
        with _client(self.dask), joblib.parallel_config(backend="dask"):
            yield


def _client(address: str):
    """A client of the cluster at `address`; a missing extra or an unreachable
    scheduler is the command line's mistake, said as such."""
    try:
        from distributed import Client  # the dask extra; only a cluster run needs it
    except ImportError:
        raise SpecError(
            "--dask needs the dask extra: pip install 'verify-smem[dask]'", file=ARGS
        ) from None
    try:
        return Client(address, timeout=CONNECT_SECONDS)
    except (OSError, TimeoutError, ValueError) as e:
        raise SpecError(f"--dask {address}: cannot reach the scheduler: {e}", file=ARGS) from None


class Run:
    """Iterates (item, task(item)) in the order the tasks finish, and knows which
    items were handed out and have not come back."""

    def __init__(self, parallel: joblib.Parallel, task, items, workers: int):
        self.workers = workers
        self.handed_out: list = []
        self._finished: set[int] = set()
        self._results = parallel(self._tasks(task, items))

    def _tasks(self, task, items):
        """Read lazily by joblib, a few items ahead of the workers."""
        for item in items:
            self.handed_out.append(item)
            yield joblib.delayed(_numbered)(task, len(self.handed_out) - 1, item)

    def __iter__(self):
        return self

    def __next__(self):
        number, result = next(self._results)
        self._finished.add(number)
        return self.handed_out[number], result

    def unfinished(self) -> list:
        """Items handed out whose result has not come back, in the order handed out
        (running, or waiting in joblib's queue for a worker)."""
        return [item for n, item in enumerate(self.handed_out) if n not in self._finished]

    def stop(self):
        """Ends the run: joblib kills local workers still busy, or cancels the
        cluster's tasks (a Dask worker finishes the task it is in; its result is dropped)."""
        with warnings.catch_warnings():
            # joblib warns that the tasks still running were cancelled: that is the point.
            warnings.simplefilter("ignore", UserWarning)
            self._results.close()


def _numbered(task, number: int, item):
    return number, task(item)
