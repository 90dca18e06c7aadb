// The stream reader without I/O: frames from text cut anywhere.

import assert from "node:assert/strict";
import { test } from "node:test";

import { FrameReader } from "../dist/index.js";

const STREAM =
  ': keepalive\n\nid: 1\nevent: status\ndata: {"sequence": 1}\n\n' +
  'event: output\ndata: {"outputDelta": "live"}\n\n' +
  'event: gap\ndata: {"missedBytes": 12}\n\n' +
  "retry: 100\n\nid: 2\nevent: output\ndata: line one\ndata: line two\n\n";

const EXPECTED = [
  { id: 1, event: "status", data: '{"sequence": 1}' },
  { id: null, event: "output", data: '{"outputDelta": "live"}' },
  { id: null, event: "gap", data: '{"missedBytes": 12}' },
  { id: 2, event: "output", data: "line one\nline two" },
];

test("frames come whole however the text is cut", () => {
  for (let cut = 1; cut <= STREAM.length; cut++) {
    const reader = new FrameReader();
    const frames = [];
    for (let i = 0; i < STREAM.length; i += cut) frames.push(...reader.feed(STREAM.slice(i, i + cut)));
    assert.deepEqual(frames, EXPECTED, `cut every ${cut} characters`);
  }
});

test("CRLF line endings, a field without a value, and an id that is not a sequence", () => {
  const reader = new FrameReader();
  const frames = reader.feed("id: x\r\nevent: output\r\ndata\r\n\r\ndata:no space\n\n");
  assert.deepEqual(frames, [
    { id: null, event: "output", data: "" },
    { id: null, event: "message", data: "no space" },
  ]);
});
