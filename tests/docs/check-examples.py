#!/usr/bin/env python3
# tests/docs/check-examples.py - docs/testing-with-injectd.md quotes each
# example file whole, after a marker line `<!-- file: PATH -->`: every
# quote must equal its file, and every file of docs/examples/ (but
# meson.build) must be quoted, so that what the vm suite runs
# (vm-docs-examples) is what the document shows.
#   check-examples.py DOC EXAMPLES-DIR
import pathlib
import re
import sys

doc_path, examples = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
root = examples.parent.parent
doc = doc_path.read_text()
quoted = {}
for m in re.finditer(r"^<!-- file: (\S+) -->\n```\w*\n(.*?)^```$", doc, re.M | re.S):
    quoted[m.group(1)] = m.group(2)
errors = []
for rel, text in quoted.items():
    f = root / rel
    if not f.is_file():
        errors.append(f"{doc_path.name} quotes '{rel}', which does not exist")
    elif f.read_text() != text:
        errors.append(f"{doc_path.name}'s quote of '{rel}' differs from the file: copy the file into the document")
for f in sorted(examples.iterdir()):
    rel = str(f.relative_to(root))
    if f.name != "meson.build" and rel not in quoted:
        errors.append(f"'{rel}' is not quoted in {doc_path.name} (after a line '<!-- file: {rel} -->')")
for e in errors:
    print(f"FAIL: {e}")
if not quoted:
    print(f"FAIL: no quoted example in {doc_path}")
    sys.exit(1)
print(f"{len(quoted)} examples quoted, {len(errors)} problems")
sys.exit(1 if errors else 0)
