#!/usr/bin/env python3
"""Builds an English-German parallel corpus from the message catalogues Debian packages ship.

    scripts/po-corpus.sh [OUT]        # downloads the packages with apt, then runs this
    scripts/po-corpus.py DEBS_DIR OUT # this part alone: .deb files in DEBS_DIR
    scripts/po-corpus.py --packages   # the packages it reads

Every package of PACKAGES ships German translations of its messages as compiled gettext
catalogues (usr/share/locale/de/LC_MESSAGES/*.mo). Each catalogue's (msgid, msgstr) pairs are
English-German sentence pairs. Kept: single-line pairs of translated text (msgstr set and not
equal to msgid) with 1 to 40 words a side, tabs and control characters out; plural forms as
their singular. The split is by catalogue, fixed (TEST and VALID below), so no catalogue's
phrasing leaks from training into evaluation; a source that occurs in the test or validation
split is dropped from training, and duplicates within a split are kept once (the first, in
catalogue order). Writes OUT/{train,valid,test}.tsv (source<TAB>target) and OUT/MANIFEST
(packages, versions, catalogues, counts).
"""

import gettext
import glob
import os
import subprocess
import sys
import tempfile

# Packages of Debian bookworm with German catalogues (in main, no non-free).
PACKAGES = [
    "apt", "bash", "binutils-common", "coreutils", "diffutils", "dpkg", "findutils",
    "gettext", "gettext-base", "git", "gnupg-l10n", "grep", "libapt-pkg6.0", "libc-l10n",
    "libdpkg-perl", "libglib2.0-data", "make", "man-db", "postgresql-15",
    "postgresql-client-15", "procps", "psmisc", "sed", "systemd", "tar", "wget",
    "util-linux-locales", "e2fsprogs-l10n", "nano", "sudo", "gawk", "bison", "cpio",
    "gzip",
]
# Catalogues held out (by .mo name): evaluation sees phrasing training never saw.
TEST = {"coreutils", "grep", "sed", "tar", "diffutils"}
VALID = {"findutils", "wget", "make"}
MAX_WORDS = 40


def catalogue_pairs(path):
    """(msgid, msgstr) pairs of one .mo file, kept as the module docstring says."""
    with open(path, "rb") as f:
        try:
            catalog = gettext.GNUTranslations(f)._catalog
        except (OSError, UnicodeDecodeError, IndexError, ValueError):
            return []  # a catalogue in another charset or damaged: left out, counted
    pairs = []
    for key, target in catalog.items():
        if isinstance(key, tuple):  # a plural form: keep the singular
            if key[1] != 0:
                continue
            key = key[0]
        source = key.split("\x00")[0]  # msgid_plural rides after a NUL
        if "\x04" in source:  # msgctxt
            source = source.split("\x04", 1)[1]
        if not source or not target or source == target:
            continue
        if any(c in s for s in (source, target) for c in "\t\n\r"):
            continue
        if any(ord(c) < 32 for s in (source, target) for c in s):
            continue
        if not (1 <= len(source.split()) <= MAX_WORDS and 1 <= len(target.split()) <= MAX_WORDS):
            continue
        pairs.append((source.strip(), target.strip()))
    return sorted(pairs)


def main(debs, out):
    os.makedirs(out, exist_ok=True)
    splits = {"train": [], "valid": [], "test": []}
    manifest = []
    with tempfile.TemporaryDirectory() as root:
        for deb in sorted(glob.glob(os.path.join(debs, "*.deb"))):
            subprocess.run(["dpkg-deb", "-x", deb, root], check=True)
            manifest.append("package " + os.path.basename(deb))
        for mo in sorted(glob.glob(os.path.join(root, "usr/share/locale/de/LC_MESSAGES/*.mo"))):
            name = os.path.basename(mo)[:-3]
            pairs = catalogue_pairs(mo)
            split = "test" if name in TEST else "valid" if name in VALID else "train"
            splits[split].extend(pairs)
            manifest.append(f"catalogue {name} {split} {len(pairs)}")
    held_out = {s for split in ("valid", "test") for s, _ in splits[split]}
    for split, pairs in splits.items():
        seen = set()
        with open(os.path.join(out, split + ".tsv"), "w", encoding="utf-8") as f:
            for source, target in pairs:
                if source in seen or (split == "train" and source in held_out):
                    continue
                seen.add(source)
                f.write(f"{source}\t{target}\n")
        manifest.append(f"split {split} {len(seen)}")
    with open(os.path.join(out, "MANIFEST"), "w", encoding="utf-8") as f:
        f.write("\n".join(manifest) + "\n")
    print("\n".join(m for m in manifest if m.startswith("split")))


if __name__ == "__main__":
    if sys.argv[1:] == ["--packages"]:
        print(" ".join(PACKAGES))
    elif len(sys.argv) == 3:
        main(sys.argv[1], sys.argv[2])
    else:
        sys.exit(__doc__)
