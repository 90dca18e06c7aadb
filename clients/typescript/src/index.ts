/**
 * `@workbench/client`: the TypeScript client of the Workbench daemon.
 *
 *     import { Workbench } from "@workbench/client";
 *
 *     const wb = new Workbench();              // url and token found as the CLI finds them
 *     const run = await wb.runBash("make test", { background: true });
 *     for await (const event of wb.events(run)) {
 *       if (event.eventType === "output") process.stdout.write(event.outputDelta ?? "");
 *     }
 *     const done = await wb.wait(run);         // done.status, done.exitCode
 */

export {
  BACKOFF_FIRST_MS,
  CodeContext,
  type ContextRunOptions,
  BACKOFF_MAX_MS,
  DEFAULT_URL,
  ExecutionListing,
  Files,
  MAX_WAIT_MS,
  MAX_WAIT_TIMEOUT_MS,
  STREAM_IDLE_MS,
  Workbench,
} from "./client.js";
export {
  BadRequest,
  Conflict,
  ERROR_CLASSES,
  type ErrorOptions,
  Forbidden,
  IdempotencyKeyReused,
  ImageUnavailable,
  InputBacklog,
  InvalidRequest,
  NodeUnavailable,
  NotFound,
  PayloadTooLarge,
  PreconditionFailed,
  QuotaExceeded,
  RangeNotSatisfiable,
  StorageFull,
  TooManyExecutions,
  Unauthorized,
  Unavailable,
  UnknownImage,
  UnsupportedLanguage,
  WorkbenchError,
  errorFromBody,
} from "./errors.js";
export { INPUT_TIMEOUT_MS, MAX_INPUT_BYTES, inputPieces } from "./input.js";
export { type Frame, FrameReader } from "./sse.js";
export * from "./types.js";
export type { components, operations, paths } from "./generated/openapi.js";
