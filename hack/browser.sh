#!/usr/bin/env bash
# make browser: headless Chromium and its WebDriver for the documentation site's test (tests/docs).
# Debian's chromium and chromium-driver, installed with apt-get when chromium or chromedriver is not on
# PATH (as root, or through sudo). Elsewhere, install Chromium and a matching chromedriver, or name
# them in CHROMIUM and CHROMEDRIVER.
set -euo pipefail

if [[ -n ${CHROMIUM:-} && -n ${CHROMEDRIVER:-} ]] \
    || { command -v chromium >/dev/null && command -v chromedriver >/dev/null; }; then
    echo "browser: $(${CHROMIUM:-chromium} --version 2>/dev/null || echo chromium), chromedriver present"
    exit 0
fi
command -v apt-get >/dev/null || {
    echo "error: no chromium and chromedriver, and no apt-get to install them: install Chromium and a" \
        "matching chromedriver, or set CHROMIUM and CHROMEDRIVER" >&2
    exit 2
}
sudo=
if (( $(id -u) != 0 )); then
    command -v sudo >/dev/null || { echo "error: installing chromium needs root (or sudo)" >&2; exit 2; }
    sudo=sudo
fi
echo "browser: apt-get install chromium chromium-driver"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium chromium-driver >/dev/null
echo "browser: $(chromium --version)"
