/**
 * The errors of the client: one class per error code of the API, under `WorkbenchError`.
 *
 *     WorkbenchError            internal (and any code this client does not know)
 *     ├── BadRequest            bad_request: malformed JSON, bad query parameters
 *     ├── Unauthorized          unauthorized: missing or wrong token
 *     ├── Forbidden             forbidden: the token lacks the scope
 *     ├── NotFound              not_found: unknown execution, artifact or route (or another's)
 *     ├── Conflict              conflict: e.g. deleting an execution that is not terminal
 *     ├── PreconditionFailed    precondition_failed: a file's `If-Match` did not match
 *     ├── PayloadTooLarge       payload_too_large: body over the limit
 *     ├── InvalidRequest        invalid_request: fails validation; `details` lists the fields
 *     │   ├── IdempotencyKeyReused   the same key with a different body
 *     │   ├── UnknownImage           no image by that name
 *     │   ├── ImageUnavailable       the image cannot run on this machine
 *     │   └── UnsupportedLanguage    the image has no such language
 *     ├── RangeNotSatisfiable   range_not_satisfiable: a Range of an artifact that cannot be met
 *     ├── TooManyExecutions     too_many_executions: the queue is full
 *     ├── QuotaExceeded         quota_exceeded: a write past the session's workspace quota
 *     ├── InputBacklog          input_backlog: the execution has not read the input sent before;
 *     │                         nothing of this input was taken (`sendInput` sends it again)
 *     ├── StorageFull           storage_full: the daemon's disk is full; nothing new is accepted
 *     └── Unavailable           unavailable: shutting down, the store failed, or the daemon
 *         │                     cannot be reached at all
 *         └── NodeUnavailable   node_unavailable: the node that holds an artifact is away
 *
 * Each carries `code`, `message`, `details` (as the daemon sent them) and `status` (the HTTP
 * status, or undefined when there was no answer). An aborted call rejects with the signal's
 * reason instead (an `AbortError` unless the caller gave another).
 */

export interface ErrorOptions {
  /** The API's `details` (for `InvalidRequest`: the fields that failed). */
  details?: unknown;
  /** The HTTP status of the answer, when there was one. */
  status?: number;
  /** The error code, for a code without a class of its own. */
  code?: string;
  cause?: unknown;
}

export class WorkbenchError extends Error {
  /** The API error code of this class. */
  static readonly code: string = "internal";
  /** The API error code (`not_found`, `invalid_request`, ...). */
  readonly code: string;
  /** What the daemon sent as `details` (null when nothing). */
  readonly details: unknown;
  /** The HTTP status, or undefined when the daemon did not answer. */
  readonly status: number | undefined;

  constructor(message: string, options: ErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code ?? (new.target as typeof WorkbenchError).code;
    this.details = options.details ?? null;
    this.status = options.status;
  }
}

export class BadRequest extends WorkbenchError {
  static override readonly code: string = "bad_request";
}

export class Unauthorized extends WorkbenchError {
  static override readonly code: string = "unauthorized";
}

export class Forbidden extends WorkbenchError {
  static override readonly code: string = "forbidden";
}

export class NotFound extends WorkbenchError {
  static override readonly code: string = "not_found";
}

export class Conflict extends WorkbenchError {
  static override readonly code: string = "conflict";
}

export class PayloadTooLarge extends WorkbenchError {
  static override readonly code: string = "payload_too_large";
}

export class InvalidRequest extends WorkbenchError {
  static override readonly code: string = "invalid_request";
}

export class IdempotencyKeyReused extends InvalidRequest {
  static override readonly code: string = "idempotency_key_reused";
}

export class UnknownImage extends InvalidRequest {
  static override readonly code: string = "unknown_image";
}

export class ImageUnavailable extends InvalidRequest {
  static override readonly code: string = "image_unavailable";
}

export class UnsupportedLanguage extends InvalidRequest {
  static override readonly code: string = "unsupported_language";
}

export class PreconditionFailed extends WorkbenchError {
  static override readonly code: string = "precondition_failed";
}

export class RangeNotSatisfiable extends WorkbenchError {
  static override readonly code: string = "range_not_satisfiable";
}

export class TooManyExecutions extends WorkbenchError {
  static override readonly code: string = "too_many_executions";
}

export class QuotaExceeded extends WorkbenchError {
  static override readonly code: string = "quota_exceeded";
}

export class InputBacklog extends WorkbenchError {
  static override readonly code: string = "input_backlog";
}

export class StorageFull extends WorkbenchError {
  static override readonly code: string = "storage_full";
}

export class Unavailable extends WorkbenchError {
  static override readonly code: string = "unavailable";
}

export class NodeUnavailable extends Unavailable {
  static override readonly code: string = "node_unavailable";
}

/** Every error class by its API code. */
export const ERROR_CLASSES: Readonly<Record<string, typeof WorkbenchError>> = Object.freeze(
  Object.fromEntries(
    [
      WorkbenchError,
      BadRequest,
      Unauthorized,
      Forbidden,
      NotFound,
      Conflict,
      PreconditionFailed,
      PayloadTooLarge,
      InvalidRequest,
      IdempotencyKeyReused,
      UnknownImage,
      ImageUnavailable,
      UnsupportedLanguage,
      RangeNotSatisfiable,
      TooManyExecutions,
      QuotaExceeded,
      InputBacklog,
      StorageFull,
      Unavailable,
      NodeUnavailable,
    ].map((cls) => [cls.code, cls]),
  ),
);

/** The statuses a proxy answers for a daemon it cannot reach (Bad Gateway, ...). */
const GATEWAY_STATUSES: ReadonlySet<number> = new Set([502, 503, 504]);

/**
 * The error a non-success answer stands for: the class named by the code of its JSON error body,
 * or, when it is not one, `Unavailable` for a 502, 503 or 504 (a proxy's: the daemon is away)
 * and a `WorkbenchError` otherwise, quoting the start of the body.
 */
export function errorFromBody(status: number, body: string): WorkbenchError {
  let error: { code?: unknown; message?: unknown; details?: unknown } | undefined;
  try {
    const parsed: unknown = JSON.parse(body);
    if (parsed !== null && typeof parsed === "object" && "error" in parsed) {
      const inner = (parsed as { error: unknown }).error;
      if (inner !== null && typeof inner === "object") error = inner as typeof error;
    }
  } catch {
    error = undefined;
  }
  if (error === undefined || typeof error.code !== "string" || typeof error.message !== "string") {
    const text = body.slice(0, 200).trim() || "(no body)";
    // Not the daemon's own answer: a proxy's that cannot reach it (it is away or restarting).
    if (GATEWAY_STATUSES.has(status)) {
      return new Unavailable(`HTTP ${status} from the daemon or a proxy before it: ${text}`, { status });
    }
    return new WorkbenchError(`HTTP ${status} from the daemon: ${text}`, { status });
  }
  const cls = ERROR_CLASSES[error.code] ?? WorkbenchError;
  // A code this client does not know (a newer daemon) is kept, under the base class.
  return new cls(error.message, { status, details: error.details, code: error.code });
}
