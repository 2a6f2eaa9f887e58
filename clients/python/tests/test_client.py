"""The client against a real `retryd serve`."""

import time
import unittest
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import threading

from retryd import (Client, EnqueueRequest, RetrydApiError, RetrydUnreachableError, RetryPolicy, TaskWaitTimeoutError)

from .harness import Target, closed_port_url, service_url

QUICK = RetryPolicy(max_attempts=2, backoff_type="FIXED", initial_delay_ms=10, multiplier=1, max_delay_ms=10,
                    jitter_type="NONE")
"""Quick retries, so that the service's tasks end within a test."""

LATER = 3_600_000


class ClientAgainstTheService(unittest.TestCase):
    def setUp(self):
        self.client = Client(service_url())

    def target(self, *statuses, **options):
        target = Target(*statuses, **options)
        self.addCleanup(target.close)
        return target

    def test_enqueue_creates_then_replays_and_wait_sees_the_end(self):
        target = self.target(503, 200)
        request = EnqueueRequest(target_url=f"{target.url}/orders", method="POST", body={"sku": "A"}, policy=QUICK,
                                 idempotency_key=f"py-enqueue-{uuid.uuid4()}")
        first = self.client.enqueue_task(request)
        again = self.client.enqueue_task(request)
        self.assertEqual((first.outcome, again.outcome), ("created", "replayed"))
        self.assertEqual(again.task.task_id, first.task.task_id)
        ended = self.client.wait_for_task(first.task.task_id)
        self.assertEqual((ended.status, ended.attempt_number, ended.last_response_status), ("SUCCEEDED", 2, 200))
        received = target.requests()
        self.assertEqual(len(received), 2)
        self.assertEqual(received[1]["headers"]["idempotency-key"], request.idempotency_key)
        self.assertEqual(received[1]["body"], '{"sku":"A"}')

    def test_enqueue_without_a_key_gives_one_so_that_a_retry_finds_the_task(self):
        answer = self.client.enqueue_task(EnqueueRequest(target_url="http://127.0.0.1:9/never", method="GET",
                                                         delay_ms=LATER))
        self.addCleanup(self.client.cancel_task, answer.task.task_id)
        self.assertEqual(str(uuid.UUID(answer.task.idempotency_key)), answer.task.idempotency_key)

    def test_batch_gives_one_result_per_task_in_order(self):
        good = EnqueueRequest(target_url="http://127.0.0.1:9/batch", method="PUT", delay_ms=LATER)
        bad = EnqueueRequest(target_url="ftp://127.0.0.1/x", method="GET")
        results = self.client.enqueue_tasks([good, bad, good], return_minimal=True)
        self.assertEqual([r.status for r in results], [201, 400, 201])
        self.assertIsNotNone(results[0].task_id)
        self.assertIsNone(results[0].task)
        self.assertEqual(results[1].error.code, "VALIDATION_FAILED")
        full = self.client.enqueue_tasks([good])
        self.assertEqual(full[0].task.method, "PUT")

    def test_problems_are_typed_errors(self):
        with self.assertRaises(RetrydApiError) as caught:
            self.client.enqueue_task(EnqueueRequest(target_url="ftp://127.0.0.1/x", method="GET"))
        error = caught.exception
        self.assertEqual((error.status, error.code, error.errors[0].field), (400, "VALIDATION_FAILED", "targetUrl"))
        self.assertIn("targetUrl", error.detail)
        with self.assertRaises(RetrydApiError) as caught:
            self.client.get_task(str(uuid.uuid4()))
        self.assertEqual((caught.exception.status, caught.exception.code), (404, "NOT_FOUND"))

    def test_the_api_key_goes_as_a_bearer_token(self):
        with self.assertRaises(RetrydApiError) as caught:
            Client(service_url(), api_key="rtd_not_a_key").get_task(str(uuid.uuid4()))
        self.assertEqual((caught.exception.status, caught.exception.code), (401, "UNAUTHENTICATED"))

    def test_cancel_then_wait_sees_the_cancel(self):
        task = self.client.enqueue_task(EnqueueRequest(target_url="http://127.0.0.1:9/later", method="POST",
                                                       delay_ms=LATER)).task
        cancelled = self.client.cancel_task(task.task_id)
        self.assertEqual((cancelled.outcome, cancelled.task.status), ("cancelled", "CANCELLED"))
        self.assertEqual(self.client.wait_for_task(task.task_id, timeout_s=1).status, "CANCELLED")
        with self.assertRaises(RetrydApiError) as caught:
            self.client.cancel_task(task.task_id)
        self.assertEqual(caught.exception.status, 409)

    def test_wait_ends_with_the_task_as_last_read_when_time_runs_out(self):
        task = self.client.enqueue_task(EnqueueRequest(target_url="http://127.0.0.1:9/later", method="POST",
                                                       delay_ms=LATER)).task
        self.addCleanup(self.client.cancel_task, task.task_id)
        start = time.monotonic()
        with self.assertRaises(TaskWaitTimeoutError) as caught:
            self.client.wait_for_task(task.task_id, timeout_s=0.3)
        self.assertEqual(caught.exception.task.status, "PENDING")
        self.assertGreaterEqual(time.monotonic() - start, 0.29)

    def test_dead_letters_listed_and_replayed(self):
        target = self.target(400)
        task = self.client.enqueue_task(EnqueueRequest(target_url=f"{target.url}/dead", method="POST", body="x",
                                                       policy=QUICK)).task
        dead = self.client.wait_for_task(task.task_id)
        self.assertEqual(dead.status, "FAILED")
        page = self.client.list_dead_letters(status="FAILED", target_key=dead.target_key, limit=10)
        self.assertEqual([t.task_id for t in page.items], [dead.task_id])
        self.assertIsNotNone(page.items[0].dead_letter_reason)
        self.assertEqual([t.task_id for t in self.client.dead_letters(target_key=dead.target_key)], [dead.task_id])
        target.script(200)
        self.client.replay_task(dead.task_id)
        self.assertEqual(self.client.wait_for_task(dead.task_id).status, "SUCCEEDED")


class ClientRetries(unittest.TestCase):
    def test_it_retries_its_own_requests_on_503_honouring_retry_after(self):
        calls = []

        class Flaky(BaseHTTPRequestHandler):
            def do_GET(self):
                calls.append(self.path)
                if len(calls) == 1:
                    self.send_response(503)
                    self.send_header("Retry-After", "1")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = b'{"taskId":"t1"}'
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Flaky)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        slept = []
        client = Client(f"http://127.0.0.1:{server.server_address[1]}", sleep=slept.append)
        status, body = client._send("GET", "/retry-tasks/t1", repeatable=True)
        self.assertEqual((status, body, len(calls)), (200, {"taskId": "t1"}, 2))
        self.assertEqual(slept, [1.0])

    def test_an_unreachable_service_is_an_unreachable_error(self):
        client = Client(closed_port_url(), sleep=lambda s: None)
        with self.assertRaises(RetrydUnreachableError) as caught:
            client.get_task("t1")
        self.assertIn("refused", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
