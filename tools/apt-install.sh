#!/usr/bin/env bash
# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
#
# Installs those of the named Debian/Ubuntu packages that are missing (through sudo when not root).
#   tools/apt-install.sh <package>...
set -euo pipefail
missing=()
for p in "$@"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "apt-install: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo=sudo
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
