"""The client agrees with @retryd/core on every case of clients/shared/client-vectors.json, which core generates."""

import base64
import json
import math
import unittest

from retryd import (CREDENTIAL_HEADER_WORDS, DEFAULT_POLICY, DEFAULT_RETRYABLE_STATUS_CODES, IdempotencyKeyError,
                    RetryPolicy, canonical_json, compute_delay, derive_idempotency_key, is_credential_header,
                    parse_retry_after)
from retryd.normalise_url import normalise_url

from .harness import VECTORS

V = json.loads(VECTORS.read_text(encoding="utf-8"))


class IdempotencyKeys(unittest.TestCase):
    def test_every_key_is_cores(self):
        self.assertGreater(len(V["idempotencyKeys"]), 60)
        for case in V["idempotencyKeys"]:
            with self.subTest(case["name"]):
                body = case.get("body") or {}
                inputs = [body.get("text")]
                if "base64" in body:
                    inputs = [base64.b64decode(body["base64"])]
                if "json" in body:
                    # The data itself and its canonical text are one body.
                    self.assertEqual(canonical_json(body["json"]), body["canonical"])
                    inputs = [body["json"], body["canonical"]]
                for one in inputs:
                    try:
                        key = derive_idempotency_key(case["method"], case["url"], one)
                    except IdempotencyKeyError as error:
                        if case.get("mayRefuse") and error.not_derivable:
                            continue
                        raise
                    self.assertEqual(key, case["key"], f"URL written {normalise_url(case['url'])!r}")

    def test_what_core_refuses_gets_no_key(self):
        for case in V["invalidIdempotencyKeys"]:
            with self.subTest(case["name"]):
                with self.assertRaises(IdempotencyKeyError) as caught:
                    derive_idempotency_key(case["method"], case["url"])
                self.assertFalse(caught.exception.not_derivable)

    def test_canonical_json_writes_large_integers_as_javascript_does(self):
        self.assertEqual(canonical_json([2**60, 10**20, 10**21, -(2**53)]),
                         "[1152921504606847000,100000000000000000000,1e+21,-9007199254740992]")

    def test_canonical_json_refuses_what_javascript_would_change(self):
        for value, path in [({1: "a"}, "$"), ({"a": [1, {2**60}]}, "$.a[1]"), ({"n": 2**53 + 1}, "$.n")]:
            with self.subTest(path):
                with self.assertRaisesRegex(TypeError, path.replace("$", r"\$").replace("[", r"\[")):
                    canonical_json(value)


class Delays(unittest.TestCase):
    def test_every_delay_is_cores_to_within_a_rounding(self):
        self.assertGreater(len(V["delays"]), 100)
        for case in V["delays"]:
            schedule = RetryPolicy.from_wire({"maxAttempts": 1, **case["schedule"]})
            got = compute_delay(schedule, case["n"], case["previousDelayMs"], case["random"])
            # math.pow and JavaScript's Math.pow are not both correctly rounded (1.7 ** 7 differs in the last bit).
            self.assertTrue(math.isclose(got, case["delayMs"], rel_tol=1e-12, abs_tol=1e-12), f"{case}: {got}")


class RetryAfter(unittest.TestCase):
    def test_every_value_reads_as_core_reads_it(self):
        now_ms = V["retryAfter"]["nowMs"]
        for case in V["retryAfter"]["cases"]:
            with self.subTest(case["value"]):
                self.assertEqual(parse_retry_after(case["value"], now_ms), case["delayMs"])


class Defaults(unittest.TestCase):
    def test_defaults_and_credential_headers_are_cores(self):
        self.assertEqual(DEFAULT_POLICY, RetryPolicy.from_wire(V["defaultPolicy"]))
        self.assertEqual(list(DEFAULT_RETRYABLE_STATUS_CODES), V["defaultRetryableStatusCodes"])
        self.assertEqual(list(CREDENTIAL_HEADER_WORDS), V["credentialHeaders"]["words"])
        for case in V["credentialHeaders"]["cases"]:
            self.assertEqual(is_credential_header(case["name"]), case["credential"], case["name"])


if __name__ == "__main__":
    unittest.main()
