#!/usr/bin/env bash
# Fails when a tracked C++ file differs from what clang-format (.clang-format at the root) makes
# of it, and lists the files with the command that fixes them. Called by scripts/test.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if ! command -v clang-format >/dev/null 2>&1; then
  echo "check-format: clang-format is missing; scripts/setup.sh installs it (apt-get install clang-format)" >&2
  exit 1
fi
mapfile -t files < <(git ls-files '*.cpp' '*.h' 2>/dev/null || find app engine tests widgets -name '*.cpp' -o -name '*.h')
unformatted=()
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then unformatted+=("$f"); fi
done
if [ ${#unformatted[@]} -gt 0 ]; then
  echo "check-format: ${#unformatted[@]} file(s) are not formatted:" >&2
  printf '  %s\n' "${unformatted[@]}" >&2
  echo "check-format: run  clang-format -i ${unformatted[*]}" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files formatted"
