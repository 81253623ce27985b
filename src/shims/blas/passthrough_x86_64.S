/* Pass-through trampolines for every BLAS symbol the shim does not implement
   itself (passthrough_symbols.def). Each exported symbol is a single indirect
   jump through a private slot, so arguments in registers and on the stack, the
   return address and every return convention (complex in xmm0/xmm1, hidden
   result pointer, ...) reach the real BLAS untouched.

   Slot layout: [0] current target, [1] symbol name. [0] starts at a per-symbol
   lazy stub that hands the slot to the common resolver; the resolver stores
   the real address there, so later calls cost one indirect jump. */

        .hidden outboard_passthrough_resolve  /* C++, same library: direct call, no PLT */

        .macro outboard_passthrough name
        .text
        .globl  \name                   /* default visibility: exported */
        .type   \name, @function
        .p2align 4
\name:
        .cfi_startproc
        jmp     *.Lslot_\name(%rip)
.Llazy_\name:                           /* reached only while the slot is unresolved */
        leaq    .Lslot_\name(%rip), %r11  /* r11: scratch, never carries an argument */
        jmp     outboard_passthrough_common
        .cfi_endproc
        .size   \name, . - \name

        .data                           /* writable: the resolver patches [0] */
        .p2align 3
.Lslot_\name:
        .quad   .Llazy_\name
        .quad   .Lname_\name

        .section .rodata.str1.1, "aMS", @progbits, 1
.Lname_\name:
        .asciz  "\name"
        .endm

/* Common lazy path: %r11 = slot; %rsp is as at entry to the exported function
   (8 mod 16), so everything below must leave it exactly so for the final jmp. */
        .text
        .p2align 4
        .type   outboard_passthrough_common, @function
outboard_passthrough_common:
        .cfi_startproc
        /* 8 xmm + 7 GPR slots = 184 bytes; with the return address that is 192,
           so the call below sees a 16-byte aligned stack as the ABI requires. */
        subq    $184, %rsp
        .cfi_adjust_cfa_offset 184
        movups  %xmm0, 0(%rsp)          /* float/double/complex arguments */
        movups  %xmm1, 16(%rsp)
        movups  %xmm2, 32(%rsp)
        movups  %xmm3, 48(%rsp)
        movups  %xmm4, 64(%rsp)
        movups  %xmm5, 80(%rsp)
        movups  %xmm6, 96(%rsp)
        movups  %xmm7, 112(%rsp)
        movq    %rdi, 128(%rsp)         /* integer/pointer arguments */
        movq    %rsi, 136(%rsp)
        movq    %rdx, 144(%rsp)
        movq    %rcx, 152(%rsp)
        movq    %r8, 160(%rsp)
        movq    %r9, 168(%rsp)
        movq    %rax, 176(%rsp)         /* %al: vector register count of a varargs call */

        movq    %r11, %rdi
        call    outboard_passthrough_resolve  /* returns the target or aborts */
        movq    %rax, %r11

        movups  0(%rsp), %xmm0
        movups  16(%rsp), %xmm1
        movups  32(%rsp), %xmm2
        movups  48(%rsp), %xmm3
        movups  64(%rsp), %xmm4
        movups  80(%rsp), %xmm5
        movups  96(%rsp), %xmm6
        movups  112(%rsp), %xmm7
        movq    128(%rsp), %rdi
        movq    136(%rsp), %rsi
        movq    144(%rsp), %rdx
        movq    152(%rsp), %rcx
        movq    160(%rsp), %r8
        movq    168(%rsp), %r9
        movq    176(%rsp), %rax
        addq    $184, %rsp
        .cfi_adjust_cfa_offset -184
        jmp     *%r11                   /* as if the caller had called the target */
        .cfi_endproc
        .size   outboard_passthrough_common, . - outboard_passthrough_common

/* The symbol table: this directory's, unless a including file names another (the LAPACK shim). */
#ifndef OUTBOARD_PASSTHROUGH_DEF
#define OUTBOARD_PASSTHROUGH_DEF "passthrough_symbols.def"
#endif
#define OUTBOARD_PASSTHROUGH(name) outboard_passthrough name
#include OUTBOARD_PASSTHROUGH_DEF
#undef OUTBOARD_PASSTHROUGH

        .section .note.GNU-stack, "", @progbits  /* no executable stack */
