#!/usr/bin/env bash
# Set up Testbed Studio on a Debian machine: Debian packages, then a project-local
# virtualenv (.venv) with the project installed in editable mode.
#
#   .ci/setup.sh app       packages to run the app (make run)
#   .ci/setup.sh test      packages to run the app and the test suite (make test, make setup)
#   .ci/setup.sh bundle    the above plus PyInstaller (make bundle)
#
# A second run is fast: one dpkg-query call, and pip runs only when pyproject.toml (or
# the Python interpreter) changed since the last successful install (stamp in .venv/).
# As root, missing Debian packages are installed with apt-get; otherwise the exact
# command is printed and the script stops with an error.
set -euo pipefail
cd "$(dirname "$0")/.."

MODE="${1:-test}"
VENV="${VENV:-.venv}"
PYTHON="${PYTHON:-python3}"

APP_DEBS=(libgl1 libegl1 libfontconfig1 libglib2.0-0 libxkbcommon0 libdbus-1-3 fonts-dejavu-core
          libx11-xcb1 libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0
          libxcb-render-util0 libxcb-shape0 libxcb-xkb1 libxkbcommon-x11-0)
TEST_DEBS=(xvfb xauth xdotool openssh-server openssh-client iproute2 fio sysstat poppler-utils shellcheck
           tgt libiscsi-bin e2fsprogs ethtool   # storage guards: tgt target and initiator; ethtool: the as-built check
           gdb)   # gdb: a hung test prints the native stacks of every thread (tests/hang_watch.py)
BUNDLE_DEBS=(binutils)   # PyInstaller reads ELF dependencies with objdump

case "$MODE" in
    app) debs=("${APP_DEBS[@]}"); extras="test" ;;
    test) debs=("${APP_DEBS[@]}" "${TEST_DEBS[@]}"); extras="test" ;;
    bundle) debs=("${APP_DEBS[@]}" "${TEST_DEBS[@]}" "${BUNDLE_DEBS[@]}"); extras="test,package" ;;
    *) echo "usage: $0 app|test|bundle" >&2; exit 64 ;;
esac

say() { printf '[setup] %s\n' "$*"; }

# --- 1. Debian packages -----------------------------------------------------------------
# A Python >= 3.11 with venv/ensurepip is needed for step 2; Debian ships venv separately.
py_ok() { command -v "$PYTHON" >/dev/null 2>&1 &&
          "$PYTHON" -c 'import sys; assert sys.version_info >= (3, 11)' >/dev/null 2>&1; }
venv_ok() { "$PYTHON" -c 'import venv, ensurepip' >/dev/null 2>&1; }
if [ ! -x "$VENV/bin/python" ]; then
    if ! py_ok; then debs+=(python3 python3-venv); elif ! venv_ok; then debs+=(python3-venv); fi
fi

missing=()
if command -v dpkg-query >/dev/null 2>&1; then
    # dpkg-query exits 1 when any name is unknown to dpkg: the listing is still complete
    installed="$( { dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' "${debs[@]}" 2>/dev/null || true; } \
                 | awk '$1 == "ii" { print $2 }' | sed 's/:.*//' | sort -u)"
    for p in "${debs[@]}"; do
        grep -qxF "$p" <<<"$installed" || missing+=("$p")
    done
else
    say "dpkg-query not found: not a Debian system; install the equivalents of: ${debs[*]}"
fi

if [ "${#missing[@]}" -gt 0 ]; then
    apt_cmd="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${missing[*]}"
    if [ "$(id -u)" -eq 0 ]; then
        say "installing Debian packages: ${missing[*]}"
        apt-get update -q </dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
    else
        {
            echo "[setup] missing Debian packages: ${missing[*]}"
            echo "[setup] install them as root, then run make again:"
            echo
            echo "    sudo sh -c '$apt_cmd'"
            echo
        } >&2
        exit 1
    fi
fi

# --- 2. the virtualenv ------------------------------------------------------------------
if [ -x "$VENV/bin/python" ] && ! "$VENV/bin/python" -c pass >/dev/null 2>&1; then
    say "$VENV is broken (its interpreter no longer runs): recreating it"
    rm -rf "$VENV"
fi
if [ ! -x "$VENV/bin/python" ]; then
    py_ok || { echo "[setup] $PYTHON >= 3.11 not found (set PYTHON=/path/to/python3.11)" >&2; exit 1; }
    say "creating $VENV with $("$PYTHON" -c 'import sys; print(sys.executable, sys.version.split()[0])')"
    "$PYTHON" -m venv "$VENV"
fi

# --- 3. Python packages (only when pyproject.toml or the interpreter changed) -----------
# The stamp holds a hash of pyproject.toml and the interpreter; its name says which extras
# were installed (.stamp-test, .stamp-test,package).  A bundle install also serves `test`.
want="$( { cat pyproject.toml; "$VENV/bin/python" -VV; } | sha256sum | cut -d' ' -f1)"
fresh=no
for s in "$VENV/.stamp-$extras" ${extras:+"$VENV/.stamp-$extras,package"}; do
    if [ "$(cat "$s" 2>/dev/null)" = "$want" ]; then fresh=yes; fi
done
if [ "$fresh" = no ]; then
    say "installing the project and its Python packages (.[${extras}]) into $VENV"
    export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
    "$VENV/bin/python" -m pip install -q -e ".[${extras}]" </dev/null
    for s in "$VENV"/.stamp-*; do
        if [ -e "$s" ] && [ "$(cat "$s")" != "$want" ]; then rm -f "$s"; fi
    done
    echo "$want" >"$VENV/.stamp-$extras"
fi
say "ready ($MODE)"
