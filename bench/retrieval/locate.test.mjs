// node --test locate.test.mjs (bench/retrieval's Go test runs it).
import { test } from "node:test";
import assert from "node:assert/strict";
import { locate } from "./locate.mjs";

test("spans are byte offsets, found in order", () => {
  const file = Buffer.from("héllo wörld. héllo again.", "utf8");
  const { spans, unlocated } = locate(file, ["héllo wörld.", "wörld. héllo", "héllo again."]);
  assert.equal(unlocated, 0);
  assert.deepEqual(spans, [[0, 14], [7, 21], [15, 28]]);
  for (const [i, t] of ["héllo wörld.", "wörld. héllo", "héllo again."].entries()) {
    assert.equal(file.subarray(spans[i][0], spans[i][1]).toString("utf8"), t);
  }
});

test("a repeated chunk is found at its own place, not the previous one's", () => {
  const file = Buffer.from("a b\n\na b\n\na b", "utf8");
  assert.deepEqual(locate(file, ["a b", "a b", "a b"]).spans, [[0, 3], [5, 8], [10, 13]]);
});

test("overlapping chunks start after the previous start", () => {
  const file = Buffer.from("one two three four", "utf8");
  assert.deepEqual(locate(file, ["one two three", "two three four"]).spans, [[0, 13], [4, 18]]);
});

test("a changed or empty chunk is unlocated and the search goes on", () => {
  const file = Buffer.from("alpha beta gamma", "utf8");
  const { spans, unlocated } = locate(file, ["alpha", "BETA", "", "gamma"]);
  assert.equal(unlocated, 2);
  assert.deepEqual(spans, [[0, 5], null, null, [11, 16]]);
});

test("a chunk before the previous one's start is unlocated", () => {
  const file = Buffer.from("x y z", "utf8");
  assert.deepEqual(locate(file, ["y", "x"]), { spans: [[2, 3], null], unlocated: 1 });
});
