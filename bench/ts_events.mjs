// Row 13's TypeScript side: events() of one execution with the built client, timed in-process.
//   node bench/ts_events.mjs EXECUTION_ID REPEAT LIVE_COMMAND
// Prints one JSON line: the seconds of each replay, its lines and events, and one live follow
// (start in the background, then follow to the end).
// The daemon is $WORKBENCH_URL with $WORKBENCH_TOKEN, found as the client finds them.

import { Workbench } from "../clients/typescript/dist/index.js";

const [executionId, repeat, liveCommand] = process.argv.slice(2);
const wb = new Workbench();

/** Follow `ref` to the end; the clock stops there: lines are counted after it. */
async function follow(ref) {
  const start = process.hrtime.bigint();
  const deltas = [];
  for await (const event of wb.events(ref)) deltas.push(event.outputDelta);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  let lines = 0;
  for (const delta of deltas) {
    if (delta) for (let at = delta.indexOf("\n"); at >= 0; at = delta.indexOf("\n", at + 1)) lines += 1;
  }
  return { seconds, lines, events: deltas.length };
}

await wb.health(); // the first request of a process loads its HTTP stack: not part of a figure
const replay = [];
let counts = { lines: 0, events: 0 };
for (let i = 0; i < Number(repeat); i++) {
  const { seconds, ...rest } = await follow(executionId);
  replay.push(seconds);
  counts = rest;
}
const start = process.hrtime.bigint();
const run = await wb.runBash(liveCommand, { background: true });
const live = await follow(run);
const liveSeconds = Number(process.hrtime.bigint() - start) / 1e9;
console.log(JSON.stringify({ replay, ...counts, live: liveSeconds, liveLines: live.lines }));
