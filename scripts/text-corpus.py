#!/usr/bin/env python3
"""Plain English text from Debian's documentation packages, for a language model of your own
text (docs/data.md#a-language-model-of-your-own-text).

  text-corpus.py --packages          the packages to download (scripts/text-corpus.sh does)
  text-corpus.py DEBS_DIR OUT_DIR    OUT_DIR/train.txt, valid.txt and MANIFEST

The training text is the Debian Reference (its own plain-text edition) and the Bash reference
manual; the validation text is the GNU coding standards. HTML becomes text with the standard
library's parser: paragraphs one per line, code blocks kept line by line, markup dropped; then
runs of spaces are folded and lines that are mostly rules or table borders dropped.
"""
import gzip
import hashlib
import html.parser
import os
import re
import subprocess
import sys
import tempfile

PACKAGES = ["debian-reference-en", "bash-doc", "gnu-standards"]
# (package, file inside it, split)
SOURCES = [
    ("debian-reference-en", "usr/share/debian-reference/debian-reference.en.txt.gz", "train"),
    ("bash-doc", "usr/share/doc/bash/bashref.html", "train"),
    ("gnu-standards", "usr/share/doc/gnu-standards/standards.html", "valid"),
]


class Text(html.parser.HTMLParser):
    """The text of an HTML page: block elements end lines, <pre> keeps its lines."""

    BLOCKS = {"p", "div", "br", "li", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6", "tr",
              "table", "pre", "blockquote", "hr", "ul", "ol", "dl"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.lines, self.line, self.pre, self.skip = [], [], 0, 0

    def flush(self):
        text = "".join(self.line)
        if not self.pre:
            text = re.sub(r"\s+", " ", text).strip()
        for l in text.split("\n"):
            if l.strip():
                self.lines.append(l.rstrip())
        self.line = []

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style", "head"):
            self.skip += 1
        if tag in self.BLOCKS:
            self.flush()
        if tag == "pre":
            self.pre += 1

    def handle_endtag(self, tag):
        if tag in ("script", "style", "head"):
            self.skip = max(0, self.skip - 1)
        if tag in self.BLOCKS:
            self.flush()
        if tag == "pre":
            self.pre = max(0, self.pre - 1)

    def handle_data(self, data):
        if not self.skip:
            self.line.append(data)


def prose(lines):
    """Lines of text as a reader sees them: runs of spaces folded (the plain-text edition
    indents and pads its tables), and lines that are mostly rules and table borders dropped."""
    out = []
    for l in lines:
        l = re.sub(r"\s+", " ", l).strip()
        if len(l) >= 2 and l.count("|") < 2 and sum(c.isalpha() for c in l) >= 0.4 * len(l):
            out.append(l)
    return out


def text_of(path):
    if path.endswith(".gz"):
        with gzip.open(path, "rt", encoding="utf-8") as f:
            return prose(f)
    parser = Text()
    with open(path, encoding="utf-8", errors="replace") as f:
        parser.feed(f.read())
    parser.close()
    parser.flush()
    return prose(parser.lines)


def main():
    if sys.argv[1:] == ["--packages"]:
        print(" ".join(PACKAGES))
        return
    debs, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    splits = {"train": [], "valid": []}
    manifest = []
    with tempfile.TemporaryDirectory() as tmp:
        for package, member, split in SOURCES:
            deb = next(os.path.join(debs, d) for d in sorted(os.listdir(debs))
                       if d.startswith(package + "_") and d.endswith(".deb"))
            subprocess.run(["dpkg-deb", "-x", deb, tmp], check=True)
            lines = text_of(os.path.join(tmp, member))
            splits[split] += lines
            manifest.append(f"{split}: {os.path.basename(deb)} {member} {len(lines)} lines")
    for split, lines in splits.items():
        path = os.path.join(out, split + ".txt")
        data = ("\n".join(lines) + "\n").encode("utf-8")
        with open(path + ".tmp", "wb") as f:
            f.write(data)
        os.replace(path + ".tmp", path)
        manifest.append(f"{split}.txt: {len(lines)} lines, {len(data)} bytes, "
                        f"sha256 {hashlib.sha256(data).hexdigest()}")
    with open(os.path.join(out, "MANIFEST"), "w") as f:
        f.write("\n".join(manifest) + "\n")
    print("\n".join(manifest))


if __name__ == "__main__":
    main()
