"""What a person sees: ``tracemine`` run in a terminal of a given width.

With tmux on the machine the command runs in a real pseudo-terminal of that size and the
pane is read back (``capture-pane``), as the screen shows it. Without tmux it runs as a
subprocess with ``COLUMNS`` set, which rich honours when it writes to a pipe."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROWS = 50


def screen(*args: str, columns: int, cwd: Path | None = None) -> str:
    """The lines ``tracemine ARGS`` leaves on a terminal ``columns`` wide, scrollback
    included, trailing blanks removed."""
    script = Path(sys.executable).with_name("tracemine")  # as installed, as a user runs it
    command = [str(script)] if script.exists() else [sys.executable, "-m", "tracemine"]
    command += args
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "TMUX")}
    if shutil.which("tmux") is None:
        done = subprocess.run(command, capture_output=True, text=True, cwd=cwd, timeout=300,
                              env={**env, "COLUMNS": str(columns), "NO_COLOR": "1"})  # fmt: skip
        return _tidy(done.stdout + done.stderr)
    with tempfile.TemporaryDirectory() as folder:
        tmux = ["tmux", "-S", str(Path(folder) / "socket"), "-f", os.devnull]
        # the shell signals when the command is over, so the pane is read once it is all there
        shell = f"{shlex.join(command)}; {shlex.join(tmux)} wait-for -S done; sleep 60"
        subprocess.run([*tmux, "new-session", "-d", "-x", str(columns), "-y", str(ROWS),
                        "-c", str(cwd or Path.cwd()), shell], check=True, env=env)  # fmt: skip
        try:
            subprocess.run([*tmux, "set-option", "-g", "history-limit", "10000"], check=True)
            subprocess.run([*tmux, "wait-for", "done"], check=True, timeout=300)
            shown = subprocess.run([*tmux, "capture-pane", "-p", "-S", "-", "-E", "-"],
                                   check=True, capture_output=True, text=True)  # fmt: skip
        finally:
            subprocess.run([*tmux, "kill-server"], capture_output=True)
    return _tidy(shown.stdout)


def _tidy(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())
