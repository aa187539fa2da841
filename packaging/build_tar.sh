#!/usr/bin/env bash
# The same frozen folder as a .tar.gz: unpack anywhere and run bin/classmap or bin/classmap-gui
# (the system needs the same Qt xcb libraries the .deb depends on).
set -euo pipefail
source "$(dirname "$0")/common.sh"
[[ -x "$APPDIR/classmap-studio" ]] || { echo "build_tar.sh: no frozen app at $APPDIR; run packaging/build.sh" >&2; exit 1; }
mkdir -p "$DIST"
tar -C "$(dirname "$APPDIR")" --owner=0 --group=0 --numeric-owner \
    --transform "s,^$(basename "$APPDIR"),classmap-studio-$VERSION," -czf "$TARBALL" "$(basename "$APPDIR")"
echo "build_tar.sh: $TARBALL"
