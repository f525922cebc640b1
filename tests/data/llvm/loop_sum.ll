; Loop kernel: each thread sums `n` consecutive floats starting at
; in[tid * n] and writes the sum to out[tid]. Kernel marked with the
; ptx_kernel calling convention (LLVM 20+).
; TRIP: the loop runs n times per thread (0 times when n <= 0).
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()

define ptx_kernel void @loop_sum(ptr addrspace(1) noalias readonly %in, ptr addrspace(1) noalias %out, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bdim = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %base = mul i32 %bid, %bdim
  %gid = add i32 %base, %tid
  %gid64 = sext i32 %gid to i64
  %n64 = sext i32 %n to i64
  %start = mul i64 %gid64, %n64
  %has = icmp sgt i32 %n, 0
  br i1 %has, label %loop, label %done

loop:
  %i = phi i32 [ 0, %entry ], [ %i.next, %loop ]
  %acc = phi float [ 0.0, %entry ], [ %acc.next, %loop ]
  %i64 = zext i32 %i to i64
  %idx = add i64 %start, %i64
  %p = getelementptr inbounds float, ptr addrspace(1) %in, i64 %idx
  %v = load float, ptr addrspace(1) %p, align 4
  %acc.next = fadd float %acc, %v
  %i.next = add nuw nsw i32 %i, 1
  %cont = icmp slt i32 %i.next, %n
  br i1 %cont, label %loop, label %done

done:
  %sum = phi float [ 0.0, %entry ], [ %acc.next, %loop ]
  %q = getelementptr inbounds float, ptr addrspace(1) %out, i64 %gid64
  store float %sum, ptr addrspace(1) %q, align 4
  ret void
}
