#!/usr/bin/env bash
# `make package-test`: install the built .deb like a user would, run the commands from the
# PATH in a clean environment (no venv, no source tree), then uninstall. Needs root or sudo.
set -euo pipefail
source "$(dirname "$0")/common.sh"
[[ -f "$DEB" ]] || { echo "package_test.sh: $DEB not built; run make package" >&2; exit 1; }
if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
export DEBIAN_FRONTEND=noninteractive

uninstall() { $SUDO apt-get remove -y -qq classmap-studio >/dev/null 2>&1 || $SUDO dpkg -r classmap-studio >/dev/null 2>&1 || true; }
trap uninstall EXIT

# apt resolves the Depends: (the Qt xcb libraries); plain dpkg when apt cannot reach a mirror
# and the libraries are already there.
if ! $SUDO apt-get install -y -qq --no-install-recommends "$DEB" >/dev/null 2>&1; then
  $SUDO dpkg -i "$DEB"
fi
[[ -x /opt/classmap-studio/classmap-studio ]] || { echo "package_test.sh: /opt/classmap-studio missing after install" >&2; exit 1; }

home=$(mktemp -d)
run() {  # a user's shell: system PATH only, fresh HOME, no display, run from an empty folder
  (cd "$home" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$home" LANG=C.UTF-8 QT_QPA_PLATFORM=offscreen "$@")
}
for cmd in classmap classmap-gui; do
  where=$(run sh -c "command -v $cmd") || { echo "package_test.sh: $cmd is not on the PATH" >&2; exit 1; }
  [[ "$where" == /usr/bin/$cmd ]] || { echo "package_test.sh: $cmd resolves to $where, not /usr/bin/$cmd" >&2; exit 1; }
done
run classmap --help >/dev/null
echo "package_test.sh: classmap --help ok"
run classmap datasets
t0=$(date +%s%N)
run timeout 300 classmap-gui --self-test
t1=$(date +%s%N)
ms=$(( (t1 - t0) / 1000000 ))
echo "package_test.sh: classmap-gui --self-test ok in $((ms / 1000)).$(printf %03d $((ms % 1000))) s (load: $(cut -d' ' -f1-3 /proc/loadavg))"
# A real X window (xcb platform plugin against the libraries Depends: pulled in), when Xvfb is here.
if command -v xvfb-run >/dev/null; then
  (cd "$home" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$home" LANG=C.UTF-8 QT_QPA_PLATFORM=xcb \
     timeout 300 xvfb-run -a classmap-gui --screenshot "$home/window.png" --panel dataset)
  [[ -s "$home/window.png" ]] || { echo "package_test.sh: no window under Xvfb (xcb)" >&2; exit 1; }
  echo "package_test.sh: xcb window under Xvfb ok"
fi
[[ -f /usr/share/applications/classmap-studio.desktop ]] || { echo "package_test.sh: desktop entry missing" >&2; exit 1; }
[[ -f /usr/share/icons/hicolor/256x256/apps/classmap-studio.png ]] || { echo "package_test.sh: icon missing" >&2; exit 1; }

trap - EXIT
uninstall
if [[ -e /opt/classmap-studio || -e /usr/bin/classmap || -e /usr/bin/classmap-gui ]]; then
  echo "package_test.sh: files left behind after uninstall" >&2; exit 1
fi
rm -rf "$home"
echo "package_test.sh: install, run and uninstall all ok"
