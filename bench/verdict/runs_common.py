"""What verdict_check.py and false_alarm.py share: a logged shell call and decode_loop's median."""
import re
import subprocess


def make_sh(log, keep=4000):
    """A function that runs a shell command, logs it with its exit code and output tail to `log`,
    and returns (exit code, output)."""
    def sh(cmd):
        p = subprocess.run(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, errors="replace")
        log.write(f"$ {cmd}\nrc={p.returncode}\n{p.stdout[-keep:]}\n")
        log.flush()
        return p.returncode, p.stdout
    return sh


def median_us(out):
    """decode_loop's last `median_iteration_us=` figure, or None."""
    m = re.findall(r"median_iteration_us=([0-9.]+)", out)
    return float(m[-1]) if m else None
