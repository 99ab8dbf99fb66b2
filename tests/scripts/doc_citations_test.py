#!/usr/bin/env python3
"""Every "docs/NAME.md, "SECTION"" citation in the code names a heading that exists there.

The hardware catalogue's sources are held to this by HardwareCatalogue.SourcesCiteDocumentSections-
ThatExist; this holds the code to it: the sources under core/, ui/ and app/ (C++, CUDA, Python,
shell). A citation is a path docs/NAME.md followed by a comma or a space (or "section") and a quoted
section name, also where a comment wraps it over lines; a heading matches when it begins with the
quoted words, as in the catalogue's test. A path docs/NAME.md named anywhere must exist.

    doc_citations_test.py ROOT
"""
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FOLDERS = ("core", "ui", "app")
SUFFIXES = (".h", ".hpp", ".cpp", ".cu", ".py", ".sh")
PATH = re.compile(r"docs/([A-Za-z0-9_./-]+\.md)")
CITE = re.compile(r'docs/([A-Za-z0-9_./-]+\.md)(?:\'s)?(?:,\s*|\s+)(?:sections?\s+)?["\u201c]([^"\u201d]+)["\u201d]')
COMMENT_LEAD = re.compile(r"^\s*(?://+|#+|\*+|/\*+)?\s?")


def headings(doc, cache={}):
    if doc not in cache:
        path = os.path.join(ROOT, "docs", doc)
        found = None
        if os.path.isfile(path):
            found = []
            with open(path, encoding="utf-8") as f:
                for line in f:
                    if line.startswith("#"):
                        found.append(" ".join(line.lstrip("#").split()))
        cache[doc] = found
    return cache[doc]


def joined(text):
    """The file's lines without their comment leaders, joined by one space: a citation a comment
    wraps over two lines reads as one."""
    return " ".join(" ".join(COMMENT_LEAD.sub("", line, count=1).split()) for line in text.splitlines())


def main():
    problems, cited = [], 0
    for folder in FOLDERS:
        for base, _, files in os.walk(os.path.join(ROOT, folder)):
            for name in sorted(files):
                if not name.endswith(SUFFIXES):
                    continue
                path = os.path.join(base, name)
                rel = os.path.relpath(path, ROOT)
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                for m in PATH.finditer(text):
                    if headings(m.group(1)) is None:
                        problems.append("%s names docs/%s, which does not exist" % (rel, m.group(1)))
                for m in CITE.finditer(joined(text)):
                    doc, section = m.group(1), " ".join(m.group(2).split())
                    found = headings(doc)
                    if found is None:
                        continue  # said above
                    cited += 1
                    if not any(h.startswith(section) for h in found):
                        problems.append('%s cites docs/%s "%s", which has no such heading' % (rel, doc, section))
    for p in problems:
        print("FAIL: " + p)
    print("%d citations of a section checked, %d problems" % (cited, len(problems)))
    if cited < 20:
        print("FAIL: fewer than 20 citations found: the pattern no longer matches how the code cites")
        return 1
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
