; Warp butterfly reduction with llvm.nvvm.shfl.sync.bfly.f32 followed by a
; float atomicrmw fadd from lane 0 of each warp (red/atom.global.add.f32),
; and a relaxed i32 atomicrmw max. Compiled for sm_90.
; TARGET-CPU: sm_90
; TRIP: no loops (the 5 butterfly steps are written out).
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.laneid()
declare float @llvm.nvvm.shfl.sync.bfly.f32(i32, float, i32, i32)

define ptx_kernel void @warp_atomic(ptr addrspace(1) %in, ptr addrspace(1) %sum, ptr addrspace(1) %maxkey, ptr addrspace(1) %keys) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bdim = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %base = mul i32 %bid, %bdim
  %gid = add i32 %base, %tid
  %g64 = zext i32 %gid to i64
  %p = getelementptr inbounds float, ptr addrspace(1) %in, i64 %g64
  %v0 = load float, ptr addrspace(1) %p, align 4
  %s16 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v0, i32 16, i32 31)
  %v1 = fadd float %v0, %s16
  %s8 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v1, i32 8, i32 31)
  %v2 = fadd float %v1, %s8
  %s4 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v2, i32 4, i32 31)
  %v3 = fadd float %v2, %s4
  %s2 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v3, i32 2, i32 31)
  %v4 = fadd float %v3, %s2
  %s1 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v4, i32 1, i32 31)
  %v5 = fadd float %v4, %s1
  %pk = getelementptr inbounds i32, ptr addrspace(1) %keys, i64 %g64
  %k = load i32, ptr addrspace(1) %pk, align 4
  %old = atomicrmw max ptr addrspace(1) %maxkey, i32 %k monotonic, align 4
  %lane = call i32 @llvm.nvvm.read.ptx.sreg.laneid()
  %leader = icmp eq i32 %lane, 0
  br i1 %leader, label %add, label %exit

add:
  %o = atomicrmw fadd ptr addrspace(1) %sum, float %v5 monotonic, align 4
  br label %exit

exit:
  ret void
}
