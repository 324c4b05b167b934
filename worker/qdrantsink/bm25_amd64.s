//go:build !purego

#include "textflag.h"
#include "go_asm.h"

// func scanKernel(st *scanState)
//
// Registers: DI state, R8 cand, R9 b, R14 b·64, R10 sm, R11 pad, R12
// vocab, R15 no; SI the run's start s; AX BX CX DX R13 scratch.
TEXT ·scanKernel(SB), NOSPLIT, $0-8
	MOVQ st+0(FP), DI
	MOVQ scanState_cand(DI), R8
	MOVQ scanState_b(DI), R9
	MOVQ R9, R14
	SHLQ $6, R14
	MOVQ scanState_sm(DI), R10
	MOVQ scanState_pad(DI), R11
	MOVQ scanState_vocab(DI), R12
	MOVQ scanState_no(DI), R15
	TESTQ R10, R10
	JNE  have

word:
	// The next word: its run starts are its bits whose previous bit
	// (across words too) is clear.
	LEAQ 1(R9), AX
	CMPQ AX, scanState_bend(DI)
	JGE  finish
	MOVQ AX, R9
	ADDQ $64, R14
	MOVQ (R8)(R9*8), R10
	MOVQ -8(R8)(R9*8), AX
	SHRQ $63, AX
	LEAQ (R10)(R10*1), BX
	ORQ  AX, BX
	NOTQ BX
	ANDQ BX, R10
	JEQ  word

have:
	BSFQ R10, SI
	LEAQ -1(R10), AX
	ANDQ AX, R10         // the start is taken
	ADDQ R14, SI         // s
	// The run's length: the trailing ones of the bitmap from bit s, read
	// as 8 bytes from byte s/8 (cand has a word past the text's).
	MOVQ SI, AX
	SHRQ $3, AX
	MOVQ (R8)(AX*1), BX
	MOVQ SI, CX
	ANDQ $7, CX
	SHRQ CX, BX
	NOTQ BX
	BSFQ BX, BX          // l; ZF if the bits ran out
	JEQ  exit
	LEAQ -1(BX), DX
	CMPQ DX, $16
	JAE  exit            // longer than shortMax
	MOVQ scanState_high(DI), DX
	TESTQ DX, DX
	JNE  highcheck

ascii:
	SHLQ $4, BX
	ADDQ scanState_masks(DI), BX // &masks[l]
	MOVQ (R11)(SI*1), DX
	MOVQ 8(R11)(SI*1), AX
	MOVQ $0x2020202020202020, CX
	ORQ  CX, DX
	ORQ  CX, AX
	ANDQ (BX), DX        // k0
	ANDQ 8(BX), AX       // k1
	MOVQ AX, BX
	IMULQ scanState_mul1(DI), AX
	ADDQ DX, AX
	IMULQ scanState_mul0(DI), AX
	MOVQ scanState_shift(DI), CX
	SHRQ CX, AX          // the slot (the shift leaves no higher bit)
	SHLQ $5, AX          // its byte offset
	LEAQ (R12)(AX*1), R13
	CMPQ DX, vocabEntry_k0(R13)
	JNE  second
	CMPQ BX, vocabEntry_k1(R13)
	JNE  second

count:
	// Count without branches: a token first seen in this call takes
	// position no, whose count is zero (stats is zero past the call's
	// tokens).
	MOVL vocabEntry_pos(R13), BX
	MOVL scanState_epoch(DI), DX
	XORL AX, AX
	CMPL DX, vocabEntry_epoch(R13)
	SETNE AL             // fresh: first seen in this call
	CMOVQNE R15, BX      // its position: no if fresh
	MOVL DX, vocabEntry_epoch(R13)
	MOVL BX, vocabEntry_pos(R13)
	MOVQ scanState_stats(DI), DX
	LEAQ (DX)(BX*8), DX  // &stats[p]
	INCL 4(DX)
	MOVL vocabEntry_fnv(R13), CX
	MOVL CX, 0(DX)
	ADDQ AX, R15
	TESTQ R10, R10
	JNE  have
	JMP  word

second:
	// The next slots, up to an empty one (the table is at most half full).
	ADDQ $32, AX
	ANDQ scanState_mask(DI), AX
	LEAQ (R12)(AX*1), R13
	MOVQ vocabEntry_k0(R13), CX
	CMPQ DX, CX
	JNE  empty
	CMPQ BX, vocabEntry_k1(R13)
	JEQ  count
	JMP  second

empty:
	TESTQ CX, CX
	JNE  second
	JMP  exit            // not in the table: the Go code inserts it

highcheck:
	// A non-ASCII byte in the run sends it to the Go code. AX is s/8, CX
	// s%8, BX l.
	MOVQ (DX)(AX*1), DX  // the high bits from byte s/8
	SHRQ CX, DX
	MOVQ BX, CX
	MOVQ $1, AX
	SHLQ CX, AX
	DECQ AX
	ANDQ AX, DX
	JNE  exit
	JMP  ascii

exit:
	MOVQ SI, scanState_s(DI)
	MOVQ $1, scanState_exited(DI)
	JMP  save

finish:
	MOVQ $0, scanState_exited(DI)

save:
	MOVQ R9, scanState_b(DI)
	MOVQ R10, scanState_sm(DI)
	MOVQ R15, scanState_no(DI)
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

// func classifyKernelSSE2(pad *byte, nblocks int, cand, high *uint64) uint64
TEXT ·classifyKernelSSE2(SB), NOSPLIT, $0-40
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

// func classifyKernel512(pad *byte, nblocks int, cand, high *uint64) uint64
//
// classifyKernelSSE2 with AVX-512BW: one 64-byte block per step, its bits
// straight from the compares' mask registers.
TEXT ·classifyKernel512(SB), NOSPLIT, $0-40
	MOVQ pad+0(FP), SI
	MOVQ nblocks+8(FP), CX
	MOVQ cand+16(FP), DI
	MOVQ high+24(FP), DX
	MOVL $0x30, AX
	VPBROADCASTB AX, Z8  // '0'
	MOVL $10, AX
	VPBROADCASTB AX, Z9
	MOVL $0x20, AX
	VPBROADCASTB AX, Z10
	MOVL $0x61, AX
	VPBROADCASTB AX, Z11 // 'a'
	MOVL $26, AX
	VPBROADCASTB AX, Z12
	XORQ R9, R9
	TESTQ CX, CX
	JZ   done512

loop512:
	VMOVDQU8 (SI), Z0
	VPSUBB   Z8, Z0, Z1
	VPCMPUB  $1, Z9, Z1, K1  // b−'0' < 10 (unsigned): a digit
	VPORQ    Z10, Z0, Z2
	VPSUBB   Z11, Z2, Z2
	VPCMPUB  $1, Z12, Z2, K2 // (b|0x20)−'a' < 26: a letter
	VPMOVB2M Z0, K3          // not ASCII
	KORQ     K2, K1, K1
	KORQ     K3, K1, K1
	KMOVQ    K1, AX
	KMOVQ    K3, BX
	MOVQ     AX, (DI)
	MOVQ     BX, (DX)
	ORQ      BX, R9
	ADDQ     $64, SI
	ADDQ     $8, DI
	ADDQ     $8, DX
	DECQ     CX
	JNZ      loop512

done512:
	VZEROUPPER
	MOVQ R9, ret+32(FP)
	RET
