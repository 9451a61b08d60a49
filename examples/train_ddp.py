#!/usr/bin/python3
"""A real PyTorch DistributedDataParallel training (CPU, gloo) that cooperates with Astraeus.

Every rank runs this script with the torchrun variables (MASTER_ADDR, MASTER_PORT, RANK,
WORLD_SIZE) that the Astraeus worker runner sets. It:
- resumes from the newest checkpoint in ASTRAEUS_CHECKPOINT_DIR (rank 0 reads it and broadcasts it,
  so only rank 0 needs to see the directory),
- trains a small regression model on deterministic data (the batch of step s on rank r depends only
  on --seed, s and r, so an interrupted and resumed run ends with the same weights as one that was
  never interrupted),
- reports its step counter after every step (astraeus_worker.progress),
- on the checkpoint signal (SIGTERM by default) makes every rank agree to stop at the same step (an
  all-reduce MAX of the stop flag before each step); rank 0 saves model + optimizer + step and every
  rank exits 0.

Lines printed on stdout (tests grep them):
  rank R world W master A:P
  resumed from step K            (or: no checkpoint in DIR: starting from step 0)
  checkpoint saved at step K     (rank 0; periodic with --checkpoint-every, and on the signal)
  stopped at step K by SIGTERM   (after the checkpoint signal)
  done at step N                 (all N steps done)
  final loss X checksum C        (rank 0; C = sum of all weights, printed with repr())
Exit codes: 0 done or stopped cleanly, 1 --fail-at-step or a failed collective, 2 bad arguments.

Run outside Astraeus (one process): /usr/bin/python3 examples/train_ddp.py --steps 50
"""

from __future__ import annotations

import argparse
import datetime
import os
import signal
import socket
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))
import astraeus_worker as aw  # noqa: E402  (the module lives in ../python)

# Catch the checkpoint signal before the (slow) torch import, so a stop that arrives while the
# process starts is a clean stop, not a death by SIGTERM.
aw.install_signal_handler()


def parse_args(argv: list) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="PyTorch DDP (gloo, CPU) example that checkpoints on the Astraeus signal")
    parser.add_argument("--steps", type=int, default=100, help="total steps to train (default 100)")
    parser.add_argument("--step-sleep", type=float, default=0.0, metavar="S",
                        help="seconds to sleep after each step, to make a run last (default 0)")
    parser.add_argument("--checkpoint-every", type=int, default=0, metavar="K",
                        help="rank 0 also saves every K steps (default 0: only on the signal)")
    parser.add_argument("--keep", type=int, default=3, help="checkpoints kept (default 3)")
    parser.add_argument("--fail-at-step", type=int, default=0, metavar="K",
                        help="the --fail-rank rank exits 1 instead of running step K (1-based)")
    parser.add_argument("--fail-rank", type=int, default=0, metavar="R",
                        help="the rank that fails with --fail-at-step (default 0)")
    parser.add_argument("--fail-attempt", type=int, default=0, metavar="A",
                        help="fail only in attempt A (ASTRAEUS_ATTEMPT; default 0: every attempt)")
    parser.add_argument("--timeout-s", type=float, default=60.0,
                        help="rendezvous and collective timeout in seconds (default 60)")
    parser.add_argument("--seed", type=int, default=0, help="model and data seed (default 0)")
    parser.add_argument("--batch", type=int, default=32, help="samples per rank per step")
    parser.add_argument("--log-every", type=int, default=0, metavar="N",
                        help="rank 0 prints the loss every N steps (default 0: never)")
    args = parser.parse_args(argv)
    if args.steps < 0:
        parser.error("--steps must be >= 0")
    if args.step_sleep < 0:
        parser.error("--step-sleep must be >= 0")
    if args.checkpoint_every < 0:
        parser.error("--checkpoint-every must be >= 0")
    if args.keep < 1:
        parser.error("--keep must be >= 1")
    if args.fail_at_step < 0 or args.fail_rank < 0 or args.fail_attempt < 0:
        parser.error("--fail-at-step, --fail-rank and --fail-attempt must be >= 0")
    if args.timeout_s <= 0:
        parser.error("--timeout-s must be > 0")
    if args.batch < 1:
        parser.error("--batch must be >= 1")
    return args


def say(text: str) -> None:
    print(text, flush=True)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main(argv: list) -> int:
    args = parse_args(argv)
    try:
        rank, world = aw.rank(), aw.world_size()
        where = aw.master()
    except ValueError as error:
        print(f"train_ddp: {error}", file=sys.stderr)
        return 2
    if rank >= world:
        print(f"train_ddp: RANK={rank} must be < WORLD_SIZE={world}", file=sys.stderr)
        return 2
    if where is None:
        if world > 1:
            print("train_ddp: MASTER_ADDR and MASTER_PORT must be set when WORLD_SIZE > 1",
                  file=sys.stderr)
            return 2
        where = ("127.0.0.1", free_port())  # one process outside Astraeus
        os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = where[0], str(where[1])
    say(f"rank {rank} world {world} master {where[0]}:{where[1]}")

    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    torch.set_num_threads(1)  # one core per worker: several workers share small machines
    timeout = datetime.timedelta(seconds=args.timeout_s)
    # A signal during the rendezvous would fail it (interrupted system call): hold it back.
    with aw.signals_deferred():
        dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=world,
                                timeout=timeout)

    torch.manual_seed(args.seed)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    # Resume: rank 0 reads the newest checkpoint and broadcasts it to every rank.
    directory = aw.checkpoint_dir()
    loaded = [None]
    if rank == 0:
        latest = aw.latest_checkpoint(directory)
        if latest is not None:
            loaded[0] = torch.load(latest.path)
    with aw.signals_deferred():
        dist.broadcast_object_list(loaded, src=0)
    state = loaded[0]
    step = 0
    if state is not None:
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        step = int(state["step"])
        say(f"resumed from step {step}")
    else:
        say(f"no checkpoint in {directory}: starting from step 0")
    ddp = DistributedDataParallel(model)
    loss_fn = torch.nn.MSELoss()

    def save(at_step: int) -> None:
        if rank != 0:
            return
        checkpoint = {"format": 1, "step": at_step, "world_size": world, "seed": args.seed,
                      "model": model.state_dict(), "optimizer": optimizer.state_dict()}
        aw.save_checkpoint(at_step, lambda tmp: torch.save(checkpoint, tmp), keep=args.keep,
                           directory=directory)
        say(f"checkpoint saved at step {at_step}")

    fails_here = (args.fail_at_step > 0 and rank == args.fail_rank
                  and args.fail_attempt in (0, aw.attempt()))
    stopped = False
    loss = torch.zeros(())
    aw.progress(step)
    try:
        while step < args.steps:
            # Every rank stops at the same step: MAX of the stop flags before each step.
            stop = torch.tensor([1 if aw.should_checkpoint() else 0], dtype=torch.int32)
            dist.all_reduce(stop, op=dist.ReduceOp.MAX)
            if int(stop.item()) != 0:
                stopped = True
                break
            if fails_here and step + 1 == args.fail_at_step:
                print(f"rank {rank} failing at step {step + 1} (--fail-at-step)",
                      file=sys.stderr, flush=True)
                return 1
            generator = torch.Generator().manual_seed((args.seed * 1_000_003 + step) * 4096 + rank)
            x = torch.randn(args.batch, 16, generator=generator)
            y = torch.sin(x.sum(dim=1, keepdim=True))
            optimizer.zero_grad()
            loss = loss_fn(ddp(x), y)
            loss.backward()  # DDP averages the gradients over the ranks here (all-reduce)
            optimizer.step()
            step += 1
            aw.progress(step)
            if args.log_every and step % args.log_every == 0 and rank == 0:
                say(f"step {step} loss {loss.item():.6f}")
            if args.checkpoint_every and step % args.checkpoint_every == 0:
                save(step)
            if args.step_sleep > 0:
                time.sleep(args.step_sleep)
    except RuntimeError as error:
        # A peer died (or the timeout passed) inside a collective. The weights are those of the
        # last completed step (the optimizer steps only after a successful all-reduce).
        print(f"rank {rank}: collective failed after step {step}: {error}", file=sys.stderr,
              flush=True)
        if aw.should_checkpoint():
            save(step)
            return 0
        return 1
    finally:
        # The last step now, not up to 0.2 s later: every way out (a failure too) leaves through
        # os._exit below, which skips the module's write at interpreter exit.
        aw.progress(step, force=True)

    if stopped:
        save(step)
        number = aw.signal_received()
        name = signal.Signals(number).name if number else "request"
        say(f"stopped at step {step} by {name}")
        dist.barrier()  # rank 0's checkpoint is on disk before anyone reports a clean stop
        return 0  # the process group is left to os._exit: see the end of this file

    say(f"done at step {step}")
    if rank == 0:
        checksum = float(sum(p.detach().double().sum() for p in model.parameters()))
        say(f"final loss {float(loss.item())!r} checksum {checksum!r}")
    dist.barrier()
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    # Every rank leaves through os._exit and none destroys its process group, on every way out:
    # - a rank that left a collective by a failure must not run the interpreter's teardown: gloo's
    #   threads are still joinable then and their destructor calls std::terminate, so the exit
    #   code would be 134 (SIGABRT) instead of ours, at random;
    # - a rank whose peer had already exited once hung for over 60 s after printing "done" (CI,
    #   stop 34), as far as we can tell in the gloo group's teardown (destroy_process_group, then
    #   the last reference dropped on return), which races with gloo's event loop. The barrier
    #   before each clean return is the only synchronization a clean stop needs.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
