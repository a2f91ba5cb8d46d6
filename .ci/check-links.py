#!/usr/bin/env python3
"""Every relative link of README.md and docs/*.md resolves inside the repository.

For each Markdown link `[text](target)`, `[text](target#anchor)`, `![alt](target)` or reference
definition `[label]: target`, outside code blocks and code spans:

- http(s), mailto and other links with a scheme are allowed and not fetched;
- a relative target must name a file or folder that exists, without leaving the repository
  (no `..` past its root, no link out of it);
- an `#anchor`, on its own (this file) or after a Markdown file, must be the slug of one of that
  file's headings, made as GitHub makes it (lowercase; punctuation other than hyphens, spaces and
  underscores removed; spaces to hyphens; a repeated slug gets -1, -2, …). On another kind of
  file only GitHub's line anchors (#L10, #L10-L20) are taken.

Prints `file:line: broken link target (reason)` for each broken link and exits 1, or one line
`links: N checked, all resolve` and exits 0. Python 3 standard library only.
"""

import os
import re
import sys
import unicodedata
from urllib.parse import unquote

ROOT = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
INLINE_LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*(<[^>]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)")
REFERENCE_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
HTML_ANCHOR = re.compile(r"<a\s[^>]*?(?:name|id)\s*=\s*[\"']([^\"']+)[\"']", re.IGNORECASE)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
LINE_ANCHOR = re.compile(r"^L\d+(?:C\d+)?(?:-L\d+(?:C\d+)?)?$")


def markdown_files():
    files = []
    readme = os.path.join(ROOT, "README.md")
    if os.path.isfile(readme):
        files.append(readme)
    docs = os.path.join(ROOT, "docs")
    for folder, _, names in os.walk(docs):
        for name in sorted(names):
            if name.endswith(".md"):
                files.append(os.path.join(folder, name))
    return sorted(files, key=lambda path: (path != readme, path))


def prose_lines(text):
    """(line number, line) for every line outside fenced code blocks, code spans blanked."""
    fence = None
    for number, line in enumerate(text.splitlines(), start=1):
        opening = FENCE.match(line)
        if fence is None and opening:
            fence = opening.group(1)
            continue
        if fence is not None:
            closing = FENCE.match(line)
            if closing and closing.group(1)[0] == fence[0] and len(closing.group(1)) >= len(fence) \
                    and line.strip() == closing.group(1):
                fence = None
            continue
        yield number, CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line), line


def heading_text(raw):
    """A heading's text as GitHub renders it: code spans kept as text, links as their text,
    emphasis markers and inline HTML dropped."""
    text = CODE_SPAN.sub(lambda m: m.group(2).strip(), raw)
    text = re.sub(r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", "", text)
    return text


def slug(text):
    text = heading_text(text).strip().lower()
    kept = []
    for character in text:
        category = unicodedata.category(character)
        if character in " -_" or category[0] in "LMN":
            kept.append(character)
    return "".join(kept).replace(" ", "-")


def anchors_of(path, cache={}):
    if path in cache:
        return cache[path]
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    anchors, counts = set(), {}
    previous = None
    for _, blanked, line in prose_lines(text):
        for match in HTML_ANCHOR.finditer(line):
            anchors.add(match.group(1))
        title = None
        heading = ATX_HEADING.match(line)
        if heading:
            title = heading.group(2) or ""
        elif previous is not None and previous.strip() and SETEXT_UNDERLINE.match(line) \
                and not ATX_HEADING.match(previous) and not previous.lstrip().startswith(("-", "*", "|")):
            title = previous.strip()
        previous = line
        if title is None:
            continue
        base = slug(title)
        seen = counts.get(base, 0)
        counts[base] = seen + 1
        anchors.add(base if seen == 0 else f"{base}-{seen}")
    cache[path] = anchors
    return anchors


def inside_root(path):
    real = os.path.realpath(path)
    return real == ROOT or real.startswith(ROOT + os.sep)


def check(source, target):
    """None when `target`, linked from `source`, resolves; else why not."""
    if target.startswith("<") and target.endswith(">"):
        target = target[1:-1]
    if not target:
        return "empty target"
    if SCHEME.match(target) or target.startswith("//"):
        return None
    path_part, _, anchor = target.partition("#")
    path_part = unquote(path_part)
    anchor = unquote(anchor)
    if path_part:
        if path_part.startswith("/"):
            joined = os.path.join(ROOT, path_part.lstrip("/"))
        else:
            joined = os.path.join(os.path.dirname(source), path_part)
        normal = os.path.normpath(joined)
        if not (normal == ROOT or normal.startswith(ROOT + os.sep)):
            return "outside the repository"
        if not os.path.exists(normal):
            return "no such file"
        if not inside_root(normal):
            return "a link that leads outside the repository"
        destination = normal
    else:
        destination = source
    if not anchor:
        return None
    if os.path.isdir(destination):
        return "an anchor on a folder"
    if destination.endswith(".md"):
        if anchor not in anchors_of(destination):
            return f"no heading '#{anchor}' in {os.path.relpath(destination, ROOT)}"
        return None
    if LINE_ANCHOR.match(anchor):
        return None
    return f"anchor '#{anchor}' on a file that is not Markdown"


def main():
    checked, broken = 0, []
    for source in markdown_files():
        with open(source, encoding="utf-8") as handle:
            text = handle.read()
        relative = os.path.relpath(source, ROOT)
        for number, blanked, _ in prose_lines(text):
            targets = [match.group(2) for match in INLINE_LINK.finditer(blanked)]
            definition = REFERENCE_DEFINITION.match(blanked)
            if definition:
                targets.append(definition.group(1))
            for target in targets:
                checked += 1
                reason = check(source, target)
                if reason:
                    broken.append(f"{relative}:{number}: broken link {target} ({reason})")
    for line in broken:
        print(line)
    if broken:
        print(f"links: {checked} checked, {len(broken)} broken", file=sys.stderr)
        return 1
    print(f"links: {checked} checked, all resolve")
    return 0


if __name__ == "__main__":
    sys.exit(main())
