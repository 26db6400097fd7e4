"""``--backend ray``: the chunks of ``execution.execute`` played as Ray tasks (docs/scale-out.md).

The driver (this process) keeps everything that decides the results: it cuts the chunks,
and ``execute`` writes their parts in chunk order whatever order the tasks finish in, so a
run dir holds the same bytes as a local run with the same seed and chunk size, for any
number of workers. A worker only plays games: ``play`` (the engine call with the plan's
arrays, shipped once through the object store) on one chunk's per-game inputs.

- One task per chunk, ``num_cpus`` = the engine threads it uses (``--threads``, default 1):
  the chunks are the unit of parallelism across the cluster, and one thread per task keeps
  the engine's threads from competing with other tasks for a node's cores.
- Each worker process loads the compiled engine once (from the numba cache named by
  ``NUMBA_CACHE_DIR``, which the workers get in their ``runtime_env``) and keeps it for
  every later task it runs.
- Faults: a task that raises, or whose worker dies, is retried by Ray (``max_retries``,
  ``retry_exceptions``); its chunk is written once, when its result arrives.
- Ctrl-C: the first stops handing out chunks and lets those under way finish (they are
  written); a second cancels what is under way (``ray.cancel``). The run dir holds only
  whole chunks either way, and ``--resume`` (with either backend) finishes it.

A local Ray (no ``--address``) is kept to this machine (docs/scale-out.md, "Security"):
its node address is the loopback one, so its servers listen on 127.0.0.1 only, and Ray's
token authentication stays on (a warning when the environment turns it off). On Linux,
Ray 2.60 turns ``_node_ip_address="127.0.0.1"`` back into the machine's network address
unless ray is imported with ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` (its single-machine
setting, read once when ray is imported): ``import_ray(local=True)`` imports it so.

Fault injection for tests: ``RNR_SIM_RAY_FAULT=raise:K:MARKER`` makes the first attempt of
chunk K raise (``exit:K:MARKER``: its worker process dies); MARKER is a file created by
that first attempt, so the retry plays normally.
"""

from __future__ import annotations

import ipaddress
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from rnr_sim.errors import InputError

#: The Ray version ``pip install 'rnr-sim[ray]'`` installs (pyproject.toml).
RAY_VERSION = "2.60.0"
INSTALL = "pip install 'rnr-sim[ray]'"
MAX_RETRIES = 3
FAULT_ENV = "RNR_SIM_RAY_FAULT"
#: Environment variables the workers get from the driver (``runtime_env``).
WORKER_ENV = ("NUMBA_CACHE_DIR", "NUMBA_THREADING_LAYER")
#: Read by ray when it is imported: "0" makes a node's address the loopback one.
SINGLE_MACHINE_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
#: Ray's token authentication switch ("token": on, Ray 2.60's default for a local Ray).
AUTH_ENV = "RAY_AUTH_MODE"
LOOPBACK = "127.0.0.1"
CVE = "CVE-2023-48022"


def import_ray(local: bool = False):
    """The ``ray`` module, or ``InputError`` saying in one line how to install it.
    ``local``: a local Ray is to be started in this process: on its first import, ray is
    imported with its single-machine setting (the variable is removed again after)."""
    quiet = local and "ray" not in sys.modules and SINGLE_MACHINE_ENV not in os.environ
    if quiet:
        os.environ[SINGLE_MACHINE_ENV] = "0"
    try:
        import ray
    except ImportError:
        raise InputError(f"--backend ray needs Ray, which is not installed: {INSTALL}") from None
    finally:
        if quiet:
            del os.environ[SINGLE_MACHINE_ENV]
    return ray


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return address == "localhost"


def safety_warnings(ray, local: bool) -> list[str]:
    """What makes this Ray reachable from other machines, in words (empty when nothing
    does): token authentication turned off by the environment, or a local Ray whose node
    address is not the loopback one (ray imported before ``import_ray(local=True)``)."""
    out = []
    mode = os.environ.get(AUTH_ENV)
    if mode is not None and mode.strip().lower() != "token":
        out.append(f"warning: {AUTH_ENV}={mode} turns Ray's token authentication off: "
                   f"anyone who can reach Ray's ports can run code as you ({CVE}); unset it "
                   "to keep it on")
    if local:
        address = ray.util.get_node_ip_address()
        if not _is_loopback(address):
            out.append(f"warning: this local Ray listens on {address}, not only on "
                       f"{LOOPBACK} (ray was imported before rnr-sim could keep it to this "
                       "machine); keep the machine on a private network")
    return out


def runtime_env() -> dict[str, Any]:
    """The workers' environment: the driver's numba cache dir (so every worker of a node
    loads the engine compiled once, instead of compiling it)."""
    env = {k: os.environ[k] for k in WORKER_ENV if os.environ.get(k)}
    if "NUMBA_CACHE_DIR" in env:
        env["NUMBA_CACHE_DIR"] = str(Path(env["NUMBA_CACHE_DIR"]).resolve())
    return {"env_vars": env} if env else {}


def init_ray(address: str | None = None, num_cpus: int | None = None,
             log: Callable[[str], None] | None = None):
    """Join the cluster at ``address`` (``auto``, ``ray://host:port``), or start a local Ray
    (``num_cpus``: default all cores) on the loopback address, without the dashboard, with
    token authentication (Ray's default; ``log`` hears a warning when the environment
    turns it off). Returns the seconds it took."""
    ray = import_ray(local=address is None)
    if log is None:
        from rnr_sim.runs.execution import log_to_stderr as log
    for warning in safety_warnings(ray, local=address is None):
        log(warning)
    t0 = time.perf_counter()
    kwargs: dict[str, Any] = {"runtime_env": runtime_env(), "log_to_driver": True,
                              "configure_logging": False}
    if address is None:
        kwargs.update(num_cpus=num_cpus, include_dashboard=False, _node_ip_address=LOOPBACK)
    else:
        kwargs.update(address=address)
    try:
        ray.init(**kwargs)
    except (ConnectionError, ValueError, RuntimeError) as e:
        where = address or "a local Ray"
        raise InputError(f"--address {where}: cannot join the Ray cluster "
                         f"({str(e).splitlines()[0] if str(e) else type(e).__name__})") from None
    return time.perf_counter() - t0


def _fault() -> tuple[str, int, str] | None:
    spec = os.environ.get(FAULT_ENV)
    if not spec:
        return None
    kind, chunk, marker = spec.split(":", 2)
    return kind, int(chunk), marker


def _maybe_fail(fault: tuple[str, int, str] | None, job: Any) -> None:
    if fault is None:
        return
    kind, chunk, marker = fault
    index = getattr(job[1], "index", None) if isinstance(job, tuple) else None
    if index != chunk or os.path.exists(marker):
        return
    Path(marker).write_text(str(os.getpid()))
    if kind == "exit":
        os._exit(1)
    raise RuntimeError(f"injected fault: first attempt of chunk {chunk}")


def _play_task(play: Callable[[Any], Any], job: Any, fault) -> Any:
    _maybe_fail(fault, job)
    return play(job)


class RayBackend:
    """Plays jobs as Ray tasks, ``workers`` of them at a time (the cluster's CPUs divided
    by ``threads`` per task) plus a few queued, and yields (job, result) as they finish."""

    name = "ray"
    remote = True  # each worker loads the engine itself

    def __init__(self, address: str | None = None, threads: int | None = None,
                 num_cpus: int | None = None):
        self.address = address
        self.threads = threads if threads is not None else 1  # engine threads per task
        self.num_cpus = num_cpus
        self.startup_s = 0.0
        self._started = False
        self._ray = None
        self._task = None

    def __enter__(self) -> RayBackend:
        ray = self._ray = import_ray(local=self.address is None)
        if not ray.is_initialized():
            self.startup_s = init_ray(self.address, self.num_cpus)
            self._started = True
        total = int(ray.cluster_resources().get("CPU", 0))
        if self.threads > max(total, 1):
            self.close()
            raise InputError(f"--threads {self.threads}: each Ray task would need more CPUs "
                             f"than the cluster has ({total})")
        self._task = ray.remote(_play_task).options(
            num_cpus=self.threads, max_retries=MAX_RETRIES, retry_exceptions=True)
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._started and self._ray is not None:
            self._ray.shutdown()
            self._started = False

    @property
    def workers(self) -> int:
        """Tasks the cluster runs at once."""
        total = int(self._ray.cluster_resources().get("CPU", 1)) if self._ray else 1
        return max(1, total // self.threads)

    def describe(self) -> dict[str, Any]:
        return {"backend": self.name, "address": self.address, "workers": self.workers,
                "threads_per_chunk": self.threads, "startup_s": round(self.startup_s, 3)}

    def __call__(self, play: Callable[[Any], Any], jobs: Iterable[Any]
                 ) -> Iterator[tuple[Any, Any]]:
        ray = self._ray
        play_ref = ray.put(play)
        fault = _fault()
        window = self.workers + max(1, self.workers // 2)
        pending: dict[Any, Any] = {}
        jobs = iter(jobs)
        more = True
        try:
            while True:
                while more and len(pending) < window:
                    job = next(jobs, _END)
                    if job is _END:
                        more = False
                        break
                    pending[self._task.remote(play_ref, job, fault)] = job
                if not pending:
                    return
                done, _ = ray.wait(list(pending), num_returns=1)
                for ref in done:
                    job = pending.pop(ref)
                    yield job, ray.get(ref)
        finally:
            for ref in pending:  # a second Ctrl-C, or an error: abandon what is under way
                ray.cancel(ref, force=True)


_END = object()
