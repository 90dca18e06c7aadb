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
    "/v1/executions/batch": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Start a batch of executions, all or none */
        post: operations["startBatch"];
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
        /** Delete many ended executions at once, with their events, files and acked exits */
        delete: operations["deleteExecutions"];
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
    "/v1/executions/{kind}/{executionId}/rerun": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Start a new execution with the same spec (stdin included) */
        post: operations["rerunWithKind"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/executions/{executionId}/rerun": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Start a new execution with the same spec (stdin included) */
        post: operations["rerun"];
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
    "/v1/executions/{kind}/{executionId}/input": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Write to the open stdin (or terminal) of a running execution */
        post: operations["sendInputWithKind"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/executions/{executionId}/input": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Write to the open stdin (or terminal) of a running execution */
        post: operations["sendInput"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/executions/{kind}/{executionId}/resize": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Set the size of a running execution's terminal */
        post: operations["resizeWithKind"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/executions/{executionId}/resize": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Set the size of a running execution's terminal */
        post: operations["resize"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/executions/{kind}/{executionId}/signal": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Send a signal to a running tree (to its terminal's foreground process group on a tty) */
        post: operations["signalWithKind"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/executions/{executionId}/signal": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Send a signal to a running tree (to its terminal's foreground process group on a tty) */
        post: operations["signal"];
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
    "/v1/sessions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The principal's sessions */
        get: operations["listSessions"];
        put?: never;
        post?: never;
        /** Remove every session of the principal, with their files */
        delete: operations["deleteSessions"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/sessions/{sessionId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One session */
        get: operations["getSession"];
        put?: never;
        post?: never;
        /** Remove a session's workspace and every file in it */
        delete: operations["deleteSession"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/sessions/{sessionId}/files": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read a file (honours Range), or list a directory */
        get: operations["listWorkspace"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/sessions/{sessionId}/files/{path}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read a file (honours Range), or list a directory */
        get: operations["readFile"];
        /** Write a file atomically (its parents made) */
        put: operations["writeFile"];
        post?: never;
        /** Remove a file, a symlink or a whole directory */
        delete: operations["deleteFile"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/sessions/{sessionId}/files:upload": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Unpack a tar (plain, gzip, bzip2, xz) or zip archive into the workspace */
        post: operations["uploadFiles"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/sessions/{sessionId}/files:download": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A tar of a directory (or of one file) */
        get: operations["downloadFiles"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/sessions/{sessionId}/files:move": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Move (rename) a path inside the workspace */
        post: operations["moveFile"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/sessions/{sessionId}/files:watch": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Follow the changes under a directory (server-sent events, from inotify) */
        get: operations["watchFiles"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/contexts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The principal's code contexts */
        get: operations["listContexts"];
        put?: never;
        /** Start a code context: a long-lived interpreter whose names persist between executions */
        post: operations["createContext"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/contexts/{contextId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One code context */
        get: operations["getContext"];
        put?: never;
        post?: never;
        /** Kill a code context's interpreter tree and forget it (what waits in it fails) */
        delete: operations["deleteContext"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/stats": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Executions by status (the caller's; admin: everyone's) and the sizes on disk */
        get: operations["stats"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Metrics in the Prometheus text format */
        get: operations["metrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/nodes/{nodeId}/artifacts/{executionId}/{name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** For another node: an artifact of an execution this node ran (honours Range) */
        get: operations["nodeArtifact"];
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
         * BatchItemRequest
         * @description One item of `POST /v1/executions/batch`: a start body with its `kind`, without
         *     `background` and `waitTimeoutMs` (the batch's own decide).
         */
        BatchItemRequest: {
            /** @description The deadline, counted from acceptance, queueing included (default 3600000). */
            timeoutMs?: number | null;
            /** @description No output for this long ends it `timed_out` (`error.code` `idle_timeout`). */
            idleTimeoutMs?: number | null;
            /** @description An absolute working directory that exists (default: the session's workspace). */
            cwd?: string | null;
            /**
             * @description Variables over the image's; each `NAME=value` at most 131071 bytes, without NUL. Echoed in
             *     every record: pass secrets as `secretEnv`.
             */
            env?: {
                [key: string]: string;
            };
            /**
             * @description Variables passed like `env` (and over it) but never returned, logged, journaled or stored:
             *     the record lists only their names (`secretEnvNames`).
             */
            secretEnv?: {
                [key: string]: string;
            };
            /** @description Text fed to the process, then end of file (default: end of file at once). */
            stdin?: string | null;
            /** @description Any JSON, at most 16384 bytes encoded; kept with the record and returned unchanged. */
            metadata?: unknown;
            /** @description The image to run in (`GET /v1/images`). */
            image?: string;
            /** @description The session: its workspace is the default `cwd`. Not `.` or `..`. */
            sessionId?: string;
            /** @description Hand the outcome to the exits feed. */
            detached?: boolean;
            /** @description The most bytes of each stream's `preview` in the record (its head and tail beyond that). */
            previewBytes?: number;
            /** @description `plain`: the preview as a terminal shows it (no ANSI escapes, redrawn lines in their last state). */
            previewFormat?: components["schemas"]["PreviewFormat"];
            /** @description `workbench_bash` (with `command`) or `workbench_code` (with `language` and `code`). */
            kind: components["schemas"]["ProcessKind"];
            /** @description For `workbench_bash`: as in a bash start. */
            command?: string | null;
            /** @description For `workbench_code`: as in a code start. */
            language?: string | null;
            /** @description For `workbench_code`: as in a code start. */
            code?: string | null;
        };
        /**
         * BatchRequest
         * @description `POST /v1/executions/batch`: many executions accepted as one, all or none.
         */
        BatchRequest: {
            /** @description 1 to 1000 start bodies, each with its `kind`. */
            items: components["schemas"]["BatchItemRequest"][];
            /**
             * @description At most this many of its items run at once (default: as many as the daemon runs at once).
             * @default null
             */
            concurrency: number | null;
            /**
             * @description When an item ends without completing, cancel the rest; the batch ends `failed`.
             * @default false
             */
            failFast: boolean;
            /**
             * @description As a start's: 202 at once, or wait up to `waitTimeoutMs` for the end and answer 201.
             * @default false
             */
            background: boolean;
            /**
             * @description How long a foreground batch start waits for the end (default 30000).
             * @default null
             */
            waitTimeoutMs: number | null;
            /**
             * @description The batch's deadline from acceptance (default 3600000); no item runs past it.
             * @default null
             */
            timeoutMs: number | null;
            /**
             * @description Any JSON, at most 16384 bytes encoded, kept with the batch's record.
             * @default null
             */
            metadata: unknown;
            /**
             * @description The batch's own session (for listings); each item has its own.
             * @default default
             */
            sessionId: string;
            /**
             * @description Hand the batch's outcome to the exits feed.
             * @default false
             */
            detached: boolean;
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
        /**
         * Capabilities
         * @description What can be done with this execution now, computed per execution.
         */
        Capabilities: {
            /** @description `hard`: a cancel kills every process of its tree (every item's, for a batch). */
            cancellable: string;
            /** @description Its events can be followed live (`.../events/stream`). */
            streamingSupport: boolean;
            /** @description It can run without anyone waiting on it. */
            backgroundSupport: boolean;
            /** @description `POST .../detach` would detach it now: false once it has ended or is detached already. */
            detachable: boolean;
            /**
             * @description What it takes after its start: false (its input was fixed when it started: `stdin` text
             *     or none), `"stdin"` (input is open) or `"tty"` (a terminal).
             */
            interactive: boolean | string;
        };
        /**
         * Change
         * @description One event of `GET /v1/events/stream`: an execution as it is after its latest change.
         */
        Change: {
            changeId: number;
            change: components["schemas"]["ChangeType"];
            execution: components["schemas"]["Execution"];
            /** @description The execution's latest progress: the same as `execution.progress`. */
            progress: components["schemas"]["Progress"] | null;
        };
        /**
         * Context
         * @description A code context.
         */
        Context: {
            contextId: string;
            language: string;
            image: string;
            sessionId: string;
            /** @description `starting`, `ready` (idle), `busy` (running an execution) or `dead` (its interpreter is gone). */
            status: components["schemas"]["ContextStatus"];
            /** Format: date-time */
            createdAt: string;
            /**
             * Format: date-time
             * @description When an execution of it last ended (its creation before the first).
             */
            lastUsedAt: string;
            /** @description How many executions it has run. */
            executions: number;
            idleTimeoutMs: number | null;
            /** @description Why it is `dead` (null otherwise). */
            reason: string | null;
        };
        /**
         * ContextList
         * @description `GET /v1/contexts`: the principal's contexts, oldest first.
         */
        ContextList: {
            contexts: components["schemas"]["Context"][];
        };
        /**
         * ContextRequest
         * @description `POST /v1/contexts`.
         */
        ContextRequest: {
            /** @description The interpreter: `python`, or `node` where the image has it. */
            language: string;
            /**
             * @description The image it runs in, contained and limited like any execution of that image.
             * @default host
             */
            image: string;
            /**
             * @description The session: the interpreter's working directory is its workspace.
             * @default default
             */
            sessionId: string;
            /** @description Variables over the image's, for the interpreter's whole life. */
            env?: {
                [key: string]: string;
            };
            /**
             * @description An idle context (no execution running or queued) for this long is killed (`dead`).
             * @default null
             */
            idleTimeoutMs: number | null;
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
         * DeleteResult
         * @description `DELETE /v1/executions?status=&before=`: how many executions were deleted.
         */
        DeleteResult: {
            deleted: number;
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
             *     `lost`, `internal`, `exception` (a code context's uncaught exception) or `context_dead`.
             */
            code: string;
            message: string;
            /** @description The traceback of an `exception` (null otherwise). */
            traceback: string | null;
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
            /** @description An `item` event's: the item of a batch whose status changed, as it is now. */
            item: components["schemas"]["ItemStatus"] | null;
            /** @description An `input` event's: how many bytes were written to stdin. */
            inputBytes: number | null;
            /**
             * @description An `input` event's: those bytes as UTF-8 text (U+FFFD for invalid bytes); null when the
             *     input said `"record": false`.
             */
            inputDelta: string | null;
            /** @description A `resize` event's: the terminal's new size. */
            ttySize: components["schemas"]["TtySize"] | null;
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
            /**
             * @description Its working directory (null for a batch, and while it waits in a shared queue without a
             *     `cwd` of its own: the node that claims it runs it in the session's workspace there).
             */
            cwd: string | null;
            /** @description Its image (null for a batch). */
            image: string | null;
            /** @description The request's own variables, echoed: secrets belong in `secretEnv`. */
            env: {
                [key: string]: string;
            };
            /** @description The names of its `secretEnv` variables (their values are never returned). */
            secretEnvNames: string[];
            metadata: unknown;
            idempotencyKey: string | null;
            /** @description Grows with every change of the record (`GET` sends it as the `ETag`). */
            rowVersion: number;
            /** @description The execution it re-runs (`POST .../rerun`). */
            rerunOf: string | null;
            /** @description The batch it is an item of. */
            batchId: string | null;
            /** @description A batch's items, in order (null for any other execution). */
            items: components["schemas"]["ItemStatus"][] | null;
            /** @description A batch's: at most this many of its items run at once. */
            concurrency: number | null;
            /** @description A batch's: the rest are cancelled once an item ends without completing. */
            failFast: boolean | null;
            /** @description What it used, once terminal (null before). */
            usage: components["schemas"]["Usage"] | null;
            /** @description Its latest `progress` event's numbers and message (kept once it ended); null before one. */
            progress: components["schemas"]["Progress"] | null;
            /** Format: date-time */
            createdAt: string;
            startedAt: string | null;
            finishedAt: string | null;
            deadlineAt: string | null;
            timeoutMs: number | null;
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
            service: boolean;
            readiness: components["schemas"]["Readiness-Output"] | null;
            readyTimeoutMs: number | null;
            /** @description A service: whether it is ready (without a readiness check, once it runs); else null. */
            ready: boolean | null;
            readyAt: string | null;
            /** @description The code context it ran in (`contextId` of its start), else null. */
            contextId: string | null;
            /**
             * @description In a code context: `{"text/plain": "..."}`, the value of the code's final expression (as
             *     a notebook shows it), once completed; else null.
             */
            result: {
                [key: string]: string;
            } | null;
            /** @description The node that runs it (null while it waits in a shared queue). */
            nodeId: string | null;
            /**
             * @description Its stdin was kept open for `POST .../input` (`capabilities.interactive` says whether it
             *     still takes input).
             */
            openStdin: boolean;
            /** @description It runs on a pseudo-terminal. */
            tty: boolean;
            /** @description The terminal's current size (null without `tty`). */
            ttySize: components["schemas"]["TtySize"] | null;
            /** @description It carries its session's shell state (`persistShell`). */
            persistShell: boolean;
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
        ExecutionStatus: "queued" | "running" | "cancel_requested" | "completed" | "failed" | "cancelled" | "timed_out" | "partial_failed";
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
            usage: components["schemas"]["Usage"] | null;
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
         * FileEntry
         * @description One entry of a workspace.
         */
        FileEntry: {
            /** @description Relative to the workspace (`src/app.py`). */
            path: string;
            /** @description The last component of `path` (`""` for the workspace itself). */
            name: string;
            /** @description `file`, `directory`, `symlink` (never followed) or `other` (a fifo, socket or device). */
            type: components["schemas"]["FileType"];
            /** @description The size of a file (of the link itself for a symlink; 0 for a directory). */
            sizeBytes: number;
            /**
             * Format: date-time
             * @description The last modification time.
             */
            modifiedAt: string;
            /** @description The file's version, as `GET` sends it in `ETag` (files only). */
            etag: string | null;
            /** @description What a symlink points to, as written. */
            target: string | null;
        };
        /**
         * FileEvent
         * @description One change under a watched path (`GET .../files:watch`): not journaled, not replayed.
         */
        FileEvent: {
            /** @description `created`, `modified`, `deleted`; `overflow` when changes were missed (list again). */
            type: components["schemas"]["FileEventType"];
            /** @description Relative to the workspace (`""` for an overflow). */
            path: string;
            /** @description Whether it is (or was) a directory. */
            directory: boolean;
            /** Format: date-time */
            timestamp: string;
        };
        /**
         * FileList
         * @description `GET .../files/{path}?list`: the path itself and what is under it, to `depth` levels.
         */
        FileList: {
            path: string;
            type: components["schemas"]["FileType"];
            /** @description Sorted by path; a file lists as itself. */
            entries: components["schemas"]["FileEntry"][];
            /** @description More entries than the most one listing holds (10000). */
            truncated: boolean;
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
         * InputRequest
         * @description `POST .../input` as JSON (raw bytes go as `application/octet-stream`, with `?eof=true`).
         */
        InputRequest: {
            /**
             * @description Text written to stdin as UTF-8 (at most 1048576 bytes).
             * @default
             */
            data: string;
            /**
             * @description Then close stdin (on a terminal: send its end-of-file character, Ctrl-D).
             * @default false
             */
            eof: boolean;
            /**
             * @description false: journal only the byte count, not the bytes (a password).
             * @default true
             */
            record: boolean;
        };
        /**
         * ItemStatus
         * @description One item of a batch, as the batch's record and its `item` events show it.
         */
        ItemStatus: {
            executionId: string;
            executionKind: components["schemas"]["ExecutionKind"];
            status: components["schemas"]["ExecutionStatus"];
            exitCode: number | null;
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
        /**
         * MoveRequest
         * @description `POST .../files:move`.
         */
        MoveRequest: {
            /** @description The path to move (a file, a symlink or a directory). */
            from: string;
            /** @description Where it goes; its parents are made. */
            to: string;
            /**
             * @description Replace what is at `to` (a file or an empty directory); otherwise that is a `409`.
             * @default false
             */
            overwrite: boolean;
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
        /**
         * Progress
         * @description The latest `progress` event of an execution (a `DONE/TOTAL message` line of the file
         *     named by `$WORKBENCH_PROGRESS`): the record's `progress`, and the changes feed's.
         */
        Progress: {
            progress: number | null;
            total: number | null;
            message: string | null;
        };
        /**
         * Readiness
         * @description When a service is ready: something of its tree listens on `port`, or its output matches
         *     `logPattern`. Exactly one of the two.
         */
        "Readiness-Input": {
            /** @description A TCP port that a process of the service's tree listens on once it is ready. */
            port?: number | null;
            /** @description A regular expression (Python syntax) searched in each line of its stdout and stderr. */
            logPattern?: string | null;
        };
        /**
         * Readiness
         * @description When a service is ready: something of its tree listens on `port`, or its output matches
         *     `logPattern`. Exactly one of the two.
         */
        "Readiness-Output": {
            /** @description A TCP port that a process of the service's tree listens on once it is ready. */
            port: number | null;
            /** @description A regular expression (Python syntax) searched in each line of its stdout and stderr. */
            logPattern: string | null;
        };
        /**
         * RerunRequest
         * @description `POST .../rerun`: the execution's spec again; each field given replaces the original's.
         */
        RerunRequest: {
            /**
             * @description As a start's.
             * @default false
             */
            background: boolean;
            /**
             * @description As a start's (default 30000).
             * @default null
             */
            waitTimeoutMs: number | null;
            /**
             * @description A bash execution's command instead of the original's.
             * @default null
             */
            command: string | null;
            /**
             * @description A code execution's code instead of the original's (its language stays).
             * @default null
             */
            code: string | null;
            /**
             * @description Instead of the original's `timeoutMs`, counted from the rerun's acceptance.
             * @default null
             */
            timeoutMs: number | null;
            /**
             * @description Instead of the original's.
             * @default null
             */
            idleTimeoutMs: number | null;
            /**
             * @description Instead of the original's.
             * @default null
             */
            cwd: string | null;
            /**
             * @description Instead of the original's (the whole object).
             * @default null
             */
            env: {
                [key: string]: string;
            } | null;
            /**
             * @description The values of the original's `secretEnvNames` (never kept, so a rerun needs them again).
             * @default null
             */
            secretEnv: {
                [key: string]: string;
            } | null;
            /**
             * @description Instead of the original's (which is kept, and fed again by default).
             * @default null
             */
            stdin: string | null;
            /**
             * @description Instead of the original's.
             * @default null
             */
            metadata: unknown;
            /**
             * @description Instead of the original's.
             * @default null
             */
            image: string | null;
            /**
             * @description Instead of the original's.
             * @default null
             */
            sessionId: string | null;
            /**
             * @description Instead of the original's.
             * @default null
             */
            detached: boolean | null;
        };
        /**
         * ResizeRequest
         * @description `POST .../resize`: the terminal's new size, in character cells.
         */
        ResizeRequest: {
            rows: number;
            cols: number;
        };
        /**
         * Session
         * @description A session of the principal: its workspace, and what holds its delete (its live executions
         *     and code contexts).
         */
        Session: {
            sessionId: string;
            /** @description The bytes of the files in its workspace (what the quota counts). */
            sizeBytes: number;
            quotaBytes: number;
            /** Format: date-time */
            modifiedAt: string;
            /** @description Its executions that are queued or running. */
            liveExecutions: number;
            /** @description Its code contexts that are live (not `dead`). */
            liveContexts: number;
        };
        /** SessionList */
        SessionList: {
            sessions: components["schemas"]["Session"][];
        };
        /**
         * SignalRequest
         * @description `POST .../signal`.
         */
        SignalRequest: {
            /**
             * @description The signal for every process of the tree: HUP, INT, QUIT, TERM, USR1, USR2, WINCH, CONT, STOP
             *     or TSTP (`INT` is what Ctrl-C sends on a terminal).
             */
            signal: string;
        };
        /**
         * SignalResult
         * @description `POST .../signal`: the record once the signal is sent and journaled.
         */
        SignalResult: {
            execution: components["schemas"]["Execution"];
        };
        /**
         * StartBashRequest
         * @description `POST /v1/executions/workbench_bash`.
         */
        StartBashRequest: {
            /**
             * @description Start in the working directory and with the exported variables that the last finished
             *     `persistShell` execution of the same session and principal left (captured by its shell after
             *     the command, also when it failed; not when it was killed), and leave its own for the next.
             * @default false
             */
            persistShell: boolean;
            /**
             * @description Meant to stay up: no default deadline, and its background processes live on after the
             *     command's own process exits, until the tree is empty or it is cancelled.
             * @default false
             */
            service: boolean;
            /**
             * @description When the service is ready (`ready: true` and a `ready` event); needs `service`.
             * @default null
             */
            readiness: components["schemas"]["Readiness-Input"] | null;
            /**
             * @description How long it may take to be ready (default 60000): then it is killed and ends `timed_out`
             *     (`error.code` `ready_timeout`); needs `readiness`.
             * @default null
             */
            readyTimeoutMs: number | null;
            /**
             * @description Keep stdin open (`POST .../input` writes to it, `eof` closes it) instead of `stdin` text then
             *     end of file.
             * @default false
             */
            openStdin: boolean;
            /**
             * @description Run the tree on a pseudo-terminal: stdin, stdout and stderr are the terminal, its output is
             *     the one `stdout` stream, `TERM` is `xterm-256color` unless `env` says otherwise; input is
             *     open as with `openStdin`.
             * @default false
             */
            tty: boolean;
            /**
             * @description The terminal's size (default 24 rows, 80 columns); needs `tty`.
             * @default null
             */
            ttySize: components["schemas"]["TtySize"] | null;
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
            /**
             * @description Variables over the image's; each `NAME=value` at most 131071 bytes, without NUL. Echoed in
             *     every record: pass secrets as `secretEnv`.
             */
            env?: {
                [key: string]: string;
            };
            /**
             * @description Variables passed like `env` (and over it) but never returned, logged, journaled or stored:
             *     the record lists only their names (`secretEnvNames`).
             */
            secretEnv?: {
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
             * @description Foreground starts: when `waitTimeoutMs` passes, `return` the record, `detach` or `cancel` the run.
             * @default return
             */
            onWaitTimeout: components["schemas"]["OnWaitTimeout"];
            /**
             * @description Run it on this node only (`WORKBENCH_NODE_ID`); default: whichever node has a free slot.
             * @default null
             */
            node: string | null;
            /**
             * @description Run by the image's shell (`bash -c`); at most 131071 bytes (122879 with `persistShell`),
             *     without NUL.
             */
            command: string;
        };
        /**
         * StartCodeRequest
         * @description `POST /v1/executions/workbench_code`.
         */
        StartCodeRequest: {
            /**
             * @description Keep stdin open (`POST .../input` writes to it, `eof` closes it) instead of `stdin` text then
             *     end of file.
             * @default false
             */
            openStdin: boolean;
            /**
             * @description Run the tree on a pseudo-terminal: stdin, stdout and stderr are the terminal, its output is
             *     the one `stdout` stream, `TERM` is `xterm-256color` unless `env` says otherwise; input is
             *     open as with `openStdin`.
             * @default false
             */
            tty: boolean;
            /**
             * @description The terminal's size (default 24 rows, 80 columns); needs `tty`.
             * @default null
             */
            ttySize: components["schemas"]["TtySize"] | null;
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
            /**
             * @description Variables over the image's; each `NAME=value` at most 131071 bytes, without NUL. Echoed in
             *     every record: pass secrets as `secretEnv`.
             */
            env?: {
                [key: string]: string;
            };
            /**
             * @description Variables passed like `env` (and over it) but never returned, logged, journaled or stored:
             *     the record lists only their names (`secretEnvNames`).
             */
            secretEnv?: {
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
             * @description Foreground starts: when `waitTimeoutMs` passes, `return` the record, `detach` or `cancel` the run.
             * @default return
             */
            onWaitTimeout: components["schemas"]["OnWaitTimeout"];
            /**
             * @description Run it on this node only (`WORKBENCH_NODE_ID`); default: whichever node has a free slot.
             * @default null
             */
            node: string | null;
            /** @description A language of the image (`bash`, `sh`, `python`, `node` where installed). */
            language: string;
            /** @description The program, written to a file and run by the image's command for `language`; without NUL. */
            code: string;
            /**
             * @description Run `code` in this code context (`POST /v1/contexts`): its names persist between
             *     executions. The context's language, image, session and environment apply: `cwd`, `env`,
             *     `secretEnv`, `stdin`, `openStdin`, `tty` and `idleTimeoutMs` are refused with it.
             * @default null
             */
            contextId: string | null;
        };
        /**
         * Stats
         * @description `GET /v1/stats`: the caller's executions by status, and the sizes on disk.
         */
        Stats: {
            /** @description Every status, with how many of the caller's executions have it (`admin`: everyone's). */
            executions: {
                [key: string]: number;
            };
            /** @description The store's size on disk (for SQLite: the database file with its WAL). */
            storeBytes: number;
            /** @description Of `store_bytes`, what deleted rows left free inside the store, not yet given back. */
            storeFreeBytes: number;
            /** @description What the data dir takes on disk, the store and every execution's files included. */
            dataDirBytes: number;
            /** @description `WORKBENCH_RETENTION` in milliseconds (None: everything is kept). */
            retentionMs: number | null;
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
         * TtySize
         * @description A terminal's size in character cells.
         */
        TtySize: {
            rows: number;
            cols: number;
        };
        /**
         * UploadResult
         * @description `POST .../files:upload`: what the archive held, unpacked.
         */
        UploadResult: {
            /** @description Where it was unpacked. */
            path: string;
            files: number;
            directories: number;
            symlinks: number;
            /** @description The bytes of the files written. */
            sizeBytes: number;
        };
        /**
         * Usage
         * @description What an ended execution used (null where this machine could not tell).
         *
         *     From the execution's cgroup where it had one (every process of its tree), else from the
         *     resource usage of its reaped leader (which holds that of the children it waited for).
         */
        Usage: {
            /** @description CPU time in user mode, in ms (a batch: the sum of its items'). */
            cpuUserMs: number | null;
            /** @description CPU time in the kernel, in ms (a batch: the sum of its items'). */
            cpuSystemMs: number | null;
            /** @description The most memory it held at once (a batch: the most of one item). */
            peakMemoryBytes: number | null;
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
            /**
             * @description `end`: until it is terminal; `ready`: until it is ready (a service) or terminal.
             * @default end
             */
            until: components["schemas"]["WaitUntil"];
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
        ExecutionKind: "workbench_bash" | "workbench_code" | "batch";
        /**
         * @description what a batch's item runs (a batch holds no batch)
         * @enum {string}
         */
        ProcessKind: "workbench_bash" | "workbench_code";
        /**
         * @description what a journal event records
         * @enum {string}
         */
        EventType: "status" | "output" | "output_truncated" | "progress" | "artifact" | "signal" | "item" | "ready" | "input" | "resize";
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
        ErrorCode: "bad_request" | "unauthorized" | "forbidden" | "not_found" | "conflict" | "precondition_failed" | "payload_too_large" | "range_not_satisfiable" | "invalid_request" | "idempotency_key_reused" | "unknown_image" | "image_unavailable" | "unsupported_language" | "too_many_executions" | "input_backlog" | "unavailable" | "node_unavailable" | "storage_full" | "quota_exceeded" | "internal";
        /**
         * @description what a wait waits for: the end, or a service's readiness
         * @enum {string}
         */
        WaitUntil: "end" | "ready";
        /**
         * @description what a path of a workspace is
         * @enum {string}
         */
        FileType: "file" | "directory" | "symlink" | "other";
        /**
         * @description what changed under a watched path
         * @enum {string}
         */
        FileEventType: "created" | "modified" | "deleted" | "overflow";
        /**
         * @description what a code context is doing
         * @enum {string}
         */
        ContextStatus: "starting" | "ready" | "busy" | "dead";
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
        /** @description `not_found` (404): unknown execution, kind, artifact, exit, session, file or route (or a wrong method), or an execution or session of another principal */
        not_found: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description `conflict` (409): the request conflicts with the current state: deleting an execution that has not ended, a directory where a file goes */
        conflict: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description `precondition_failed` (412): `If-Match` or `If-None-Match` does not hold for the file as it is now */
        precondition_failed: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description `payload_too_large` (413): body over the limit (1 MiB; a file: `WORKBENCH_MAX_FILE_BYTES`) */
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
        /** @description `too_many_executions` (429): the queue is full, or the principal's `maxQueued` quota is reached; a new code context: `maxContexts` or `WORKBENCH_MAX_CONTEXTS` (`details.quota` names which) */
        too_many_executions: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description `input_backlog` (429): the process has not read the input sent before; nothing of this one was taken */
        input_backlog: {
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
        /** @description `node_unavailable` (503): the node that holds the artifact (its `nodeId`) cannot be reached now: down, no `WORKBENCH_NODE_URL`, or no `WORKBENCH_NODE_TOKEN` to prove this node to it */
        node_unavailable: {
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
        /** @description `quota_exceeded` (507): the write would take the session's workspace past its quota */
        quota_exceeded: {
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
    exits: {
        parameters: {
            query?: {
                /** @description at most this many */
                limit?: number;
                /** @description long-poll for this long */
                waitTimeoutMs?: number;
                /** @description hide what is handed out for this long (0: a look, hiding nothing) */
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
    startBash: {
        parameters: {
            query?: never;
            header?: {
                /** @description printable ASCII characters, given once; the first request with a key creates the execution, a later one with the same body returns the same record (200, `Idempotent-Replayed: true`) */
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
                /** @description printable ASCII characters, given once; the first request with a key creates the execution, a later one with the same body returns the same record (200, `Idempotent-Replayed: true`) */
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
            404: components["responses"]["not_found"];
            409: components["responses"]["conflict"];
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
    startBatch: {
        parameters: {
            query?: never;
            header?: {
                /** @description printable ASCII characters, given once; the first request with a key creates the execution, a later one with the same body returns the same record (200, `Idempotent-Replayed: true`) */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["BatchRequest"];
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
                /** @description only the reruns of this execution */
                rerunOf?: string;
                /** @description only the items of this batch */
                batchId?: string;
                /** @description text in the id, command, code or metadata */
                q?: string;
                /** @description `preview`: each record carries its `preview` (otherwise null) */
                include?: "preview";
                /** @description `true`: only services; `false`: only the others */
                service?: boolean;
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
    deleteExecutions: {
        parameters: {
            query?: {
                /** @description ended statuses, comma-separated (`completed,failed`); default: every ended one; a live status is 400 */
                status?: string;
                /** @description only those that ended before this: an RFC 3339 time with its offset, or a duration back from now (`7d`, `12h`, `30m`, `45s`, `500ms`) */
                before?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description how many were deleted (0 when none matched) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeleteResult"];
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
    getExecutionWithKind: {
        parameters: {
            query?: never;
            header?: {
                /** @description ETags seen before (or `*`): `304` while the record is still that version */
                "If-None-Match"?: string;
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
            /** @description the record */
            200: {
                headers: {
                    /** @description the record's `rowVersion`, quoted */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Execution"];
                };
            };
            /** @description `If-None-Match` names its current `ETag`: not modified */
            304: {
                headers: {
                    /** @description the record's `rowVersion`, quoted */
                    ETag?: string;
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
            header?: {
                /** @description ETags seen before (or `*`): `304` while the record is still that version */
                "If-None-Match"?: string;
            };
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
                    /** @description the record's `rowVersion`, quoted */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Execution"];
                };
            };
            /** @description `If-None-Match` names its current `ETag`: not modified */
            304: {
                headers: {
                    /** @description the record's `rowVersion`, quoted */
                    ETag?: string;
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
                /** @description the session the execution must be of (another is 404) */
                sessionId?: string;
                /** @description event types separated by commas: only those are sent (sequences stay the journal's) */
                types?: string;
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
            /** @description a reconnect after the terminal event: nothing more will come */
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
                /** @description the session the execution must be of (another is 404) */
                sessionId?: string;
                /** @description event types separated by commas: only those are sent (sequences stay the journal's) */
                types?: string;
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
            /** @description a reconnect after the terminal event: nothing more will come */
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
            /** @description `unavailable`: shutting down, or the store failed; `node_unavailable`: the node that holds the artifact (its `nodeId`) cannot be reached now: down, no `WORKBENCH_NODE_URL`, or no `WORKBENCH_NODE_TOKEN` to prove this node to it */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
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
            /** @description `unavailable`: shutting down, or the store failed; `node_unavailable`: the node that holds the artifact (its `nodeId`) cannot be reached now: down, no `WORKBENCH_NODE_URL`, or no `WORKBENCH_NODE_TOKEN` to prove this node to it */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
        };
    };
    rerunWithKind: {
        parameters: {
            query?: never;
            header?: {
                /** @description printable ASCII characters, given once; the first request with a key creates the execution, a later one with the same body returns the same record (200, `Idempotent-Replayed: true`) */
                "Idempotency-Key"?: string;
            };
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
                "application/json": components["schemas"]["RerunRequest"];
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
            /** @description `bad_request`: malformed JSON, a query parameter the route does not take or that does not parse, a bad header; `bad_request`: malformed JSON, a query parameter the route does not take or that does not parse, a bad header */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description `unauthorized`: missing or wrong bearer token; `unauthorized`: missing or wrong bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description `forbidden`: the token lacks the scope for this route; `forbidden`: the token lacks the scope for this route */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            404: components["responses"]["not_found"];
            /** @description `payload_too_large`: body over the limit (1 MiB; a file: `WORKBENCH_MAX_FILE_BYTES`); `payload_too_large`: body over the limit (1 MiB; a file: `WORKBENCH_MAX_FILE_BYTES`) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
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
            /** @description `unavailable`: shutting down, or the store failed; `unavailable`: shutting down, or the store failed */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            507: components["responses"]["storage_full"];
        };
    };
    rerun: {
        parameters: {
            query?: never;
            header?: {
                /** @description printable ASCII characters, given once; the first request with a key creates the execution, a later one with the same body returns the same record (200, `Idempotent-Replayed: true`) */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description the execution id (`ex_[0-9A-HJKMNP-TV-Z]{26}`); any other is 404 */
                executionId: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["RerunRequest"];
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
            /** @description `bad_request`: malformed JSON, a query parameter the route does not take or that does not parse, a bad header; `bad_request`: malformed JSON, a query parameter the route does not take or that does not parse, a bad header */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description `unauthorized`: missing or wrong bearer token; `unauthorized`: missing or wrong bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description `forbidden`: the token lacks the scope for this route; `forbidden`: the token lacks the scope for this route */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            404: components["responses"]["not_found"];
            /** @description `payload_too_large`: body over the limit (1 MiB; a file: `WORKBENCH_MAX_FILE_BYTES`); `payload_too_large`: body over the limit (1 MiB; a file: `WORKBENCH_MAX_FILE_BYTES`) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
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
            /** @description `unavailable`: shutting down, or the store failed; `unavailable`: shutting down, or the store failed */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            507: components["responses"]["storage_full"];
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
    sendInputWithKind: {
        parameters: {
            query?: {
                /** @description raw bytes only: then close stdin (JSON bodies say `eof`) */
                eof?: boolean;
                /** @description raw bytes only: `false` keeps the bytes out of the journal */
                record?: boolean;
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
        /** @description JSON `InputRequest`, or the raw bytes to write */
        requestBody: {
            content: {
                "application/json": components["schemas"]["InputRequest"];
                "application/octet-stream": string;
            };
        };
        responses: {
            /** @description written (or waiting for the process to read it), and journaled as `input` */
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
            422: components["responses"]["invalid_request"];
            429: components["responses"]["input_backlog"];
            503: components["responses"]["unavailable"];
            507: components["responses"]["storage_full"];
        };
    };
    sendInput: {
        parameters: {
            query?: {
                /** @description raw bytes only: then close stdin (JSON bodies say `eof`) */
                eof?: boolean;
                /** @description raw bytes only: `false` keeps the bytes out of the journal */
                record?: boolean;
            };
            header?: never;
            path: {
                /** @description the execution id (`ex_[0-9A-HJKMNP-TV-Z]{26}`); any other is 404 */
                executionId: string;
            };
            cookie?: never;
        };
        /** @description JSON `InputRequest`, or the raw bytes to write */
        requestBody: {
            content: {
                "application/json": components["schemas"]["InputRequest"];
                "application/octet-stream": string;
            };
        };
        responses: {
            /** @description written (or waiting for the process to read it), and journaled as `input` */
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
            422: components["responses"]["invalid_request"];
            429: components["responses"]["input_backlog"];
            503: components["responses"]["unavailable"];
            507: components["responses"]["storage_full"];
        };
    };
    resizeWithKind: {
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
        requestBody: {
            content: {
                "application/json": components["schemas"]["ResizeRequest"];
            };
        };
        responses: {
            /** @description resized (its foreground process group gets SIGWINCH), journaled as `resize` */
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
            422: components["responses"]["invalid_request"];
            503: components["responses"]["unavailable"];
            507: components["responses"]["storage_full"];
        };
    };
    resize: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the execution id (`ex_[0-9A-HJKMNP-TV-Z]{26}`); any other is 404 */
                executionId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ResizeRequest"];
            };
        };
        responses: {
            /** @description resized (its foreground process group gets SIGWINCH), journaled as `resize` */
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
            422: components["responses"]["invalid_request"];
            503: components["responses"]["unavailable"];
            507: components["responses"]["storage_full"];
        };
    };
    signalWithKind: {
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
        requestBody: {
            content: {
                "application/json": components["schemas"]["SignalRequest"];
            };
        };
        responses: {
            /** @description sent, and journaled as a `signal` event */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SignalResult"];
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            404: components["responses"]["not_found"];
            409: components["responses"]["conflict"];
            413: components["responses"]["payload_too_large"];
            422: components["responses"]["invalid_request"];
            503: components["responses"]["unavailable"];
        };
    };
    signal: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the execution id (`ex_[0-9A-HJKMNP-TV-Z]{26}`); any other is 404 */
                executionId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["SignalRequest"];
            };
        };
        responses: {
            /** @description sent, and journaled as a `signal` event */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SignalResult"];
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            404: components["responses"]["not_found"];
            409: components["responses"]["conflict"];
            413: components["responses"]["payload_too_large"];
            422: components["responses"]["invalid_request"];
            503: components["responses"]["unavailable"];
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
    listSessions: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description every session with a workspace */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SessionList"];
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            413: components["responses"]["payload_too_large"];
            503: components["responses"]["unavailable"];
        };
    };
    deleteSessions: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
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
            409: components["responses"]["conflict"];
            413: components["responses"]["payload_too_large"];
            503: components["responses"]["unavailable"];
        };
    };
    getSession: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the session (`[A-Za-z0-9._-]{1,64}`, not `.` or `..`); any other, or another principal's, is 404 */
                sessionId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the session */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Session"];
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
    deleteSession: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the session (`[A-Za-z0-9._-]{1,64}`, not `.` or `..`); any other, or another principal's, is 404 */
                sessionId: string;
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
        };
    };
    listWorkspace: {
        parameters: {
            query?: {
                /** @description a listing whatever the path is (a file lists as itself) */
                list?: string;
                /** @description how many levels a listing goes down (0: the path alone) */
                depth?: number;
            };
            header?: never;
            path: {
                /** @description the session (`[A-Za-z0-9._-]{1,64}`, not `.` or `..`); any other, or another principal's, is 404 */
                sessionId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description a directory, or any path with `?list`: its listing */
            200: {
                headers: {
                    /** @description the file's version; it changes with every write */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["FileList"];
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
            /** @description not modified: the file is the version `If-None-Match` names */
            304: {
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
            409: components["responses"]["conflict"];
            413: components["responses"]["payload_too_large"];
            416: components["responses"]["range_not_satisfiable"];
            422: components["responses"]["invalid_request"];
            503: components["responses"]["unavailable"];
        };
    };
    readFile: {
        parameters: {
            query?: {
                /** @description a listing whatever the path is (a file lists as itself) */
                list?: string;
                /** @description how many levels a listing goes down (0: the path alone) */
                depth?: number;
            };
            header?: {
                /** @description one range: `bytes=a-b`, `bytes=a-` or `bytes=-n` */
                Range?: string;
                /** @description `*` or ETags: 304 when the file is one of these versions */
                "If-None-Match"?: string;
            };
            path: {
                /** @description the session (`[A-Za-z0-9._-]{1,64}`, not `.` or `..`); any other, or another principal's, is 404 */
                sessionId: string;
                /** @description a path in the session's workspace, relative to it, `/`-separated; one that leads out is 422 */
                path: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description a directory, or any path with `?list`: its listing */
            200: {
                headers: {
                    /** @description the file's version; it changes with every write */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["FileList"];
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
            /** @description not modified: the file is the version `If-None-Match` names */
            304: {
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
            409: components["responses"]["conflict"];
            413: components["responses"]["payload_too_large"];
            416: components["responses"]["range_not_satisfiable"];
            422: components["responses"]["invalid_request"];
            503: components["responses"]["unavailable"];
        };
    };
    writeFile: {
        parameters: {
            query?: never;
            header?: {
                /** @description `*` or ETags: write (or delete) only if the file is one of these versions now; else 412 */
                "If-Match"?: string;
                /** @description `*`: write only if nothing is at the path (create, never replace); else 412 */
                "If-None-Match"?: string;
            };
            path: {
                /** @description the session (`[A-Za-z0-9._-]{1,64}`, not `.` or `..`); any other, or another principal's, is 404 */
                sessionId: string;
                /** @description a path in the session's workspace, relative to it, `/`-separated; one that leads out is 422 */
                path: string;
            };
            cookie?: never;
        };
        /** @description the file's bytes, at most `WORKBENCH_MAX_FILE_BYTES` */
        requestBody: {
            content: {
                "application/octet-stream": string;
            };
        };
        responses: {
            /** @description replaced */
            200: {
                headers: {
                    /** @description the file's version; it changes with every write */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["FileEntry"];
                };
            };
            /** @description created */
            201: {
                headers: {
                    /** @description the file's version; it changes with every write */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["FileEntry"];
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            404: components["responses"]["not_found"];
            409: components["responses"]["conflict"];
            412: components["responses"]["precondition_failed"];
            413: components["responses"]["payload_too_large"];
            422: components["responses"]["invalid_request"];
            503: components["responses"]["unavailable"];
            507: components["responses"]["quota_exceeded"];
        };
    };
    deleteFile: {
        parameters: {
            query?: never;
            header?: {
                /** @description `*` or ETags: write (or delete) only if the file is one of these versions now; else 412 */
                "If-Match"?: string;
            };
            path: {
                /** @description the session (`[A-Za-z0-9._-]{1,64}`, not `.` or `..`); any other, or another principal's, is 404 */
                sessionId: string;
                /** @description a path in the session's workspace, relative to it, `/`-separated; one that leads out is 422 */
                path: string;
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
            412: components["responses"]["precondition_failed"];
            413: components["responses"]["payload_too_large"];
            422: components["responses"]["invalid_request"];
            503: components["responses"]["unavailable"];
        };
    };
    uploadFiles: {
        parameters: {
            query?: {
                /** @description a path in the workspace (default: the workspace itself) */
                path?: string;
            };
            header?: never;
            path: {
                /** @description the session (`[A-Za-z0-9._-]{1,64}`, not `.` or `..`); any other, or another principal's, is 404 */
                sessionId: string;
            };
            cookie?: never;
        };
        /** @description the archive, at most `WORKBENCH_MAX_FILE_BYTES` */
        requestBody: {
            content: {
                "application/octet-stream": string;
            };
        };
        responses: {
            /** @description unpacked */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UploadResult"];
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            404: components["responses"]["not_found"];
            409: components["responses"]["conflict"];
            413: components["responses"]["payload_too_large"];
            422: components["responses"]["invalid_request"];
            503: components["responses"]["unavailable"];
            507: components["responses"]["quota_exceeded"];
        };
    };
    downloadFiles: {
        parameters: {
            query?: {
                /** @description a path in the workspace (default: the workspace itself) */
                path?: string;
            };
            header?: never;
            path: {
                /** @description the session (`[A-Za-z0-9._-]{1,64}`, not `.` or `..`); any other, or another principal's, is 404 */
                sessionId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the tar, streamed as it is written */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/x-tar": string;
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            404: components["responses"]["not_found"];
            409: components["responses"]["conflict"];
            413: components["responses"]["payload_too_large"];
            422: components["responses"]["invalid_request"];
            503: components["responses"]["unavailable"];
        };
    };
    moveFile: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the session (`[A-Za-z0-9._-]{1,64}`, not `.` or `..`); any other, or another principal's, is 404 */
                sessionId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["MoveRequest"];
            };
        };
        responses: {
            /** @description where it is now */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["FileEntry"];
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            404: components["responses"]["not_found"];
            409: components["responses"]["conflict"];
            413: components["responses"]["payload_too_large"];
            /** @description `invalid_request`: the body fails validation (`details` lists the fields); `invalid_request`: the body fails validation (`details` lists the fields) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            503: components["responses"]["unavailable"];
        };
    };
    watchFiles: {
        parameters: {
            query?: {
                /** @description a path in the workspace (default: the workspace itself) */
                path?: string;
                /** @description end the stream after this long (0: never) */
                timeoutMs?: number;
            };
            header?: never;
            path: {
                /** @description the session (`[A-Za-z0-9._-]{1,64}`, not `.` or `..`); any other, or another principal's, is 404 */
                sessionId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /**
             * @description Each change is `event: TYPE` and `data: FILE_EVENT_JSON` (a `FileEvent`),
             *     without an `id:` (a watch is not replayed: watch again and list). A `: watching` comment comes
             *     first, once every directory under the path is watched; `: keepalive` after 15 s of quiet. The
             *     stream ends when the daemon stops, after `timeoutMs`, or once the watched directory is gone.
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
            404: components["responses"]["not_found"];
            409: components["responses"]["conflict"];
            413: components["responses"]["payload_too_large"];
            422: components["responses"]["invalid_request"];
            503: components["responses"]["unavailable"];
        };
    };
    listContexts: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description oldest first */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ContextList"];
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            413: components["responses"]["payload_too_large"];
            503: components["responses"]["unavailable"];
        };
    };
    createContext: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ContextRequest"];
            };
        };
        responses: {
            /** @description started: `ready`, or `dead` with the `reason` it could not start */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Context"];
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            413: components["responses"]["payload_too_large"];
            /** @description `invalid_request`: the body fails validation (`details` lists the fields); `unknown_image`: no image by that name; `image_unavailable`: the image cannot run on this machine; `unsupported_language`: the image has no such language */
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
    getContext: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the context id (`cx_` + 26 characters); any other, or another principal's, is 404 */
                contextId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the context */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Context"];
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
    deleteContext: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the context id (`cx_` + 26 characters); any other, or another principal's, is 404 */
                contextId: string;
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
            413: components["responses"]["payload_too_large"];
            503: components["responses"]["unavailable"];
        };
    };
    stats: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description counts and sizes, read now */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Stats"];
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            413: components["responses"]["payload_too_large"];
            503: components["responses"]["unavailable"];
        };
    };
    metrics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /**
             * @description The Prometheus text exposition (version 0.0.4): `workbench_executions{status}`,
             *     `workbench_queue_depth`, `workbench_running`, `workbench_spawn_seconds` and `workbench_commit_seconds`
             *     (histograms), `workbench_store_bytes`, `workbench_store_free_bytes`, `workbench_followers`,
             *     `workbench_executions_deleted_total`. The whole daemon's figures: needs a token of the principal
             *     `admin` with `logs:read` (403 for another's), unless `WORKBENCH_METRICS_OPEN=1` and the scraper
             *     connects from loopback.
             */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/plain; version=0.0.4; charset=utf-8": string;
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            413: components["responses"]["payload_too_large"];
            503: components["responses"]["unavailable"];
        };
    };
    nodeArtifact: {
        parameters: {
            query?: never;
            header?: {
                /** @description `Bearer ` and the nodes' shared `WORKBENCH_NODE_TOKEN` (no principal's token) */
                Authorization?: string;
                /** @description one range: `bytes=a-b`, `bytes=a-` or `bytes=-n` */
                Range?: string;
            };
            path: {
                /** @description the node's id (`WORKBENCH_NODE_ID`); another node's is 404 */
                nodeId: string;
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
            /** @description logged in: `Set-Cookie: workbench_session_<daemon>=...; HttpOnly; SameSite=Strict` */
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
