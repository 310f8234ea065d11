"""What the recorder's benchmark drivers share (overhead_bench.py, window_bench.py): a shell command
run with its output captured, its exit code and the tail of its output written to the log."""
import subprocess
import time


def run_logged(cmd, log, timeout=180, tail=3000):
    """Runs `cmd` in a shell; returns (exit code, stdout and stderr, seconds). 124 on a timeout."""
    t = time.time()
    try:
        p = subprocess.run(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, text=True, errors="replace")
        rc, out = p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        rc = 124
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
    secs = time.time() - t
    log.write(f"$ {cmd}   [rc={rc}, {secs:.1f}s]\n{out[-tail:]}\n")
    log.flush()
    return rc, out, secs
