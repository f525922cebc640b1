; 3-D launch geometry from the special registers (%tid, %ntid, %ctaid,
; %nctaid in x/y/z, %laneid, %warpid), written out per thread. The kernel is
; marked with the legacy !nvvm.annotations "kernel" metadata (upgraded by
; LLVM to the ptx_kernel calling convention) plus a "maxntid" annotation.
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.z()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.z()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()
declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.laneid()
declare i32 @llvm.nvvm.read.ptx.sreg.warpid()

define void @sreg_grid(ptr addrspace(1) %out) {
entry:
  %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ty = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %tz = call i32 @llvm.nvvm.read.ptx.sreg.tid.z()
  %nx = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %ny = call i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
  %nz = call i32 @llvm.nvvm.read.ptx.sreg.ntid.z()
  %bx = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %by = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %bz = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()
  %gx = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
  %gy = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.y()
  %lane = call i32 @llvm.nvvm.read.ptx.sreg.laneid()
  %warp = call i32 @llvm.nvvm.read.ptx.sreg.warpid()
  ; linear thread index inside the block
  %t0 = mul i32 %tz, %ny
  %t1 = add i32 %t0, %ty
  %t2 = mul i32 %t1, %nx
  %tlin = add i32 %t2, %tx
  ; linear block index inside the grid
  %b0 = mul i32 %bz, %gy
  %b1 = add i32 %b0, %by
  %b2 = mul i32 %b1, %gx
  %blin = add i32 %b2, %bx
  %bs0 = mul i32 %nx, %ny
  %bsize = mul i32 %bs0, %nz
  %g0 = mul i32 %blin, %bsize
  %gid = add i32 %g0, %tlin
  %g64 = zext i32 %gid to i64
  %slot = shl i64 %g64, 1
  %p0 = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %slot
  store i32 %gid, ptr addrspace(1) %p0, align 4
  %lw0 = shl i32 %warp, 8
  %lw = or i32 %lw0, %lane
  %p1 = getelementptr inbounds i32, ptr addrspace(1) %p0, i64 1
  store i32 %lw, ptr addrspace(1) %p1, align 4
  ret void
}

!nvvm.annotations = !{!0, !1}
!0 = !{ptr @sreg_grid, !"kernel", i32 1}
!1 = !{ptr @sreg_grid, !"maxntidx", i32 128}
