#!/usr/bin/env python3
"""The API reference of pmlab's public headers (include/pmlab), generated from their doc comments.

Every public declaration says its contract in the comment above it (or after it on its line, or above a group
of declarations with no blank line between them). This script writes docs/api.md from those comments and
fails on a public declaration that has none: private sections and `namespace detail` are not public.

    scripts/api_reference.py [--check] [INCLUDE_DIR] [OUT]
      (default: include/pmlab docs/api.md)   --check: exit 1 if OUT is not what would be written, or if a
                                               declaration is undocumented; otherwise write OUT
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
# The reference's order; a public header not named here follows them, in name order.
ORDER = ["pmlab.h", "version.h.in", "error.hpp", "ptm.hpp", "map.hpp", "log.hpp", "lockfree.hpp", "crash.hpp",
         "trace.h", "pmlab.hpp"]


def headers(include: pathlib.Path):
    present = {p.name for p in include.iterdir() if p.name.endswith((".h", ".hpp", ".h.in"))}
    return [n for n in ORDER if n in present] + sorted(present - set(ORDER))
SKIP_LINE = re.compile(r"^\s*(#\s*(include|ifndef|ifdef|if|endif|else|error|pragma)|(inline )?namespace\b.*\{|}\s*;?\s*(//.*)?$|"
                       r"extern \"C\" \{|(public|private|protected):|#\s*define\s+PMLAB_\w+_H(PP)?\s*$)")
KEEPS_COMMENT = re.compile(r'^\s*extern "C" \{')


def _strip_trailing_comment(line):
    code, _, comment = line.partition("//")
    return code.rstrip(), comment.strip()


def declarations(text, c_header=False):
    """(declaration, doc comment or None, line number) of each public declaration, in order."""
    lines = text.split("\n")
    out, comment, group_doc = [], [], None
    depth, hidden_depth = 0, None  # hidden_depth: the depth of a private section or namespace detail
    class_depths = []
    i = 0
    while i < len(lines):
        raw = lines[i]
        stripped = raw.strip()
        if stripped.startswith("/*"):  # a block comment, to its end
            block = [stripped]
            while "*/" not in lines[i]:
                i += 1
                block.append(lines[i].strip())
            comment = [re.sub(r"^/?\*+/?\s?|\s*\*/$", "", b).strip() for b in block]
            group_doc = None
            i += 1
            continue
        if stripped.startswith("//"):
            comment.append(stripped[2:].strip())
            group_doc = None
            i += 1
            continue
        if not stripped:
            comment, group_doc = [], None
            i += 1
            continue
        if re.match(r"(private|protected):", stripped) and class_depths:
            hidden_depth = depth
        elif stripped.startswith("public:"):
            hidden_depth = None if hidden_depth == depth else hidden_depth
        if stripped.startswith("namespace detail") and hidden_depth is None:
            hidden_depth = depth + 1
        if SKIP_LINE.match(raw):
            depth += raw.count("{") - raw.count("}")
            if hidden_depth is not None and depth < hidden_depth:
                hidden_depth = None
            while class_depths and depth < class_depths[-1]:
                class_depths.pop()
            if not (raw.strip().startswith("#") or KEEPS_COMMENT.match(raw)):
                comment = []
            i += 1
            continue
        # A statement: to its ';', or to the '{' that opens a body (skipped) or a class (entered).
        statement, first = [], i
        while True:
            code, trailing = _strip_trailing_comment(lines[i])
            statement.append(code.strip())
            joined = " ".join(statement)
            if joined.startswith("#define"):
                if not code.endswith("\\"):
                    break
            elif code.endswith(";") or code.endswith("{") or code.endswith("}") or code.endswith("};"):
                break
            i += 1
        joined = re.sub(r"\s+", " ", " ".join(statement)).replace("\\", "").strip()
        opens = joined.count("{") - joined.count("}")
        is_type = re.match(r"(template <[^>]*> )?(class|struct|enum)\b", joined) and opens > 0
        # An enum, or a C struct: shown whole, its members documented by the comments beside them.
        if is_type and (joined.startswith("enum") or c_header):
            level, body = opens, [lines[first].rstrip()]
            while level > 0:
                i += 1
                level += lines[i].count("{") - lines[i].count("}")
                body.append(lines[i].rstrip())
            doc = " ".join(comment) if comment else group_doc
            if hidden_depth is None:
                out.append(("\n".join(body), doc, first + 1))
            comment, group_doc = [], doc
            i += 1
            continue
        leading = " ".join(comment) if comment else None
        doc = leading or trailing or group_doc
        # Forward declarations and a polymorphic base's defaulted destructor say nothing to document.
        forward = re.fullmatch(r"(class|struct) \w+;|virtual ~\w+\(\) = default;", joined)
        if forward:
            comment = []
            i += 1
            continue
        if hidden_depth is None and not joined.startswith("friend ") and "= delete" not in joined and \
                not re.match(r"~?\w+\(.*\) noexcept;$", joined) or (is_type and hidden_depth is None):
            signature = joined.rstrip("{").strip() if opens > 0 else joined
            out.append((signature, doc, first + 1))
        # A leading comment documents the declarations after it up to a blank line; a trailing one its own.
        group_doc = leading or group_doc
        comment = []
        if opens > 0:
            if is_type:
                group_doc = None  # a type's comment is not its first member's
                depth += opens
                class_depths.append(depth)
                if joined.startswith("class "):
                    hidden_depth = hidden_depth if hidden_depth is not None else depth  # until public:
            else:  # a body: skip it
                level = opens
                while level > 0:
                    i += 1
                    level += lines[i].count("{") - lines[i].count("}")
        i += 1
    return out


def configured(text: str) -> str:
    """A CMake template's text as the build configures it: its @PROJECT_VERSION…@ from CMakeLists.txt."""
    found = re.search(r"project\(pmlab VERSION (\d+)\.(\d+)\.(\d+)", (ROOT / "CMakeLists.txt").read_text())
    if not found:
        return text
    major, minor, patch = found.groups()
    for name, value in (("PROJECT_VERSION_MAJOR", major), ("PROJECT_VERSION_MINOR", minor),
                        ("PROJECT_VERSION_PATCH", patch), ("PROJECT_VERSION", f"{major}.{minor}.{patch}")):
        text = text.replace(f"@{name}@", value)
    return text


def generate(include: pathlib.Path):
    sections, missing = [], []
    for name in headers(include):
        path = include / name
        shown = name.removesuffix(".in")
        text = configured(path.read_text()) if name.endswith(".in") else path.read_text()
        entries = declarations(text, c_header=name.endswith((".h", ".h.in")))
        body = [f"## `pmlab/{shown}`", ""]
        for signature, doc, line in entries:
            if not doc:
                missing.append(f"include/pmlab/{name}:{line}: {signature}")
                continue
            body += ["```", signature, "```", doc, ""]
        sections.append("\n".join(body))
    text = ("# API reference\n\nGenerated by `scripts/api_reference.py` from the doc comments of the public headers "
            "(`include/pmlab`); docs/library.md says how to use them. Do not edit by hand.\n\n" +
            "\n".join(sections))
    return text, missing


def main(argv):
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    include = pathlib.Path(args[0]) if args else ROOT / "include" / "pmlab"
    out = pathlib.Path(args[1]) if len(args) > 1 else ROOT / "docs" / "api.md"
    text, missing = generate(include)
    for m in missing:
        print(f"undocumented: {m}")
    if check:
        stale = not out.exists() or out.read_text() != text
        if stale:
            print(f"{out} is not current: run scripts/api_reference.py")
        return 1 if missing or stale else 0
    out.write_text(text)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
