# cuda_probes.sh — sourced by the GPU cross-checks: sets RT and DRV (the
# libcudart PyTorch loads and the driver) and `probes`, the LIB:FUNC list
# that preload_uprobe_count attaches to: every launch entry point, plus the
# copy and sync the small PyTorch check makes.  Needs PY (the python3).
RT=$("$PY" -c 'import os, nvidia.cu13 as m; print(os.path.join(list(m.__path__)[0], "lib", "libcudart.so.13"))' 2>/dev/null)
[ -f "$RT" ] || RT=$(ldconfig -p | awk '/libcudart.so.13 /{print $NF; exit}')
DRV=$(ldconfig -p | awk '/libcuda.so.1 /{print $NF; exit}')
probes=""
for f in cudaLaunchKernel cudaLaunchKernel_ptsz cudaLaunchKernelExC cudaLaunchKernelExC_ptsz \
	__cudaLaunchKernel cudaMemcpyAsync cudaStreamSynchronize cudaGraphLaunch; do
	probes="$probes $RT:$f"
done
for f in cuLaunchKernel cuLaunchKernel_ptsz cuLaunchKernelEx cuLaunchKernelEx_ptsz cuGraphLaunch; do
	probes="$probes $DRV:$f"
done
