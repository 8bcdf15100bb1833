#!/bin/sh
# Compiler launcher of gllm_cuda_compile_check: runs the compile command it is given with
# -fsyntax-only (no code, no object) and then leaves an empty object file so the build tool sees the step done.
out=
prev=
for arg in "$@"; do
  [ "$prev" = "-o" ] && out=$arg
  prev=$arg
done
"$@" -fsyntax-only || exit $?
[ -z "$out" ] || : > "$out"
