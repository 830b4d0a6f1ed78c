#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Fails when a tracked C source or header is not formatted as .clang-format says.
set -eu
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "clang-format is not installed"; exit 1; }
files=$(git ls-files '*.c' '*.h')
clang-format --dry-run --Werror $files
echo "format: $(echo "$files" | wc -l) files checked"
