"""handoff(): the first try here, the retries in a real `retryd serve`."""

import unittest
from types import SimpleNamespace

from retryd import (Client, HandoffError, RetrydApiError, RetrydQueued, RetrydUnreachableError, RetryPolicy,
                    derive_idempotency_key, handoff)

from .harness import SECRET_VALUE, Target, closed_port_url, service_url

QUICK = RetryPolicy(max_attempts=2, backoff_type="FIXED", initial_delay_ms=10, multiplier=1, max_delay_ms=10,
                    jitter_type="NONE")


class Handoff(unittest.TestCase):
    def setUp(self):
        self.client = Client(service_url())

    def target(self, *statuses):
        target = Target(*statuses)
        self.addCleanup(target.close)
        return target

    def call(self, target, **options):
        return handoff(self.client, "post", f"{target.url}/charges", body={"amount": 5}, policy=QUICK,
                       headers={"Authorization": "Bearer caller-token", "X-Api-Key": "k-1", "Connection": "close"},
                       secrets={"authorization": "ORDERS_TOKEN"}, **options)

    def test_an_answer_that_succeeds_or_fails_for_good_comes_back_as_it_is(self):
        for status in (200, 400):
            with self.subTest(status):
                target = self.target(status)
                answer = self.call(target)
                self.assertEqual((answer.status, answer.body), (status, f'{{"answer": {status}}}'.encode()))
                self.assertEqual(len(target.requests()), 1)

    def test_a_retryable_failure_is_handed_to_retryd_with_the_same_key_and_no_credential(self):
        target = self.target(503)
        with self.assertRaises(RetrydQueued) as caught:
            self.call(target)
        queued = caught.exception
        self.assertEqual(queued.answer(), {"status": "queued", "taskId": queued.task_id})
        key = derive_idempotency_key("POST", f"{target.url}/charges", '{"amount":5}')
        self.assertEqual(target.requests()[0]["headers"]["idempotency-key"], key)
        self.assertEqual(queued.task.idempotency_key, key)
        target.script(200)
        ended = self.client.wait_for_task(queued.task_id)
        self.assertEqual(ended.status, "SUCCEEDED")
        first, by_retryd = target.requests()[0], target.requests()[-1]
        self.assertEqual(by_retryd["headers"]["idempotency-key"], key)
        self.assertEqual(by_retryd["headers"]["authorization"], SECRET_VALUE)
        self.assertNotIn("x-api-key", by_retryd["headers"])
        self.assertEqual(by_retryd["headers"]["content-type"], "application/json")
        self.assertEqual((first["body"], by_retryd["body"]), ('{"amount":5}', '{"amount":5}'))
        # The same call again is the same task.
        target.script(503)
        with self.assertRaises(RetrydQueued) as again:
            self.call(target)
        self.assertEqual(again.exception.task_id, queued.task_id)

    def test_no_answer_at_all_is_handed_over_too(self):
        url = closed_port_url()
        with self.assertRaises(RetrydQueued) as caught:
            handoff(self.client, "PUT", f"{url}/x", body="text", policy=QUICK)
        self.assertEqual(caught.exception.task.target_url, f"{url}/x")
        # Cancelled so that it stops calling the closed port; with the quick policy it may have used its attempts first.
        try:
            self.client.cancel_task(caught.exception.task_id)
        except RetrydApiError as refused:
            self.assertEqual(refused.code, "TASK_NOT_CANCELLABLE")
            self.assertEqual(self.client.get_task(caught.exception.task_id).status, "EXHAUSTED")

    def test_a_requests_style_send_fits(self):
        sent = []

        def send(method, url, *, headers, data):
            sent.append((method, url, headers, data))
            return SimpleNamespace(status_code=502, close=lambda: None)

        with self.assertRaises(RetrydQueued) as caught:
            handoff(self.client, "PATCH", "http://127.0.0.1:9/p", body=b"raw", send=send,
                    headers={"Idempotency-Key": "mine-42"}, policy_id="default")
        self.client.cancel_task(caught.exception.task_id)
        self.assertEqual(sent, [("PATCH", "http://127.0.0.1:9/p", {"Idempotency-Key": "mine-42"}, b"raw")])
        self.assertEqual(caught.exception.task.idempotency_key, "mine-42")

    def test_when_retryd_cannot_take_the_call_the_caller_is_told_both_errors(self):
        target = self.target(500)
        offline = Client(closed_port_url(), sleep=lambda s: None)
        with self.assertRaises(HandoffError) as caught:
            handoff(offline, "POST", target.url, body="x")
        self.assertIsInstance(caught.exception.__cause__, RetrydUnreachableError)
        self.assertEqual((caught.exception.status, caught.exception.call_error), (500, None))


if __name__ == "__main__":
    unittest.main()
