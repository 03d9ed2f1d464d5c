#!/usr/bin/env bash
# Smoke-test a built bundle the way a lab would use it, on a machine with no display.
#
#     packaging/smoke_test.sh [BUNDLE_DIR]        (default: dist/device-explorer)
#
# Runs the frozen app's self-test, a screenshot of the Devices panel (checked to be a real PNG of
# the asked size) and of the other two panels, `devices --json` and a tiny CPU benchmark (a worker process inside the bundle),
# then checks that none of this wrote anything inside the bundle folder: settings, results and
# caches belong in the user's folders (here pointed at a temporary folder). Exit 0 when all pass.
set -uo pipefail

BUNDLE="${1:-dist/device-explorer}"
EXE="$BUNDLE/device-explorer"
if [ ! -x "$EXE" ]; then
    echo "smoke_test: no executable at $EXE; build the bundle first with packaging/build.sh" >&2
    exit 2
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/device-explorer-smoke.XXXXXX")"
trap 'rm -rf "$work"' EXIT
export QT_QPA_PLATFORM=offscreen
# The user's folders (platformdirs follows XDG on Linux) go to the temporary folder, so the test
# neither reads nor litters the real ones; DEVICE_EXPLORER_HOME stays unset to test the default path.
unset DEVICE_EXPLORER_HOME NUMBA_ENABLE_CUDASIM DEVICE_EXPLORER_RUN_MODULE
export XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data" XDG_CACHE_HOME="$work/cache" XDG_STATE_HOME="$work/state"

listing() { (cd "$BUNDLE" && find . -printf '%p %y %s %T@\n' | LC_ALL=C sort); }
listing > "$work/before.txt"

failures=0
step() {  # step NAME COMMAND...: run, time, show the tail of its output on failure
    local name="$1"; shift
    local t0 ms rc took
    t0=$(date +%s%N)
    "$@" > "$work/out.txt" 2>&1
    rc=$?
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    took="$(printf '%4d.%d s' $((ms / 1000)) $(((ms % 1000) / 100)))"
    if [ $rc -eq 0 ]; then
        printf 'PASS  %-12s %s\n' "$name" "$took"
    else
        printf 'FAIL  %-12s %s  (exit status %d)\n' "$name" "$took" "$rc"
        tail -n 25 "$work/out.txt" | sed 's/^/      | /'
        failures=$((failures + 1))
    fi
    return $rc
}

step version "$EXE" --version
warnings=0
step self-test "$EXE" self-test && sed 's/^/      | /' "$work/out.txt"
# A disturbed or implausible measurement is no failure (the engine works) but is said, with its reason.
warnings=$((warnings + $(grep -c '^WARN' "$work/out.txt")))

png="$work/devices.png"
if step screenshot "$EXE" screenshot --panel devices --size 1024x700 --out "$png"; then
    # A PNG starts with \x89PNG\r\n\x1a\n; width and height are the big-endian words at bytes 16 and 20.
    magic="" width=0 height=0
    if [ "$(stat -c %s "$png" 2>/dev/null || echo 0)" -ge 24 ]; then
        magic="$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')"
        width=$((16#$(od -An -tx1 -j16 -N4 "$png" | tr -d ' \n')))
        height=$((16#$(od -An -tx1 -j20 -N4 "$png" | tr -d ' \n')))
    fi
    if [ "$magic" = "89504e470d0a1a0a" ] && [ "$width" -eq 1024 ] && [ "$height" -eq 700 ]; then
        echo "      | $png: PNG ${width}x${height}, $(stat -c %s "$png") bytes"
    else
        echo "FAIL  screenshot   $png is not a 1024x700 PNG (magic '$magic', ${width}x${height})"
        failures=$((failures + 1))
    fi
fi

# The other two panels: they import the most (pyqtgraph plots, the visualizer's scene).
for panel in visualizer benchmarks; do
    step "$panel" "$EXE" screenshot --panel "$panel" --out "$work/$panel.png"
done

step devices "$EXE" devices --json
if ! head -c 1 "$work/out.txt" | grep -q '[[{]'; then
    echo "FAIL  devices      --json did not print JSON: $(head -c 200 "$work/out.txt")"
    failures=$((failures + 1))
fi

step bench "$EXE" bench matmul --device cpu --sizes 64 --repeats 3 && sed 's/^/      | /' "$work/out.txt"
if grep -q 'NOISY:' "$work/out.txt"; then
    echo "WARN  bench        the point was disturbed: $(grep -o 'NOISY: .*' "$work/out.txt" | head -n 1 | cut -c 8-)"
    warnings=$((warnings + 1))
fi

listing > "$work/after.txt"
if ! diff -q "$work/before.txt" "$work/after.txt" > /dev/null; then
    echo "FAIL  read-only    the app wrote inside the bundle folder:"
    diff "$work/before.txt" "$work/after.txt" | head -n 20 | sed 's/^/      | /'
    failures=$((failures + 1))
else
    echo "PASS  read-only    nothing written inside $BUNDLE ($(wc -l < "$work/after.txt") entries unchanged)"
fi

if [ $failures -eq 0 ]; then
    echo "smoke_test: all passed ($BUNDLE, $(du -sh "$BUNDLE" | cut -f1))$([ $warnings -gt 0 ] && echo ", $warnings warning(s): see the WARN lines")"
else
    echo "smoke_test: $failures step(s) FAILED ($BUNDLE)"
fi
[ $failures -eq 0 ]
