#!/usr/bin/env bash
# `make package`: freeze the app with PyInstaller (one folder), add the launchers and desktop
# files to the folder, then wrap it as a .deb (build_deb.sh) and a .tar.gz (build_tar.sh).
set -euo pipefail
source "$(dirname "$0")/common.sh"
cd "$ROOT"
t0=$(date +%s)
if ! "$PY" -m PyInstaller --version >/dev/null 2>&1; then
  "$PY" -m pip install -q -e "$ROOT[package]"
fi
command -v dpkg-deb >/dev/null || { echo "build.sh: dpkg-deb is needed (Debian/Ubuntu)" >&2; exit 1; }
"$PY" -m PyInstaller --noconfirm --log-level WARN --distpath "$ROOT/build/pyi-dist" \
  --workpath "$ROOT/build/pyi-work" "$ROOT/packaging/classmap-studio.spec"

# Strip the symbol tables of the libraries that carry one and that no patchelf edited (no $ORIGIN search
# path, not a wheel's grafted *.libs copy): llvmlite's 171 MB library alone loses 19 MB. strip on a
# patchelf-edited file breaks it ("ELF load command address/offset not page-aligned"), hence the filter.
find "$APPDIR" -type f -name '*.so*' ! -path '*.libs/*' -print0 | while IFS= read -r -d '' lib; do
  file -b "$lib" | grep -q 'not stripped' || continue
  readelf -d "$lib" 2>/dev/null | grep -q 'ORIGIN' && continue
  strip --strip-unneeded "$lib"
done

# Launchers: the one executable serves both commands; the wrappers pick which.
mkdir -p "$APPDIR/bin" "$APPDIR/share/applications" "$APPDIR/share/icons/hicolor/scalable/apps"
for cmd in classmap:cli classmap-gui:gui; do
  name=${cmd%%:*} mode=${cmd##*:}
  cat > "$APPDIR/bin/$name" <<SH
#!/bin/sh
# $name: ClassMap Studio's $( [ "$mode" = cli ] && echo "command line" || echo "desktop app" ) (frozen bundle).
here=\$(dirname "\$(readlink -f "\$0")")
exec "\$here/../classmap-studio" $mode "\$@"
SH
  chmod 755 "$APPDIR/bin/$name"
done
cp resources/classmap-studio.desktop "$APPDIR/share/applications/"
cp resources/classmap-studio.svg "$APPDIR/share/icons/hicolor/scalable/apps/"
for size in 48 128 256; do
  mkdir -p "$APPDIR/share/icons/hicolor/${size}x${size}/apps"
  cp "resources/classmap-studio-$size.png" "$APPDIR/share/icons/hicolor/${size}x${size}/apps/classmap-studio.png"
done
echo "$VERSION" > "$APPDIR/VERSION"

bash "$ROOT/packaging/build_deb.sh"
bash "$ROOT/packaging/build_tar.sh"
t1=$(date +%s)
echo "package: built in $((t1 - t0)) s; bundle $(du -sh "$APPDIR" | cut -f1)," \
     "deb $(du -h "$DEB" | cut -f1), tar.gz $(du -h "$TARBALL" | cut -f1)"
