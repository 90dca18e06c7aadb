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
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** Artifact */
        Artifact: {
            /** Name */
            name: string;
            /** Sizebytes */
            sizeBytes: number;
            /** Sha256 */
            sha256: string;
            /**
             * Contenttype
             * @default application/octet-stream
             */
            contentType: string;
        };
        /** ArtifactList */
        ArtifactList: {
            /** Artifacts */
            artifacts: components["schemas"]["Artifact"][];
        };
        /**
         * CancelRequest
         * @description `POST .../cancel`.
         */
        CancelRequest: {
            /**
             * Reason
             * @default null
             */
            reason: string | null;
            /**
             * Gracems
             * @default 0
             */
            graceMs: number;
        };
        /** CancelResult */
        CancelResult: {
            /** Cancelled */
            cancelled: boolean;
            execution: components["schemas"]["Execution"];
        };
        /** Capabilities */
        Capabilities: {
            /**
             * Cancellable
             * @default hard
             */
            cancellable: string;
            /**
             * Streamingsupport
             * @default true
             */
            streamingSupport: boolean;
            /**
             * Backgroundsupport
             * @default true
             */
            backgroundSupport: boolean;
        };
        /**
         * DetachResult
         * @description `POST .../detach`: detached, or not because it had already ended (then with its record).
         */
        DetachResult: {
            /** Detached */
            detached: boolean;
            /** @default null */
            execution: components["schemas"]["Execution"] | null;
        };
        /** ErrorBody */
        ErrorBody: {
            /** Code */
            code: string;
            /** Message */
            message: string;
            /**
             * Details
             * @default null
             */
            details: unknown;
        };
        /**
         * ErrorInfo
         * @description Why an execution failed (`error` of the record and of the terminal event).
         */
        ErrorInfo: {
            /** Code */
            code: string;
            /** Message */
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
            /** Sequence */
            sequence: number;
            /**
             * Eventtype
             * @enum {string}
             */
            eventType: "status" | "output" | "output_truncated" | "progress" | "artifact";
            status: components["schemas"]["ExecutionStatus"];
            /** Timestamp */
            timestamp: string;
            /**
             * Stream
             * @default null
             */
            stream: ("stdout" | "stderr") | null;
            /**
             * Outputdelta
             * @default null
             */
            outputDelta: string | null;
            /**
             * Message
             * @default null
             */
            message: string | null;
            /**
             * Progress
             * @default null
             */
            progress: number | null;
            /**
             * Total
             * @default null
             */
            total: number | null;
            /**
             * Exitcode
             * @default null
             */
            exitCode: number | null;
            /**
             * Signal
             * @default null
             */
            signal: string | null;
            /** @default null */
            error: components["schemas"]["ErrorInfo"] | null;
        };
        /** EventPage */
        EventPage: {
            /** Events */
            events: components["schemas"]["Event"][];
            /** Nextafter */
            nextAfter: number;
            /** Terminal */
            terminal: boolean;
        };
        /**
         * Execution
         * @description The execution record.
         */
        Execution: {
            /** Executionid */
            executionId: string;
            /**
             * Executionkind
             * @enum {string}
             */
            executionKind: "workbench_bash" | "workbench_code";
            /** Sessionid */
            sessionId: string;
            status: components["schemas"]["ExecutionStatus"];
            /**
             * Command
             * @default null
             */
            command: string | null;
            /**
             * Language
             * @default null
             */
            language: string | null;
            /**
             * Code
             * @default null
             */
            code: string | null;
            /** Cwd */
            cwd: string;
            /** Image */
            image: string;
            /** Env */
            env?: {
                [key: string]: string;
            };
            /**
             * Metadata
             * @default null
             */
            metadata: unknown;
            /**
             * Idempotencykey
             * @default null
             */
            idempotencyKey: string | null;
            /** Createdat */
            createdAt: string;
            /**
             * Startedat
             * @default null
             */
            startedAt: string | null;
            /**
             * Finishedat
             * @default null
             */
            finishedAt: string | null;
            /** Deadlineat */
            deadlineAt: string;
            /** Timeoutms */
            timeoutMs: number;
            /**
             * Idletimeoutms
             * @default null
             */
            idleTimeoutMs: number | null;
            /**
             * Exitcode
             * @default null
             */
            exitCode: number | null;
            /**
             * Signal
             * @default null
             */
            signal: string | null;
            /** @default null */
            error: components["schemas"]["ErrorInfo"] | null;
            /**
             * Cancelreason
             * @default null
             */
            cancelReason: string | null;
            capabilities?: components["schemas"]["Capabilities"];
            output: components["schemas"]["OutputInfo"];
            /** Artifacts */
            artifacts?: components["schemas"]["Artifact"][];
            /**
             * Lastsequence
             * @default 0
             */
            lastSequence: number;
            /**
             * Detached
             * @default false
             */
            detached: boolean;
            /**
             * Containment
             * @default null
             */
            containment: string | null;
        };
        /** ExecutionList */
        ExecutionList: {
            /** Executions */
            executions: components["schemas"]["Execution"][];
            /**
             * Nextcursor
             * @default null
             */
            nextCursor: string | null;
        };
        /**
         * ExecutionStatus
         * @description Where an execution is in its life. Status is apart from outcome (exit code, signal, error).
         * @enum {string}
         */
        ExecutionStatus: "queued" | "running" | "cancel_requested" | "completed" | "failed" | "cancelled" | "timed_out";
        /**
         * Exit
         * @description One delivery of the exits feed: the outcome of a detached execution.
         */
        Exit: {
            /** Deliveryid */
            deliveryId: string;
            /** Executionid */
            executionId: string;
            /**
             * Executionkind
             * @enum {string}
             */
            executionKind: "workbench_bash" | "workbench_code";
            status: components["schemas"]["ExecutionStatus"];
            /**
             * Exitcode
             * @default null
             */
            exitCode: number | null;
            /**
             * Signal
             * @default null
             */
            signal: string | null;
            /** @default null */
            error: components["schemas"]["ErrorInfo"] | null;
            /**
             * Metadata
             * @default null
             */
            metadata: unknown;
            /**
             * Stdouttail
             * @default
             */
            stdoutTail: string;
            /**
             * Stderrtail
             * @default
             */
            stderrTail: string;
            /**
             * Finishedat
             * @default null
             */
            finishedAt: string | null;
            /**
             * Attempt
             * @default 1
             */
            attempt: number;
        };
        /**
         * ExitList
         * @description `GET /v1/exits`.
         */
        ExitList: {
            /** Exits */
            exits: components["schemas"]["Exit"][];
        };
        /** Health */
        Health: {
            /**
             * Status
             * @default ok
             */
            status: string;
        };
        /**
         * Image
         * @description What an execution can run in (`GET /v1/images`).
         */
        Image: {
            /** Name */
            name: string;
            /**
             * Description
             * @default
             */
            description: string;
            /** Languages */
            languages: string[];
            isolation: components["schemas"]["ImageIsolation"];
            /** Available */
            available: boolean;
            /**
             * Unavailablereason
             * @default null
             */
            unavailableReason: string | null;
        };
        /** ImageIsolation */
        ImageIsolation: {
            /** Filesystem */
            filesystem: string;
            /** Network */
            network: boolean;
            /** Pidnamespace */
            pidNamespace: boolean;
        };
        /** ImageList */
        ImageList: {
            /** Images */
            images: components["schemas"]["Image"][];
        };
        /** OutputInfo */
        OutputInfo: {
            /**
             * Stdoutbytes
             * @default 0
             */
            stdoutBytes: number;
            /**
             * Stderrbytes
             * @default 0
             */
            stderrBytes: number;
            /**
             * Eventbytes
             * @default 0
             */
            eventBytes: number;
            /** Budgetbytes */
            budgetBytes: number;
            /**
             * Truncated
             * @default false
             */
            truncated: boolean;
        };
        /**
         * StartBashRequest
         * @description `POST /v1/executions/workbench_bash`.
         */
        StartBashRequest: {
            /**
             * Background
             * @default false
             */
            background: boolean;
            /**
             * Waittimeoutms
             * @default null
             */
            waitTimeoutMs: number | null;
            /**
             * Timeoutms
             * @default null
             */
            timeoutMs: number | null;
            /**
             * Idletimeoutms
             * @default null
             */
            idleTimeoutMs: number | null;
            /**
             * Cwd
             * @default null
             */
            cwd: string | null;
            /** Env */
            env?: {
                [key: string]: string;
            };
            /**
             * Stdin
             * @default null
             */
            stdin: string | null;
            /**
             * Metadata
             * @default null
             */
            metadata: unknown;
            /**
             * Image
             * @default host
             */
            image: string;
            /**
             * Sessionid
             * @default default
             */
            sessionId: string;
            /**
             * Detached
             * @default false
             */
            detached: boolean;
            /** Command */
            command: string;
        };
        /**
         * StartCodeRequest
         * @description `POST /v1/executions/workbench_code`.
         */
        StartCodeRequest: {
            /**
             * Background
             * @default false
             */
            background: boolean;
            /**
             * Waittimeoutms
             * @default null
             */
            waitTimeoutMs: number | null;
            /**
             * Timeoutms
             * @default null
             */
            timeoutMs: number | null;
            /**
             * Idletimeoutms
             * @default null
             */
            idleTimeoutMs: number | null;
            /**
             * Cwd
             * @default null
             */
            cwd: string | null;
            /** Env */
            env?: {
                [key: string]: string;
            };
            /**
             * Stdin
             * @default null
             */
            stdin: string | null;
            /**
             * Metadata
             * @default null
             */
            metadata: unknown;
            /**
             * Image
             * @default host
             */
            image: string;
            /**
             * Sessionid
             * @default default
             */
            sessionId: string;
            /**
             * Detached
             * @default false
             */
            detached: boolean;
            /** Language */
            language: string;
            /** Code */
            code: string;
        };
        /**
         * WaitRequest
         * @description `POST .../wait`.
         */
        WaitRequest: {
            /**
             * Waittimeoutms
             * @default null
             */
            waitTimeoutMs: number | null;
        };
        /** WaitResult */
        WaitResult: {
            execution: components["schemas"]["Execution"];
            /** Waittimedout */
            waitTimedOut: boolean;
        };
    };
    responses: {
        /** @description `bad_request`: malformed JSON or bad query parameters */
        bad_request: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description `unauthorized`: missing or wrong bearer token */
        unauthorized: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description `forbidden`: the token lacks the scope for this route */
        forbidden: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description `not_found`: unknown execution, kind, artifact or route, or an execution of another principal */
        not_found: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description `conflict`: the request conflicts with the current state (e.g. deleting a running execution) */
        conflict: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description `payload_too_large`: body over the limit (default 1 MiB) */
        payload_too_large: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description `invalid_request`: fails validation (`details` lists the fields); also `idempotency_key_reused`, `unknown_image`, `image_unavailable`, `unsupported_language` */
        invalid_request: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description `too_many_executions`: the queue is full */
        too_many_executions: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description `unavailable`: shutting down, or the store failed */
        unavailable: {
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
        };
    };
    startBash: {
        parameters: {
            query?: never;
            header?: {
                /** @description the first request with a key creates the execution; a later one with the same body returns the same record (200, `Idempotent-Replayed: true`) */
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
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Execution"];
                };
            };
            /** @description ran in the foreground: the record after up to `waitTimeoutMs` (terminal or not) */
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
            422: components["responses"]["invalid_request"];
            429: components["responses"]["too_many_executions"];
            503: components["responses"]["unavailable"];
        };
    };
    startCode: {
        parameters: {
            query?: never;
            header?: {
                /** @description the first request with a key creates the execution; a later one with the same body returns the same record (200, `Idempotent-Replayed: true`) */
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
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Execution"];
                };
            };
            /** @description ran in the foreground: the record after up to `waitTimeoutMs` (terminal or not) */
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
            422: components["responses"]["invalid_request"];
            429: components["responses"]["too_many_executions"];
            503: components["responses"]["unavailable"];
        };
    };
    listExecutions: {
        parameters: {
            query?: {
                /** @description only this status */
                status?: components["schemas"]["ExecutionStatus"];
                /** @description only this kind */
                kind?: "workbench_bash" | "workbench_code";
                /** @description only this session's */
                sessionId?: string;
                /** @description page size */
                limit?: number;
                /** @description `nextCursor` of the previous page */
                cursor?: string;
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
            404: components["responses"]["not_found"];
            422: components["responses"]["invalid_request"];
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
            404: components["responses"]["not_found"];
            503: components["responses"]["unavailable"];
        };
    };
    ackExit: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the delivery id of an exit */
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
            503: components["responses"]["unavailable"];
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
            404: components["responses"]["not_found"];
            503: components["responses"]["unavailable"];
        };
    };
    getExecutionWithKind: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the execution kind; a wrong one is 404 */
                kind: "workbench_bash" | "workbench_code";
                /** @description the execution id */
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
            503: components["responses"]["unavailable"];
        };
    };
    deleteExecutionWithKind: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the execution kind; a wrong one is 404 */
                kind: "workbench_bash" | "workbench_code";
                /** @description the execution id */
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
            503: components["responses"]["unavailable"];
        };
    };
    getExecution: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the execution id */
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
            503: components["responses"]["unavailable"];
        };
    };
    deleteExecution: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the execution id */
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
            503: components["responses"]["unavailable"];
        };
    };
    waitWithKind: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the execution kind; a wrong one is 404 */
                kind: "workbench_bash" | "workbench_code";
                /** @description the execution id */
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
                /** @description the execution id */
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
                kind: "workbench_bash" | "workbench_code";
                /** @description the execution id */
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
        };
    };
    cancel: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the execution id */
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
        };
    };
    detachWithKind: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the execution kind; a wrong one is 404 */
                kind: "workbench_bash" | "workbench_code";
                /** @description the execution id */
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
            503: components["responses"]["unavailable"];
        };
    };
    detach: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the execution id */
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
                kind: "workbench_bash" | "workbench_code";
                /** @description the execution id */
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
                /** @description the execution id */
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
            503: components["responses"]["unavailable"];
        };
    };
    eventsStreamWithKind: {
        parameters: {
            query?: {
                /** @description the last sequence already seen */
                after?: number;
            };
            header?: {
                /** @description the last `id:` seen; wins over `after` */
                "Last-Event-ID"?: string;
            };
            path: {
                /** @description the execution kind; a wrong one is 404 */
                kind: "workbench_bash" | "workbench_code";
                /** @description the execution id */
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
                    "text/event-stream": string;
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            404: components["responses"]["not_found"];
            503: components["responses"]["unavailable"];
        };
    };
    eventsStream: {
        parameters: {
            query?: {
                /** @description the last sequence already seen */
                after?: number;
            };
            header?: {
                /** @description the last `id:` seen; wins over `after` */
                "Last-Event-ID"?: string;
            };
            path: {
                /** @description the execution id */
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
                    "text/event-stream": string;
                };
            };
            400: components["responses"]["bad_request"];
            401: components["responses"]["unauthorized"];
            403: components["responses"]["forbidden"];
            404: components["responses"]["not_found"];
            503: components["responses"]["unavailable"];
        };
    };
    artifactsWithKind: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the execution kind; a wrong one is 404 */
                kind: "workbench_bash" | "workbench_code";
                /** @description the execution id */
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
            503: components["responses"]["unavailable"];
        };
    };
    artifacts: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the execution id */
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
            503: components["responses"]["unavailable"];
        };
    };
    artifactWithKind: {
        parameters: {
            query?: never;
            header?: {
                /** @description `bytes=a-b`, `bytes=a-` or `bytes=-n` */
                Range?: string;
            };
            path: {
                /** @description the execution kind; a wrong one is 404 */
                kind: "workbench_bash" | "workbench_code";
                /** @description the execution id */
                executionId: string;
                /** @description the artifact */
                name: "stdout" | "stderr";
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
            /** @description the range cannot be satisfied (an error body) */
            416: {
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
    artifact: {
        parameters: {
            query?: never;
            header?: {
                /** @description `bytes=a-b`, `bytes=a-` or `bytes=-n` */
                Range?: string;
            };
            path: {
                /** @description the execution id */
                executionId: string;
                /** @description the artifact */
                name: "stdout" | "stderr";
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
            /** @description the range cannot be satisfied (an error body) */
            416: {
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
}
