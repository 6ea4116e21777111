#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks an API reference against what the running daemon says it serves.

    check-api-docs.py dbus [--varlink-idl FILE] DOC XML...
    check-api-docs.py varlink DOC IDL...

The docs (docs/dbus-api.md, docs/varlink-api.md) follow one format:

    ## Interface org.example.Name
    ### Methods            (D-Bus: Methods, Properties, Signals;
    #### `Member` ...        Varlink: Methods, Errors, Types)
    ```
    <the member's declaration>
    ```

Each member is a level-4 heading whose first word is its name in
backticks; the first fenced code block of its section is its declaration,
in the form the daemon's own description gives it:

    D-Bus method    Inject(in a{sv} spec, out s id, out o injection, out t expires_usec)
    D-Bus signal    InjectionAdded(s id, o injection)
    D-Bus property  readonly s Id
    Varlink         method Cancel(id: string, interactive: ?bool) -> ()

The daemon's side is `busctl introspect --xml-interface` output (D-Bus,
every interface named org.injectd.*) or the texts that
org.varlink.service.GetInterfaceDescription returned (Varlink, one file
per interface). Both directions are checked: every member the daemon has
is documented, every documented member exists, and declarations agree
(whitespace aside). With --varlink-idl, the D-Bus document must also name
exactly the errors that the Varlink interface declares, as
org.injectd.Injector1.Error.<Name>.

Prints one line per problem and exits 1 if there is any; 2 for bad usage.
"""

import re
import sys
import xml.etree.ElementTree as ET

DBUS_SECTIONS = {"Methods": "method", "Properties": "property", "Signals": "signal"}
VARLINK_SECTIONS = {"Methods": "method", "Errors": "error", "Types": "type"}
DBUS_PREFIX = "org.injectd."
DBUS_ERROR_PREFIX = "org.injectd.Injector1.Error."


def parse_doc(path, sections, problems):
    """{interface: {section: {member: {"line": n, "decl": text or None}}}}"""
    doc = {}
    iface = section = member = None
    fence = capture = None
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for n, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            if fence is None:
                fence = n
                if member is not None and member["decl"] is None:
                    capture = []
            else:
                if capture is not None:
                    member["decl"] = "\n".join(capture)
                fence = capture = None
            continue
        if fence is not None:
            if capture is not None:
                capture.append(line)
            continue
        m = re.match(r"^(#{1,6})\s+(.*?)\s*$", line)
        if not m:
            continue
        level, text = len(m.group(1)), m.group(2)
        if level <= 2:
            section = member = None
            mi = re.fullmatch(r"Interface\s+(\S+)", text) if level == 2 else None
            iface = mi.group(1) if mi else None
            if iface is not None:
                if iface in doc:
                    problems.append(f"{path}:{n}: '## Interface {iface}' appears twice")
                doc.setdefault(iface, {})
        elif level == 3:
            member = None
            section = text if iface is not None else None
            if section is not None:
                if section not in sections:
                    problems.append(f"{path}:{n}: unknown section '### {section}' in interface {iface} "
                                    f"(expected one of {', '.join(sections)})")
                doc[iface].setdefault(section, {})
        elif level == 4 and iface is not None:
            member = None
            if section is None or section not in sections:
                problems.append(f"{path}:{n}: member heading outside a "
                                f"{'/'.join(sections)} section of interface {iface}: {line}")
                continue
            mm = re.match(r"^`([A-Za-z_][A-Za-z0-9_]*)`", text)
            if not mm:
                problems.append(f"{path}:{n}: a member heading must start with the name in backticks: {line}")
                continue
            name = mm.group(1)
            if name in doc[iface][section]:
                problems.append(f"{path}:{n}: {iface}: `{name}` is documented twice under '### {section}'")
            member = doc[iface][section][name] = {"line": n, "decl": None}
    if fence is not None:
        problems.append(f"{path}:{fence}: unterminated code block")
    return doc


# ---- D-Bus ----------------------------------------------------------------

def dbus_norm(s):
    s = " ".join(s.split())
    return re.sub(r"\s*([(),])\s*", r"\1", s)


def dbus_from_xml(paths, problems):
    found = {}
    for path in paths:
        try:
            root = ET.parse(path).getroot()
        except (ET.ParseError, OSError) as e:
            problems.append(f"{path}: cannot parse the introspection XML: {e}")
            continue
        n = 0
        for it in root.findall("interface"):
            name = it.get("name", "")
            if not name.startswith(DBUS_PREFIX):
                continue
            n += 1
            members = {s: {} for s in DBUS_SECTIONS}
            for m in it.findall("method"):
                args = [f"{a.get('direction', 'in')} {a.get('type')} {a.get('name', '')}".strip()
                        for a in m.findall("arg")]
                members["Methods"][m.get("name")] = f"{m.get('name')}({', '.join(args)})"
            for s in it.findall("signal"):
                args = [f"{a.get('type')} {a.get('name', '')}".strip() for a in s.findall("arg")]
                members["Signals"][s.get("name")] = f"{s.get('name')}({', '.join(args)})"
            for p in it.findall("property"):
                access = {"read": "readonly", "write": "writeonly", "readwrite": "readwrite"}.get(
                    p.get("access"), p.get("access"))
                members["Properties"][p.get("name")] = f"{access} {p.get('type')} {p.get('name')}"
            if name in found and found[name] != members:
                problems.append(f"{path}: interface {name} differs from the same interface on another object")
            found[name] = members
        if n == 0:
            problems.append(f"{path}: no {DBUS_PREFIX}* interface in the introspection data")
    return found


# ---- Varlink --------------------------------------------------------------

def varlink_norm(s):
    s = re.sub(r"#[^\n]*", "", s)
    return re.sub(r"\s+", "", s)


def varlink_from_idl(paths, problems):
    found = {}
    for path in paths:
        with open(path, encoding="utf-8") as f:
            text = re.sub(r"#[^\n]*", "", f.read())
        # A declaration starts a line; a field may be called "error" or
        # "type" too, but is followed by ':', not by a Name and '('.
        chunks = re.split(r"(?m)^\s*(?=interface\s+[A-Za-z]|(?:type|method|error)\s+[A-Z][A-Za-z0-9]*\s*\()",
                          text)
        iface = None
        members = {s: {} for s in VARLINK_SECTIONS}
        kinds = {v: k for k, v in VARLINK_SECTIONS.items()}
        for c in chunks:
            c = c.strip()
            if not c:
                continue
            m = re.match(r"(interface|type|method|error)\s+([A-Za-z0-9_.-]+)", c)
            if not m:
                problems.append(f"{path}: cannot read the declaration '{c[:40]}'")
                continue
            if m.group(1) == "interface":
                iface = m.group(2)
            else:
                members[kinds[m.group(1)]][m.group(2)] = c
        if iface is None:
            problems.append(f"{path}: no 'interface' line in the description")
            continue
        found[iface] = members
    return found


# ---- comparing ------------------------------------------------------------

def compare(doc_path, doc, daemon, sections, norm, problems):
    counts = {s: 0 for s in sections}
    for iface in sorted(set(doc) | set(daemon)):
        if iface not in daemon:
            problems.append(f"{doc_path}: documents interface {iface}, which the daemon does not serve")
            continue
        if iface not in doc:
            problems.append(f"{doc_path}: the daemon serves interface {iface}, which is not documented "
                            f"(no '## Interface {iface}' heading)")
            continue
        for section, kind in sections.items():
            documented = doc[iface].get(section, {})
            actual = daemon[iface].get(section, {})
            for name in sorted(set(actual) - set(documented)):
                problems.append(f"{doc_path}: {iface}: the daemon's {kind} {name} is not documented "
                                f"(expected '#### `{name}`' under '## Interface {iface}' / '### {section}')")
            for name in sorted(set(documented) - set(actual)):
                problems.append(f"{doc_path}:{documented[name]['line']}: {iface}: `{name}` is documented "
                                f"under '### {section}', but the daemon has no such {kind}")
            for name in sorted(set(documented) & set(actual)):
                counts[section] += 1
                d = documented[name]
                want = " ".join(actual[name].split())
                if d["decl"] is None:
                    problems.append(f"{doc_path}:{d['line']}: {iface}: `{name}` has no code block with its "
                                    f"declaration; the daemon has: {want}")
                elif norm(d["decl"]) != norm(actual[name]):
                    problems.append(f"{doc_path}:{d['line']}: {iface}: `{name}` is documented as "
                                    f"'{' '.join(d['decl'].split())}', the daemon has '{want}'")
    return counts


def main(argv):
    if len(argv) < 3 or argv[0] not in ("dbus", "varlink"):
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    mode, args = argv[0], argv[1:]
    problems = []
    idl = None
    if mode == "dbus" and args[0] == "--varlink-idl":
        if len(args) < 4:
            print("check-api-docs.py: --varlink-idl FILE DOC XML...", file=sys.stderr)
            return 2
        idl, args = args[1], args[2:]
    doc_path, inputs = args[0], args[1:]

    if mode == "dbus":
        sections, norm = DBUS_SECTIONS, dbus_norm
        daemon = dbus_from_xml(inputs, problems)
    else:
        sections, norm = VARLINK_SECTIONS, varlink_norm
        daemon = varlink_from_idl(inputs, problems)
    doc = parse_doc(doc_path, sections, problems)
    counts = compare(doc_path, doc, daemon, sections, norm, problems)

    if idl is not None:
        errors = set()
        for members in varlink_from_idl([idl], problems).values():
            errors |= set(members["Errors"])
        with open(doc_path, encoding="utf-8") as f:
            named = set(re.findall(re.escape(DBUS_ERROR_PREFIX) + r"([A-Za-z0-9]+)", f.read()))
        for e in sorted(errors - named):
            problems.append(f"{doc_path}: the error {DBUS_ERROR_PREFIX}{e} (declared by the Varlink "
                            f"interface, the same on D-Bus) is not documented")
        for e in sorted(named - errors):
            problems.append(f"{doc_path}: documents the error {DBUS_ERROR_PREFIX}{e}, which the daemon "
                            f"does not have")
        if not errors:
            problems.append(f"{idl}: declares no errors")

    if not daemon:
        problems.append(f"the daemon's {mode} description has no interface to compare with")
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        return 1
    print(f"{doc_path}: {len(daemon)} interface(s), "
          + ", ".join(f"{n} {s.lower()}" for s, n in counts.items())
          + " match the daemon")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
