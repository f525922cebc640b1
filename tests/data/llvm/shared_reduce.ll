; Block reduction through a 256-float array in shared memory
; (addrspace(3)) with llvm.nvvm.barrier0 between the halving steps.
; Launch with blockDim.x == 256.
; TRIP: the halving loop runs 8 times (log2(256)) per thread.
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@smem = internal addrspace(3) global [256 x float] undef, align 4

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare void @llvm.nvvm.barrier0()

define ptx_kernel void @shared_reduce(ptr addrspace(1) %in, ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %base = shl i32 %bid, 8
  %gid = add i32 %base, %tid
  %g64 = zext i32 %gid to i64
  %pin = getelementptr inbounds float, ptr addrspace(1) %in, i64 %g64
  %v = load float, ptr addrspace(1) %pin, align 4
  %t64 = zext i32 %tid to i64
  %ps = getelementptr inbounds [256 x float], ptr addrspace(3) @smem, i64 0, i64 %t64
  store float %v, ptr addrspace(3) %ps, align 4
  call void @llvm.nvvm.barrier0()
  br label %loop

loop:
  %stride = phi i32 [ 128, %entry ], [ %stride.next, %latch ]
  %active = icmp ult i32 %tid, %stride
  br i1 %active, label %add, label %latch

add:
  %other = add i32 %tid, %stride
  %o64 = zext i32 %other to i64
  %po = getelementptr inbounds [256 x float], ptr addrspace(3) @smem, i64 0, i64 %o64
  %a = load float, ptr addrspace(3) %ps, align 4
  %b = load float, ptr addrspace(3) %po, align 4
  %s = fadd float %a, %b
  store float %s, ptr addrspace(3) %ps, align 4
  br label %latch

latch:
  call void @llvm.nvvm.barrier0()
  %stride.next = lshr i32 %stride, 1
  %more = icmp ne i32 %stride.next, 0
  br i1 %more, label %loop, label %write

write:
  %first = icmp eq i32 %tid, 0
  br i1 %first, label %store, label %exit

store:
  %r = load float, ptr addrspace(3) @smem, align 4
  %b64 = zext i32 %bid to i64
  %pout = getelementptr inbounds float, ptr addrspace(1) %out, i64 %b64
  store float %r, ptr addrspace(1) %pout, align 4
  br label %exit

exit:
  ret void
}
