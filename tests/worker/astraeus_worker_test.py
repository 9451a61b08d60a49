"""Unit tests of python/astraeus_worker.py: real files, real signals to real child processes, a
real HTTP server on 127.0.0.1 for the optional progress POST.

Run: /usr/bin/python3 tests/worker/astraeus_worker_test.py -v   (standard library only)
"""

from __future__ import annotations

import http.server
import importlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import unittest
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[2]
MODULE_DIR = ROOT / "python"
sys.path.insert(0, str(MODULE_DIR))
import astraeus_worker  # noqa: E402

# The variables the module reads: cleared for every test so the caller's shell cannot leak in.
VARIABLES = ["ASTRAEUS_RUN", "ASTRAEUS_WORKSPACE", "ASTRAEUS_WORKER", "ASTRAEUS_WORKERS",
             "ASTRAEUS_ATTEMPT", "ASTRAEUS_CHECKPOINT_DIR", "ASTRAEUS_PROGRESS_FILE",
             "ASTRAEUS_CHECKPOINT_SIGNAL", "ASTRAEUS_API", "ASTRAEUS_TOKEN", "MASTER_ADDR",
             "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK", "NODE_RANK"]


def clean_env(**values: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in VARIABLES}
    env.update(values)
    return env


def fresh_module(**values: str):
    """The module reloaded (its state reset) under an environment holding only ``values``."""
    patcher = mock.patch.dict(os.environ, clean_env(**values), clear=True)
    patcher.start()
    return importlib.reload(astraeus_worker), patcher


def child(script: str, env: dict, cwd: str) -> subprocess.Popen:
    """A real Python child process running ``script`` with the module importable."""
    code = f"import sys; sys.path.insert(0, {str(MODULE_DIR)!r})\n" + textwrap.dedent(script)
    return subprocess.Popen([sys.executable, "-c", code], env=env, cwd=cwd, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)  # its own process group, as the runner does


def wait_for_line(process: subprocess.Popen, expected: str, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if line.strip() == expected:
            return
        if line == "" and process.poll() is not None:
            break
    process.kill()
    raise AssertionError(f"child never printed {expected!r}; stderr: {process.stderr.read()}")


class TempDirTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory(prefix="astraeus_worker_test.")
        self.dir = Path(self.tmp.name)
        self.patchers = []

    def tearDown(self) -> None:
        for patcher in reversed(self.patchers):
            patcher.stop()
        self.tmp.cleanup()

    def module(self, **values: str):
        module, patcher = fresh_module(**values)
        self.patchers.append(patcher)
        return module


class ProgressTest(TempDirTest):
    def test_writes_one_line_and_replaces_the_file(self) -> None:
        path = self.dir / "progress"
        aw = self.module(ASTRAEUS_PROGRESS_FILE=str(path))
        aw.progress(1200)
        self.assertEqual(path.read_bytes(), b"1200\n")
        inode = path.stat().st_ino
        aw.progress(1201, force=True)
        self.assertEqual(path.read_bytes(), b"1201\n")
        # Replaced by a rename (a new file), not rewritten in place: readers never see it empty.
        self.assertNotEqual(path.stat().st_ino, inode)
        self.assertEqual(sorted(p.name for p in self.dir.iterdir()), ["progress"])

    def test_writes_at_most_every_interval_and_the_last_step_at_exit(self) -> None:
        path = self.dir / "progress"
        aw = self.module(ASTRAEUS_PROGRESS_FILE=str(path))
        aw.progress(1)
        aw.progress(2)  # within 0.2 s of the first write: held back
        self.assertEqual(path.read_text(), "1\n")
        aw._last_write_time_s -= aw.PROGRESS_FILE_INTERVAL_S  # as if 0.2 s had passed
        aw.progress(3)
        self.assertEqual(path.read_text(), "3\n")
        # A child that reports 1..1000 as fast as it can and exits: far fewer than 1000 writes
        # (each write is a new inode... counted by the reader below) and the file ends at 1000.
        child_path = self.dir / "child-progress"
        process = child("""
            import os, sys, time, astraeus_worker as aw
            start = time.monotonic()
            writes, inode = 0, None
            for step in range(1, 1001):
                aw.progress(step)
                try:
                    now = os.stat(os.environ["ASTRAEUS_PROGRESS_FILE"]).st_ino
                except FileNotFoundError:
                    now = None
                if now != inode:
                    writes, inode = writes + 1, now
            elapsed = time.monotonic() - start
            print(writes, int(elapsed / aw.PROGRESS_FILE_INTERVAL_S) + 1)
            sys.exit(0)  # the held-back step 1000 is written at exit
        """, clean_env(ASTRAEUS_PROGRESS_FILE=str(child_path)), str(self.dir))
        out, err = process.communicate(timeout=30)
        self.assertEqual(process.returncode, 0, err)
        writes, most = (int(x) for x in out.split())
        self.assertGreaterEqual(writes, 1)
        self.assertLessEqual(writes, most)
        self.assertEqual(child_path.read_text(), "1000\n")

    def test_same_step_is_not_rewritten(self) -> None:
        path = self.dir / "progress"
        aw = self.module(ASTRAEUS_PROGRESS_FILE=str(path))
        aw.progress(7)
        inode = path.stat().st_ino
        aw.progress(7)
        self.assertEqual(path.stat().st_ino, inode)

    def test_reader_in_another_process_only_sees_whole_lines(self) -> None:
        # A real reader process polls the file while this process writes 0..N-1 as fast as it
        # can: every read is one complete line and the steps never go back.
        path = self.dir / "progress"
        aw = self.module(ASTRAEUS_PROGRESS_FILE=str(path))
        aw.progress(0)
        reader = child(f"""
            import time
            seen, bad, last = 0, 0, -1
            print("ready", flush=True)
            end = time.monotonic() + 30
            while time.monotonic() < end:
                try:
                    text = open({str(path)!r}).read()
                except FileNotFoundError:
                    bad += 1; continue
                if not text.endswith("\\n") or not text[:-1].isdigit():
                    bad += 1; continue
                step = int(text)
                if step < last: bad += 1
                last = step; seen += 1
                if step == 499: break
            print(seen, bad, last)
        """, clean_env(), str(self.dir))
        wait_for_line(reader, "ready")
        for step in range(1, 500):
            aw.progress(step, force=True)
        out, err = reader.communicate(timeout=40)
        seen, bad, last = (int(x) for x in out.split())
        self.assertEqual((bad, last), (0, 499), err)
        self.assertGreater(seen, 1)

    def test_without_astraeus_nothing_is_written(self) -> None:
        aw = self.module()
        cwd = os.getcwd()
        os.chdir(self.dir)
        try:
            aw.progress(5)
        finally:
            os.chdir(cwd)
        self.assertEqual(list(self.dir.iterdir()), [])

    def test_bad_steps_are_value_errors(self) -> None:
        aw = self.module(ASTRAEUS_PROGRESS_FILE=str(self.dir / "p"))
        for bad in (-1, 1.5, "12", True, None):
            with self.assertRaises(ValueError, msg=repr(bad)):
                aw.progress(bad)
        aw.progress(3.0)  # an integral float (e.g. a numpy scalar) is accepted
        self.assertEqual((self.dir / "p").read_text(), "3\n")

    def test_unwritable_file_warns_once_and_never_raises(self) -> None:
        missing = self.dir / "no" / "such" / "dir" / "progress"
        process = child("""
            import astraeus_worker as aw
            for step in range(5): aw.progress(step)
            print("ok")
        """, clean_env(ASTRAEUS_PROGRESS_FILE=str(missing)), str(self.dir))
        out, err = process.communicate(timeout=20)
        self.assertEqual((process.returncode, out), (0, "ok\n"))
        self.assertEqual(err.count("cannot write the progress file"), 1, err)

    def test_failed_rename_leaves_no_temporary(self) -> None:
        target = self.dir / "progress"
        target.mkdir()  # a directory cannot be replaced by a file
        (target / "x").write_text("")
        aw = self.module(ASTRAEUS_PROGRESS_FILE=str(target))
        with mock.patch("sys.stderr") as stderr:
            aw.progress(1)
            aw.progress(2, force=True)
        written = "".join(call.args[0] for call in stderr.write.call_args_list)
        self.assertEqual(written.count("cannot write the progress file"), 1, written)
        self.assertEqual(sorted(p.name for p in self.dir.iterdir()), ["progress"])

    def test_command_line_progress(self) -> None:
        path = self.dir / "p"
        env = clean_env(ASTRAEUS_PROGRESS_FILE=str(path))
        ok = subprocess.run([sys.executable, str(MODULE_DIR / "astraeus_worker.py"), "progress",
                             "42"], env=env, capture_output=True, text=True, timeout=20)
        self.assertEqual(ok.returncode, 0, ok.stderr)
        self.assertEqual(path.read_text(), "42\n")
        bad = subprocess.run([sys.executable, str(MODULE_DIR / "astraeus_worker.py"), "progress",
                              "-3"], env=env, capture_output=True, text=True, timeout=20)
        self.assertEqual(bad.returncode, 2)
        self.assertIn("bad step '-3'", bad.stderr)
        self.assertEqual(path.read_text(), "42\n")


class ProgressPostTest(TempDirTest):
    def setUp(self) -> None:
        super().setUp()
        self.requests = []
        requests = self.requests

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the http.server name)
                body = self.rfile.read(int(self.headers["Content-Length"]))
                requests.append((self.path, self.headers["Authorization"], json.loads(body)))
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b'{"run":"llm","workers":[]}')

            def log_message(self, *_args: object) -> None:
                pass

        self.server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"

    def tearDown(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        super().tearDown()

    def test_posts_worker_and_step_at_most_every_interval(self) -> None:
        aw = self.module(ASTRAEUS_RUN="llm", ASTRAEUS_WORKSPACE="ml team", ASTRAEUS_WORKER="1",
                         ASTRAEUS_API=self.base, ASTRAEUS_TOKEN="astx_secret",
                         ASTRAEUS_PROGRESS_FILE=str(self.dir / "p"))
        aw.progress(10)
        aw.progress(11, force=True)  # within 10 s of the first: file only
        self.assertEqual(self.requests, [
            ("/v1/runs/llm/progress?workspace=ml%20team", "Bearer astx_secret",
             {"worker": 1, "step": 10})])
        self.assertEqual((self.dir / "p").read_text(), "11\n")
        aw._last_post_time_s -= aw.PROGRESS_POST_INTERVAL_S  # as if 10 s had passed
        aw.progress(12)
        self.assertEqual(self.requests[-1][2], {"worker": 1, "step": 12})
        self.assertEqual(len(self.requests), 2)

    def test_base_url_with_v1_and_post_false(self) -> None:
        aw = self.module(ASTRAEUS_RUN="llm", ASTRAEUS_API=self.base + "/v1/",
                         ASTRAEUS_TOKEN="t")
        aw.progress(3, post=False)
        self.assertEqual(self.requests, [])
        aw.progress(4)
        self.assertEqual([r[0] for r in self.requests], ["/v1/runs/llm/progress"])

    def test_no_token_no_post(self) -> None:
        aw = self.module(ASTRAEUS_RUN="llm", ASTRAEUS_API=self.base)
        aw.progress(3)
        self.assertEqual(self.requests, [])

    def test_unreachable_api_warns_once(self) -> None:
        with socket.socket() as s:  # a port that nothing listens on
            s.bind(("127.0.0.1", 0))
            closed = f"http://127.0.0.1:{s.getsockname()[1]}"
        process = child("""
            import astraeus_worker as aw
            aw.progress(1); aw._last_post_time_s = None; aw.progress(2, force=True)
            print(open(aw.os.environ["ASTRAEUS_PROGRESS_FILE"]).read().strip())
        """, clean_env(ASTRAEUS_RUN="llm", ASTRAEUS_API=closed, ASTRAEUS_TOKEN="t",
                       ASTRAEUS_PROGRESS_FILE=str(self.dir / "p")), str(self.dir))
        out, err = process.communicate(timeout=20)
        self.assertEqual((process.returncode, out), (0, "2\n"), err)
        self.assertEqual(err.count("progress POST to"), 1, err)


LOOP_UNTIL_FLAG = """
    import signal, time, astraeus_worker as aw
    {setup}
    print("ready", flush=True)
    end = time.monotonic() + 20
    while not aw.should_checkpoint() and time.monotonic() < end:
        time.sleep(0.01)
    time.sleep(0.3)  # still alive (handler in place) when the test's later signals arrive
    print("flag", aw.should_checkpoint(), aw.signal_received(), flush=True)
"""


class SignalTest(TempDirTest):
    def run_child(self, setup: str, env: dict, signals: list) -> tuple:
        process = child(LOOP_UNTIL_FLAG.format(setup=setup), env, str(self.dir))
        wait_for_line(process, "ready")
        for signum in signals:
            process.send_signal(signum)
            time.sleep(0.05)
        out, err = process.communicate(timeout=20)
        return process.returncode, out, err

    def test_sigterm_sets_the_flag_and_the_process_exits_0(self) -> None:
        rc, out, err = self.run_child("aw.install_signal_handler()", clean_env(),
                                      [signal.SIGTERM])
        self.assertEqual((rc, out), (0, f"flag True {int(signal.SIGTERM)}\n"), err)

    def test_should_checkpoint_installs_the_handler_itself(self) -> None:
        rc, out, err = self.run_child("aw.should_checkpoint()", clean_env(), [signal.SIGTERM])
        self.assertEqual((rc, out), (0, f"flag True {int(signal.SIGTERM)}\n"), err)

    def test_without_the_handler_sigterm_kills(self) -> None:
        # The control: the same child without the module's handler dies of the signal.
        process = child("""
            import time
            print("ready", flush=True)
            time.sleep(20)
        """, clean_env(), str(self.dir))
        wait_for_line(process, "ready")
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=20)
        self.assertEqual(process.returncode, -signal.SIGTERM)

    def test_repeated_signals_never_raise_and_keep_the_first(self) -> None:
        env = clean_env(ASTRAEUS_CHECKPOINT_SIGNAL="USR1")
        rc, out, err = self.run_child("aw.install_signal_handler()", env,
                                      [signal.SIGUSR1, signal.SIGTERM, signal.SIGUSR1])
        self.assertEqual((rc, out, err), (0, f"flag True {int(signal.SIGUSR1)}\n", ""))

    def test_configured_signal_and_sigint(self) -> None:
        env = clean_env(ASTRAEUS_CHECKPOINT_SIGNAL="SIGUSR2")
        rc, out, err = self.run_child("aw.install_signal_handler(also_interrupt=True)", env,
                                      [signal.SIGINT])
        self.assertEqual((rc, out), (0, f"flag True {int(signal.SIGINT)}\n"), err)

    def test_signals_deferred_holds_the_signal_until_the_block_ends(self) -> None:
        process = child("""
            import os, signal, time, astraeus_worker as aw
            with aw.signals_deferred():
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.2)
                inside = aw.should_checkpoint()
            print(inside, aw.should_checkpoint(), aw.signal_received())
        """, clean_env(), str(self.dir))
        out, err = process.communicate(timeout=20)
        self.assertEqual((process.returncode, out), (0, f"False True {int(signal.SIGTERM)}\n"),
                         err)

    def test_helper_processes_ignore_the_signal_the_main_process_checkpoints(self) -> None:
        # The signal goes to the whole process group: a forked helper that called
        # ignore_checkpoint_signals() survives it, the main process sees the flag and ends it.
        process = child("""
            import os, signal, time, astraeus_worker as aw
            aw.install_signal_handler()
            read_end, write_end = os.pipe()
            helper = os.fork()
            if helper == 0:
                aw.ignore_checkpoint_signals(7)
                os.write(write_end, b"x")
                time.sleep(20)
                os._exit(0)
            os.read(read_end, 1)
            print("ready", flush=True)
            end = time.monotonic() + 20
            while not aw.should_checkpoint() and time.monotonic() < end:
                time.sleep(0.01)
            time.sleep(0.2)
            alive = os.waitpid(helper, os.WNOHANG) == (0, 0)
            os.kill(helper, signal.SIGKILL)
            os.waitpid(helper, 0)
            print("helper alive", alive, "flag", aw.should_checkpoint())
        """, clean_env(), str(self.dir))
        wait_for_line(process, "ready")
        os.killpg(process.pid, signal.SIGTERM)
        out, err = process.communicate(timeout=20)
        self.assertEqual((process.returncode, out), (0, "helper alive True flag True\n"), err)

    def test_request_stop(self) -> None:
        aw = self.module()
        self.assertFalse(aw.should_checkpoint())
        self.assertIsNone(aw.stop_requested_at())
        aw.request_stop()
        self.assertTrue(aw.should_checkpoint())
        self.assertEqual(aw.signal_received(), 0)
        self.assertIsNotNone(aw.stop_requested_at())

    def test_checkpoint_signal_names(self) -> None:
        cases = {"": (signal.SIGTERM,), "USR1": (signal.SIGTERM, signal.SIGUSR1),
                 "sigusr2": (signal.SIGTERM, signal.SIGUSR2), "SIGTERM": (signal.SIGTERM,),
                 str(int(signal.SIGUSR1)): (signal.SIGTERM, signal.SIGUSR1)}
        for raw, expected in cases.items():
            aw = self.module(ASTRAEUS_CHECKPOINT_SIGNAL=raw)
            self.assertEqual(aw.checkpoint_signals(), tuple(int(s) for s in expected), raw)
        for raw in ("FOO", "KILL", "SIGSTOP", "999"):
            aw = self.module(ASTRAEUS_CHECKPOINT_SIGNAL=raw)
            with self.assertRaisesRegex(ValueError, "ASTRAEUS_CHECKPOINT_SIGNAL", msg=raw):
                aw.checkpoint_signals()


class CheckpointTest(TempDirTest):
    def save_text(self, aw, step: int, **kwargs) -> Path:
        return aw.save_checkpoint(step, lambda tmp: Path(tmp).write_text(f"state {step}\n"),
                                  **kwargs)

    def test_save_latest_and_keep_newest(self) -> None:
        aw = self.module(ASTRAEUS_CHECKPOINT_DIR=str(self.dir / "ck"))
        self.assertIsNone(aw.latest_checkpoint())  # absent directory: a fresh run
        for step in (100, 200, 300, 400, 500):
            self.save_text(aw, step)
        names = sorted(p.name for p in (self.dir / "ck").iterdir())
        self.assertEqual(names, ["step-000000000300.pt", "step-000000000400.pt",
                                 "step-000000000500.pt"])  # keep=3, no temporary left
        latest = aw.latest_checkpoint()
        self.assertEqual(latest, aw.Checkpoint(self.dir / "ck" / "step-000000000500.pt", 500))
        self.assertEqual(latest.path.read_text(), "state 500\n")
        self.assertEqual([c.step for c in aw.list_checkpoints()], [300, 400, 500])

    def test_step_order_is_numeric_and_other_names_are_ignored(self) -> None:
        ck = self.dir / "ck"
        ck.mkdir()
        for name in ("step-9.pt", "step-10.pt", ".step-000000000099.pt.tmp-123", "notes.txt",
                     "step-x.pt", "step-50.pt.tmp~"):
            (ck / name).write_text("x")
        aw = self.module(ASTRAEUS_CHECKPOINT_DIR=str(ck))
        self.assertEqual([c.step for c in aw.list_checkpoints()], [9, 10])
        self.assertEqual(aw.latest_checkpoint().step, 10)

    def test_failed_write_leaves_earlier_checkpoints_and_no_temporary(self) -> None:
        aw = self.module(ASTRAEUS_CHECKPOINT_DIR=str(self.dir))

        def half_write(tmp: Path) -> None:
            Path(tmp).write_text("half")
            raise OSError("disk full")

        self.save_text(aw, 1)
        with self.assertRaisesRegex(OSError, "disk full"):
            aw.save_checkpoint(2, half_write)
        self.assertEqual([p.name for p in self.dir.iterdir()], ["step-000000000001.pt"])
        self.assertEqual(aw.latest_checkpoint().step, 1)
        with self.assertRaisesRegex(OSError, "created nothing"):
            aw.save_checkpoint(3, lambda tmp: None)

    def test_directory_checkpoints_and_resaving_a_step(self) -> None:
        aw = self.module(ASTRAEUS_CHECKPOINT_DIR=str(self.dir))

        def write_dir(tmp: Path, text: str) -> None:
            Path(tmp).mkdir()
            (Path(tmp) / "weights").write_text(text)

        aw.save_checkpoint(5, lambda tmp: write_dir(tmp, "a"), suffix="", keep=1)
        aw.save_checkpoint(5, lambda tmp: write_dir(tmp, "b"), suffix="", keep=1)
        aw.save_checkpoint(6, lambda tmp: write_dir(tmp, "c"), suffix="", keep=1)
        self.assertEqual([p.name for p in self.dir.iterdir()], ["step-000000000006"])
        self.assertEqual((self.dir / "step-000000000006" / "weights").read_text(), "c")

    def test_bad_arguments(self) -> None:
        aw = self.module(ASTRAEUS_CHECKPOINT_DIR=str(self.dir))
        for kwargs in ({"step": -1}, {"step": 1.0}, {"step": 1, "keep": 0},
                       {"step": 1, "suffix": "pt"}, {"step": 1, "suffix": "./x"}):
            with self.assertRaises(ValueError, msg=repr(kwargs)):
                aw.save_checkpoint(write=lambda tmp: Path(tmp).write_text("x"), **kwargs)
        self.assertEqual(list(self.dir.iterdir()), [])

    def test_default_directory_outside_astraeus(self) -> None:
        aw = self.module()
        cwd = os.getcwd()
        os.chdir(self.dir)
        try:
            self.assertEqual(aw.checkpoint_dir(create=False), Path("checkpoints"))
            self.assertFalse((self.dir / "checkpoints").exists())
            self.save_text(aw, 3)
        finally:
            os.chdir(cwd)
        self.assertTrue((self.dir / "checkpoints" / "step-000000000003.pt").is_file())

    def test_signal_checkpoint_and_resume_across_processes(self) -> None:
        # Attempt 1 counts steps, gets SIGTERM, saves its step and exits 0; attempt 2 resumes
        # from that step (not 0), counts to 30 and reports progress 30.
        script = """
            import json, sys, time, astraeus_worker as aw
            latest = aw.latest_checkpoint()
            step = json.loads(latest.path.read_text())["step"] if latest else 0
            print("resumed", step, flush=True)
            print("ready", flush=True)
            while step < int(sys.argv[1]):
                if aw.should_checkpoint():
                    aw.save_checkpoint(step, lambda tmp: tmp.write_text(json.dumps({"step": step})),
                                       suffix=".json")
                    print("saved", step, flush=True)
                    sys.exit(0)
                step += 1
                aw.progress(step)
                time.sleep(0.01)
            print("done", step, flush=True)
        """
        env = clean_env(ASTRAEUS_RUN="r", ASTRAEUS_CHECKPOINT_DIR=str(self.dir / "ck"),
                        ASTRAEUS_PROGRESS_FILE=str(self.dir / "progress"))
        code = f"import sys; sys.path.insert(0, {str(MODULE_DIR)!r})\n" + textwrap.dedent(script)
        first = subprocess.Popen([sys.executable, "-c", code, "100000"], env=env, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertEqual(first.stdout.readline(), "resumed 0\n")
        wait_for_line(first, "ready")
        deadline = time.monotonic() + 10
        while not (self.dir / "progress").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.1)
        first.send_signal(signal.SIGTERM)
        out, err = first.communicate(timeout=20)
        self.assertEqual(first.returncode, 0, err)
        saved = int(out.split()[-1])
        self.assertGreater(saved, 0)
        self.assertEqual(int((self.dir / "progress").read_text()), saved)
        second = subprocess.run([sys.executable, "-c", code, str(saved + 30)], env=env,
                                text=True, capture_output=True, timeout=20)
        self.assertEqual((second.returncode, second.stdout),
                         (0, f"resumed {saved}\nready\ndone {saved + 30}\n"), second.stderr)
        self.assertEqual((self.dir / "progress").read_text(), f"{saved + 30}\n")


class EnvironmentTest(TempDirTest):
    def test_torchrun_variables(self) -> None:
        aw = self.module(RANK="3", WORLD_SIZE="4", LOCAL_RANK="1", NODE_RANK="3",
                         MASTER_ADDR="10.0.0.5", MASTER_PORT="29500", ASTRAEUS_RUN="llm",
                         ASTRAEUS_WORKSPACE="ml", ASTRAEUS_WORKER="3", ASTRAEUS_WORKERS="4",
                         ASTRAEUS_ATTEMPT="2")
        self.assertEqual((aw.rank(), aw.world_size(), aw.local_rank(), aw.node_rank()),
                         (3, 4, 1, 3))
        self.assertEqual(aw.master(), ("10.0.0.5", 29500))
        self.assertEqual((aw.run_name(), aw.workspace(), aw.worker_index(), aw.workers(),
                          aw.attempt(), aw.in_astraeus(), aw.is_main()),
                         ("llm", "ml", 3, 4, 2, True, False))

    def test_every_exported_name_exists(self) -> None:
        aw = self.module()
        self.assertEqual([n for n in aw.__all__ if not hasattr(aw, n)], [])

    def test_defaults_outside_astraeus(self) -> None:
        aw = self.module()
        self.assertEqual((aw.rank(), aw.world_size(), aw.local_rank(), aw.node_rank(),
                          aw.worker_index(), aw.workers(), aw.attempt()), (0, 1, 0, 0, 0, 1, 1))
        self.assertEqual((aw.master(), aw.run_name(), aw.workspace(), aw.in_astraeus(),
                          aw.is_main()), (None, None, None, False, True))

    def test_bad_values_name_the_variable(self) -> None:
        for name, value in (("RANK", "x"), ("RANK", "-1"), ("WORLD_SIZE", "0"),
                            ("ASTRAEUS_ATTEMPT", "0"), ("LOCAL_RANK", "1.5")):
            aw = self.module(**{name: value})
            with self.assertRaisesRegex(ValueError, f"^{name}=", msg=name):
                {"RANK": aw.rank, "WORLD_SIZE": aw.world_size, "ASTRAEUS_ATTEMPT": aw.attempt,
                 "LOCAL_RANK": aw.local_rank}[name]()
        aw = self.module(MASTER_ADDR="h", MASTER_PORT="70000")
        with self.assertRaisesRegex(ValueError, "MASTER_PORT"):
            aw.master()


if __name__ == "__main__":
    unittest.main()
