"""The CI scripts .ci/watchdog and .ci/swift-test-shards, on stand-ins: processes named like a test binary and its
emulator, a fake gdb (Tests/ci/fake-gdb) and a fake test binary with Swift Testing's --filter/--skip
(Tests/ci/fake-xctest). Run by .ci/lint (a few seconds)."""

from __future__ import annotations

import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time
from typing import Dict, Iterator, List, Optional

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
WATCHDOG = str(ROOT / ".ci" / "watchdog")
SHARDS = str(ROOT / ".ci" / "swift-test-shards")
HERE = pathlib.Path(__file__).resolve().parent
# What the end of a CI log shows.
LOG_TAIL = 2500


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def gone(pid: int, seconds: float = 10.0) -> bool:
    """Waits (polling) until `pid` no longer runs; answers whether it ended within `seconds`."""
    deadline = time.monotonic() + seconds
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def read_pid(path: pathlib.Path, seconds: float = 10.0) -> int:
    deadline = time.monotonic() + seconds
    while not path.exists() or not path.read_text().strip():
        assert time.monotonic() < deadline, f"{path} never written"
        time.sleep(0.01)
    return int(path.read_text().split()[0])


@pytest.fixture
def leftovers() -> Iterator[List[int]]:
    """Pids a test started; killed at the end if a failing check left them running."""
    pids: List[int] = []
    yield pids
    for pid in pids:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


def env_with(path: str, **more: str) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_", "NATIVEAUTH_WATCHDOG"))}
    env.update(PATH=path, **more)
    return env


def named(tmp: pathlib.Path, name: str) -> str:
    """A copy of sleep called `name` (its process is named so: not plumbing, as a test binary's is)."""
    sleep = shutil.which("sleep")
    assert sleep
    target = tmp / name
    shutil.copy(sleep, target)
    return str(target)


def fake_path(tmp: pathlib.Path, gdb: bool) -> str:
    """A PATH with the fake gdb (or none), python3 and the few tools the commands here use: no swift (names stay
    undemangled), no real gdb."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    for tool in ("sh", "sleep", "setsid", "cat", "env"):
        found = shutil.which(tool)
        assert found, tool
        (bin_dir / tool).symlink_to(found)
    (bin_dir / "python3").symlink_to(sys.executable)
    if gdb:
        (bin_dir / "gdb").symlink_to(HERE / "fake-gdb")
    return str(bin_dir)


# .ci/watchdog


def watch(args: List[str], env: Optional[Dict[str, str]] = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, WATCHDOG] + args, capture_output=True, text=True, timeout=60, env=env)


def test_an_exit_status_and_a_signal_pass_through() -> None:
    assert watch(["30", "sh", "-c", "exit 3"]).returncode == 3
    # Killed by SIGSEGV: the watchdog ends by it too (make says "Segmentation fault", a shell 139), not 245.
    assert watch(["30", "sh", "-c", "kill -SEGV $$"]).returncode == -signal.SIGSEGV


def test_a_command_not_found_is_said_so_with_127() -> None:
    r = watch(["30", "no-such-command-here"])
    assert r.returncode == 127
    assert r.stderr.strip() == "watchdog: no-such-command-here: No such file or directory"
    r = watch(["30", "/etc/hostname"])
    assert r.returncode == 126 and "Traceback" not in r.stderr


def test_at_the_deadline_the_daemons_it_started_are_killed_too(tmp_path: pathlib.Path, leftovers: List[int]) -> None:
    pid_file = tmp_path / "daemon.pid"
    # The subshell starts a daemon (a session of its own) and exits: its parent is not under the command any more.
    p = subprocess.Popen([sys.executable, WATCHDOG, "0.5", "sh", "-c",
                          f"(setsid sleep 300 & echo $! > {pid_file}); exec sleep 300"],
                         stdout=subprocess.PIPE, text=True)
    daemon = read_pid(pid_file)
    leftovers.append(daemon)
    # A daemon left running would hold the output pipe open: communicate() would wait for it (the timeout fails).
    out, _ = p.communicate(timeout=60)
    assert p.returncode == 124
    assert f"pid {daemon} (sleep): sleep 300" in out
    assert gone(daemon), "the daemon outlived the watchdog's kill"


def test_sigterm_to_the_watchdog_ends_the_command_and_its_daemons(tmp_path: pathlib.Path,
                                                                  leftovers: List[int]) -> None:
    pid_file = tmp_path / "pids"
    p = subprocess.Popen([sys.executable, WATCHDOG, "600", "sh", "-c",
                          f"(setsid sleep 300 & echo $! > {pid_file}.daemon); echo $$ > {pid_file}; exec sleep 300"])
    command, daemon = read_pid(pid_file), read_pid(pathlib.Path(f"{pid_file}.daemon"))
    leftovers.extend([command, daemon])
    p.send_signal(signal.SIGTERM)
    assert p.wait(60) == -signal.SIGTERM
    assert gone(command), "the command was left running"
    assert gone(daemon), "the command's daemon was left running"


def test_the_stacks_summed_up_last_fit_the_end_of_a_ci_log(tmp_path: pathlib.Path, leftovers: List[int]) -> None:
    """A test binary with a child emulator (a higher pid), their 20 threads each in long-named project code: the
    end of the log names the test binary's threads, within what CI shows."""
    tests, emulator = named(tmp_path, "fake-tests"), named(tmp_path, "fake-emulator")
    r = watch(["0.5", "sh", "-c", f"{emulator} 300 & exec {tests} 300"], env_with(fake_path(tmp_path, gdb=True)))
    assert r.returncode == 124
    end = r.stdout.encode()[-LOG_TAIL:].decode(errors="replace")
    assert "(fake-tests), threads in the project's code:" in end, end
    last = end.split("(fake-tests), threads in the project's code:")[1].splitlines()
    assert "NativeAuthFlowTests" in last[1] and "more (above)" in last[-2], end
    assert last[-1].startswith("watchdog: killed sh -c")
    assert "(fake-emulator)" in r.stdout  # above, not in the end


def test_without_gdb_it_says_so(tmp_path: pathlib.Path) -> None:
    tests = named(tmp_path, "fake-tests")
    r = watch(["0.3", tests, "300"], env_with(fake_path(tmp_path, gdb=False)))
    assert r.returncode == 124
    assert "watchdog: gdb not found (PATH): no stacks" in r.stdout
    assert r.stdout.splitlines()[-1].startswith("watchdog: killed")


# .ci/swift-test-shards

REGEXES = ["NativeAuthEmulatorTests", r"NativeAuthFlowTests\.(Browser|Security)", "NativeAuthCoreTests"]


def shards(tmp: pathlib.Path, seconds: str, regexes: List[str], base: Optional[List[str]] = None,
           **fake: str) -> subprocess.Popen[str]:
    env = env_with(fake_path(tmp, gdb=True), FAKE_RECORD=str(tmp / "ran"), TMPDIR=str(tmp), **fake)
    base = ["--skip", "Launcher"] if base is None else base
    cmd = [sys.executable, SHARDS, seconds] + regexes + ["--", str(HERE / "fake-xctest")] + base
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)


def ran(tmp: pathlib.Path) -> List[str]:
    return sorted((tmp / "ran").read_text().split())


def temp_folders(tmp: pathlib.Path) -> List[str]:
    return [p.name for p in tmp.iterdir() if p.name.startswith("swift-test-shards.")]


def test_every_test_runs_in_exactly_one_shard(tmp_path: pathlib.Path) -> None:
    p = shards(tmp_path, "60", REGEXES)
    out, _ = p.communicate(timeout=60)
    assert p.returncode == 0, out
    everything = subprocess.run([str(HERE / "fake-xctest"), "--skip", "Launcher"], capture_output=True, text=True,
                                env=env_with(os.environ["PATH"], FAKE_RECORD=str(tmp_path / "once")))
    assert everything.returncode == 0
    assert ran(tmp_path) == sorted((tmp_path / "once").read_text().split())
    assert temp_folders(tmp_path) == []


def test_a_command_with_a_filter_of_its_own_is_refused(tmp_path: pathlib.Path) -> None:
    """Swift Testing ORs the filters: with one in COMMAND, every shard would run all it names (tests run twice)."""
    p = shards(tmp_path, "60", REGEXES, base=["--filter", "NativeAuth(Emulator|Core)Tests"])
    out, _ = p.communicate(timeout=60)
    assert p.returncode == 2, out
    assert "must not have a --filter" in out
    assert not (tmp_path / "ran").exists()


def children(tmp: pathlib.Path, leftovers: List[int]) -> List[int]:
    pids = [int(pid) for pid in (tmp / "ran.children").read_text().split()]
    leftovers.extend(pids)
    return pids


def test_a_crash_and_an_empty_shard_fail(tmp_path: pathlib.Path, leftovers: List[int]) -> None:
    """The crashed shard's child (an emulator) is not left running."""
    p = shards(tmp_path, "60", REGEXES + ["NoSuchModuleTests"], FAKE_CRASH="CacheTests", FAKE_CHILD="1")
    out, _ = p.communicate(timeout=60)
    assert all(gone(pid) for pid in children(tmp_path, leftovers)), "a shard's child was left running"
    assert p.returncode == 1
    assert "swift-test-shards: NativeAuthCoreTests: failed (killed by SIGSEGV)" in out
    assert "swift-test-shards: NoSuchModuleTests: failed (it ran no test)" in out
    assert "swift-test-shards: the rest: passed" in out


def test_a_hung_shard_ends_the_log_with_its_stacks(tmp_path: pathlib.Path, leftovers: List[int]) -> None:
    """The other shards' output (long) is printed after the hung one was killed: the end still says where it hung."""
    p = shards(tmp_path, "1", REGEXES, FAKE_HANG="RefreshTests", FAKE_NOISE="40")
    leftovers.append(read_pid(tmp_path / "ran.hung"))
    out, _ = p.communicate(timeout=60)
    assert p.returncode == 1
    end = out.encode()[-LOG_TAIL:].decode(errors="replace")
    assert "swift-test-shards: the rest: killed after 1 s (stacks above)" in end, end
    assert "killed; its threads in the project's code:" in end, end
    assert gone(leftovers[0])


def test_sigterm_stops_every_shard_and_cleans_up(tmp_path: pathlib.Path, leftovers: List[int]) -> None:
    p = shards(tmp_path, "600", REGEXES, FAKE_HANG="Tests", FAKE_CHILD="1")
    hung = tmp_path / "ran.hung"
    deadline = time.monotonic() + 30
    while len(hung.read_text().split() if hung.exists() else []) < len(REGEXES) + 1:  # every shard started its test
        assert time.monotonic() < deadline
        time.sleep(0.01)
    leftovers.extend(int(pid) for pid in hung.read_text().split())
    p.send_signal(signal.SIGTERM)
    out, _ = p.communicate(timeout=60)
    assert p.returncode == -signal.SIGTERM
    assert "stopped by SIGTERM" in out
    assert all(gone(pid) for pid in leftovers), "a shard was left running"
    assert all(gone(pid) for pid in children(tmp_path, leftovers)), "a shard's child was left running"
    assert temp_folders(tmp_path) == []
