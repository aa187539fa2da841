# Shared settings of the packaging scripts (sourced, not run).
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VERSION=$(sed -n 's/^__version__ = "\(.*\)"/\1/p' "$ROOT/classmap_gui/__init__.py")
PY=${PY:-$ROOT/.venv/bin/python}
APPDIR=${APPDIR:-$ROOT/build/pyi-dist/classmap-studio}
DIST=${DIST:-$ROOT/dist}
DEB=$DIST/classmap-studio_${VERSION}_amd64.deb
TARBALL=$DIST/classmap-studio_${VERSION}_linux-x86_64.tar.gz
# Debian packages the bundled Qt (xcb platform plugin) loads from the system.
DEB_DEPENDS="libc6 (>= 2.34), libxcb-cursor0, libxkbcommon-x11-0, libxkbcommon0, libegl1, libgl1, libfontconfig1, \
libfreetype6, libdbus-1-3, libglib2.0-0 | libglib2.0-0t64, libx11-6, libx11-xcb1, libxcb1, libxcb-icccm4, libxcb-image0, \
libxcb-keysyms1, libxcb-randr0, libxcb-render-util0, libxcb-render0, libxcb-shape0, libxcb-shm0, libxcb-sync1, \
libxcb-xfixes0, libxcb-xinerama0, libxcb-xkb1, libxrender1, libxext6"
