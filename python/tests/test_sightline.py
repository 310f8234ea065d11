"""CPU tests of the Python binding (python/sightline): each case runs a small program in a fresh
interpreter, since the C library reads its environment once, when it is loaded. Needs
SIGHTLINE_INSTRUMENT_LIB (the built libsightline_instrument.so); ctest sets it."""
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_ROOT = os.path.dirname(HERE)


def run(code, **env):
    full = dict(os.environ)
    full["PYTHONPATH"] = PACKAGE_ROOT + os.pathsep + full.get("PYTHONPATH", "")
    full.update(env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full,
                          capture_output=True, text=True, timeout=60)


@unittest.skipUnless(os.environ.get("SIGHTLINE_INSTRUMENT_LIB"), "SIGHTLINE_INSTRUMENT_LIB unset")
class Binding(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def test_iteration_and_request_logs(self):
        it_log = os.path.join(self.dir, "it.jsonl")
        rq_log = os.path.join(self.dir, "rq.jsonl")
        r = run("""
            import sightline
            assert sightline.available()
            for i in range(3):
                with sightline.iteration(i):
                    sightline.log_field("active_requests", 4 + i)
                    sightline.log("phase", "decode")
                    sightline.log("lr", 0.5)
                    sightline.request_event("req-1", sightline.TOKENS, 2)
            sightline.request_event("req-1", sightline.FINISHED)
            try:
                sightline.log_field("no_such_field", 1)
            except ValueError as e:
                print("rejected:", e)
            sightline.flush()
            """, SIGHTLINE_ITERATION_LOG=it_log, SIGHTLINE_REQUEST_LOG=rq_log)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("rejected: unknown iteration-log field 'no_such_field'", r.stdout)
        with open(it_log) as f:
            lines = [json.loads(l) for l in f]
        self.assertEqual([l["iteration"] for l in lines], [0, 1, 2])
        self.assertEqual(lines[2]["active_requests"], 6)
        self.assertEqual(lines[0]["user"], {"phase": "decode", "lr": 0.5})
        with open(rq_log) as f:
            events = [json.loads(l) for l in f]
        self.assertEqual([e["event"] for e in events], ["tokens"] * 3 + ["finished"])
        self.assertEqual([e.get("iteration") for e in events], [0, 1, 2, None])
        self.assertEqual(events[0]["tokens"], 2)
        self.assertEqual(events[0]["request"], "req-1")

    def test_gc_markers_wrap_each_collection(self):
        r = run("""
            import gc, sightline
            calls = []
            sightline.push = lambda name, lvl=1: calls.append(("push", name))
            sightline.pop = lambda lvl=1: calls.append(("pop",))
            assert sightline._on_gc in gc.callbacks  # SIGHTLINE_GC_MARKERS=1
            gc.collect()
            sightline.disable_gc_markers()
            gc.collect()
            print(calls)
            """, SIGHTLINE_GC_MARKERS="1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "[('push', 'Python GC'), ('pop',)]")

    def test_levels_follow_the_environment(self):
        r = run("""
            import sightline
            print(sightline.level(), sightline.enabled(sightline.VERBOSE))
            with sightline.range("x", level=sightline.VERBOSE):
                pass
            @sightline.range("decorated")
            def f():
                return 7
            print(f())
            """, SIGHTLINE_NVTX_LEVEL="2")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split(), ["2", "True", "7"])


class WithoutTheLibrary(unittest.TestCase):
    def test_every_call_is_a_no_op_with_one_warning(self):
        r = run("""
            import sightline
            assert not sightline.available()
            with sightline.iteration(1):
                sightline.log_field("active_requests", 1)
                sightline.request_event("r", sightline.ARRIVED)
                with sightline.range("x"):
                    pass
            print(sightline.level(), sightline.rank(), sightline.profiler_active())
            """, SIGHTLINE_INSTRUMENT_LIB="/nonexistent/libsightline_instrument.so",
            LD_LIBRARY_PATH="")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split(), ["0", "-1", "False"])
        self.assertEqual(r.stderr.count("libsightline_instrument not found"), 1)


if __name__ == "__main__":
    unittest.main()
