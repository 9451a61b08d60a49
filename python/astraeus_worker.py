"""Helpers for training code that runs as an Astraeus worker (Python 3 standard library only).

What it is for: the few things a training script needs to cooperate with Astraeus.

- ``progress(step)``: report the step counter in one call (atomically replaces the file named by
  ``ASTRAEUS_PROGRESS_FILE``; optionally also ``POST /v1/runs/{run}/progress``).
- ``should_checkpoint()``: ``True`` once the checkpoint signal (SIGTERM by default) has arrived:
  save, then exit 0 before the grace ends (the runner sends SIGKILL after it).
- ``checkpoint_dir()``, ``save_checkpoint(step, write)``, ``latest_checkpoint()``: where to save and
  resume; saves are atomic (temporary name, then rename) and only the newest ``keep`` are kept.
- ``rank()``, ``world_size()``, ``local_rank()``, ``node_rank()``, ``master()``: the
  distributed-training variables as torchrun sets them.

Outside Astraeus (no ``ASTRAEUS_*`` variables) everything still works with clear defaults: rank 0
of a world of 1, checkpoints in ``./checkpoints`` (created on first use), no progress file, no
progress POST; the signal handler still turns SIGTERM (and Ctrl-C if asked) into a checkpoint.

Environment read (all optional; set by the Astraeus worker runner):

=============================  ==============================================================
``ASTRAEUS_RUN``               the run's name
``ASTRAEUS_WORKSPACE``         the run's workspace
``ASTRAEUS_WORKER``            this worker's 0-based index in the gang
``ASTRAEUS_WORKERS``           the number of workers in the gang
``ASTRAEUS_ATTEMPT``           the 1-based attempt number (a new placement is a new attempt)
``ASTRAEUS_CHECKPOINT_DIR``    the run's checkpoint directory, kept across attempts
``ASTRAEUS_PROGRESS_FILE``     this worker's progress file (one line: the step counter)
``ASTRAEUS_CHECKPOINT_SIGNAL`` the checkpoint signal's name or number (default ``SIGTERM``)
``ASTRAEUS_API``               the API's base URL (``http://host:8080`` or ``.../v1``); with
``ASTRAEUS_TOKEN``             a token, ``progress()`` also POSTs (at most every 10 s)
``MASTER_ADDR``/``MASTER_PORT`` / ``RANK`` / ``WORLD_SIZE`` / ``LOCAL_RANK`` / ``NODE_RANK``
                               as torchrun sets them
=============================  ==============================================================

Thread safety: call ``install_signal_handler()`` from the main thread (Python only allows signal
handlers there; ``should_checkpoint()`` installs it on first use when called from the main
thread). ``progress()`` and the checkpoint functions may be called from any thread, but not
concurrently for the same file or directory.

Errors: bad arguments raise ``ValueError``; a progress file or API that cannot be written is
reported once on stderr and never stops the training; checkpoint I/O errors raise ``OSError``
(the training code decides).
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import signal
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Callable, NamedTuple, Optional, Tuple

__all__ = [
    "Checkpoint", "attempt", "checkpoint_dir", "checkpoint_signals", "ignore_checkpoint_signals",
    "in_astraeus", "install_signal_handler", "is_main", "latest_checkpoint", "list_checkpoints",
    "local_rank", "master", "node_rank", "progress", "rank", "request_stop", "run_name",
    "save_checkpoint", "should_checkpoint", "signal_received", "signals_deferred",
    "stop_requested_at", "worker_index", "workers", "workspace", "world_size",
]

DEFAULT_CHECKPOINT_DIR = "checkpoints"
DEFAULT_KEEP = 3
PROGRESS_FILE_INTERVAL_S = 0.2
PROGRESS_POST_INTERVAL_S = 10.0
PROGRESS_POST_TIMEOUT_S = 2.0

# --------------------------------------------------------------------------------------------
# Environment


def _env_int(name: str, default: int, minimum: int = 0) -> int:
    """The integer in environment variable ``name``; ``default`` when unset or empty.

    Raises ValueError naming the variable when it is set but not an integer >= ``minimum``.
    """
    raw = os.environ.get(name, "").strip()
    if raw == "":
        return default
    try:
        value = int(raw, 10)
    except ValueError:
        raise ValueError(f"{name}={raw!r}: expected an integer") from None
    if value < minimum:
        raise ValueError(f"{name}={raw!r}: expected an integer >= {minimum}")
    return value


def in_astraeus() -> bool:
    """True when this process was launched by Astraeus (``ASTRAEUS_RUN`` is set)."""
    return os.environ.get("ASTRAEUS_RUN", "") != ""


def run_name() -> Optional[str]:
    """The run's name (``ASTRAEUS_RUN``), or None outside Astraeus."""
    return os.environ.get("ASTRAEUS_RUN") or None


def workspace() -> Optional[str]:
    """The run's workspace (``ASTRAEUS_WORKSPACE``), or None outside Astraeus."""
    return os.environ.get("ASTRAEUS_WORKSPACE") or None


def worker_index() -> int:
    """This worker's 0-based index in the gang (``ASTRAEUS_WORKER``, else ``RANK``, else 0)."""
    return _env_int("ASTRAEUS_WORKER", rank())


def workers() -> int:
    """The number of workers in the gang (``ASTRAEUS_WORKERS``, else ``WORLD_SIZE``, else 1)."""
    return _env_int("ASTRAEUS_WORKERS", world_size(), minimum=1)


def attempt() -> int:
    """The 1-based attempt number (``ASTRAEUS_ATTEMPT``; 1 outside Astraeus)."""
    return _env_int("ASTRAEUS_ATTEMPT", 1, minimum=1)


def rank() -> int:
    """The global rank (``RANK``; 0 when unset)."""
    return _env_int("RANK", 0)


def world_size() -> int:
    """The number of processes in the job (``WORLD_SIZE``; 1 when unset)."""
    return _env_int("WORLD_SIZE", 1, minimum=1)


def local_rank() -> int:
    """The index among this job's processes on this machine (``LOCAL_RANK``; 0 when unset)."""
    return _env_int("LOCAL_RANK", 0)


def node_rank() -> int:
    """The index of this machine slot in the job (``NODE_RANK``; 0 when unset)."""
    return _env_int("NODE_RANK", 0)


def is_main() -> bool:
    """True on rank 0 (the process that usually saves checkpoints and prints summaries)."""
    return rank() == 0


def master() -> Optional[Tuple[str, int]]:
    """``(MASTER_ADDR, MASTER_PORT)`` for the rendezvous, or None when either is unset.

    Raises ValueError when MASTER_PORT is not a port number (1..65535).
    """
    addr = os.environ.get("MASTER_ADDR", "")
    if addr == "" or os.environ.get("MASTER_PORT", "") == "":
        return None
    port = _env_int("MASTER_PORT", 0, minimum=1)
    if port > 65535:
        raise ValueError(f"MASTER_PORT={port}: expected a port number 1..65535")
    return addr, port


# --------------------------------------------------------------------------------------------
# Progress

_progress_lock = threading.Lock()
_last_written_step: Optional[int] = None
_last_write_time_s: Optional[float] = None
_pending_step: Optional[int] = None
_flush_registered = False
_last_post_time_s: Optional[float] = None
_warned = set()


def _warn_once(key: str, message: str) -> None:
    if key in _warned:
        return
    _warned.add(key)
    print(f"astraeus_worker: {message}", file=sys.stderr, flush=True)


def _write_atomically(path: Path, text: str) -> None:
    """Replaces ``path`` with ``text``: write a temporary file in the same directory, rename."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "w", encoding="ascii") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise


def _api_base() -> Optional[str]:
    api = os.environ.get("ASTRAEUS_API", "").strip().rstrip("/")
    if api == "" or os.environ.get("ASTRAEUS_TOKEN", "") == "" or not in_astraeus():
        return None
    return api if api.endswith("/v1") else api + "/v1"


def _post_progress(step: int) -> None:
    base = _api_base()
    if base is None:
        return
    url = f"{base}/runs/{urllib.parse.quote(run_name() or '', safe='')}/progress"
    if workspace():
        url += "?workspace=" + urllib.parse.quote(workspace() or "", safe="")
    body = json.dumps({"worker": worker_index(), "step": step}).encode("ascii")
    request = urllib.request.Request(url, data=body, method="POST", headers={
        "Authorization": "Bearer " + os.environ["ASTRAEUS_TOKEN"],
        "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=PROGRESS_POST_TIMEOUT_S) as response:
            response.read()
    except (urllib.error.URLError, OSError, ValueError) as error:
        _warn_once("post", f"progress POST to {url} failed ({error}); "
                           "the progress file still reports progress")


def _write_progress_file(path: str, step: int, now_s: float) -> None:
    global _last_written_step, _last_write_time_s, _pending_step
    try:
        _write_atomically(Path(path), f"{step}\n")
    except OSError as error:
        _warn_once("file", f"cannot write the progress file {path}: {error}")
    _last_written_step, _last_write_time_s, _pending_step = step, now_s, None


def _flush_pending() -> None:
    """Writes a step that ``progress()`` held back (runs at interpreter exit)."""
    with _progress_lock:
        path = os.environ.get("ASTRAEUS_PROGRESS_FILE", "")
        if path and _pending_step is not None:
            _write_progress_file(path, _pending_step, time.monotonic())


def progress(step: int, *, force: bool = False, post: bool = True) -> None:
    """Reports the step counter ``step`` (a count of steps, >= 0) in one call; call it every step.

    Atomically replaces ``ASTRAEUS_PROGRESS_FILE`` with ``"<step>\\n"`` (temporary file in the
    same directory, then rename), at most once every 0.2 s (``PROGRESS_FILE_INTERVAL_S``; a
    rename on ext4 costs milliseconds): a step reported sooner is held back and written by the
    next call after the interval, by ``progress(step, force=True)``, or at interpreter exit
    (``sys.exit``, end of the script; not after SIGKILL). The first report is written at once.
    When ``post`` is true and ``ASTRAEUS_API`` and ``ASTRAEUS_TOKEN`` are set, also POSTs
    ``{"worker": I, "step": step}`` to ``/v1/runs/{run}/progress``, at most once every 10 s
    (timeout 2 s). Without those variables it does nothing.
    Never raises for I/O: a failure is reported once on stderr. Raises ValueError when ``step``
    is not a non-negative integer.
    """
    global _last_post_time_s, _pending_step, _flush_registered
    if isinstance(step, bool):
        raise ValueError(f"progress(step={step!r}): expected a non-negative integer")
    if not isinstance(step, int):
        try:
            as_int = int(step)  # numpy / torch integer scalars
        except (TypeError, ValueError):
            raise ValueError(f"progress(step={step!r}): expected a non-negative integer") from None
        if as_int != step:
            raise ValueError(f"progress(step={step!r}): expected a non-negative integer")
        step = as_int
    if step < 0:
        raise ValueError(f"progress(step={step}): expected a non-negative integer")
    with _progress_lock:
        now_s = time.monotonic()
        path = os.environ.get("ASTRAEUS_PROGRESS_FILE", "")
        if path:
            if step == _last_written_step:
                _pending_step = None
            elif (force or _last_write_time_s is None
                  or now_s - _last_write_time_s >= PROGRESS_FILE_INTERVAL_S):
                _write_progress_file(path, step, now_s)
            else:
                _pending_step = step
                if not _flush_registered:
                    atexit.register(_flush_pending)
                    _flush_registered = True
        if post:
            if _last_post_time_s is None or now_s - _last_post_time_s >= PROGRESS_POST_INTERVAL_S:
                if _api_base() is not None:
                    _last_post_time_s = now_s
                    _post_progress(step)


# --------------------------------------------------------------------------------------------
# The checkpoint signal

_stop_signal: Optional[int] = None
_stop_time_s: Optional[float] = None
_installed: Tuple[int, ...] = ()


def checkpoint_signals() -> Tuple[int, ...]:
    """The signals that ask for a checkpoint: ``ASTRAEUS_CHECKPOINT_SIGNAL`` (a name such as
    ``SIGUSR1``/``USR1`` or a number; default SIGTERM) and always SIGTERM.

    Raises ValueError for an unknown signal name or number.
    """
    raw = os.environ.get("ASTRAEUS_CHECKPOINT_SIGNAL", "").strip()
    signals = [signal.SIGTERM]
    if raw:
        if raw.isdigit():
            try:
                chosen = signal.Signals(int(raw))
            except ValueError:
                raise ValueError(f"ASTRAEUS_CHECKPOINT_SIGNAL={raw!r}: unknown signal") from None
        else:
            name = raw.upper() if raw.upper().startswith("SIG") else "SIG" + raw.upper()
            chosen = getattr(signal.Signals, name, None)
            if chosen is None:
                raise ValueError(f"ASTRAEUS_CHECKPOINT_SIGNAL={raw!r}: unknown signal")
        if chosen in (signal.SIGKILL, signal.SIGSTOP):
            raise ValueError(f"ASTRAEUS_CHECKPOINT_SIGNAL={raw!r}: cannot be caught")
        if chosen not in signals:
            signals.append(chosen)
    return tuple(int(s) for s in signals)


def _on_signal(signum: int, _frame: object) -> None:
    # Only sets the flag (and the time of the first signal): never raises, never does I/O, so
    # the training loop finishes its step and checkpoints from normal code.
    global _stop_signal, _stop_time_s
    if _stop_signal is None:
        _stop_signal = signum
        _stop_time_s = time.monotonic()


def install_signal_handler(also_interrupt: bool = False) -> Tuple[int, ...]:
    """Installs the handler that turns the checkpoint signal(s) into ``should_checkpoint()``.

    ``also_interrupt`` adds SIGINT (Ctrl-C) for interactive use. Returns the signal numbers
    handled. Idempotent. Must be called from the main thread (raises ValueError otherwise, as
    ``signal.signal`` does).
    """
    global _installed
    wanted = list(checkpoint_signals())
    if also_interrupt and signal.SIGINT not in wanted:
        wanted.append(int(signal.SIGINT))
    for signum in wanted:
        if signum not in _installed:
            signal.signal(signum, _on_signal)
    _installed = tuple(sorted(set(_installed) | set(wanted)))
    return _installed


def ignore_checkpoint_signals(_worker_id: object = None) -> None:
    """Makes this process ignore the checkpoint signals (SIG_IGN), for helper processes.

    The signal goes to the worker's whole process group, so helper processes (data loader
    workers, pre-processing pools) get it too and would die of it. Call this first thing in
    them, e.g. ``DataLoader(..., worker_init_fn=astraeus_worker.ignore_checkpoint_signals)``
    (the argument, a worker id, is ignored); the main process checkpoints and then shuts them
    down. Main thread of that process only.
    """
    for signum in checkpoint_signals():
        signal.signal(signum, signal.SIG_IGN)


class signals_deferred:
    """Context manager that holds the checkpoint signals back (``pthread_sigmask``) inside its
    block and delivers a signal that arrived meanwhile at its end (the flag is then set).

    For calls that fail on an interrupted system call instead of retrying, e.g. the rendezvous
    of ``torch.distributed.init_process_group``. Main thread only; a process stuck inside the
    block is still ended by the SIGKILL that follows the grace.
    """

    def __enter__(self) -> "signals_deferred":
        if not _installed:
            install_signal_handler()
        self._previous = signal.pthread_sigmask(signal.SIG_BLOCK, _installed)
        return self

    def __exit__(self, *_exc: object) -> None:
        signal.pthread_sigmask(signal.SIG_SETMASK, self._previous)


def should_checkpoint() -> bool:
    """True once a checkpoint signal has arrived (or ``request_stop()`` was called): save a
    checkpoint and exit 0 before the grace ends.

    Installs the signal handler on first use when called from the main thread. Cheap (a flag
    read): call it every step. In distributed training, agree across ranks (e.g. an all-reduce
    MAX of this flag) so that every rank stops at the same step.
    """
    if not _installed and threading.current_thread() is threading.main_thread():
        install_signal_handler()
    return _stop_signal is not None


def signal_received() -> Optional[int]:
    """The number of the first checkpoint signal received (0 for ``request_stop()``), or None."""
    return _stop_signal


def stop_requested_at() -> Optional[float]:
    """``time.monotonic()`` seconds when the stop was first requested, or None."""
    return _stop_time_s


def request_stop() -> None:
    """Asks for a checkpoint-and-stop from code (as if the signal had arrived; signal 0)."""
    global _stop_signal, _stop_time_s
    if _stop_signal is None:
        _stop_signal = 0
        _stop_time_s = time.monotonic()


# --------------------------------------------------------------------------------------------
# Checkpoints

_CHECKPOINT_NAME = re.compile(r"^step-(\d{1,18})(\.[A-Za-z0-9._-]+)?$")


class Checkpoint(NamedTuple):
    """A complete checkpoint: its path (file or directory) and the step it was saved at."""
    path: Path
    step: int


def checkpoint_dir(create: bool = True) -> Path:
    """The directory for checkpoints: ``ASTRAEUS_CHECKPOINT_DIR`` (per run, kept across
    attempts), else ``./checkpoints`` (relative to the working directory) outside Astraeus.

    Created (with parents) when ``create`` is true. Raises OSError when it cannot be created.
    """
    path = Path(os.environ.get("ASTRAEUS_CHECKPOINT_DIR", "") or DEFAULT_CHECKPOINT_DIR)
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path


def list_checkpoints(directory: Optional[os.PathLike] = None) -> list:
    """The complete checkpoints in ``directory`` (default ``checkpoint_dir()``), oldest step
    first, as ``Checkpoint`` values. Names are ``step-<N>[.suffix]``; temporary files (leading
    dot) and other names are ignored. An absent directory has none.
    """
    root = Path(directory) if directory is not None else checkpoint_dir(create=False)
    found = []
    try:
        entries = list(os.scandir(root))
    except FileNotFoundError:
        return []
    for entry in entries:
        match = _CHECKPOINT_NAME.match(entry.name)
        if match:
            found.append(Checkpoint(Path(entry.path), int(match.group(1))))
    found.sort(key=lambda c: (c.step, c.path.name))
    return found


def latest_checkpoint(directory: Optional[os.PathLike] = None) -> Optional[Checkpoint]:
    """The checkpoint with the highest step in ``directory`` (default ``checkpoint_dir()``), or
    None when there is none (a fresh run: start from step 0)."""
    found = list_checkpoints(directory)
    return found[-1] if found else None


def _fsync_path(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def save_checkpoint(step: int, write: Callable[[Path], object], *, suffix: str = ".pt",
                    keep: int = DEFAULT_KEEP,
                    directory: Optional[os.PathLike] = None) -> Path:
    """Saves the checkpoint of ``step`` atomically and keeps only the newest ``keep``.

    ``write(tmp_path)`` writes the checkpoint to ``tmp_path`` (a file, e.g.
    ``torch.save(state, tmp_path)``, or a directory it creates); it is then flushed to disk and
    renamed to ``<directory>/step-<step, 12 digits><suffix>``, so ``latest_checkpoint()`` never
    sees a half-written checkpoint. Older checkpoints beyond the newest ``keep`` (>= 1) are
    removed. Returns the final path. Raises ValueError for a bad step, suffix or keep; OSError
    (or whatever ``write`` raises) when saving fails, leaving earlier checkpoints untouched.
    """
    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        raise ValueError(f"save_checkpoint(step={step!r}): expected a non-negative integer")
    if suffix and not re.fullmatch(r"\.[A-Za-z0-9._-]+", suffix):
        raise ValueError(f"save_checkpoint(suffix={suffix!r}): expected '' or '.name'")
    if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
        raise ValueError(f"save_checkpoint(keep={keep!r}): expected an integer >= 1")
    root = Path(directory) if directory is not None else checkpoint_dir()
    root.mkdir(parents=True, exist_ok=True)
    final = root / f"step-{step:012d}{suffix}"
    tmp = root / f".{final.name}.tmp-{os.getpid()}"
    _remove(tmp)
    try:
        write(tmp)
        if not tmp.exists():
            raise OSError(f"save_checkpoint: write() created nothing at {tmp}")
        if tmp.is_file():
            _fsync_path(tmp)
        if final.is_dir() and not final.is_symlink():
            shutil.rmtree(final)  # os.replace cannot replace a non-empty directory
        os.replace(tmp, final)
    except BaseException:
        _remove(tmp)
        raise
    _fsync_path(root)
    for old in list_checkpoints(root)[:-keep]:
        _remove(old.path)
    return final


# --------------------------------------------------------------------------------------------
# A small command line for shell workloads: `python3 astraeus_worker.py progress 1200`.

def _main(argv: list) -> int:
    usage = ("usage: astraeus_worker.py progress STEP | latest-checkpoint | env\n"
             "  progress STEP        report the step counter (ASTRAEUS_PROGRESS_FILE)\n"
             "  latest-checkpoint    print the newest checkpoint's step and path, exit 1 if none\n"
             "  env                  print what this module reads from the environment")
    if len(argv) == 2 and argv[0] == "progress":
        try:
            step = int(argv[1], 10)
            progress(step)
        except ValueError:
            print(f"astraeus_worker: progress: bad step {argv[1]!r} "
                  "(expected a non-negative integer)", file=sys.stderr)
            return 2
        return 0
    if argv == ["latest-checkpoint"]:
        found = latest_checkpoint()
        if found is None:
            print(f"no checkpoint in {checkpoint_dir(create=False)}", file=sys.stderr)
            return 1
        print(f"{found.step} {found.path}")
        return 0
    if argv == ["env"]:
        where = master()
        print(f"run={run_name()} workspace={workspace()} worker={worker_index()}/{workers()} "
              f"attempt={attempt()} rank={rank()} world={world_size()} local_rank={local_rank()} "
              f"node_rank={node_rank()} master={where[0] + ':' + str(where[1]) if where else None} "
              f"checkpoint_dir={checkpoint_dir(create=False)} "
              f"progress_file={os.environ.get('ASTRAEUS_PROGRESS_FILE') or None}")
        return 0
    print(usage, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
