// An independent reading of the span metric of Chroma's chunking
// evaluation, written from its definition alone (no code of eval, nor of
// Chroma's repository): for a question's references and its top k
// retrieved chunks, in characters (Unicode code points) of the source,
//
//   covered   = the characters of the union of every (chunk ∩ reference)
//               of the same file
//   recall    = covered / (the references' lengths summed)
//   precision = covered / (the k chunks' lengths summed, overlaps counted
//               each time)
//   IoU       = covered / (the k chunks' lengths summed + the references'
//               characters that no chunk covers, counted per reference)
//
// Where eval merges intervals, this counts positions: every character
// position of every reference is looked up in the chunks, and the covered
// ones go into a set. Byte offsets become character offsets by counting
// the bytes that start a UTF-8 sequence, checked against the code points
// JavaScript decodes.
//
// Input on stdin, JSON: {"files": {name: base64 of the bytes},
// "questions": [{"id", "references": [{file, start, end}],
// "retrieved": [{file, start, end}] (best first), "ks": [k, ...]}]},
// offsets in bytes. Output on stdout: [{"id", "scores": [{"recall",
// "precision", "iou"} per k]}].

import { readFileSync } from "node:fs";

const input = JSON.parse(readFileSync(0, "utf8"));

// charIndex[name][i] is the number of characters before byte i.
const charIndex = {};
for (const [name, b64] of Object.entries(input.files)) {
  const bytes = Buffer.from(b64, "base64");
  const index = new Int32Array(bytes.length + 1);
  for (let i = 0; i < bytes.length; i++) {
    index[i + 1] = index[i] + ((bytes[i] & 0xc0) !== 0x80 ? 1 : 0);
  }
  const decoded = [...new TextDecoder("utf-8", { fatal: true }).decode(bytes)].length;
  if (decoded !== index[bytes.length]) {
    throw new Error(`${name}: ${index[bytes.length]} sequence starts but ${decoded} code points`);
  }
  charIndex[name] = index;
}

function chars(r) {
  const index = charIndex[r.file];
  if (!index) throw new Error(`no file ${r.file}`);
  return { file: r.file, start: index[r.start], end: index[r.end] };
}

function scores(references, chunks) {
  const covered = new Map(); // file -> Set of covered positions
  for (const ref of references) {
    for (let p = ref.start; p < ref.end; p++) {
      if (chunks.some((c) => c.file === ref.file && c.start <= p && p < c.end)) {
        if (!covered.has(ref.file)) covered.set(ref.file, new Set());
        covered.get(ref.file).add(p);
      }
    }
  }
  let coveredChars = 0;
  for (const set of covered.values()) coveredChars += set.size;
  let refChars = 0;
  let uncovered = 0;
  for (const ref of references) {
    refChars += ref.end - ref.start;
    const set = covered.get(ref.file);
    for (let p = ref.start; p < ref.end; p++) {
      if (!set || !set.has(p)) uncovered++;
    }
  }
  let chunkChars = 0;
  for (const c of chunks) chunkChars += c.end - c.start;
  return {
    recall: refChars > 0 ? coveredChars / refChars : 0,
    precision: chunkChars > 0 ? coveredChars / chunkChars : 0,
    iou: chunkChars + uncovered > 0 ? coveredChars / (chunkChars + uncovered) : 0,
  };
}

const out = input.questions.map((q) => {
  const refs = q.references.map(chars);
  const retrieved = q.retrieved.map(chars);
  return { id: q.id, scores: q.ks.map((k) => scores(refs, retrieved.slice(0, k))) };
});
process.stdout.write(JSON.stringify(out));
