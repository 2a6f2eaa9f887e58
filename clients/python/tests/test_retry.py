"""retry(): the delays, the deadline and Retry-After, with an injected clock, sleep and random; and on real HTTP."""

import unittest
import urllib.error
import urllib.request

from retryd import RetryExhausted, compute_delay, retry
from retryd.types import RetryPolicy

from .harness import Target, closed_port_url


class Flaky:
    """Fails with ``errors`` in turn, then returns "done"; counts its calls."""

    def __init__(self, *errors):
        self.errors = list(errors)
        self.calls = 0

    def __call__(self):
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "done"


class FakeTime:
    """A clock that moves only when the code sleeps."""

    def __init__(self):
        self.now = 0.0
        self.slept = []

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds

    def clock(self):
        return self.now


class Status(Exception):
    def __init__(self, status, headers=None):
        super().__init__(f"status {status}")
        self.status = status
        self.headers = headers or {}


class Retry(unittest.TestCase):
    def run_retry(self, fn, **options):
        time = FakeTime()
        options.setdefault("random", lambda: 0.5)
        try:
            return retry(fn, sleep=time.sleep, clock=time.clock, **options), time
        finally:
            self.time = time

    def test_retries_until_it_succeeds_waiting_cores_delays(self):
        fn = Flaky(ConnectionRefusedError(), Status(503))
        result, time = self.run_retry(fn, max_attempts=3, base_delay=0.1, max_delay=10)
        self.assertEqual((result, fn.calls), ("done", 3))
        # Full jitter with a draw of 0.5: half of 100 ms, then half of 200 ms, as core's computeDelay gives them.
        self.assertEqual(time.slept, [0.05, 0.1])

    def test_each_jitter_is_cores(self):
        for jitter in ("none", "equal", "decorrelated", "FULL"):
            with self.subTest(jitter):
                fn = Flaky(TimeoutError(), TimeoutError())
                _, time = self.run_retry(fn, max_attempts=3, base_delay=0.2, max_delay=0.3, jitter=jitter, random=lambda: 0.25)
                policy = RetryPolicy(3, "EXPONENTIAL", 200, 2, 300, jitter.upper())
                first = compute_delay(policy, 1, 0, 0.25)
                self.assertEqual(time.slept, [first / 1000, compute_delay(policy, 2, first, 0.25) / 1000])

    def test_a_failure_not_worth_retrying_is_raised_as_it_is(self):
        fn = Flaky(Status(404))
        with self.assertRaises(Status):
            self.run_retry(fn)
        self.assertEqual((fn.calls, self.time.slept), (1, []))
        fn = Flaky(ValueError("a bug"))
        with self.assertRaises(ValueError):
            self.run_retry(fn)

    def test_gives_up_after_max_attempts_with_the_last_error(self):
        last = Status(500)
        fn = Flaky(Status(502), Status(503), last)
        with self.assertRaises(RetryExhausted) as caught:
            self.run_retry(fn, max_attempts=3)
        self.assertEqual((caught.exception.reason, caught.exception.attempts), ("max_attempts", 3))
        self.assertIs(caught.exception.last_error, last)
        self.assertIs(caught.exception.__cause__, last)

    def test_no_attempt_starts_past_the_deadline(self):
        time = FakeTime()

        def slow_failure():
            time.now += 0.1  # each attempt takes 100 ms
            raise Status(503)

        with self.assertRaises(RetryExhausted) as caught:
            retry(slow_failure, max_attempts=10, base_delay=1, max_delay=1, jitter="none", deadline_s=2.5,
                  sleep=time.sleep, clock=time.clock)
        # Waits of 1 s, 1 s, then the 0.2 s left: the fourth attempt starts at the deadline and ends past it.
        self.assertEqual([round(s, 9) for s in time.slept], [1, 1, 0.2])
        self.assertEqual((caught.exception.reason, caught.exception.attempts), ("budget", 4))

    def test_retry_after_replaces_the_delay_within_max_delay_and_the_deadline(self):
        fn = Flaky(Status(429, {"Retry-After": "3"}))
        _, time = self.run_retry(fn, max_delay=5)
        self.assertEqual(time.slept, [3])
        for options in ({"max_delay": 2}, {"max_delay": 5, "deadline_s": 2}):
            with self.subTest(options):
                fn = Flaky(Status(429, {"Retry-After": "3"}))
                with self.assertRaises(RetryExhausted) as caught:
                    self.run_retry(fn, **options)
                self.assertEqual((caught.exception.reason, self.time.slept), ("retry_after_beyond_budget", []))

    def test_a_predicate_of_ones_own(self):
        fn = Flaky(KeyError("busy"))
        result, _ = self.run_retry(fn, is_retryable=lambda e: isinstance(e, KeyError))
        self.assertEqual((result, fn.calls), ("done", 2))

    def test_parameters_that_break_a_rule_are_named(self):
        for options, name in [({"max_attempts": 0}, "max_attempts"), ({"base_delay": 0}, "base_delay"),
                              ({"base_delay": 2, "max_delay": 1}, "max_delay"), ({"deadline_s": -1}, "deadline_s"),
                              ({"jitter": "half"}, "jitter")]:
            with self.subTest(name):
                with self.assertRaisesRegex(ValueError, f"^{name} must"):
                    retry(lambda: None, **options)


class RetryOverHttp(unittest.TestCase):
    def test_urllib_errors_are_retried_on_a_real_server(self):
        target = Target(503, 502, 200)
        self.addCleanup(target.close)
        answer = retry(lambda: urllib.request.urlopen(target.url, timeout=5).read(), base_delay=0.001, max_delay=0.01)
        self.assertEqual((answer, len(target.requests())), (b'{"answer": 200}', 3))

    def test_a_refused_connection_is_retried(self):
        calls = []

        def call():
            calls.append(1)
            return urllib.request.urlopen(closed_port_url(), timeout=5)

        with self.assertRaises(RetryExhausted) as caught:
            retry(call, base_delay=0.001, max_delay=0.01)
        self.assertIsInstance(caught.exception.last_error, urllib.error.URLError)
        self.assertEqual(len(calls), 3)


if __name__ == "__main__":
    unittest.main()
