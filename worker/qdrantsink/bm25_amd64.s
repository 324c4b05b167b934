//go:build !purego

#include "textflag.h"
#include "go_asm.h"

// func countFastKernel(st *fastState)
//
// Registers: DI state, R8 runs, R9 r, R10 shared, R11 pad, R12 vocab,
// R14 mul0, R15 no, CX shift; AX BX DX SI R13 scratch.
TEXT ·countFastKernel(SB), NOSPLIT, $0-8
	MOVQ st+0(FP), DI
	MOVQ fastState_runs(DI), R8
	MOVQ fastState_r(DI), R9
	MOVQ fastState_pad(DI), R11
	MOVQ fastState_vocab(DI), R12
	MOVQ fastState_mul0(DI), R14
	MOVQ fastState_no(DI), R15
	MOVQ fastState_shift(DI), CX
	XORL R10, R10
	CMPQ R9, fastState_nruns(DI)
	JGE  done

loop:
	MOVL (R8)(R9*8), SI  // s, with slowRun
	MOVL 4(R8)(R9*8), AX // e
	SUBQ SI, AX          // l, negative for a slow run
	LEAQ -1(AX), BX
	CMPQ BX, $16
	JAE  done            // long or slow: left to the caller
	SHLQ $4, AX
	ADDQ fastState_masks(DI), AX // &masks[l]
	MOVQ (R11)(SI*1), DX
	MOVQ 8(R11)(SI*1), BX
	MOVQ $0x2020202020202020, SI
	ORQ  SI, DX
	ORQ  SI, BX
	ANDQ (AX), DX        // k0
	ANDQ 8(AX), BX       // k1
	MOVQ BX, AX
	IMULQ fastState_mul1(DI), AX
	ADDQ DX, AX
	IMULQ R14, AX
	SHRQ CX, AX
	ANDQ fastState_mask(DI), AX // slot
	MOVQ AX, SI
	SHLQ $5, SI
	ADDQ R12, SI         // &vocab[slot]
	CMPQ DX, vocabEntry_k0(SI)
	JNE  second
	CMPQ BX, vocabEntry_k1(SI)
	JEQ  found

second:
	INCQ AX
	ANDQ fastState_mask(DI), AX
	MOVQ AX, SI
	SHLQ $5, SI
	ADDQ R12, SI
	CMPQ DX, vocabEntry_k0(SI)
	JNE  done
	CMPQ BX, vocabEntry_k1(SI)
	JNE  done

found:
	MOVL vocabEntry_fnv(SI), R13
	ORL  vocabEntry_shared(SI), R10
	MOVL vocabEntry_pos(SI), BX
	MOVL fastState_epoch(DI), DX
	XORL AX, AX
	CMPL DX, vocabEntry_epoch(SI)
	SETNE AL             // fresh: first seen in this call
	CMOVQNE R15, BX      // its position: no if fresh
	MOVL DX, vocabEntry_epoch(SI)
	MOVL BX, vocabEntry_pos(SI)
	MOVQ fastState_stats(DI), DX
	LEAQ (DX)(BX*8), DX  // &stats[p]
	MOVL 4(DX), BX       // its count so far
	LEAL -1(AX), SI      // 0 if fresh, -1 if not
	ANDL SI, BX
	INCL BX
	MOVL R13, 0(DX)
	MOVL BX, 4(DX)
	ADDQ AX, R15
	INCQ R9
	CMPQ R9, fastState_nruns(DI)
	JLT  loop

done:
	MOVQ R9, fastState_r(DI)
	MOVQ R15, fastState_no(DI)
	MOVL R10, fastState_shared(DI)
	RET

// CLASSIFY16 classifies the 16 bytes at off(SI): the token bytes (ASCII
// letters and digits, and non-ASCII bytes) as bits in R10, the non-ASCII
// ones in R11, both at bit shift; X8..X12 hold 0x2f, 0x3a, 0x20, 0x60,
// 0x7b in every byte (compares are signed: non-ASCII bytes are negative).
#define CLASSIFY16(off, shift) \
	MOVOU off(SI), X0; \
	MOVOU X0, X1; \
	PCMPGTB X8, X1; \
	MOVOU X9, X2; \
	PCMPGTB X0, X2; \
	PAND X2, X1; \
	MOVOU X0, X3; \
	POR X10, X3; \
	MOVOU X3, X4; \
	PCMPGTB X11, X4; \
	MOVOU X12, X5; \
	PCMPGTB X3, X5; \
	PAND X5, X4; \
	POR X4, X1; \
	POR X0, X1; \
	PMOVMSKB X1, AX; \
	PMOVMSKB X0, BX; \
	SHLQ $shift, AX; \
	SHLQ $shift, BX; \
	ORQ AX, R10; \
	ORQ BX, R11

// func classifyKernel(pad *byte, nblocks int, cand, high *uint64) uint64
TEXT ·classifyKernel(SB), NOSPLIT, $0-40
	MOVQ pad+0(FP), SI
	MOVQ nblocks+8(FP), CX
	MOVQ cand+16(FP), DI
	MOVQ high+24(FP), DX
	MOVQ $0x2f2f2f2f2f2f2f2f, AX
	MOVQ AX, X8
	PUNPCKLQDQ X8, X8
	MOVQ $0x3a3a3a3a3a3a3a3a, AX
	MOVQ AX, X9
	PUNPCKLQDQ X9, X9
	MOVQ $0x2020202020202020, AX
	MOVQ AX, X10
	PUNPCKLQDQ X10, X10
	MOVQ $0x6060606060606060, AX
	MOVQ AX, X11
	PUNPCKLQDQ X11, X11
	MOVQ $0x7b7b7b7b7b7b7b7b, AX
	MOVQ AX, X12
	PUNPCKLQDQ X12, X12
	XORQ R9, R9
	TESTQ CX, CX
	JZ   cdone

cloop:
	XORQ R10, R10
	XORQ R11, R11
	CLASSIFY16(0, 0)
	CLASSIFY16(16, 16)
	CLASSIFY16(32, 32)
	CLASSIFY16(48, 48)
	MOVQ R10, (DI)
	MOVQ R11, (DX)
	ORQ  R11, R9
	ADDQ $64, SI
	ADDQ $8, DI
	ADDQ $8, DX
	DECQ CX
	JNZ  cloop

cdone:
	MOVQ R9, ret+32(FP)
	RET
