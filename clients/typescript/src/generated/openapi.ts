// Generated from the daemon's GET /openapi.json by scripts/generate.mjs: do not edit.
// Regenerate with `npm run generate -- --url http://127.0.0.1:8787` against a running daemon.

export interface paths {
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Answers once the daemon accepts work */
        get: operations["health"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** This document */
        get: operations["openapi"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/executions/workbench_bash": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Start a bash execution */
        post: operations["startBash"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/executions/workbench_code": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Start a code execution */
        post: operations["startCode"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/executions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List executions, newest first */
        get: operations["listExecutions"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/exits": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Long-poll the exits feed of detached executions */
        get: operations["exits"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/exits/{deliveryId}/ack": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Mark an exit delivered */
        post: operations["ackExit"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/images": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The images executions can run in */
        get: operations["images"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/executions/{kind}/{executionId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read one execution */
        get: operations["getExecutionWithKind"];
        put?: never;
        post?: never;
        /** Dispose of a terminal execution and its files */
        delete: operations["deleteExecutionWithKind"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/executions/{executionId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read one execution */
        get: operations["getExecution"];
        put?: never;
        post?: never;
        /** Dispose of a terminal execution and its files */
        delete: operations["deleteExecution"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/executions/{kind}/{executionId}/wait": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Wait for the end (long-poll) */
        post: operations["waitWithKind"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/executions/{executionId}/wait": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Wait for the end (long-poll) */
        post: operations["wait"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/executions/{kind}/{executionId}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Cancel: kill the whole process tree */
        post: operations["cancelWithKind"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/executions/{executionId}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Cancel: kill the whole process tree */
        post: operations["cancel"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/executions/{kind}/{executionId}/detach": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Hand the outcome to the exits feed */
        post: operations["detachWithKind"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/executions/{executionId}/detach": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Hand the outcome to the exits feed */
        post: operations["detach"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/executions/{kind}/{executionId}/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A page of journal events */
        get: operations["eventsWithKind"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/executions/{executionId}/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A page of journal events */
        get: operations["events"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/executions/{kind}/{executionId}/events/stream": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Follow the events (server-sent events) */
        get: operations["eventsStreamWithKind"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/executions/{executionId}/events/stream": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Follow the events (server-sent events) */
        get: operations["eventsStream"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/executions/{kind}/{executionId}/artifacts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the artifacts */
        get: operations["artifactsWithKind"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/executions/{executionId}/artifacts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the artifacts */
        get: operations["artifacts"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/executions/{kind}/{executionId}/artifacts/{name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Download an artifact (honours Range) */
        get: operations["artifactWithKind"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/executions/{executionId}/artifacts/{name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Download an artifact (honours Range) */
        get: operations["artifact"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The dashboard (HTML) */
        get: operations["dashboard"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/ui/{asset}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A file of the dashboard (script or style sheet) */
        get: operations["dashboardAsset"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/login": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Trade a token (or a one-time code) for a session cookie */
        post: operations["login"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/logout": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** End the session of the cookie */
        post: operations["logout"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/login/links": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** A one-time login code for a browser */
        post: operations["loginLink"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/events/stream": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Follow every visible execution's changes (server-sent events) */
        get: operations["changesStream"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/executions/{kind}/{executionId}/stream-token": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** A token that opens this execution's stream for 10 minutes */
        post: operations["streamTokenWithKind"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/executions/{executionId}/stream-token": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** A token that opens this execution's stream for 10 minutes */
        post: operations["streamToken"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** Artifact */
        Artifact: {
            name: string;
            sizeBytes: number;
            sha256: string;
            contentType: string;
        };
        /** ArtifactList */
        ArtifactList: {
            artifacts: components["schemas"]["Artifact"][];
        };
        /**
         * CancelRequest
         * @description `POST .../cancel`.
         */
        CancelRequest: {
            /**
             * @description Kept in the record as `cancelReason`.
             * @default null
             */
            reason: string | null;
            /**
             * @description Send SIGTERM first and wait up to this long before SIGKILL (default 0: SIGKILL at once).
             * @default 0
             */
            graceMs: number;
        };
        /** CancelResult */
        CancelResult: {
            cancelled: boolean;
            execution: components["schemas"]["Execution"];
        };
        /** Capabilities */
        Capabilities: {
            cancellable: string;
            streamingSupport: boolean;
            backgroundSupport: boolean;
        };
        /**
         * Change
         * @description One event of `GET /v1/events/stream`: an execution as it is after its latest change.
         */
        Change: {
            changeId: number;
            change: components["schemas"]["ChangeType"];
            execution: components["schemas"]["Execution"];
            progress: components["schemas"]["Progress"] | null;
        };
        /**
         * Degraded
         * @description The answer of `/healthz` (503) while the daemon refuses new work (a full disk) or cannot
         *     supervise executions (its shim is being replaced).
         */
        Degraded: {
            status: string;
            reason: string;
        };
        /**
         * DetachResult
         * @description `POST .../detach`: detached, or not because it had already ended (then with its record).
         */
        DetachResult: {
            detached: boolean;
            /** @description The record, when it had already ended (`detached: false`). */
            execution?: components["schemas"]["Execution"] | null;
        };
        /** ErrorBody */
        ErrorBody: {
            code: components["schemas"]["ErrorCode"];
            message: string;
            /** @description What exactly was wrong, e.g. `[{"field", "message"}]` for `invalid_request`. */
            details?: unknown;
        };
        /**
         * ErrorInfo
         * @description Why an execution failed (`error` of the record and of the terminal event).
         */
        ErrorInfo: {
            /**
             * @description `spawn_failed`, `timeout`, `idle_timeout`, `signal`, `oom`, `cpu_limit`, `file_size_limit`,
             *     `lost` or `internal`.
             */
            code: string;
            message: string;
        };
        /** ErrorResponse */
        ErrorResponse: {
            error: components["schemas"]["ErrorBody"];
        };
        /**
         * Event
         * @description One journal event.
         */
        Event: {
            sequence: number;
            eventType: components["schemas"]["EventType"];
            status: components["schemas"]["ExecutionStatus"];
            /** Format: date-time */
            timestamp: string;
            stream: components["schemas"]["StreamName"] | null;
            outputDelta: string | null;
            message: string | null;
            progress: number | null;
            total: number | null;
            exitCode: number | null;
            signal: string | null;
            error: components["schemas"]["ErrorInfo"] | null;
        };
        /** EventPage */
        EventPage: {
            events: components["schemas"]["Event"][];
            nextAfter: number;
            terminal: boolean;
        };
        /**
         * Execution
         * @description The execution record.
         */
        Execution: {
            executionId: string;
            executionKind: components["schemas"]["ExecutionKind"];
            sessionId: string;
            status: components["schemas"]["ExecutionStatus"];
            command: string | null;
            language: string | null;
            code: string | null;
            cwd: string;
            image: string;
            env: {
                [key: string]: string;
            };
            metadata: unknown;
            idempotencyKey: string | null;
            /** Format: date-time */
            createdAt: string;
            startedAt: string | null;
            finishedAt: string | null;
            /** Format: date-time */
            deadlineAt: string;
            timeoutMs: number;
            idleTimeoutMs: number | null;
            exitCode: number | null;
            signal: string | null;
            error: components["schemas"]["ErrorInfo"] | null;
            cancelReason: string | null;
            capabilities: components["schemas"]["Capabilities"];
            output: components["schemas"]["OutputInfo"];
            artifacts: components["schemas"]["Artifact"][];
            lastSequence: number;
            detached: boolean;
            containment: components["schemas"]["Containment"] | null;
            /** @description The head and tail of stdout and stderr; null in a listing without `?include=preview`. */
            preview: components["schemas"]["Preview"] | null;
        };
        /** ExecutionList */
        ExecutionList: {
            executions: components["schemas"]["Execution"][];
            nextCursor: string | null;
        };
        /**
         * @description where an execution is in its life
         * @enum {string}
         */
        ExecutionStatus: "queued" | "running" | "cancel_requested" | "completed" | "failed" | "cancelled" | "timed_out";
        /**
         * Exit
         * @description One delivery of the exits feed: the outcome of a detached execution.
         */
        Exit: {
            deliveryId: string;
            executionId: string;
            executionKind: components["schemas"]["ExecutionKind"];
            status: components["schemas"]["ExecutionStatus"];
            exitCode: number | null;
            signal: string | null;
            error: components["schemas"]["ErrorInfo"] | null;
            metadata: unknown;
            stdoutTail: string;
            stderrTail: string;
            finishedAt: string | null;
            attempt: number;
        };
        /**
         * ExitList
         * @description `GET /v1/exits`.
         */
        ExitList: {
            exits: components["schemas"]["Exit"][];
        };
        /**
         * Health
         * @description `GET /healthz` (200): the daemon takes work. See `Degraded` for the 503.
         */
        Health: {
            status: string;
        };
        /**
         * Image
         * @description What an execution can run in (`GET /v1/images`).
         */
        Image: {
            name: string;
            description: string;
            languages: string[];
            isolation: components["schemas"]["ImageIsolation"];
            available: boolean;
            unavailableReason: string | null;
        };
        /** ImageIsolation */
        ImageIsolation: {
            filesystem: string;
            network: boolean;
            pidNamespace: boolean;
        };
        /** ImageList */
        ImageList: {
            images: components["schemas"]["Image"][];
        };
        /**
         * Login
         * @description A session: who it is, what it may do, its CSRF value, when it ends.
         */
        Login: {
            principal: string;
            scopes: string[];
            /** @description Send as `X-Workbench-CSRF` with every change made with the session cookie. */
            csrfToken: string;
            /** Format: date-time */
            expiresAt: string;
        };
        /**
         * LoginLink
         * @description A one-time login code: `/#login=CODE` opens the dashboard logged in.
         */
        LoginLink: {
            code: string;
            /** Format: date-time */
            expiresAt: string;
        };
        /**
         * LoginRequest
         * @description `POST /v1/login`: a bearer token, or a one-time code from `POST /v1/login/links`.
         */
        LoginRequest: {
            /**
             * @description A bearer token; the session gets its principal and scopes.
             * @default null
             */
            token: string | null;
            /**
             * @description A one-time login code (`workbench ui`), spent by this login.
             * @default null
             */
            code: string | null;
        };
        /** OutputInfo */
        OutputInfo: {
            stdoutBytes: number;
            stderrBytes: number;
            eventBytes: number;
            budgetBytes: number;
            truncated: boolean;
        };
        /**
         * Preview
         * @description The head and tail of each output stream (API.md, "Output in the record").
         *
         *     Each string is at most `previewBytes` bytes of UTF-8: the whole stream when it fits, else its
         *     first quarter and last three quarters joined by one line `[... N bytes elided ...]`, where
         *     `*ElidedBytes` is N, in the process's own bytes. Live while running, final at the end.
         */
        Preview: {
            stdout: string;
            stderr: string;
            stdoutElidedBytes: number;
            stderrElidedBytes: number;
        };
        /** Progress */
        Progress: {
            progress: number | null;
            total: number | null;
            message: string | null;
        };
        /**
         * StartBashRequest
         * @description `POST /v1/executions/workbench_bash`.
         */
        StartBashRequest: {
            /**
             * @description false: wait up to `waitTimeoutMs`, then 201 with the record, terminal or not; true: 202 at once.
             * @default false
             */
            background: boolean;
            /**
             * @description How long a foreground start waits for the end (default 30000).
             * @default null
             */
            waitTimeoutMs: number | null;
            /**
             * @description The deadline, counted from acceptance, queueing included (default 3600000).
             * @default null
             */
            timeoutMs: number | null;
            /**
             * @description No output for this long ends it `timed_out` (`error.code` `idle_timeout`).
             * @default null
             */
            idleTimeoutMs: number | null;
            /**
             * @description An absolute working directory that exists (default: the session's workspace).
             * @default null
             */
            cwd: string | null;
            /** @description Variables over the image's; each `NAME=value` at most 131071 bytes, without NUL. */
            env?: {
                [key: string]: string;
            };
            /**
             * @description Text fed to the process, then end of file (default: end of file at once).
             * @default null
             */
            stdin: string | null;
            /**
             * @description Any JSON, at most 16384 bytes encoded; kept with the record and returned unchanged.
             * @default null
             */
            metadata: unknown;
            /**
             * @description The image to run in (`GET /v1/images`).
             * @default host
             */
            image: string;
            /**
             * @description The session: its workspace is the default `cwd`. Not `.` or `..`.
             * @default default
             */
            sessionId: string;
            /**
             * @description Hand the outcome to the exits feed.
             * @default false
             */
            detached: boolean;
            /**
             * @description The most bytes of each stream's `preview` in the record (its head and tail beyond that).
             * @default 16384
             */
            previewBytes: number;
            /**
             * @description `plain`: the preview as a terminal shows it (no ANSI escapes, redrawn lines in their last state).
             * @default raw
             */
            previewFormat: components["schemas"]["PreviewFormat"];
            /**
             * @description Foreground starts: when `waitTimeoutMs` passes, `return` the record, `detach` or `cancel` the run.
             * @default return
             */
            onWaitTimeout: components["schemas"]["OnWaitTimeout"];
            /** @description Run by the image's shell (`bash -c`); at most 131071 bytes, without NUL. */
            command: string;
        };
        /**
         * StartCodeRequest
         * @description `POST /v1/executions/workbench_code`.
         */
        StartCodeRequest: {
            /**
             * @description false: wait up to `waitTimeoutMs`, then 201 with the record, terminal or not; true: 202 at once.
             * @default false
             */
            background: boolean;
            /**
             * @description How long a foreground start waits for the end (default 30000).
             * @default null
             */
            waitTimeoutMs: number | null;
            /**
             * @description The deadline, counted from acceptance, queueing included (default 3600000).
             * @default null
             */
            timeoutMs: number | null;
            /**
             * @description No output for this long ends it `timed_out` (`error.code` `idle_timeout`).
             * @default null
             */
            idleTimeoutMs: number | null;
            /**
             * @description An absolute working directory that exists (default: the session's workspace).
             * @default null
             */
            cwd: string | null;
            /** @description Variables over the image's; each `NAME=value` at most 131071 bytes, without NUL. */
            env?: {
                [key: string]: string;
            };
            /**
             * @description Text fed to the process, then end of file (default: end of file at once).
             * @default null
             */
            stdin: string | null;
            /**
             * @description Any JSON, at most 16384 bytes encoded; kept with the record and returned unchanged.
             * @default null
             */
            metadata: unknown;
            /**
             * @description The image to run in (`GET /v1/images`).
             * @default host
             */
            image: string;
            /**
             * @description The session: its workspace is the default `cwd`. Not `.` or `..`.
             * @default default
             */
            sessionId: string;
            /**
             * @description Hand the outcome to the exits feed.
             * @default false
             */
            detached: boolean;
            /**
             * @description The most bytes of each stream's `preview` in the record (its head and tail beyond that).
             * @default 16384
             */
            previewBytes: number;
            /**
             * @description `plain`: the preview as a terminal shows it (no ANSI escapes, redrawn lines in their last state).
             * @default raw
             */
            previewFormat: components["schemas"]["PreviewFormat"];
            /**
             * @description Foreground starts: when `waitTimeoutMs` passes, `return` the record, `detach` or `cancel` the run.
             * @default return
             */
            onWaitTimeout: components["schemas"]["OnWaitTimeout"];
            /** @description A language of the image (`bash`, `sh`, `python`, `node` where installed). */
            language: string;
            /** @description The program, written to a file and run by the image's command for `language`; without NUL. */
            code: string;
        };
        /**
         * StreamToken
         * @description Opens one execution's stream (`?streamToken=`) for 10 minutes.
         */
        StreamToken: {
            streamToken: string;
            /** Format: date-time */
            expiresAt: string;
        };
        /**
         * WaitRequest
         * @description `POST .../wait`.
         */
        WaitRequest: {
            /**
             * @description How long to wait for the end (default 30000).
             * @default null
             */
            waitTimeoutMs: number | null;
        };
        /** WaitResult */
        WaitResult: {
            execution: components["schemas"]["Execution"];
            waitTimedOut: boolean;
        };
        /**
         * @description what an execution runs
         * @enum {string}
         */
        ExecutionKind: "workbench_bash" | "workbench_code";
        /**
         * @description what a journal event records
         * @enum {string}
         */
        EventType: "status" | "output" | "output_truncated" | "progress" | "artifact";
        /**
         * @description an output stream (and the artifact that keeps it)
         * @enum {string}
         */
        StreamName: "stdout" | "stderr";
        /**
         * @description how an execution's process tree is held and killed
         * @enum {string}
         */
        Containment: "cgroup" | "pidns" | "pgroup";
        /**
         * @description how the record's `preview` is made
         * @enum {string}
         */
        PreviewFormat: "raw" | "plain";
        /**
         * @description what a foreground start does when its wait passes
         * @enum {string}
         */
        OnWaitTimeout: "return" | "detach" | "cancel";
        /**
         * @description what changed, in the changes stream
         * @enum {string}
         */
        ChangeType: "created" | "status" | "progress" | "terminal";
        /**
         * @description the code of an error response; its HTTP status is fixed per code
         * @enum {string}
         */
        ErrorCode: "bad_request" | "unauthorized" | "forbidden" | "not_found" | "conflict" | "payload_too_large" | "range_not_satisfiable" | "invalid_request" | "idempotency_key_reused" | "unknown_image" | "image_unavailable" | "unsupported_language" | "too_many_executions" | "unavailable" | "storage_full" | "internal";
    };
    responses: {
        /** @description `bad_request` (400): malformed JSON, a query parameter the route does not take or that does not parse, a bad header */
        bad_request: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description `unauthorized` (401): missing or wrong bearer token */
        unauthorized: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description `forbidden` (403): the token lacks the scope for this route */
        forbidden: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description `not_found` (404): unknown execution, kind, artifact, exit or route (or a wrong method), or an execution of another principal */
        not_found: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description `conflict` (409): the request conflicts with the current state: deleting an execution that has not ended */
        conflict: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description `payload_too_large` (413): body over the limit (1 MiB) */
        payload_too_large: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description `range_not_satisfiable` (416): the `Range` cannot be met (`Content-Range: bytes *\/SIZE`) */
        range_not_satisfiable: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description `invalid_request` (422): the body fails validation (`details` lists the fields) */
        invalid_request: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description `idempotency_key_reused` (422): the Idempotency-Key was first used with a different body */
        idempotency_key_reused: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description `unknown_image` (422): no image by that name */
        unknown_image: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description `image_unavailable` (422): the image cannot run on this machine */
        image_unavailable: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description `unsupported_language` (422): the image has no such language */
        unsupported_language: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description `too_many_executions` (429): the queue is full */
        too_many_executions: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description `unavailable` (503): shutting down, or the store failed */
        unavailable: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description `storage_full` (507): the disk holding the data dir is full: nothing new is written until space is freed */
        storage_full: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description `internal` (500): a bug: see the daemon's log */
        internal: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
    };
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    health: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description ready */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Health"];
                };
            };
            400: components["responses"]["bad_request"];
            413: components["responses"]["payload_too_large"];
            /** @description degraded: `reason` says why (a full disk, the supervisor replaced) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Degraded"];
                };
            };
        };
    };
    openapi: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the OpenAPI 3.1 document */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, never>;
                };
            };
            400: components["responses"]["bad_request"];
            413: components["responses"]["payload_too_large"];
        };
    };
    startBash: {
        parameters: {
            query?: never;
            header?: {
                /** @description printable characters; the first request with a key creates the execution, a later one with the same body returns the same record (200, `Idempotent-Replayed: true`) */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["StartBashRequest"];
            };
        };
        responses: {
            /** @description replayed by its Idempotency-Key (header `Idempotent-Replayed: true`) */
            200: {
                headers: {
                    /** @description the answer is a replay */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Execution"];
                };
            };
            /** @description ran in the foreground: the record after up to `waitTimeoutMs`, terminal or not */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Execution"];
                };
            };
            /** @description accepted in the background (`queued` or `running`) */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Execution"];
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            413: components["responses"]["payload_too_large"];
            /** @description `invalid_request`: the body fails validation (`details` lists the fields); `idempotency_key_reused`: the Idempotency-Key was first used with a different body; `unknown_image`: no image by that name; `image_unavailable`: the image cannot run on this machine; `unsupported_language`: the image has no such language */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            429: components["responses"]["too_many_executions"];
            503: components["responses"]["unavailable"];
            507: components["responses"]["storage_full"];
        };
    };
    startCode: {
        parameters: {
            query?: never;
            header?: {
                /** @description printable characters; the first request with a key creates the execution, a later one with the same body returns the same record (200, `Idempotent-Replayed: true`) */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["StartCodeRequest"];
            };
        };
        responses: {
            /** @description replayed by its Idempotency-Key (header `Idempotent-Replayed: true`) */
            200: {
                headers: {
                    /** @description the answer is a replay */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Execution"];
                };
            };
            /** @description ran in the foreground: the record after up to `waitTimeoutMs`, terminal or not */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Execution"];
                };
            };
            /** @description accepted in the background (`queued` or `running`) */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Execution"];
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            413: components["responses"]["payload_too_large"];
            /** @description `invalid_request`: the body fails validation (`details` lists the fields); `idempotency_key_reused`: the Idempotency-Key was first used with a different body; `unknown_image`: no image by that name; `image_unavailable`: the image cannot run on this machine; `unsupported_language`: the image has no such language */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            429: components["responses"]["too_many_executions"];
            503: components["responses"]["unavailable"];
            507: components["responses"]["storage_full"];
        };
    };
    listExecutions: {
        parameters: {
            query?: {
                /** @description only this status */
                status?: components["schemas"]["ExecutionStatus"];
                /** @description only this kind */
                kind?: components["schemas"]["ExecutionKind"];
                /** @description only this session's */
                sessionId?: string;
                /** @description page size */
                limit?: number;
                /** @description `nextCursor` of the previous page */
                cursor?: string;
                /** @description text in the id, command, code or metadata */
                q?: string;
                /** @description `preview`: each record carries its `preview` (otherwise null) */
                include?: "preview";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description a page; pass `nextCursor` as `cursor` for the next */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ExecutionList"];
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            413: components["responses"]["payload_too_large"];
            503: components["responses"]["unavailable"];
        };
    };
    exits: {
        parameters: {
            query?: {
                /** @description at most this many */
                limit?: number;
                /** @description long-poll for this long */
                waitTimeoutMs?: number;
                /** @description hide what is handed out for this long */
                leaseMs?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description undelivered exits, each leased for `leaseMs` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ExitList"];
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            413: components["responses"]["payload_too_large"];
            503: components["responses"]["unavailable"];
            507: components["responses"]["storage_full"];
        };
    };
    ackExit: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the delivery id of an exit (`dl_` + 26 characters); any other is 404 */
                deliveryId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description delivered: never handed out again */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            404: components["responses"]["not_found"];
            413: components["responses"]["payload_too_large"];
            503: components["responses"]["unavailable"];
            507: components["responses"]["storage_full"];
        };
    };
    images: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description every image, available or not */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ImageList"];
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            413: components["responses"]["payload_too_large"];
            503: components["responses"]["unavailable"];
        };
    };
    getExecutionWithKind: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the execution kind; a wrong one is 404 */
                kind: components["schemas"]["ExecutionKind"];
                /** @description the execution id (`ex_[0-9A-HJKMNP-TV-Z]{26}`); any other is 404 */
                executionId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the record */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Execution"];
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            404: components["responses"]["not_found"];
            413: components["responses"]["payload_too_large"];
            503: components["responses"]["unavailable"];
        };
    };
    deleteExecutionWithKind: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the execution kind; a wrong one is 404 */
                kind: components["schemas"]["ExecutionKind"];
                /** @description the execution id (`ex_[0-9A-HJKMNP-TV-Z]{26}`); any other is 404 */
                executionId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description gone */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            404: components["responses"]["not_found"];
            409: components["responses"]["conflict"];
            413: components["responses"]["payload_too_large"];
            503: components["responses"]["unavailable"];
            507: components["responses"]["storage_full"];
        };
    };
    getExecution: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the execution id (`ex_[0-9A-HJKMNP-TV-Z]{26}`); any other is 404 */
                executionId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the record */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Execution"];
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            404: components["responses"]["not_found"];
            413: components["responses"]["payload_too_large"];
            503: components["responses"]["unavailable"];
        };
    };
    deleteExecution: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the execution id (`ex_[0-9A-HJKMNP-TV-Z]{26}`); any other is 404 */
                executionId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description gone */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            404: components["responses"]["not_found"];
            409: components["responses"]["conflict"];
            413: components["responses"]["payload_too_large"];
            503: components["responses"]["unavailable"];
            507: components["responses"]["storage_full"];
        };
    };
    waitWithKind: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the execution kind; a wrong one is 404 */
                kind: components["schemas"]["ExecutionKind"];
                /** @description the execution id (`ex_[0-9A-HJKMNP-TV-Z]{26}`); any other is 404 */
                executionId: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["WaitRequest"];
            };
        };
        responses: {
            /** @description terminal, or the wait timed out (`waitTimedOut`) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WaitResult"];
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            404: components["responses"]["not_found"];
            413: components["responses"]["payload_too_large"];
            422: components["responses"]["invalid_request"];
            503: components["responses"]["unavailable"];
        };
    };
    wait: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the execution id (`ex_[0-9A-HJKMNP-TV-Z]{26}`); any other is 404 */
                executionId: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["WaitRequest"];
            };
        };
        responses: {
            /** @description terminal, or the wait timed out (`waitTimedOut`) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WaitResult"];
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            404: components["responses"]["not_found"];
            413: components["responses"]["payload_too_large"];
            422: components["responses"]["invalid_request"];
            503: components["responses"]["unavailable"];
        };
    };
    cancelWithKind: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the execution kind; a wrong one is 404 */
                kind: components["schemas"]["ExecutionKind"];
                /** @description the execution id (`ex_[0-9A-HJKMNP-TV-Z]{26}`); any other is 404 */
                executionId: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["CancelRequest"];
            };
        };
        responses: {
            /** @description already terminal: the outcome stands (`cancelled: false`) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CancelResult"];
                };
            };
            /** @description cancel recorded (`cancel_requested` or `cancelled`) */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CancelResult"];
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            404: components["responses"]["not_found"];
            413: components["responses"]["payload_too_large"];
            422: components["responses"]["invalid_request"];
            503: components["responses"]["unavailable"];
            507: components["responses"]["storage_full"];
        };
    };
    cancel: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the execution id (`ex_[0-9A-HJKMNP-TV-Z]{26}`); any other is 404 */
                executionId: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["CancelRequest"];
            };
        };
        responses: {
            /** @description already terminal: the outcome stands (`cancelled: false`) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CancelResult"];
                };
            };
            /** @description cancel recorded (`cancel_requested` or `cancelled`) */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CancelResult"];
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            404: components["responses"]["not_found"];
            413: components["responses"]["payload_too_large"];
            422: components["responses"]["invalid_request"];
            503: components["responses"]["unavailable"];
            507: components["responses"]["storage_full"];
        };
    };
    detachWithKind: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the execution kind; a wrong one is 404 */
                kind: components["schemas"]["ExecutionKind"];
                /** @description the execution id (`ex_[0-9A-HJKMNP-TV-Z]{26}`); any other is 404 */
                executionId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description `detached: true`, or false with the record if it had already ended */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DetachResult"];
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            404: components["responses"]["not_found"];
            413: components["responses"]["payload_too_large"];
            503: components["responses"]["unavailable"];
            507: components["responses"]["storage_full"];
        };
    };
    detach: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the execution id (`ex_[0-9A-HJKMNP-TV-Z]{26}`); any other is 404 */
                executionId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description `detached: true`, or false with the record if it had already ended */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DetachResult"];
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            404: components["responses"]["not_found"];
            413: components["responses"]["payload_too_large"];
            503: components["responses"]["unavailable"];
            507: components["responses"]["storage_full"];
        };
    };
    eventsWithKind: {
        parameters: {
            query?: {
                /** @description the last sequence already seen */
                after?: number;
                /** @description page size */
                limit?: number;
            };
            header?: never;
            path: {
                /** @description the execution kind; a wrong one is 404 */
                kind: components["schemas"]["ExecutionKind"];
                /** @description the execution id (`ex_[0-9A-HJKMNP-TV-Z]{26}`); any other is 404 */
                executionId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description events after `after` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EventPage"];
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            404: components["responses"]["not_found"];
            413: components["responses"]["payload_too_large"];
            503: components["responses"]["unavailable"];
        };
    };
    events: {
        parameters: {
            query?: {
                /** @description the last sequence already seen */
                after?: number;
                /** @description page size */
                limit?: number;
            };
            header?: never;
            path: {
                /** @description the execution id (`ex_[0-9A-HJKMNP-TV-Z]{26}`); any other is 404 */
                executionId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description events after `after` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EventPage"];
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            404: components["responses"]["not_found"];
            413: components["responses"]["payload_too_large"];
            503: components["responses"]["unavailable"];
        };
    };
    eventsStreamWithKind: {
        parameters: {
            query?: {
                /** @description the last sequence already seen */
                after?: number;
                /** @description instead of a token: a stream token of this execution */
                streamToken?: string;
            };
            header?: {
                /** @description the last `id:` seen; wins over `after` */
                "Last-Event-ID"?: string;
            };
            path: {
                /** @description the execution kind; a wrong one is 404 */
                kind: components["schemas"]["ExecutionKind"];
                /** @description the execution id (`ex_[0-9A-HJKMNP-TV-Z]{26}`); any other is 404 */
                executionId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /**
             * @description Each event is `id: SEQUENCE`, `event: EVENT_TYPE`, `data: EVENT_JSON` (an `Event`),
             *     then a blank line. The stream replays every event after `Last-Event-ID` (or `?after=`), follows
             *     live, and ends after the terminal status event. Past the output budget, live followers also get
             *     `output` events without an `id:` (display only: not journaled, not replayed) and, if they fell
             *     behind, one `event: gap` with data `{"missedBytes": N}`. A `: keepalive` comment comes at least
             *     every 15 seconds.
             */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": {
                        event?: string;
                        id?: string;
                        data?: string;
                        retry?: number;
                    };
                };
            };
            /** @description resumed after the terminal event: nothing more will come */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            404: components["responses"]["not_found"];
            413: components["responses"]["payload_too_large"];
            503: components["responses"]["unavailable"];
        };
    };
    eventsStream: {
        parameters: {
            query?: {
                /** @description the last sequence already seen */
                after?: number;
                /** @description instead of a token: a stream token of this execution */
                streamToken?: string;
            };
            header?: {
                /** @description the last `id:` seen; wins over `after` */
                "Last-Event-ID"?: string;
            };
            path: {
                /** @description the execution id (`ex_[0-9A-HJKMNP-TV-Z]{26}`); any other is 404 */
                executionId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /**
             * @description Each event is `id: SEQUENCE`, `event: EVENT_TYPE`, `data: EVENT_JSON` (an `Event`),
             *     then a blank line. The stream replays every event after `Last-Event-ID` (or `?after=`), follows
             *     live, and ends after the terminal status event. Past the output budget, live followers also get
             *     `output` events without an `id:` (display only: not journaled, not replayed) and, if they fell
             *     behind, one `event: gap` with data `{"missedBytes": N}`. A `: keepalive` comment comes at least
             *     every 15 seconds.
             */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": {
                        event?: string;
                        id?: string;
                        data?: string;
                        retry?: number;
                    };
                };
            };
            /** @description resumed after the terminal event: nothing more will come */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            404: components["responses"]["not_found"];
            413: components["responses"]["payload_too_large"];
            503: components["responses"]["unavailable"];
        };
    };
    artifactsWithKind: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the execution kind; a wrong one is 404 */
                kind: components["schemas"]["ExecutionKind"];
                /** @description the execution id (`ex_[0-9A-HJKMNP-TV-Z]{26}`); any other is 404 */
                executionId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the artifacts */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ArtifactList"];
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            404: components["responses"]["not_found"];
            413: components["responses"]["payload_too_large"];
            503: components["responses"]["unavailable"];
        };
    };
    artifacts: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the execution id (`ex_[0-9A-HJKMNP-TV-Z]{26}`); any other is 404 */
                executionId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the artifacts */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ArtifactList"];
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            404: components["responses"]["not_found"];
            413: components["responses"]["payload_too_large"];
            503: components["responses"]["unavailable"];
        };
    };
    artifactWithKind: {
        parameters: {
            query?: never;
            header?: {
                /** @description one range: `bytes=a-b`, `bytes=a-` or `bytes=-n` */
                Range?: string;
            };
            path: {
                /** @description the execution kind; a wrong one is 404 */
                kind: components["schemas"]["ExecutionKind"];
                /** @description the execution id (`ex_[0-9A-HJKMNP-TV-Z]{26}`); any other is 404 */
                executionId: string;
                /** @description the artifact; any other name is 404 */
                name: components["schemas"]["StreamName"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the whole artifact */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/octet-stream": string;
                };
            };
            /** @description the range asked for (`Content-Range`) */
            206: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/octet-stream": string;
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            404: components["responses"]["not_found"];
            413: components["responses"]["payload_too_large"];
            416: components["responses"]["range_not_satisfiable"];
            503: components["responses"]["unavailable"];
        };
    };
    artifact: {
        parameters: {
            query?: never;
            header?: {
                /** @description one range: `bytes=a-b`, `bytes=a-` or `bytes=-n` */
                Range?: string;
            };
            path: {
                /** @description the execution id (`ex_[0-9A-HJKMNP-TV-Z]{26}`); any other is 404 */
                executionId: string;
                /** @description the artifact; any other name is 404 */
                name: components["schemas"]["StreamName"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the whole artifact */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/octet-stream": string;
                };
            };
            /** @description the range asked for (`Content-Range`) */
            206: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/octet-stream": string;
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            404: components["responses"]["not_found"];
            413: components["responses"]["payload_too_large"];
            416: components["responses"]["range_not_satisfiable"];
            503: components["responses"]["unavailable"];
        };
    };
    dashboard: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the dashboard's page */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
            400: components["responses"]["bad_request"];
            413: components["responses"]["payload_too_large"];
        };
    };
    dashboardAsset: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description a file of the dashboard (`app.js`, `log.js`, `style.css`); any other is 404 */
                asset: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the file */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": string;
                };
            };
            400: components["responses"]["bad_request"];
            404: components["responses"]["not_found"];
            413: components["responses"]["payload_too_large"];
        };
    };
    login: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["LoginRequest"];
            };
        };
        responses: {
            /** @description logged in: `Set-Cookie: workbench_session=...; HttpOnly; SameSite=Strict` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Login"];
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            413: components["responses"]["payload_too_large"];
            422: components["responses"]["invalid_request"];
        };
    };
    logout: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description logged out (the cookie is cleared) */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["bad_request"];
            403: components["responses"]["forbidden"];
            413: components["responses"]["payload_too_large"];
        };
    };
    loginLink: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the code; `/#login=CODE` opens the dashboard logged in */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LoginLink"];
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            413: components["responses"]["payload_too_large"];
            503: components["responses"]["unavailable"];
        };
    };
    changesStream: {
        parameters: {
            query?: {
                /** @description the last change id already seen */
                after?: number;
            };
            header?: {
                /** @description the last `id:` seen; wins over `after` */
                "Last-Event-ID"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /**
             * @description First `event: ready` with `id:` the cursor the stream starts from (the
             *     latest change, or `after` / `Last-Event-ID`). Then, for each execution that changed since, once,
             *     in the order of the changes: `id: CHANGE_ID`, `event: created|status|progress|terminal`,
             *     `data: CHANGE_JSON` (a `Change`: the record as it is now and its latest progress). Resuming with
             *     the last `id:` seen gives every execution that changed meanwhile. A `: keepalive` comment comes
             *     at least every 15 seconds.
             */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": {
                        event?: string;
                        id?: string;
                        data?: string;
                        retry?: number;
                    };
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            413: components["responses"]["payload_too_large"];
            503: components["responses"]["unavailable"];
        };
    };
    streamTokenWithKind: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the execution kind; a wrong one is 404 */
                kind: components["schemas"]["ExecutionKind"];
                /** @description the execution id (`ex_[0-9A-HJKMNP-TV-Z]{26}`); any other is 404 */
                executionId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description use it as `?streamToken=` on this execution's stream only */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StreamToken"];
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            404: components["responses"]["not_found"];
            413: components["responses"]["payload_too_large"];
            503: components["responses"]["unavailable"];
        };
    };
    streamToken: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the execution id (`ex_[0-9A-HJKMNP-TV-Z]{26}`); any other is 404 */
                executionId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description use it as `?streamToken=` on this execution's stream only */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StreamToken"];
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            404: components["responses"]["not_found"];
            413: components["responses"]["payload_too_large"];
            503: components["responses"]["unavailable"];
        };
    };
}
