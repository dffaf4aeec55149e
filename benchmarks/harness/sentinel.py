"""An unisolated worker dies with the judge that started it.

Under bubblewrap the sandbox dies with the judge (`--die-with-parent`) and takes its whole pid
namespace with it. An unisolated worker (a trusted baseline, or a candidate run with
`allow_unisolated`) has no namespace: once it runs a job, nothing used to stop it when the judge
died (a hanging candidate still spun 72 s after its judge was killed). So, first thing, such a
worker forks a sentinel: a tiny process in the worker's process group that checks every
`POLL_S` seconds that the judge (pid and start time) and the worker are both alive; when either
is gone it kills the whole process group: the worker, the candidate's forks that stayed in the
group, and itself.

Why a process and not the alternatives:
- `PR_SET_PDEATHSIG` fires when the *thread* that forked the worker exits, not the judge's
  process (the agent evaluates from threads); it kills only the worker, not the candidate's
  forks; and it cannot run any clean-up.
- A watchdog thread inside the worker needs the GIL, which a candidate stuck in C code (a long
  builtin loop) holds for as long as it likes.
A separate process has neither problem, costs about 10 MB shared with the worker (it is forked
before torch is imported) and a wake-up every `POLL_S` seconds.
"""

from __future__ import annotations

import os
import signal
import time

from benchmarks.harness import procfs

POLL_S = 0.1


def guard(judge: int) -> bool:
    """Fork the sentinel for this worker, which must lead its own process group. False when the
    judge `judge` is already gone (the caller should exit at once)."""
    seen = procfs.process_start(judge)
    if seen is None or os.getppid() != judge:
        return False
    worker, group = os.getpid(), os.getpgid(0)
    if group != worker:  # not a group of its own: killing the group would hit others
        return True
    if os.fork() != 0:
        return True
    try:  # the sentinel: never returns
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        while os.getppid() == worker and procfs.alive(judge, seen[1]):
            time.sleep(POLL_S)
        os.killpg(group, signal.SIGKILL)
    finally:
        os._exit(0)
