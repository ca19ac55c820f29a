#!/usr/bin/env bash
# The public API of the workspace's library crates, as rustdoc lists it: per crate (every
# package with a library target that is published; the `publish = false` packages are the
# tests, examples and test helpers), the number of items on target/doc/<crate>/all.html and
# each item's kind and path, sorted by path (the runtime with `mmap` and `f16`, its features but
# the webnn-graph bridge, where the revision has them). Items under #[doc(hidden)] are not listed; methods,
# fields and variants belong to their item and are not counted. A `pub use` that rustdoc does
# not inline (the item has a public path already, or is another crate) is not an item of
# all.html: such re-exports are listed after the items, as `use <path> = <target>`, uncounted.
#
# Usage: bash bench/public-api.sh [REV]
#   without REV: this checkout;
#   with REV (any git revision, e.g. b3eb4c3): that revision, checked out into a temporary git
#   worktree (removed afterwards) and documented there.
#
# Environment: CARGO_TARGET_DIR (default: target/ of this checkout). A revision is built in its
# public-api/ folder: cargo tells a workspace crate's files by their path in the workspace and
# their times, so a checkout whose files are older than another revision's build would be taken
# as built (a fresh worktree's files are newer than anything built there before).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
rev=${1:-}
src=$repo
target=${CARGO_TARGET_DIR:-$repo/target}
if [ -n "$rev" ]; then
  commit=$(git -C "$repo" rev-parse --verify "$rev^{commit}")
  src=$(mktemp -d "${TMPDIR:-/tmp}/public-api.XXXXXX")
  trap 'git -C "$repo" worktree remove --force "$src" >/dev/null 2>&1 || rm -rf "$src"' EXIT
  git -C "$repo" worktree add --detach --quiet "$src" "$commit"
  target=$target/public-api
fi
mkdir -p "$target"

# The published library crates: crate name (the library target's name) per line.
crates=$(cd "$src" && cargo metadata --no-deps --format-version 1 | python3 -c '
import json, sys
for p in json.load(sys.stdin)["packages"]:
    if p.get("publish") == []:
        continue
    for t in p["targets"]:
        if set(t["kind"]) & {"lib", "rlib", "proc-macro"}:
            print(t["name"].replace("-", "_"))
' | sort)

packages=()
for c in $crates; do packages+=(-p "${c//_/-}"); done
# The runtime's features `mmap` and `f16`, where the revision has them (older ones do not).
features=$(cd "$src" && cargo metadata --no-deps --format-version 1 | python3 -c '
import json, sys
for p in json.load(sys.stdin)["packages"]:
    if p["name"] == "webnn-weights-runtime":
        print(",".join("webnn-weights-runtime/" + f for f in ("mmap", "f16") if f in p["features"]))
')
if ! (cd "$src" && CARGO_TARGET_DIR=$target cargo doc --no-deps --lib "${packages[@]}" \
  ${features:+--features "$features"}) \
  >"$target/public-api.log" 2>&1; then
  cat "$target/public-api.log" >&2
  exit 1
fi

echo "public items per crate, ${rev:+revision $rev = }$(git -C "$src" rev-parse --short HEAD)"
for c in $crates; do
  python3 - "$target/doc/$c" "$c" <<'PY'
import html, os, re, sys
root, crate = sys.argv[1], sys.argv[2]
text = lambda fragment: html.unescape(re.sub(r"<[^>]+>", "", fragment)).strip()
page = open(os.path.join(root, "all.html"), encoding="utf-8").read()
# rustdoc's section titles, as item kinds.
kinds = {"Structs": "struct", "Enums": "enum", "Unions": "union", "Traits": "trait",
         "Trait Aliases": "trait-alias", "Macros": "macro", "Derive Macros": "derive",
         "Attribute Macros": "attr", "Functions": "fn", "Type Aliases": "type",
         "Constants": "const", "Statics": "static", "Primitives": "primitive",
         "Keywords": "keyword"}
items = []
for title, body in re.findall(r'<h3 id="[^"]*">(.*?)</h3>\s*<ul class="all-items">(.*?)</ul>',
                              page, re.S):
    kind = kinds.get(text(title), text(title))
    for name in re.findall(r"<li><a [^>]*>(.*?)</a></li>", body, re.S):
        items.append((text(name), kind))
print(f"\n{crate}: {len(items)}")
for name, kind in sorted(items):
    print(f"  {kind:<8} {name}")
# Re-exports on the module pages: the crate's index.html and those of the public modules it
# links (not every folder: rustdoc leaves the pages of a module removed since in place).
uses = []
modules = [""]
while modules:
    module = modules.pop()
    page = open(os.path.join(root, module, "index.html"), encoding="utf-8").read()
    prefix = module.replace("/", "::")
    for child in sorted(set(re.findall(r'<a class="mod" href="([A-Za-z0-9_]+)/index.html"', page))):
        modules.append(module + child + "/")
    for name, code in re.findall(r'<dt id="reexport\.([^"]+)"><code>(.*?)</code>', page, re.S):
        target = re.sub(r"^pub use |;$", "", text(code))
        target = re.sub(r" as " + re.escape(name) + "$", "", target)
        uses.append((prefix + name, target))
for name, target in sorted(uses):
    print(f"  {'use':<8} {name} = {target}")
PY
done
