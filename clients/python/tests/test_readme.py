"""The README's examples parse, and import only what the package exports."""

import ast
import re
import unittest
from pathlib import Path

import retryd

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


class Readme(unittest.TestCase):
    def test_the_examples_parse_and_import_what_retryd_exports(self):
        blocks = re.findall(r"```python\n(.*?)```", README, re.S)
        self.assertGreaterEqual(len(blocks), 3)
        for block in blocks:
            tree = ast.parse(block)
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module == "retryd":
                    for alias in node.names:
                        self.assertIn(alias.name, retryd.__all__)


if __name__ == "__main__":
    unittest.main()
