# bench/kernels.sh - sourced by the benches that compare with PyTorch
# (train_torch.sh, ctc.sh, run.sh's ONNX variable-length case).  Each runs
# under every OpenBLAS kernel of KERNELS: the environment's OPENBLAS_CORETYPE
# if it sets one (this development VM pins Haswell, AVX2), then "default",
# OpenBLAS's own choice for the CPU (the variable unset: what a user gets).
#   kernel_use K   select K: krun then runs a command under it, KNAME says it
#   krun CMD...    CMD under the selected kernel
#   kcap CMD...    CMD with oneDNN capped at AVX2 (PyTorch's convolutions on the
#                  pinned kernel's instruction set; used when KCORE != default)
KERNELS=default
[ -n "${OPENBLAS_CORETYPE:-}" ] && KERNELS="$OPENBLAS_CORETYPE default"
KCORE=default
KNAME=
kernel_use() {
	KCORE=$1
	if [ "$1" = default ]; then KNAME="OpenBLAS's choice for this CPU"; else KNAME="OPENBLAS_CORETYPE=$1"; fi
}
krun() {
	if [ "$KCORE" = default ]; then env -u OPENBLAS_CORETYPE "$@"; else env OPENBLAS_CORETYPE="$KCORE" "$@"; fi
}
kcap() { (export DNNL_MAX_CPU_ISA=AVX2 ONEDNN_MAX_CPU_ISA=AVX2; "$@"); }
