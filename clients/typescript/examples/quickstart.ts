// Run with a daemon up (`workbench serve`): npm run example
import { NotFound, Workbench, isTerminal } from "@workbench/client";

// The URL is $WORKBENCH_URL (else http://127.0.0.1:8787); the token $WORKBENCH_TOKEN, else the
// daemon's data dir's `token` file, as the command line finds them.
const wb = new Workbench();

// In the foreground: the record once it has ended, and its output as bytes.
const hello = await wb.runBash("echo hello; echo oops >&2; exit 3");
console.log(`${hello.status}, exit code ${hello.exitCode}`); // failed, exit code 3
console.log(new TextDecoder().decode(await wb.output(hello, "stdout"))); // hello

// In the background: follow its events live (they reconnect by themselves), then the outcome.
const build = await wb.runBash("for i in 1 2 3; do echo step $i; sleep 0.2; done", {
  background: true,
  timeoutMs: 60_000,
  metadata: { task: "example" },
});
for await (const event of wb.events(build)) {
  if (event.eventType === "output") process.stdout.write(event.outputDelta ?? "");
}
const done = await wb.wait(build, { timeoutMs: 30_000 });
console.log(`${done.executionId}: ${done.status} (exit ${done.exitCode})`);

// A wait that times out leaves the execution running; cancel kills its whole tree.
const slow = await wb.runBash("sleep 60", { background: true });
const still = await wb.wait(slow, { timeoutMs: 200 });
console.log(isTerminal(still) ? "ended" : `still ${still.status}`); // still running
await wb.cancel(slow, { reason: "the example is done" });
console.log((await wb.wait(slow)).status); // cancelled

// Code, in the languages the image has.
const sum = await wb.runCode("python", "print(sum(range(10)))");
console.log(new TextDecoder().decode(await wb.output(sum)).trim()); // 45

// Errors are classes named after the API's error codes.
try {
  await wb.get("ex_00000000000000000000000000");
} catch (error) {
  if (!(error instanceof NotFound)) throw error;
  console.log(`${error.code}: ${error.message}`);
}
