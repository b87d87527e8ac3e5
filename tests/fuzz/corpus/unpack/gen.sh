#!/bin/sh
# tests/fuzz/corpus/unpack/gen.sh - seeds for tests/fuzz/fuzz_unpack.c, the
# layout of vpa_pack_trials (base/dist.c) on a little-endian machine:
# u64 n_tar, n_non, n_ids_e, n_ids_t; f64 tar[n_tar], non[n_non]; for each of
# tar_e, tar_t, non_e, non_t: u64 present, then u32[n] if present; for each of
# ids_e, ids_t: u64 present, then per id u64 length (with its NUL) and bytes.
# Run from this folder: sh gen.sh
u64() { printf "\\$(printf %03o "$1")\\000\\000\\000\\000\\000\\000\\000"; }
u32() { printf "\\$(printf %03o "$1")\\000\\000\\000"; }
one() { printf '\000\000\000\000\000\000\360\077'; }   # 1.0
half() { printf '\000\000\000\000\000\000\340\077'; }  # 0.5
{ u64 1; u64 2; u64 0; u64 0; one; half; one; u64 0; u64 0; u64 0; u64 0; u64 0; u64 0; } > scores_only
{ u64 1; u64 1; u64 2; u64 1; one; half
  u64 1; u32 0; u64 1; u32 0; u64 1; u32 1; u64 1; u32 0
  u64 1; u64 2; printf 'a\000'; u64 3; printf 'bc\000'
  u64 1; u64 2; printf 'x\000'; } > with_ids
{ u64 1; u64 1; u64 0; u64 0; one; } > truncated
{ u64 0; u64 0; u64 0; u64 0; u64 0; u64 0; u64 0; u64 0; u64 0; u64 0; } > empty_sets
