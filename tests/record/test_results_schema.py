#!/usr/bin/env python3
"""miniapp/record/results.schema.json: the committed runs validate, broken files are refused, and
its lists of workloads and mirror policies are the binary's (`miniapp --list`), and so are the
Python side's names (scripts/report/miniapp_report/names.py), its spaces those of the one table
of spaces (cmake/MiniappSpaces.cmake).

    test_results_schema.py SOURCE_DIR MINIAPP_BINARY
"""
import copy
import json
import os
import re
import subprocess
import sys
import unittest

SOURCE, BINARY = sys.argv[1], sys.argv[2]
VALIDATOR = os.path.join(SOURCE, "tests", "record", "validate_results.py")
SCHEMA = os.path.join(SOURCE, "miniapp", "record", "results.schema.json")
SPACE_TABLE = os.path.join(SOURCE, "cmake", "MiniappSpaces.cmake")
sys.path.insert(0, os.path.join(SOURCE, "scripts", "report"))
from miniapp_report import names  # noqa: E402


def validate(*paths):
    r = subprocess.run([sys.executable, VALIDATOR, *paths], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


class ResultsSchema(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import jsonschema  # noqa: F401  (a missing module fails here, loudly)
        with open(SCHEMA) as f:
            cls.schema = json.load(f)
        # A real run to break in the refusal tests: one task of the committed thread-sweep fixture.
        cls.sample_path = os.path.join(SOURCE, "tests", "report", "fixtures", "thread-sweep", "threads-1",
                                       "results.json")
        with open(cls.sample_path) as f:
            cls.sample = json.load(f)

    def test_the_committed_runs_validate(self):
        roots = [os.path.join(SOURCE, "docs", "results"), os.path.join(SOURCE, "tests", "report", "fixtures")]
        code, out = validate(*roots)
        self.assertEqual(code, 0, out)
        self.assertRegex(out, r"[1-9][0-9]* results file\(s\) checked")

    def refused(self, mutate, expected):
        doc = copy.deepcopy(self.sample)
        mutate(doc)
        path = os.path.join(self.tmp, "results.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        code, out = validate(path)
        self.assertEqual(code, 1, out)
        self.assertRegex(out, expected)

    def setUp(self):
        import tempfile
        self.tmp = tempfile.mkdtemp(prefix="results-schema-")

    def tearDown(self):
        import shutil
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_broken_files_are_refused(self):
        self.refused(lambda d: d.update(schema="kokkos-miniapp-results/2"), r"schema")
        self.refused(lambda d: d.update(status="done"), r"status: 'done' is not one of")
        self.refused(lambda d: d["measurements"][0].pop("verification"), r"measurements/0.*'verification' is a required")
        self.refused(lambda d: d["measurements"][0]["seconds"]["total"].update(median=-1.0),
                     r"measurements/0/seconds/total/median")
        self.refused(lambda d: d["measurements"][0].update(policy="copy-sometimes"), r"measurements/0/policy")
        self.refused(lambda d: d["measurements"][0].update(size="64"), r"measurements/0/size")
        self.refused(lambda d: d.update(tasks=[]), r"'merged' is a dependency of 'tasks'")

    def test_an_unreadable_file_is_an_error_not_a_pass(self):
        path = os.path.join(self.tmp, "results.json")
        with open(path, "w") as f:
            f.write('{"schema": ')
        code, out = validate(path)
        self.assertEqual(code, 2, out)

    def test_lists_match_the_binary(self):
        listed = subprocess.run([BINARY, "--list"], capture_output=True, text=True, check=True).stdout
        policies = re.search(r"^mirror policies:\n((?:  .*\n)+)", listed, re.M).group(1)
        self.assertEqual([line.split(":")[0].strip() for line in policies.splitlines()],
                         self.schema["$defs"]["policy"]["enum"])
        workloads = re.search(r"^workloads [^\n]*\n((?:  .*\n)+)", listed, re.M).group(1)
        listed_workloads = sorted(line.split(":")[0].strip() for line in workloads.splitlines()
                                  if not line.startswith("    "))
        self.assertEqual(listed_workloads, sorted(self.schema["$defs"]["workload"]["enum"]))

    def test_python_names_match_the_tables(self):
        self.assertEqual(list(names.MIRROR_POLICIES), self.schema["$defs"]["policy"]["enum"])
        with open(SPACE_TABLE) as f:
            table = re.findall(r'^\s*"[A-Z]+\|([a-z]+)\|', f.read(), re.M)
        self.assertGreaterEqual(len(table), 5, "the table of spaces in cmake/MiniappSpaces.cmake was not read")
        python = [v for k, v in vars(names.Space).items() if not k.startswith("_")]
        self.assertEqual(sorted(python), sorted(table))
        self.assertEqual(sorted(names.HOST_SPACES + names.DEVICE_SPACES), sorted(table))
        listed = subprocess.run([BINARY, "--list"], capture_output=True, text=True, check=True).stdout
        compiled = re.search(r"^execution spaces compiled in:\n((?:  .*\n)+)", listed, re.M).group(1)
        for line in compiled.splitlines():
            space, kind = line.split()
            self.assertIn(space, names.HOST_SPACES if kind == "(host)" else names.DEVICE_SPACES, line)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]], verbosity=2)
