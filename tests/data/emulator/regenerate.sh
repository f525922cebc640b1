#!/bin/sh
# Regenerate the PTX of kernels.cu; run from the repository root (needs nvcc). The repository prefix is
# removed from .file paths and CUDA header paths get the conventional /usr/local/cuda/include prefix.
set -e
dir=tests/data/emulator
for variant in "plain:-O3" "lineinfo:-O3 -lineinfo" "G:-G"; do
    name=${variant%%:*}
    flags=${variant#*:}
    nvcc -ptx -arch=sm_80 $flags "$dir/kernels.cu" -o "$dir/kernels_sm80_$name.ptx"
    sed -i -E -e "s#\"$(pwd)/#\"#" -e 's#"[^"]*/targets/[^/"]*/include/#"/usr/local/cuda/include/#' "$dir/kernels_sm80_$name.ptx"
done
