#!/usr/bin/env bash
# Build the one-folder bundle dist/device-explorer/ with PyInstaller.
#
# Run from the repository root with the virtual environment that has the app installed
# (pip install -e .  or  pip install .) active, or with it in .venv/, or named by $PYTHON:
#     packaging/build.sh
# PyInstaller is installed from the "package" extra when missing. Build files go to build/ and
# dist/ (both git-ignored); the script ends by printing the bundle's size and the build time.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# The Python to build with: $PYTHON, else the active virtual environment, else the checkout's .venv.
if [ -z "${PYTHON:-}" ]; then
    if [ -n "${VIRTUAL_ENV:-}" ]; then
        PYTHON="$VIRTUAL_ENV/bin/python"
    elif [ -x .venv/bin/python ]; then
        PYTHON=.venv/bin/python
    else
        PYTHON=python3
    fi
fi

if ! "$PYTHON" -c "import explorer" 2>/dev/null; then
    echo "build.sh: the app is not installed in this Python ($("$PYTHON" -c 'import sys; print(sys.executable)'))." >&2
    echo "build.sh: activate the app's virtual environment, or run: pip install -e ." >&2
    exit 2
fi
if ! "$PYTHON" -c "import PyInstaller" 2>/dev/null; then
    # The "package" extra's requirements, read from pyproject.toml; installing ".[package]" itself
    # would also replace an editable install of the app with a copy.
    reqs=$("$PYTHON" -c 'import tomllib; print(" ".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["package"]))')
    echo "build.sh: PyInstaller missing; installing the package extra: $reqs"
    # shellcheck disable=SC2086
    "$PYTHON" -m pip install --quiet $reqs
fi

# The icons are committed; regenerate them only if someone deleted them.
if [ ! -f resources/icons/device-explorer-256.png ]; then
    QT_QPA_PLATFORM=offscreen "$PYTHON" packaging/make_icon.py
fi

start=$(date +%s)
"$PYTHON" -m PyInstaller --noconfirm --clean --log-level "${PYI_LOG_LEVEL:-WARN}" \
    --distpath dist --workpath build packaging/device-explorer.spec
end=$(date +%s)

bundle="dist/device-explorer"
cp packaging/device-explorer.desktop "$bundle/"
echo "build.sh: bundle   $bundle"
echo "build.sh: size     $(du -sh "$bundle" | cut -f1)"
echo "build.sh: files    $(find "$bundle" -type f | wc -l)"
echo "build.sh: time     $((end - start)) s (PyInstaller $("$PYTHON" -c 'import PyInstaller; print(PyInstaller.__version__)'))"
