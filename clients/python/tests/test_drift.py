"""The service's OpenAPI document is the contract: every field this client reads or sends is a property of the schema
it stands for, with a type that reads back (a field the document lets be null is Optional here); every property a
request schema requires is one the client can send; every route and parameter it calls is there."""

import dataclasses
import json
import types
import typing
import unittest
import urllib.request

from retryd.types import (TASK_STATUSES, BatchEntryResult, EnqueueRequest, FieldError, Problem, RetryPolicy, Task,
                          TaskPage, TaskSummary, TaskWait)
from retryd.wire import Wire, wire_name

from .harness import service_url

PY_TO_JSON = {str: "string", int: "integer", float: "number", bool: "boolean", dict: "object", list: "array"}


class Document:
    def __init__(self, doc):
        self.doc = doc
        self.schemas = doc["components"]["schemas"]

    def resolve(self, schema):
        if schema is None:
            return None
        if "$ref" in schema:
            return self.resolve(self.schemas[schema["$ref"].rsplit("/", 1)[1]])
        for alt in schema.get("anyOf", []) + schema.get("oneOf", []):
            if "$ref" in alt or "properties" in alt:
                return self.resolve(alt)
        return schema

    def types(self, schema):
        if "$ref" in schema:
            return self.types(self.resolve(schema))
        alts = schema.get("anyOf", []) + schema.get("oneOf", [])
        if alts:
            return set().union(*(self.types(a) for a in alts))
        kind = schema.get("type")
        return set(kind) if isinstance(kind, list) else {kind} if kind else set()

    def check(self, errors, where, cls, schema, request):
        schema = self.resolve(schema)
        properties = (schema or {}).get("properties")
        if properties is None:
            errors.append(f"{where}: the document has no object schema for {cls.__name__}")
            return
        hints = typing.get_type_hints(cls)
        names = set()
        for field in dataclasses.fields(cls):
            name = wire_name(field.name)
            names.add(name)
            if name not in properties:
                errors.append(f"{where}.{name}: the document's schema has no such property (it has {sorted(properties)})")
                continue
            self.check_type(errors, f"{where}.{name}", hints[field.name], properties[name], request)
        if request:
            for name in schema.get("required", []):
                if name not in names:
                    errors.append(f"{where}: the document requires {name}, which {cls.__name__} cannot send")

    def check_type(self, errors, where, hint, schema, request):
        allowed = self.types(schema)
        args = typing.get_args(hint)
        optional = typing.get_origin(hint) in (typing.Union, types.UnionType) and type(None) in args
        if optional:
            hint = next(a for a in args if a is not type(None))
        if "null" in allowed and not optional and not request and hint is not typing.Any:
            errors.append(f"{where}: the document lets it be null, the client reads it as {hint}")
        origin = typing.get_origin(hint) or hint
        if isinstance(origin, type) and issubclass(origin, Wire):
            self.check(errors, where, origin, schema, request)
            return
        want = PY_TO_JSON.get(origin)
        if want is None or not allowed:
            return
        if want not in allowed and not (want == "number" and "integer" in allowed):
            errors.append(f"{where}: the document says {sorted(allowed - {None})}, the client has {hint}")
        elif origin is list:
            (item,) = typing.get_args(hint)
            if isinstance(item, type) and issubclass(item, Wire):
                self.check(errors, f"{where}[]", item, self.resolve(schema)["items"], request)


class Drift(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        with urllib.request.urlopen(f"{service_url()}/openapi.json", timeout=30) as answer:
            cls.doc = Document(json.load(answer))

    def test_the_clients_fields_are_the_documents(self):
        s, errors = self.doc.schemas, []
        self.doc.check(errors, "EnqueueRequest", EnqueueRequest, s["EnqueueRequest"], True)
        self.doc.check(errors, "RetryPolicy", RetryPolicy, s["RetryPolicy"], True)
        for cls, schema in [(Task, s["Task"]), (TaskSummary, s["TaskSummary"]), (TaskPage, s["TaskPage"]),
                            (TaskWait, s["TaskWait"]), (Problem, s["Problem"]),
                            (FieldError, s["Problem"]["properties"]["errors"]["items"]),
                            (BatchEntryResult, s["BatchResult"]["properties"]["results"]["items"])]:
            self.doc.check(errors, cls.__name__, cls, schema, False)
        # The bodies the client writes and reads by hand.
        if "tasks" not in s["BatchRequest"]["properties"] or "results" not in s["BatchResult"]["properties"]:
            errors.append("BatchRequest.tasks or BatchResult.results is gone")
        self.assertEqual(errors, [])

    def test_the_statuses_are_the_documents(self):
        self.assertEqual(set(self.doc.schemas["Task"]["properties"]["status"]["enum"]), TASK_STATUSES)

    def test_the_routes_the_client_calls_are_the_documents(self):
        routes = [("post", "/retry-tasks", []), ("post", "/retry-tasks/batch", ["header:prefer"]),
                  ("get", "/retry-tasks/{taskId}", ["path:taskId", "query:waitMs"]),
                  ("delete", "/retry-tasks/{taskId}", ["path:taskId"]),
                  ("post", "/retry-tasks/{taskId}/replay", ["path:taskId"]),
                  ("get", "/dead-letters", ["query:status", "query:policyId", "query:targetKey", "query:cursor", "query:limit"])]
        for method, path, params in routes:
            with self.subTest(f"{method} {path}"):
                operation = self.doc.doc["paths"].get(path, {}).get(method)
                self.assertIsNotNone(operation, "not in the document")
                have = {f"{p['in']}:{p['name'].lower()}" for p in operation.get("parameters", [])}
                for param in params:
                    self.assertIn(param.lower(), have)


if __name__ == "__main__":
    unittest.main()
