; Kernel calling a non-inlined device function twice (a .func with a
; .param return value in PTX) plus a call to libm-style fma intrinsic.
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare float @llvm.fma.f32(float, float, float)

; smoothstep(lo, hi, x) = t*t*(3-2t), t = clamp((x-lo)/(hi-lo), 0, 1)
define internal float @smoothstep(float %lo, float %hi, float %x) #0 {
entry:
  %num = fsub float %x, %lo
  %den = fsub float %hi, %lo
  %t0 = fdiv float %num, %den
  %lt = fcmp olt float %t0, 0.0
  %t1 = select i1 %lt, float 0.0, float %t0
  %gt = fcmp ogt float %t1, 1.0
  %t = select i1 %gt, float 1.0, float %t1
  %two_t = fmul float %t, 2.0
  %k = fsub float 3.0, %two_t
  %tt = fmul float %t, %t
  %r = fmul float %tt, %k
  ret float %r
}

define ptx_kernel void @call_device(ptr addrspace(1) %x, ptr addrspace(1) %y, float %lo, float %hi, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bdim = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %base = mul i32 %bid, %bdim
  %gid = add i32 %base, %tid
  %in = icmp slt i32 %gid, %n
  br i1 %in, label %body, label %exit

body:
  %g64 = sext i32 %gid to i64
  %px = getelementptr inbounds float, ptr addrspace(1) %x, i64 %g64
  %vx = load float, ptr addrspace(1) %px, align 4
  %s1 = call float @smoothstep(float %lo, float %hi, float %vx)
  %s2 = call float @smoothstep(float 0.0, float 1.0, float %s1)
  %r = call float @llvm.fma.f32(float %s1, float %s2, float %vx)
  %py = getelementptr inbounds float, ptr addrspace(1) %y, i64 %g64
  store float %r, ptr addrspace(1) %py, align 4
  br label %exit

exit:
  ret void
}

attributes #0 = { noinline nounwind }
