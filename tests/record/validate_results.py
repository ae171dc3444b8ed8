#!/usr/bin/env python3
"""Validates results.json files against miniapp/record/results.schema.json.

    validate_results.py FILE|DIR...

A directory is searched for every results.json (or results.json.xz: scripts/compact_results.py
keeps the committed runs' large ones compressed) below it. Prints each file's errors (path in the
document, message) and exits 0 when every file is valid, 1 when one is not, 2 when a file cannot
be read or the validator is missing (Debian: python3-jsonschema, installed by
scripts/bootstrap-debian.sh). With MINIAPP_SCHEMA_CHECK=optional in the environment (gpu-run.sh
on a GPU node without it) a missing validator is a skip instead: said on stderr, exit 0.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "report"))
from miniapp_report import stored  # noqa: E402  (FILE or FILE.xz, as the project's readers open them)

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "miniapp", "record",
                      "results.schema.json")


def files_of(arguments):
    for a in arguments:
        if os.path.isdir(a):
            for root, _, names in sorted(os.walk(a)):
                if "results.json" in names or "results.json.xz" in names:
                    yield os.path.join(root, "results.json")  # opened plain, else as .xz: once where both are
        else:
            yield a


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) > 1 else 2
    try:
        import jsonschema
    except ImportError:
        why = "no jsonschema module for " + sys.executable + " (Debian: apt-get install python3-jsonschema)"
        if os.environ.get("MINIAPP_SCHEMA_CHECK") == "optional":  # gpu-run.sh on a node without it
            print("validate_results.py: skipped, " + why + "; MINIAPP_SCHEMA_CHECK=optional", file=sys.stderr)
            return 0
        print("validate_results.py: " + why, file=sys.stderr)
        return 2
    with open(SCHEMA) as f:
        schema = json.load(f)
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    validator = validator_class(schema)
    checked, invalid = 0, 0
    for path in files_of(argv[1:]):
        try:
            with stored.open_text(path) as f:
                document = json.load(f)
        except (OSError, ValueError) as e:
            print(f"{path}: cannot read: {e}", file=sys.stderr)
            return 2
        errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
        checked += 1
        if errors:
            invalid += 1
            for e in errors[:20]:
                where = "/".join(str(p) for p in e.absolute_path) or "(top level)"
                print(f"{path}: {where}: {e.message}", file=sys.stderr)
    if checked == 0:
        print("validate_results.py: no results.json found in " + " ".join(argv[1:]), file=sys.stderr)
        return 2
    print(f"{checked} results file(s) checked against {os.path.relpath(SCHEMA)}, {invalid} invalid")
    return 1 if invalid else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
