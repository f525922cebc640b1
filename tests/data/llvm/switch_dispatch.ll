; Per-element opcode dispatch through a dense 8-way switch. The NVPTX back
; end may lower a dense switch to a jump table (brx.idx + .branchtargets)
; or a compare tree depending on the LLVM version.
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()

define ptx_kernel void @switch_dispatch(ptr addrspace(1) %ops, ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bdim = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %base = mul i32 %bid, %bdim
  %gid = add i32 %base, %tid
  %g64 = zext i32 %gid to i64
  %pop = getelementptr inbounds i32, ptr addrspace(1) %ops, i64 %g64
  %op = load i32, ptr addrspace(1) %pop, align 4
  %pa = getelementptr inbounds i32, ptr addrspace(1) %a, i64 %g64
  %x = load i32, ptr addrspace(1) %pa, align 4
  %pb = getelementptr inbounds i32, ptr addrspace(1) %b, i64 %g64
  %y = load i32, ptr addrspace(1) %pb, align 4
  switch i32 %op, label %default [
    i32 0, label %do_add
    i32 1, label %do_sub
    i32 2, label %do_mul
    i32 3, label %do_and
    i32 4, label %do_or
    i32 5, label %do_xor
    i32 6, label %do_shl
    i32 7, label %do_min
  ]

do_add:
  %r0 = add i32 %x, %y
  br label %join
do_sub:
  %r1 = sub i32 %x, %y
  br label %join
do_mul:
  %r2 = mul i32 %x, %y
  br label %join
do_and:
  %r3 = and i32 %x, %y
  br label %join
do_or:
  %r4 = or i32 %x, %y
  br label %join
do_xor:
  %r5 = xor i32 %x, %y
  br label %join
do_shl:
  %sh = and i32 %y, 31
  %r6 = shl i32 %x, %sh
  br label %join
do_min:
  %lt = icmp slt i32 %x, %y
  %r7 = select i1 %lt, i32 %x, i32 %y
  br label %join
default:
  br label %join

join:
  %r = phi i32 [ %r0, %do_add ], [ %r1, %do_sub ], [ %r2, %do_mul ], [ %r3, %do_and ], [ %r4, %do_or ], [ %r5, %do_xor ], [ %r6, %do_shl ], [ %r7, %do_min ], [ -1, %default ]
  %pout = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %g64
  store i32 %r, ptr addrspace(1) %pout, align 4
  ret void
}
