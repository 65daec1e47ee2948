// Generated from docs/openapi.json by `npm run api:types` (scripts/api-types.mjs,
// openapi-typescript). Do not edit: change the document and run the script again.
export interface paths {
    "/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * This API's OpenAPI 3.1 document
         * @description Public: it holds nothing a deployment keeps secret (routes, shapes, examples from the demo dataset), and a client generator or tester reads it before it has a credential. It is the document this build was tested against (docs/openapi.json).
         */
        get: operations["openApiDocument"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/health": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The components' status, the key-value store, the LLM, the catalog and prompt versions
         * @description Asks every dependency component for its status and round-trips the key-value store; 503 with the same body when one is not ready (docs/operations.md#health).
         */
        get: operations["health"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/graph/policy": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The graph's visibility policy as declared
         * @description Each rule of the graph profile's visibility policy with its line: which labels, relationship types and properties are hidden, shown to some roles only, or kept from the LLM (docs/security.md#what-may-leave-the-graph). Read-only.
         */
        get: operations["graphPolicy"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/health/live": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Liveness: the instance answers
         * @description Served by the liveness component (components/liveness), which spin.toml routes this path to, so a probe does not instantiate the dispatcher; the dispatcher answers the same way (kg_http::liveness) on a path spin.toml does not route there (e.g. with a trailing slash). No credential, no details; neither traced nor logged.
         */
        get: operations["healthLive"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/health/ready": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Readiness: the graph, the LLM and the key-value store, each checked
         * @description The graph (`RETURN 1`), the LLM (`GET {llm}/models`, its outcome cached for `health_llm_cache_s`) and the key-value store, each with its latency; reasons are redacted (the route is public).
         */
        get: operations["healthReady"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/auth/config": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * What a browser needs to sign in
         * @description The auth modes and, with OIDC, the issuer, the public client id, the scopes and the audience to ask for; nothing secret (docs/security.md).
         */
        get: operations["authConfig"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/.well-known/oauth-protected-resource/mcp": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * RFC 9728 protected resource metadata of /mcp
         * @description Where an MCP client that got a 401 learns which authorization server issues tokens for `/mcp` (the path a 401's `WWW-Authenticate` names in `resource_metadata`). 404 when there is no usable origin (`public_url` unset and the request's `Host` is not a host name).
         */
        get: operations["protectedResourceMetadata"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/.well-known/oauth-protected-resource": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * RFC 9728 protected resource metadata of /mcp (root path)
         * @description The same document as `/.well-known/oauth-protected-resource/mcp`, for clients that look it up at the well-known root.
         */
        get: operations["protectedResourceMetadataRoot"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tools": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The graph tools, each with the JSON Schema of its arguments */
        get: operations["listTools"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tools/{name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Call a graph tool
         * @description The body is the tool's arguments, checked against its JSON Schema (`GET /tools`): an argument it does not allow is a 400 naming it, a string over 10,000 characters is refused, a label or relationship type that does not exist is a 404 listing close matches. An empty body is `{}`. `run_read_cypher`'s guards: docs/api.md#graph-tools.
         */
        post: operations["callTool"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tools/describe_class": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Describe one class (label): description, properties with their types, relationships in and out with the class at the other end, instance count, sample instances
         * @description Describe one class (label): description, properties with their types, relationships in and out with the class at the other end, instance count, sample instances. `available_actions` lists the actions that can run on its instances (filled in by the agent from the action catalog; null when not merged).
         */
        post: operations["callDescribeClass"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tools/find_path_between_instances": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Find how two instances are connected: the shortest paths between them, up to max_depth relationships long
         * @description Find how two instances are connected: the shortest paths between them, up to max_depth relationships long. Each instance is its key value (e.g. "PO-0003"; add start_class or end_class when the value is not unique across classes), its key as the JSON object an answer gave (needed for a key of several properties), its caption (name), or an element_id from an earlier answer.
         */
        post: operations["callFindPathBetweenInstances"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tools/get_instance_neighbors": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Show the instances connected to one instance within 1 to 3 hops, optionally only along some relationship types and in one direction, and how many relationships of each type the instance has
         * @description Show the instances connected to one instance within 1 to 3 hops, optionally only along some relationship types and in one direction, and how many relationships of each type the instance has. The instance is its key value (e.g. "PO-0003"; add class_name when the value is not unique across classes), its key as the JSON object an answer gave (needed for a key of several properties, e.g. {"country": "US", "subd": "Illinois", "name": "Springfield"}), its caption (name), or an element_id from an earlier answer. Each neighbour comes with its label, its key (also as a field of its own, e.g. `id`: use it as `instance` here or as the entity id of an action), its caption, its element_id and its distance. A node with many relationships answers its first `limit` paths and the counts.
         */
        post: operations["callGetInstanceNeighbors"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tools/get_instances_by_class": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * List instances of one class (label), optionally filtered by property conditions, in key order, a page at a time: an answer cut at `limit` gives `next`, which the next call passes as `after`
         * @description List instances of one class (label), optionally filtered by property conditions, in key order, a page at a time: an answer cut at `limit` gives `next`, which the next call passes as `after`.
         */
        post: operations["callGetInstancesByClass"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tools/get_node_statistics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Count the graph's nodes per label (class), or for one label, with a few sample nodes of each
         * @description Count the graph's nodes per label (class), or for one label, with a few sample nodes of each.
         */
        post: operations["callGetNodeStatistics"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tools/get_ontology_classes": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * List the classes (node labels) of the knowledge graph with their descriptions and properties
         * @description List the classes (node labels) of the knowledge graph with their descriptions and properties.
         */
        post: operations["callGetOntologyClasses"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tools/get_ontology_relationships": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * List the relationship types of the knowledge graph with their source and target classes and descriptions
         * @description List the relationship types of the knowledge graph with their source and target classes and descriptions.
         */
        post: operations["callGetOntologyRelationships"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tools/run_read_cypher": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Run one read-only Cypher query (MATCH … RETURN …) when no other tool fits
         * @description Run one read-only Cypher query (MATCH … RETURN …) when no other tool fits. Writes, LOAD CSV, admin commands and procedures other than db.labels/db.relationshipTypes/db.propertyKeys/db.schema.* are refused; labels and relationship types must exist; pass values as $parameters; at most `limit` rows come back. Unbounded work is refused (query_too_expensive): range() needs literal bounds at most 100000 apart, variable-length patterns an upper bound of at most 10 hops (`[*1..3]`). `PROFILE <query>` adds the measured plan.
         */
        post: operations["callRunReadCypher"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tools/search_instances": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Find entity instances whose key, caption (name) or other text properties contain the search term (case-insensitive), best matches first: exact, then prefix, then contains
         * @description Find entity instances whose key, caption (name) or other text properties contain the search term (case-insensitive), best matches first: exact, then prefix, then contains. Each match carries its label, its key (use it, with class_name when the value is not unique, as the instance of another tool) and its element_id.
         */
        post: operations["callSearchInstances"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/documents": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The ingested documents */
        get: operations["listDocuments"];
        put?: never;
        /**
         * Ingest (or replace) a document: chunk, embed, store
         * @description Splits the text by structure then by size, embeds the chunks (an unreachable embeddings endpoint stores them without vectors, with a warning) and stores them with links to the graph entities they mention. Concurrent writes of one id: the loser is retried, then 409 (docs/api.md#documents-and-search).
         */
        post: operations["ingestDocument"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/documents/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Delete a document and its chunks */
        delete: operations["deleteDocument"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/search": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Hybrid search of the documents (vector + BM25, fused)
         * @description Reciprocal Rank Fusion of a vector leg and a full-text leg, then the filters (docs/api.md#documents-and-search). A leg that cannot run is dropped with a warning; before any ingest the answer is empty with a warning; 503 only when no leg could run for another reason.
         */
        post: operations["searchDocuments"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/chat": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * One chat turn, answered as one JSON object
         * @description Routes the message, then answers directly, asks back, runs the ReAct loop over the tools, or plans an action (pausing for approval when it must) (docs/agent.md). A reply such as "yes" or "no" to a plan waiting in the conversation runs or rejects it, with the approval's refusals (403 `approval_*`, `four_eyes`; 409 `approval_used`, `approval_rejected`). LLM failures: 503 `llm_unavailable`/`llm_not_configured`, 504 `llm_timeout`, 502 `llm_upstream`; the turn's deadline: 504 `turn_deadline_exceeded`. 429 also when the subject's LLM tokens of the day are spent.
         */
        post: operations["chat"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/chat/stream": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * One chat turn as Server-Sent Events (or, with Last-Event-ID, a resume)
         * @description The body is checked before the stream opens (400), then the turn streams the events of docs/agent.md#events (`ChatEvent`): `conversation_id` first, `completed` then `done` last; a failure once the stream is open is an `error` event with the code the JSON answer would have had. With `Last-Event-ID`, the body is not read: the named turn's kept events after that id are sent, then the rest (as `GET /chat/stream/{turn_id}`).
         */
        post: operations["chatStream"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/chat/stream/{turn_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Resume a turn's event stream
         * @description The turn's kept events after `Last-Event-ID` (from the start without it), then, while the turn still runs on any instance, the rest until `done`. Only its owner (or a holder of `conversations:all`) may: someone else's or an unknown turn is 404; a `Last-Event-ID` naming another turn is 400; events older than `chat_event_retention_s` are 410 `stream_expired` (docs/agent.md#resuming-a-stream).
         */
        get: operations["resumeChatStream"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/chat/approve": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Run (or reject) a plan waiting for approval
         * @description Approving needs `actions:approve` (403 otherwise); rejecting, that or being the one who asked. The token is single use and bound to its plan (docs/actions.md#approvals): unknown, expired or four-eyes refusals are 403 (`approval_invalid`, `approval_expired`, `four_eyes`), a spent or rejected one 409 (`approval_used`, `approval_rejected`). With `Accept: text/event-stream` the body and the role are checked first (JSON errors), then the batch streams as `/chat/stream` does; later refusals are `error` events.
         */
        post: operations["approvePlan"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/qa/query": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Seed 002's question route, answered like POST /chat
         * @deprecated
         * @description Takes the chat body (`question` being an alias of `message`) and answers as `POST /chat`, with `X-Deprecation-Warning`.
         */
        post: operations["legacyQuery"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/conversations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The caller's own conversations, newest first */
        get: operations["listConversations"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/conversations/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A conversation's turns and running summary */
        get: operations["getConversation"];
        put?: never;
        post?: never;
        /** Forget a conversation */
        delete: operations["deleteConversation"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/mcp": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * The Model Context Protocol endpoint (Streamable HTTP, stateless)
         * @description One JSON-RPC 2.0 message per request (docs/mcp.md). Each tool call mirrors an HTTP route and needs that route's permission; a call the route refuses is a result with `isError: true` carrying the API's JSON error. `GET` and `DELETE` are 405.
         */
        post: operations["mcp"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/actions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the catalog's actions
         * @description All actions of the catalog (`catalog/actions.toml`), or those of one entity type. See docs/actions.md#the-catalog.
         */
        get: operations["listActions"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/actions/{entity_type}/{action}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Describe one action
         * @description The action's parameters, preconditions and effects as the catalog declares them.
         */
        get: operations["getAction"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/actions/{entity_type}/{action}/validate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Dry-run an action
         * @description Checks every precondition for each entity without writing anything: per entity whether it was found and each check's result. See docs/actions.md#running-an-action.
         */
        post: operations["validateAction"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/actions/{entity_type}/{action}/plan": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Plan an action and get an approval token if a person must approve it
         * @description Checks that the caller may run the plan; when a person must approve it (the action has `requires_approval`, or the batch names more than `approval_batch_threshold`, 50, distinct entities), records an approval in the graph and answers its token, which an approver (`actions:approve`) redeems once with execute, with exactly the planned ids and parameters, before `expires_at`. See docs/actions.md#approvals.
         */
        post: operations["planAction"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/actions/{entity_type}/{action}/execute": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Execute an action on entities (JSON report or SSE progress)
         * @description Runs the action on each entity, checked and applied atomically per chunk, each applied change written to the action log. Answers the report as JSON, or Server-Sent Events (`ActionBatchEvent`) with `Accept: text/event-stream` or `"stream": true`. Without `approval_token` it needs `actions:execute`, and a plan that needs approval is 403 `approval_required` (plan it first); with one it needs `actions:approve`. A failed entity is in the report's `failures` (with its `reason`), not an error status. See docs/actions.md.
         */
        post: operations["executeAction"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/actions/log": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Page through the action log
         * @description Every applied action and undo, newest first. See docs/actions.md#idempotency-the-action-log-and-undo.
         */
        get: operations["actionLog"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/actions/log/{log_id}/undo": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Undo one action-log entry
         * @description Reverts the entry's change when the entity still holds what the action wrote (relative changes such as a debit by their inverse; created nodes deleted). The undo is logged itself and cannot be undone (run the action again). The log id of a change is in the execute report's `successes[].log_id` and in `GET /actions/log`. See docs/actions.md#idempotency-the-action-log-and-undo.
         */
        post: operations["undoAction"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/actions/setup": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create the graph indexes and unique keys the executor relies on
         * @description Idempotent; run once per database. A request body is not read. See docs/neo4j.md#schema-kg-agent-creates.
         */
        post: operations["setupActions"];
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
        Error: {
            error: {
                /**
                 * @description A stable machine-readable code (docs/api.md#requests-and-errors).
                 * @example bad_request
                 */
                code: string;
                /** @description What was wrong, for a person. */
                message: string;
                /** @description More about the error, when there is more (e.g. `permission` for a 403). */
                detail?: unknown;
            };
        };
        Liveness: {
            /** @constant */
            status: "ok";
        };
        /** @description One dependency's check: up or down, how long it took, and why it is down. */
        DependencyCheck: {
            ok: boolean;
            /** @description Milliseconds, two decimals. */
            latency_ms: number;
            /** @description Why it is down (configured origins replaced by `[graph]`, `[llm]`). Absent when up, unless a cached LLM outcome carries one. */
            error?: string;
            /**
             * @description The LLM's outcome was reused from the key-value store (`health_llm_cache_s`).
             * @constant
             */
            cached?: true;
            /** @description Age of the reused outcome. */
            age_ms?: number;
        };
        /**
         * @example {
         *       "status": "ready",
         *       "checks": {
         *         "graph": {
         *           "ok": true,
         *           "latency_ms": 1.84
         *         },
         *         "llm": {
         *           "ok": true,
         *           "latency_ms": 12.5,
         *           "cached": true,
         *           "age_ms": 4100
         *         },
         *         "kv": {
         *           "ok": true,
         *           "latency_ms": 0.31
         *         }
         *       },
         *       "down": []
         *     }
         */
        Readiness: {
            /** @enum {string} */
            status: "ready" | "not_ready";
            checks: {
                graph: components["schemas"]["DependencyCheck"];
                llm: components["schemas"]["DependencyCheck"];
                kv: components["schemas"]["DependencyCheck"];
            };
            /** @description The dependencies that are down; empty when ready. */
            down: ("graph" | "llm" | "kv")[];
        };
        HealthComponent: {
            /** @example query-tools */
            name: string;
            version: string;
            ready: boolean;
            checks: {
                name: string;
                ok: boolean;
                detail: string;
            }[];
        };
        /** @description `status` is `ok` (200) when every component is ready and the key-value store answers a round trip, else `degraded` (503). `llm` is listed, not counted (readiness counts it). */
        HealthReport: {
            /** @enum {string} */
            status: "ok" | "degraded";
            /** @description The dispatcher's version. */
            version: string;
            /** @description router, query-tools, action-executor, retriever, summariser. */
            components: components["schemas"]["HealthComponent"][];
            kv: {
                ok: boolean;
                store: string;
                /** @description Round trips so far (when `ok`). */
                probes?: number;
                previous_probe_at_unix_ms?: number | null;
                /** @description Which operation failed (when not `ok`). */
                detail?: string;
            };
            problems: string[];
            llm: components["schemas"]["DependencyCheck"];
            /**
             * @description The action catalog's version as the action-executor loaded it; null when it could not.
             * @example sha256:0123456789ab
             */
            catalog_version: string | null;
            prompts: {
                name: string;
                lang: string;
                file: string;
                hash?: string;
                error?: string;
            }[];
        };
        /**
         * @example {
         *       "modes": [
         *         "api_key"
         *       ],
         *       "oidc": null
         *     }
         */
        AuthConfig: {
            /** @description `auth_mode`'s recognised modes. */
            modes: ("api_key" | "oidc" | "none")[];
            /** @description The browser's OpenID Connect client; null unless `auth_mode` includes `oidc` and both `oidc_issuer` and `oidc_client_id` are set. */
            oidc: null | {
                issuer: string;
                client_id: string;
                /** @description Space-separated (`openid` by default). */
                scopes: string;
                /** @description The first of `oidc_audience`'s accepted audiences. */
                audience: string | null;
            };
        };
        /**
         * @description RFC 9728 metadata of the resource `/mcp` (docs/mcp.md#authorization).
         * @example {
         *       "resource": "http://127.0.0.1:3000/mcp",
         *       "resource_name": "kg-agent",
         *       "bearer_methods_supported": [
         *         "header"
         *       ]
         *     }
         */
        ProtectedResourceMetadata: {
            /**
             * @description `<origin>/mcp`: the `public_url` variable, else the request's `Host` (scheme from `X-Forwarded-Proto`, else `http` for loopback and `https` otherwise).
             * @example http://127.0.0.1:3000/mcp
             */
            resource: string;
            /** @constant */
            resource_name: "kg-agent";
            bearer_methods_supported: "header"[];
            /** @description The OIDC issuer, when `auth_mode` includes `oidc` and a browser client is configured. */
            authorization_servers?: string[];
            scopes_supported?: string[];
        };
        ToolList: {
            tools: {
                /**
                 * @example search_instances
                 * @example get_instances_by_class
                 * @example get_instance_neighbors
                 * @example find_path_between_instances
                 * @example get_ontology_classes
                 * @example get_ontology_relationships
                 * @example describe_class
                 * @example get_node_statistics
                 * @example run_read_cypher
                 */
                name: string;
                description: string;
                /** @description The JSON Schema of the tool's arguments (what `POST /tools/{name}` takes, and what the LLM sees). */
                parameters: Record<string, unknown>;
            }[];
        };
        /** @description The subgraph a tool returned, for drawing. */
        ToolGraphData: {
            nodes: {
                id: string;
                labels: string[];
                caption: string;
                properties: Record<string, unknown>;
            }[];
            edges: {
                id: string;
                type: string;
                source: string;
                target: string;
                properties: Record<string, unknown>;
            }[];
        };
        ToolResult: {
            /** @example get_node_statistics */
            tool: string;
            /** @description The tool's answer (its shape is the tool's; `describe_class`'s `available_actions` filled in from the action catalog). With `data` and `graph_data` together capped at 256 KiB. */
            data: unknown;
            /** @description One line for people. */
            summary: string;
            graph_data: null | components["schemas"]["ToolGraphData"];
            /** @description The answer was cut to fit the size cap (`data.truncation` says how). */
            truncated: boolean;
        };
        DocumentInfo: {
            id: string;
            title: string | null;
            chunks: number;
            metadata: {
                [key: string]: string;
            };
            /** @description RFC 3339 (empty for a document stored without one). */
            ingested_at: string;
        };
        DocumentList: {
            /** @description By id, at most 1,000. */
            documents: components["schemas"]["DocumentInfo"][];
        };
        /** @description Any other field is a 400. `null` is read as absent for the optional ones. */
        DocumentIngest: {
            /** @description 1–200 characters, no control characters, no whitespace at either end. Posting an existing id replaces that document (200). */
            id: string & (unknown & unknown & unknown);
            /** @description The document; not blank. */
            text: string;
            title?: string | null;
            /**
             * @description How the text is split first: paragraphs, or markdown headings then paragraphs.
             * @default text
             * @enum {string|null}
             */
            content_type?: "text" | "markdown" | null;
            /** @description String values; keys 1–64 ASCII letters, digits or `_`. */
            metadata?: {
                [key: string]: string;
            } | null;
            /** @description Size split after the structural one (default 1,000 characters with 150 of overlap). `overlap_chars` must be smaller than `max_chars` (400 otherwise). Any other field is a 400. */
            chunking?: {
                max_chars: number;
                /** @default 0 */
                overlap_chars?: number | null;
            } | null;
        };
        IngestReport: {
            document_id: string;
            chunks: number;
            /** @description An earlier version of the id was replaced (status 200, else 201). */
            replaced: boolean;
            /** @description E.g. chunks stored without embeddings (found by full-text search only), or an index that could not be created. */
            warnings: string[];
        };
        DocumentDeleted: {
            /** @constant */
            deleted: true;
            id: string;
        };
        /** @description Any other field is a 400. `null` is read as absent for the optional ones. `vector_weight` and `bm25_weight` may not both be 0. */
        SearchRequest: {
            /** @description Not blank; at most 4,000 characters. */
            query: string;
            /** @default 10 */
            top_k?: number | null;
            /**
             * @description Weight of the vector leg in the Reciprocal Rank Fusion; 0 skips the leg. Read as a 32-bit float, which must be finite and not negative (hence the bounds).
             * @default 0.7
             */
            vector_weight?: number | null;
            /**
             * @description Weight of the full-text (BM25) leg; 0 skips the leg. Read as a 32-bit float, like `vector_weight`.
             * @default 0.3
             */
            bm25_weight?: number | null;
            /** @description Only chunks of these documents. */
            document_ids?: string[] | null;
            /** @description Only documents whose metadata has these values. */
            metadata_filter?: {
                [key: string]: string;
            } | null;
        };
        SearchHit: {
            chunk_id: string;
            document_id: string;
            text: string;
            position: number;
            fused_score: number;
            vector_score: number | null;
            vector_rank: number | null;
            bm25_score: number | null;
            bm25_rank: number | null;
            metadata: {
                [key: string]: string;
            };
        };
        SearchResponse: {
            query: string;
            hits: components["schemas"]["SearchHit"][];
            /** @description The legs that ran; one that could not (no index, embeddings unreachable) adds a warning instead. */
            legs: ("vector" | "bm25")[];
            warnings: string[];
        };
        /** @description The question is `message`, or its alias `query` or `question`: the first of the three present (in that order) is used and must be a non-blank string of at most 20,000 characters; the others are then ignored. None of them: 400. Likewise `conversation_id` or its alias `thread_id` (`conversation_id` wins when both are present, even as null): absent or null starts a new conversation; else 1–64 letters, digits, `_` or `-` (an integer is read as its digits), and someone else's conversation is a 404. Any other field is a 400 (crates/kg-http/src/chat.rs). */
        ChatRequest: {
            /**
             * @description The user's message (used when present).
             * @example Which suppliers deliver parts used in product PRD-036?
             */
            message?: unknown;
            /** @description Alias of `message` (used when `message` is absent). */
            query?: unknown;
            /** @description Alias of `message` (seed 002; used when `message` and `query` are absent). */
            question?: unknown;
            /** @description Continue this conversation (used when present). */
            conversation_id?: unknown;
            /** @description Alias of `conversation_id` (used when `conversation_id` is absent). */
            thread_id?: unknown;
            /**
             * @description How the router classifies the message.
             * @default hybrid
             * @enum {string|null}
             */
            routing_mode?: "rule" | "llm" | "hybrid" | null;
            /**
             * @description Add the turn's events as `intermediate_steps` to the JSON answer.
             * @default false
             */
            trace?: boolean | null;
            /** @description Accepted and ignored, whatever its value: the route decides (use `POST /chat/stream` for events). */
            stream?: unknown;
        } & (({
            message: string;
        } | {
            query: string;
        } | {
            question: string;
        }) & ({
            conversation_id: null | string | number;
        } | {
            thread_id?: null | string | number;
        }));
        /** @description One whole turn (docs/agent.md). `intermediate_steps` only with `"trace": true`. */
        ChatAnswer: {
            /**
             * @description The conversation (new or continued); empty for an approval of a plan made outside any conversation.
             * @example c-1764307200000-0123456789abcdef
             */
            conversation_id: string;
            answer: string;
            /** @description The router's decision: `intent`, `confidence`, `method`, `reason`, `refined_question`, `warnings` (docs/agent.md#events). */
            route: {
                intent?: string;
                method?: string;
            };
            /** @description The ids the answer cites (entities, documents, chunks). */
            sources: {
                reference: string;
                label: string;
            }[];
            /** @description Every subgraph the turn's tools returned, each node and edge once; null when none. */
            graph_data: null | {
                nodes: {
                    id: string;
                }[];
                edges: {
                    id: string;
                }[];
            };
            /** @description The report of an action batch the turn ran (as `POST /actions/…/execute` answers it); null when none ran. */
            actions: Record<string, unknown> | null;
            /** @description A plan waiting for approval (`approval_token`, `reason`, `expires_at`, `plan`), or after `/chat/approve` the decision (`approval_token`, `approved`); null otherwise. */
            approval: Record<string, unknown> | null;
            usage: {
                prompt_tokens: number;
                completion_tokens: number;
            };
            /** @description The LLM that wrote the answer; null when no LLM took part. */
            model_used: string | null;
            latency_ms: number;
            /** @description The turn's events but the answer's own pieces (`content`, `content_start`). */
            intermediate_steps?: {
                type: string;
            }[];
        };
        /** @description Any other field is a 400. */
        ChatApproveRequest: {
            /**
             * @description From the plan (`approval_required` event, `approval.approval_token`, or `POST /actions/…/plan`). An unknown or malformed token is a 403 `approval_invalid`.
             * @example apv_3f9c0d2b7e4a4c1f8a6b5d2e9c7f1a0b3f9c0d2b7e4a4c1f8a6b5d2e9c7f1a0b
             */
            approval_token: string;
            /**
             * @description `true` runs the plan (needs `actions:approve`); `false` rejects it (an approver, or the one who asked).
             * @default true
             */
            approve?: boolean | null;
        };
        ConversationList: {
            /** @description The caller's own, most recently updated first, at most 200. */
            conversations: {
                id: string;
                /** @description The first message, cut to 80 characters. */
                title: string;
                /** @description When its newest turn was written (RFC 3339). */
                updated: string;
                turns: number;
            }[];
        };
        Conversation: {
            conversation_id: string;
            turns: {
                /**
                 * @example user
                 * @example assistant
                 * @example tool
                 */
                role: string;
                content: string;
                /** @description RFC 3339. */
                at: string;
                /** @description The router's intent, for user turns. */
                route: string | null;
            }[];
            /** @description The running summary of older turns. */
            summary: string | null;
        };
        ConversationDeleted: {
            conversation_id: string;
            /** @constant */
            deleted: true;
        };
        /** @description One JSON-RPC 2.0 message (MCP has no batches): a request (`id` and `method`), a notification (`method` only) or a response to the server (`id` with `result` or `error`). */
        JsonRpcMessage: {
            /** @constant */
            jsonrpc: "2.0";
            /** @description A string or an integer; absent for a notification (a null id is refused). */
            id?: string | number;
            /**
             * @example initialize
             * @example tools/list
             * @example tools/call
             * @example resources/read
             * @example prompts/get
             * @example server/discover
             * @example ping
             */
            method?: string;
            params?: Record<string, unknown> | null;
            result?: unknown;
            error?: unknown;
        } | unknown | unknown | unknown;
        JsonRpcResponse: {
            /** @constant */
            jsonrpc: "2.0";
            /** @description The request's; null when the body had no usable one. */
            id: string | number | null;
            result?: Record<string, unknown>;
            error?: {
                /** @description -32700 parse error, -32600 invalid request (or an unsupported `MCP-Protocol-Version`), -32601 unknown method, -32602 invalid params or unknown tool, -32603 internal, -32002 resource not found, -32020 headers disagree with the body, -32022 unsupported revision. */
                code: number;
                message: string;
                data?: unknown;
            };
        } & (unknown | unknown);
        /** @description One action of the catalog. */
        ActionSummary: {
            /** @example PurchaseOrder */
            entity_type: string;
            /** @example makePayment */
            name: string;
            description: string;
            /** @description Every plan of it needs a person's approval (docs/actions.md#approvals). */
            requires_approval: boolean;
        };
        ActionList: {
            actions: components["schemas"]["ActionSummary"][];
        };
        /** @description A parameter the action takes in `parameters`. */
        ActionParameter: {
            /** @example reference */
            name: string;
            /**
             * @description The value type the catalog declares (`string`, `integer`, `number`, `boolean`).
             * @example string
             */
            type: string;
            description: string;
            required: boolean;
            /** @description The default as JSON, or null when there is none. */
            default: unknown;
            minimum: number | null;
            maximum: number | null;
            /** @description Empty when any value of the type is allowed. */
            allowed_values: string[];
        };
        ActionPrecondition: {
            /** @example sufficient_funds */
            name: string;
            /**
             * @description The check in the catalog's expression language (catalog/README.md).
             * @example account.balance >= this.amount
             */
            check: string;
            /**
             * @description The failure's message when the check does not hold.
             * @example Insufficient funds
             */
            message: string;
        };
        /** @description An action as the catalog declares it. */
        ActionSpec: {
            entity_type: string;
            name: string;
            description: string;
            requires_approval: boolean;
            parameters: components["schemas"]["ActionParameter"][];
            preconditions: components["schemas"]["ActionPrecondition"][];
            /** @description The effects in the catalog's expression language, in order. */
            effects: string[];
        };
        /**
         * @description The entities' keys (e.g. `PO-0001`): 1 to 10,000 ids (counted before duplicates are dropped), each 1 to 200 bytes and not blank. Duplicates run once.
         * @example [
         *       "PO-0001",
         *       "PO-0002"
         *     ]
         */
        ActionEntityIds: string[];
        /**
         * @description The action's parameters, checked against the catalog (`GET /actions/{entity_type}/{action}`: type, `required`, `minimum`, `maximum`, `allowed_values`; an unknown parameter is 400). Absent or null is `{}`.
         * @example {
         *       "reference": "INV-2026-0001"
         *     }
         */
        ActionParameters: {
            [key: string]: unknown;
        } | null;
        /** @description What validate and plan take. Unknown fields are 400. */
        ActionTargets: {
            entity_ids: components["schemas"]["ActionEntityIds"];
            parameters?: components["schemas"]["ActionParameters"];
        };
        ActionCheck: {
            /**
             * @description A precondition's name, or `exists` for an entity not found.
             * @example not_paid
             */
            name: string;
            passed: boolean;
            /** @description The failure message when not passed, else null. */
            message: string | null;
        };
        ActionValidation: {
            entity_id: string;
            found: boolean;
            can_execute: boolean;
            checks: components["schemas"]["ActionCheck"][];
        };
        /** @description A dry run: nothing is written. */
        ActionValidationReport: {
            entity_type: string;
            action_name: string;
            /** @description Distinct entities checked. */
            total: number;
            /** @description How many of them would pass every precondition now (a count; each result's `can_execute` is a boolean). */
            can_execute: number;
            /** @description One per distinct id, in request order. */
            results: components["schemas"]["ActionValidation"][];
        };
        /** @description Whether the plan may run as is, or must be approved first; then it carries the approval token (shown once, only here). */
        ActionPlanDecision: {
            approval_required: boolean;
            /** @description Why approval is required (the action requires it, or the batch is over `approval_batch_threshold`). */
            reason: string | null;
            /**
             * @description `apv_` and 64 hex digits when approval is required: an approver (`actions:approve`) redeems it once with execute (same `entity_ids` and `parameters`) or `POST /chat/approve`.
             * @example apv_7c1e9a0b3f5d2c4e6a8b0d1f3e5c7a9b7c1e9a0b3f5d2c4e6a8b0d1f3e5c7a9b
             */
            approval_token: string | null;
            /** @description RFC 3339; when the token stops being redeemable (`approval_ttl_s`). */
            expires_at: string | null;
            plan: {
                entity_type: string;
                action_name: string;
                /** @description The distinct ids, in request order. */
                entity_ids: string[];
                total: number;
                /** @description The resolved parameters (defaults filled in). */
                parameters: Record<string, unknown>;
                /** @description SHA-256 (hex) over the action, the sorted distinct ids and the resolved parameters: what an approval is bound to. */
                plan_hash: string;
            };
        };
        /**
         * @description How the batch runs (docs/actions.md#how-a-batch-executes). Absent or null fields take their defaults. Unknown options are 400.
         * @example {
         *       "chunk_size": 5,
         *       "max_concurrent": 3
         *     }
         */
        ActionBatchOptions: {
            /**
             * @description The most chunks in flight at once: the executor starts with 2 and keeps fewer while the graph rolls chunks back (deadlocks) or they queue (docs/actions.md#how-a-batch-executes).
             * @default 10
             */
            max_concurrent?: number | null;
            /**
             * @description Entities per chunk (one Cypher statement each).
             * @default 50
             */
            chunk_size?: number | null;
            /**
             * @description Deadline per chunk.
             * @default 30000
             */
            chunk_timeout_ms?: number | null;
            /**
             * @description Retries per chunk on transient errors only.
             * @default 2
             */
            max_retries?: number | null;
        } | null;
        /** @description An execution (docs/actions.md#running-an-action). Unknown fields are 400. */
        ActionExecuteRequest: {
            entity_ids: components["schemas"]["ActionEntityIds"];
            parameters?: components["schemas"]["ActionParameters"];
            /**
             * @description 1 to 200 bytes, not blank; wins over the `Idempotency-Key` header. Repeating a key replays the recorded outcomes (`replayed: true`) and writes nothing for them. A fresh key when absent; with `approval_token`, the key bound to the approval is used instead.
             * @example pay-42
             */
            idempotency_key?: string | null;
            /**
             * @description A plan's approval token (`POST …/plan`), redeemed once; needs `actions:approve` (without it, `actions:execute`). The ids and parameters must be the planned ones (403 `approval_mismatch`). A token not of the form `apv_` and hex digits (at most 128 characters), or never issued, is 403 `approval_invalid`.
             * @example apv_7c1e9a0b3f5d2c4e6a8b0d1f3e5c7a9b7c1e9a0b3f5d2c4e6a8b0d1f3e5c7a9b
             */
            approval_token?: string | null;
            /**
             * @deprecated
             * @description Deprecated: the actor recorded is always the authenticated subject. The field may be omitted, null, or the caller's own subject (a string equal to it is accepted too); any other value is 400 `actor_mismatch`.
             */
            actor?: null;
            options?: components["schemas"]["ActionBatchOptions"];
            /**
             * @description `true` answers Server-Sent Events, like `Accept: text/event-stream`.
             * @default false
             */
            stream?: boolean | null;
        };
        ActionPropertyChange: {
            /** @description The changed node's key (the entity's, or a related one's such as the account debited). */
            entity_id: string;
            property: string;
            /** @description The value before, as JSON (null when absent). */
            before: unknown;
            /** @description The value after, as JSON (null when removed). */
            after: unknown;
        };
        /** @description What happened to one entity (docs/actions.md#when-the-graph-fails-mid-batch). A success has `changes`; a failure has `error`, `reason` and `precondition`; a replay of a change undone since is a `conflict` failure with `undone`, `undone_by`, `undone_at`, `undo_log_id`. */
        ActionOutcome: {
            entity_id: string;
            success: boolean;
            /** @description The action-log entry written with the change: `POST /actions/log/{log_id}/undo` reverts it. Null for a failure that wrote nothing. */
            log_id: string | null;
            /** @description Recorded earlier under the same idempotency key; nothing ran now. */
            replayed: boolean;
            changes?: components["schemas"]["ActionPropertyChange"][];
            /** @constant */
            undone?: true;
            /** @description Who undid the recorded change. */
            undone_by?: string | null;
            /** @description RFC 3339. */
            undone_at?: string;
            /** @description The undo's own action-log id. */
            undo_log_id?: string;
            /** @description Why it failed, for a person (a precondition's message, e.g. `Insufficient funds`). */
            error?: string;
            /**
             * @description `unknown`: sent but never answered, may or may not be applied (never twice); every other reason: certainly not applied.
             * @enum {string}
             */
            reason?: "precondition_failed" | "not_found" | "conflict" | "timeout" | "cancelled" | "error" | "unknown" | "not_attempted";
            /** @description The failed precondition's name, for `precondition_failed`. */
            precondition?: string | null;
        };
        /** @description A batch's report: `succeeded + failed + unknown = total` (`unknown` outcomes are listed in `failures` but not counted in `failed`). */
        ActionReport: {
            entity_type: string;
            action_name: string;
            /** @description Distinct entities. */
            total: number;
            succeeded: number;
            failed: number;
            unknown: number;
            /** @description Each with the `log_id` to undo it. */
            successes: components["schemas"]["ActionOutcome"][];
            failures: components["schemas"]["ActionOutcome"][];
            duration_ms: number;
        };
        ActionLogEntry: {
            /** @description The entry's id (`LOG-…`, or `UNDO-…` for an undo). */
            id: string;
            entity_type: string;
            /** @description `undo:<action>` for an undo entry (which cannot itself be undone). */
            action_name: string;
            entity_id: string;
            /** @description The parameters the action ran with (JSON). */
            parameters: unknown;
            changes: components["schemas"]["ActionPropertyChange"][];
            idempotency_key: string;
            /** @description The authenticated subject that ran it. */
            actor: string | null;
            /** @description RFC 3339. */
            at: string;
            /** @description The id of the undo entry, once undone. */
            undone_by: string | null;
        };
        ActionLogPage: {
            /** @description Newest first. */
            entries: components["schemas"]["ActionLogEntry"][];
            /** @description Pass as `cursor` for the next (older) page; null on the last page. */
            next_cursor: string | null;
        };
        /** @description Nothing is needed: an empty body is `{}`. Any other field is a 400. */
        ActionUndoRequest: {
            /**
             * @deprecated
             * @description Deprecated: the actor recorded is always the authenticated subject. The field may be omitted, null, or the caller's own subject (a string equal to it is accepted too); any other value is 400 `actor_mismatch`.
             */
            actor?: null;
        };
        ActionSetupResult: {
            /** @description The Cypher statements run (indexes and unique keys; docs/neo4j.md#schema-kg-agent-creates). */
            indexes: string[];
        };
        /** @description First: what is about to run. */
        ActionBatchEventPlan: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            type: "action_plan";
            /** @description The authenticated subject. */
            actor: string;
            plan: {
                entity_type: string;
                action_name: string;
                /** @description Distinct entities in the batch. */
                target_count: number;
                /** @description The request's ids as sent (duplicates included). */
                targets: {
                    entity_id: string;
                }[];
                /** @description The request's parameters as sent (`{}` when none). */
                parameters: unknown;
            };
        };
        /** @description One per entity, as each finishes (`completed` counts 1 to `total`). */
        ActionBatchEventProgress: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            type: "action_progress";
            completed: number;
            total: number;
            entity_id: string;
            success: boolean;
            replayed: boolean;
        };
        /** @description Right after the `action_progress` of a failed entity: its outcome. */
        ActionBatchEventFailure: components["schemas"]["ActionOutcome"] & {
            /** @constant */
            type: "action_error";
        } & {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            type: "action_error";
        };
        /** @description The batch's report, as the JSON answer would be. */
        ActionBatchEventComplete: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            type: "action_complete";
            results: components["schemas"]["ActionReport"];
        };
        /** @description The batch could not go on (then `done`). */
        ActionBatchEventError: components["schemas"]["Error"] & {
            /** @constant */
            type: "error";
        } & {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            type: "error";
        };
        /** @description Always last. */
        ActionBatchEventDone: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            type: "done";
        };
        /** @description The events of a streamed execute (components/dispatcher/src/actions.rs `RouteEvents`; not the chat events). Each is `event: <type>` and one `data:` line holding a JSON object whose `type` repeats it; no `id:` (a batch stream is not resumable). The stream opens with a `: kg-agent` comment and has `: heartbeat` comments every 10 s while nothing finishes. Order: `action_plan`, then per entity `action_progress` (followed by `action_error` for a failure), then `action_complete` and `done` — or `error` and `done`. A client that disconnects cancels the chunks not yet started. */
        ActionBatchEvent: components["schemas"]["ActionBatchEventPlan"] | components["schemas"]["ActionBatchEventProgress"] | components["schemas"]["ActionBatchEventFailure"] | components["schemas"]["ActionBatchEventComplete"] | components["schemas"]["ActionBatchEventError"] | components["schemas"]["ActionBatchEventDone"];
        /**
         * kg-agent stream events
         * @description The JSON payload (`data:` line) of every Server-Sent Event of POST /chat/stream (and the streamed POST /chat/approve). Each payload repeats its SSE `event:` name in `type` and carries the RFC 3339 `timestamp` it was sent at; progress events (`thinking`) carry seed 001's envelope. A stream ends with `completed` then `done`; `error`, when present, comes before them. docs/agent.md explains each event. Fields may be added; none is removed or renamed.
         */
        ChatEvent: {
            /** @enum {unknown} */
            type: "conversation_id" | "thinking" | "route" | "tool_call" | "tool_result" | "graph_data" | "action_plan" | "approval_required" | "action_progress" | "action_error" | "action_complete" | "content_start" | "content" | "trace" | "error" | "completed" | "done";
            timestamp: components["schemas"]["ChatEvent"]["$defs"]["timestamp"];
            $defs: {
                /** Format: date-time */
                timestamp: string;
                /** @enum {unknown} */
                intent: "query" | "action" | "document" | "answer" | "clarify";
                /**
                 * @description How the route was decided: the router's rules, the LLM, both (hybrid), keywords, a fallback when the router failed, or an approval decision.
                 * @enum {unknown}
                 */
                route_method: "rule" | "llm" | "hybrid" | "keyword" | "fallback" | "approval";
                /** @enum {unknown} */
                status: "running" | "completed" | "failed";
                usage: {
                    prompt_tokens: number;
                    completion_tokens: number;
                    total_tokens: number;
                };
                empty: {
                    type?: unknown;
                    timestamp?: unknown;
                };
                content_start: {
                    type?: unknown;
                    timestamp?: unknown;
                    /** @description true: discard the content shown so far in this turn (a ReAct step's streamed text that turned out not to be the answer); the answer's text follows */
                    reset?: boolean;
                };
                conversation_id: {
                    id: string;
                };
                /** @description Progress of a node, with seed 001's envelope. */
                thinking: {
                    /** @enum {unknown} */
                    node: "router" | "agent" | "summariser" | "executor";
                    display_name: string;
                    /** @description = display_name (seed 000's `thinking.content`) */
                    content: string;
                    icon: string;
                    status: components["schemas"]["ChatEvent"]["$defs"]["status"];
                    sub_status: string;
                    details: string;
                    state_summary: {
                        current_step: string;
                        execution_path: string[];
                        routing_method?: components["schemas"]["ChatEvent"]["$defs"]["route_method"];
                    };
                };
                route: {
                    intent: components["schemas"]["ChatEvent"]["$defs"]["intent"];
                    confidence: number;
                    method: components["schemas"]["ChatEvent"]["$defs"]["route_method"];
                    reason: string;
                    refined_question: string;
                };
                tool_call: {
                    step: number;
                    id: string;
                    tool: string;
                    arguments: unknown;
                };
                tool_result: {
                    step: number;
                    id: string;
                    tool: string;
                    success: boolean;
                    summary: string;
                    latency_ms: number;
                };
                graph_data: {
                    nodes: {
                        id: string;
                        labels?: string[];
                        caption?: string;
                    }[];
                    edges: {
                        id: string;
                        type?: string;
                        source: string;
                        target: string;
                    }[];
                };
                plan: {
                    entity_type: string;
                    action_name: string;
                    target_count: number;
                    targets: {
                        entity_id: string;
                        /** @description The entity's display property (`name`), or its id when it has none. */
                        entity_name: string;
                    }[];
                    parameters: unknown;
                    actor?: string;
                };
                action_plan: {
                    plan: components["schemas"]["ChatEvent"]["$defs"]["plan"];
                };
                approval_required: {
                    approval_token: string;
                    reason: string;
                    plan: components["schemas"]["ChatEvent"]["$defs"]["plan"];
                };
                action_progress: {
                    completed: number;
                    total: number;
                    entity_id: string;
                    success: boolean;
                };
                outcome: {
                    entity_id: string;
                    success: boolean;
                    log_id?: string | null;
                    replayed?: boolean;
                    changes?: unknown[];
                    error?: string;
                    reason?: string;
                    precondition?: string | null;
                };
                action_complete: {
                    results: {
                        entity_type: string;
                        action_name: string;
                        total: number;
                        succeeded: number;
                        failed: number;
                        unknown?: number;
                        successes: components["schemas"]["ChatEvent"]["$defs"]["outcome"][];
                        failures: components["schemas"]["ChatEvent"]["$defs"]["outcome"][];
                        duration_ms?: number;
                    };
                };
                content: {
                    content: string;
                };
                /** @description A measured step. `kind: step`: one reasoning step (LLM call) of the ReAct loop. */
                trace: {
                    kind: string;
                };
                error: {
                    code: string;
                    message: string;
                    status?: number;
                    /** @description The LLM endpoint that failed (never the key). */
                    provider?: string;
                    model?: string;
                    attempts?: number;
                    /** @description turn_deadline_exceeded: the turn's deadline (agent_turn_deadline_ms). */
                    deadline_ms?: number;
                    /** @description turn_deadline_exceeded: reasoning steps whose LLM call finished. */
                    steps?: number;
                };
                /** @description The turn's end, just before `done`: the whole answer for a client that missed deltas. */
                completed: {
                    conversation_id: string;
                    /** @enum {unknown} */
                    status: "answered" | "awaiting_approval" | "failed";
                    answer: string;
                    sources: Record<string, unknown>[];
                    citations: Record<string, unknown>[];
                    route: {
                        intent?: components["schemas"]["ChatEvent"]["$defs"]["intent"];
                        method?: components["schemas"]["ChatEvent"]["$defs"]["route_method"];
                    } | null;
                    model_used: string | null;
                    usage: components["schemas"]["ChatEvent"]["$defs"]["usage"];
                    steps: number;
                    actions?: Record<string, unknown> | null;
                    approval?: Record<string, unknown> | null;
                    /** @description The request's OpenTelemetry trace id (also the response's x-trace-id), to find the turn in the trace store. */
                    trace_id: string | null;
                };
            };
        } & (unknown & unknown & unknown & unknown & unknown & unknown & unknown & unknown & unknown & unknown & unknown & unknown & unknown & unknown & unknown & unknown & unknown);
        VisibilityRule: {
            /**
             * @description `people`: every caller, never the LLM; `roles`: callers with one of `roles` (and the LLM on their behalf unless `llm` is false).
             * @enum {string}
             */
            visibility: "visible" | "hidden" | "people" | "roles" | "roles, never the LLM";
            /** @description Who may see it; null for every role, empty for nobody. */
            roles: string[] | null;
            /** @description Whether the model may be sent it on behalf of a caller who may see it. */
            llm: boolean;
            /** @description The line of graph-profile.toml it is declared on. */
            line: number;
            label?: string;
            type?: string;
            property?: string;
        };
        GraphPolicy: {
            /** @description Some rule restricts someone. False: no policy, every answer as before policies existed. */
            restricts: boolean;
            labels: components["schemas"]["VisibilityRule"][];
            properties: components["schemas"]["VisibilityRule"][];
            relationship_types: components["schemas"]["VisibilityRule"][];
            relationship_properties: components["schemas"]["VisibilityRule"][];
            /** @description Hidden from the graph tools whenever the policy restricts anyone: the action log's graph records (read them through GET /actions/log). */
            also_hidden: {
                labels?: string[];
                relationship_types?: string[];
            };
            /** @description Where the profile was read from. */
            source: string;
        };
    };
    responses: {
        /** @description The request is malformed: not JSON, not an object, an unknown or mistyped field (the message names it), nested too deep, or an argument a component refused. */
        BadRequest: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description No credential, or one that is not valid. */
        Unauthorized: {
            headers: {
                /** @description RFC 6750 challenge (`Bearer realm="kg-agent", …`). */
                "WWW-Authenticate"?: string;
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The credential lacks the permission (`detail.permission`), or a rule refused the request. */
        Forbidden: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description No such resource. */
        NotFound: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description A lost race, a spent approval or an effect that cannot be undone any more. */
        Conflict: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The body is over 1 MiB. */
        PayloadTooLarge: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The caller's rate limit is reached. */
        TooManyRequests: {
            headers: {
                /** @description Seconds until the window ends. */
                "Retry-After"?: number;
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The graph or the LLM answered with an error (`upstream`, `llm_upstream`). */
        BadGateway: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The graph or the LLM could not be reached (`unavailable`, `llm_unavailable`). */
        Unavailable: {
            headers: {
                /** @description Seconds to wait before retrying (5 unless the error says otherwise). */
                "Retry-After"?: number;
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description A deadline passed (`timeout`, `llm_timeout`, `turn_deadline_exceeded`). */
        GatewayTimeout: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The turn's events are no longer kept (`stream_expired`, `chat_event_retention_s`): start a new turn. */
        StreamExpired: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
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
    openApiDocument: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The document. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        openapi: string;
                        info: Record<string, unknown>;
                        paths: Record<string, unknown>;
                    };
                };
            };
        };
    };
    health: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Everything is ready. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HealthReport"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["TooManyRequests"];
            /** @description A component or the key-value store is not ready (`status: degraded`, `problems` says why). */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying (5 unless the error says otherwise). */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HealthReport"];
                };
            };
        };
    };
    graphPolicy: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The policy. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["GraphPolicy"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["TooManyRequests"];
            /** @description The graph profile does not parse (`graph_profile_invalid`, naming its line). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    healthLive: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Alive. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "status": "ok"
                     *     }
                     */
                    "application/json": components["schemas"]["Liveness"];
                };
            };
        };
    };
    healthReady: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Every dependency is up. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Readiness"];
                };
            };
            /** @description At least one is down (`status: not_ready`, `down` names them). */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying (5 unless the error says otherwise). */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "status": "not_ready",
                     *       "checks": {
                     *         "graph": {
                     *           "ok": true,
                     *           "latency_ms": 1.84
                     *         },
                     *         "llm": {
                     *           "ok": false,
                     *           "latency_ms": 0.52,
                     *           "error": "[llm] refused the connection"
                     *         },
                     *         "kv": {
                     *           "ok": true,
                     *           "latency_ms": 0.31
                     *         }
                     *       },
                     *       "down": [
                     *         "llm"
                     *       ]
                     *     }
                     */
                    "application/json": components["schemas"]["Readiness"];
                };
            };
        };
    };
    authConfig: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The sign-in settings. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AuthConfig"];
                };
            };
        };
    };
    protectedResourceMetadata: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description The scheme a proxy received the request on; names the origin when `public_url` is not set.
                 * @example https
                 */
                "X-Forwarded-Proto"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The metadata. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProtectedResourceMetadata"];
                };
            };
            404: components["responses"]["NotFound"];
        };
    };
    protectedResourceMetadataRoot: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description The scheme a proxy received the request on; names the origin when `public_url` is not set.
                 * @example https
                 */
                "X-Forwarded-Proto"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The metadata. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProtectedResourceMetadata"];
                };
            };
            404: components["responses"]["NotFound"];
        };
    };
    listTools: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The tools. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ToolList"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["TooManyRequests"];
        };
    };
    callTool: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The tool (`GET /tools` lists them; an unknown name is a 404 with `detail.did_you_mean`).
                 * @example get_node_statistics
                 */
                name: string;
            };
            cookie?: never;
        };
        /** @description The tool's arguments: an object whose schema depends on the tool. */
        requestBody?: {
            content: {
                /**
                 * @example {
                 *       "label": "PurchaseOrder",
                 *       "sample_size": 2
                 *     }
                 */
                "application/json": Record<string, unknown>;
            };
        };
        responses: {
            /** @description The tool's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ToolResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    callDescribeClass: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description The arguments of `describe_class`; an empty body is `{}`. */
        requestBody: {
            content: {
                "application/json": {
                    /** @description The class (label), e.g. "PurchaseOrder". */
                    class_name: string;
                    /**
                     * @description Sample instances to include.
                     * @default 3
                     */
                    sample_size?: number | null;
                };
            };
        };
        responses: {
            /** @description The tool's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ToolResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    callFindPathBetweenInstances: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description The arguments of `find_path_between_instances`; an empty body is `{}`. */
        requestBody: {
            content: {
                "application/json": {
                    /** @description Key value, key object as JSON text, caption (name) or element_id of the second instance. */
                    end: string;
                    /** @description The second instance's class (label), when its key or name is not unique across classes. */
                    end_class?: string | null;
                    /**
                     * @description Most paths to return.
                     * @default 3
                     */
                    limit?: number | null;
                    /** @default 4 */
                    max_depth?: number | null;
                    /** @description Key value, key object as JSON text, caption (name) or element_id of the first instance. */
                    start: string;
                    /** @description The first instance's class (label), when its key or name is not unique across classes. */
                    start_class?: string | null;
                };
            };
        };
        responses: {
            /** @description The tool's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ToolResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    callGetInstanceNeighbors: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description The arguments of `get_instance_neighbors`; an empty body is `{}`. */
        requestBody: {
            content: {
                "application/json": {
                    /** @description The instance's class (label), when its key or name is not unique across classes. */
                    class_name?: string | null;
                    /**
                     * @default both
                     * @enum {string|null}
                     */
                    direction?: "out" | "in" | "both" | null;
                    /** @default 1 */
                    hops?: number | null;
                    /** @description The instance's key value (e.g. "PO-0003"), its key object as JSON text, its caption (name), or its element_id. */
                    instance: string;
                    /**
                     * @description Most paths to follow.
                     * @default 50
                     */
                    limit?: number | null;
                    relationship_types?: string[] | null;
                };
            };
        };
        responses: {
            /** @description The tool's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ToolResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    callGetInstancesByClass: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description The arguments of `get_instances_by_class`; an empty body is `{}`. */
        requestBody: {
            content: {
                "application/json": {
                    /** @description The `next` of the previous page: this page starts after it. */
                    after?: string | number | null;
                    /** @description The class (label), e.g. "PurchaseOrder". */
                    class_name: string;
                    /** @description All must hold, e.g. [{"property": "status", "value": "approved"}, {"property": "amount", "op": "gt", "value": 5000}]. */
                    filters?: {
                        /**
                         * @default eq
                         * @enum {string}
                         */
                        op?: "eq" | "ne" | "lt" | "lte" | "gt" | "gte" | "contains" | "starts_with";
                        property: string;
                        /** @description A string, number or boolean. */
                        value: string | number | boolean;
                    }[] | null;
                    /** @default 25 */
                    limit?: number | null;
                };
            };
        };
        responses: {
            /** @description The tool's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ToolResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    callGetNodeStatistics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description The arguments of `get_node_statistics`; an empty body is `{}`. */
        requestBody?: {
            content: {
                "application/json": {
                    /** @description Only this label (class), e.g. "PurchaseOrder"; omit for all labels. */
                    label?: string | null;
                    /**
                     * @description Sample nodes per label.
                     * @default 3
                     */
                    sample_size?: number | null;
                };
            };
        };
        responses: {
            /** @description The tool's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ToolResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    callGetOntologyClasses: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description The arguments of `get_ontology_classes`; an empty body is `{}`. */
        requestBody?: {
            content: {
                "application/json": Record<string, unknown>;
            };
        };
        responses: {
            /** @description The tool's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ToolResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    callGetOntologyRelationships: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description The arguments of `get_ontology_relationships`; an empty body is `{}`. */
        requestBody?: {
            content: {
                "application/json": Record<string, unknown>;
            };
        };
        responses: {
            /** @description The tool's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ToolResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    callRunReadCypher: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description The arguments of `run_read_cypher`; an empty body is `{}`. */
        requestBody: {
            content: {
                "application/json": {
                    /**
                     * @description Most rows to return; a larger LIMIT in the query is lowered to this.
                     * @default 100
                     */
                    limit?: number | null;
                    /** @description Values for the query's $parameters. */
                    parameters?: Record<string, unknown> | null;
                    /** @description One Cypher statement ending in RETURN, e.g. "MATCH (s:Supplier)-[:SUPPLIES]->(p:Product) RETURN s.name, count(p) AS products ORDER BY products DESC". */
                    query: string;
                };
            };
        };
        responses: {
            /** @description The tool's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ToolResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    callSearchInstances: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description The arguments of `search_instances`; an empty body is `{}`. */
        requestBody: {
            content: {
                "application/json": {
                    /** @description Only instances of this class (label). */
                    class_name?: string | null;
                    /** @default 10 */
                    limit?: number | null;
                    /** @description Text to look for, e.g. "ACME" or "PO-0003". */
                    search_term: string;
                };
            };
        };
        responses: {
            /** @description The tool's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ToolResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    listDocuments: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The documents, by id (at most 1,000). */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DocumentList"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    ingestDocument: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "id": "po-policy",
                 *       "title": "PO approval",
                 *       "content_type": "markdown",
                 *       "text": "# Approval\n\nOrders above 5,000 EUR need the finance controller. PO-0001 was approved under this rule.",
                 *       "metadata": {
                 *         "team": "finance"
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["DocumentIngest"];
            };
        };
        responses: {
            /** @description An earlier version of the id was replaced. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["IngestReport"];
                };
            };
            /** @description A new document. */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["IngestReport"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    deleteDocument: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The document's id.
                 * @example po-policy
                 */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "deleted": true,
                     *       "id": "po-policy"
                     *     }
                     */
                    "application/json": components["schemas"]["DocumentDeleted"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    searchDocuments: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "query": "who approves large orders",
                 *       "top_k": 5,
                 *       "metadata_filter": {
                 *         "team": "finance"
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["SearchRequest"];
            };
        };
        responses: {
            /** @description The hits, best first. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SearchResponse"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["Unavailable"];
        };
    };
    chat: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "message": "Which suppliers deliver parts used in product PRD-036?",
                 *       "trace": true
                 *     }
                 */
                "application/json": components["schemas"]["ChatRequest"];
            };
        };
        responses: {
            /** @description The turn. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ChatAnswer"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    chatStream: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description The SSE id (`<turn>:<seq>`) of the last event the client received: the kept events after it are sent, then the rest of the turn (docs/agent.md#resuming-a-stream). Malformed: 400.
                 * @example t-1764307200000-0123456789abcdef:12
                 */
                "Last-Event-ID"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "message": "Which suppliers deliver parts used in product PRD-036?",
                 *       "trace": true
                 *     }
                 */
                "application/json": components["schemas"]["ChatRequest"];
            };
        };
        responses: {
            /** @description The turn's events. */
            200: {
                headers: {
                    /** @description The turn's id: every event's SSE id is `<turn>:<seq>`, and `GET /chat/stream/{turn_id}` resumes it. */
                    "X-Turn-Id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": {
                        event?: string;
                        id?: string;
                        /** @description One event's JSON payload. */
                        data: string;
                    };
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            410: components["responses"]["StreamExpired"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["Unavailable"];
        };
    };
    resumeChatStream: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description The SSE id (`<turn>:<seq>`) of the last event the client received: the kept events after it are sent, then the rest of the turn (docs/agent.md#resuming-a-stream). Malformed: 400.
                 * @example t-1764307200000-0123456789abcdef:12
                 */
                "Last-Event-ID"?: string;
            };
            path: {
                /**
                 * @description The turn (the `X-Turn-Id` header, `completed.turn_id`, or the first part of an SSE id); one that is not a turn id is a 404.
                 * @example t-1764307200000-0123456789abcdef
                 */
                turn_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The turn's events from there on. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": {
                        event?: string;
                        id?: string;
                        /** @description One event's JSON payload. */
                        data: string;
                    };
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            410: components["responses"]["StreamExpired"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["Unavailable"];
        };
    };
    approvePlan: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description `text/event-stream` (without `q=0`) streams the run; anything else answers JSON.
                 * @example text/event-stream
                 */
                Accept?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "approval_token": "apv_3f9c0d2b7e4a4c1f8a6b5d2e9c7f1a0b3f9c0d2b7e4a4c1f8a6b5d2e9c7f1a0b",
                 *       "approve": true
                 *     }
                 */
                "application/json": components["schemas"]["ChatApproveRequest"];
            };
        };
        responses: {
            /** @description The run's report (JSON), or its events (SSE). */
            200: {
                headers: {
                    /** @description The turn's id: every event's SSE id is `<turn>:<seq>`, and `GET /chat/stream/{turn_id}` resumes it. */
                    "X-Turn-Id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ChatAnswer"];
                    "text/event-stream": {
                        event?: string;
                        id?: string;
                        /** @description One event's JSON payload. */
                        data: string;
                    };
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    legacyQuery: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "question": "Which suppliers deliver parts used in product PRD-036?"
                 *     }
                 */
                "application/json": components["schemas"]["ChatRequest"];
            };
        };
        responses: {
            /** @description The turn. */
            200: {
                headers: {
                    /** @description `/api/qa/query is deprecated; use POST /chat`. */
                    "X-Deprecation-Warning"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ChatAnswer"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    listConversations: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description At most 200 (admins too see only their own here). */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ConversationList"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["Unavailable"];
        };
    };
    getConversation: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The conversation: 1–64 letters, digits, `_` or `-` (anything else is a 400). Someone else's is a 404 unless the caller holds `conversations:all`.
                 * @example c-1764307200000-0123456789abcdef
                 */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The conversation. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Conversation"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["Unavailable"];
        };
    };
    deleteConversation: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The conversation: 1–64 letters, digits, `_` or `-` (anything else is a 400). Someone else's is a 404 unless the caller holds `conversations:all`.
                 * @example c-1764307200000-0123456789abcdef
                 */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Forgotten. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ConversationDeleted"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["Unavailable"];
        };
    };
    mcp: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description The revision the client speaks (after `initialize`; absent means 2025-03-26). Another value is a 400 (-32600, `data.supported`); in the 2026-07-28 envelope it must match `params._meta`.
                 * @example 2025-06-18
                 */
                "MCP-Protocol-Version"?: "2026-07-28" | "2025-11-25" | "2025-06-18" | "2025-03-26";
                /** @description 2026-07-28 envelope: repeats the body's `method` (400, -32020, when it does not). */
                "Mcp-Method"?: string;
                /** @description 2026-07-28 envelope: repeats the tool or prompt name or the resource URI. */
                "Mcp-Name"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "jsonrpc": "2.0",
                 *       "id": 1,
                 *       "method": "tools/call",
                 *       "params": {
                 *         "name": "get_node_statistics",
                 *         "arguments": {
                 *           "label": "PurchaseOrder",
                 *           "sample_size": 2
                 *         }
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["JsonRpcMessage"];
            };
        };
        responses: {
            /** @description The JSON-RPC response to a request (a result, or an error such as -32601 or -32602 outside the 2026-07-28 envelope); or, for an `action_execute` called with `params._meta.progressToken`, Server-Sent Events: `event: message` frames holding a `notifications/progress` per finished entity, heartbeat comments, then the call's response. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JsonRpcResponse"];
                    "text/event-stream": {
                        event?: string;
                        id?: string;
                        /** @description One event's JSON payload. */
                        data: string;
                    };
                };
            };
            /** @description A notification or a response from the client: accepted, no body. */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description A JSON-RPC error answered with HTTP 400 (a message MCP refuses before it reaches a method: a parse error, a batch, an unsupported revision, headers that disagree with the body, a missing `_meta` envelope), or the API's own 400 (the body is not UTF-8 or nested too deep). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JsonRpcResponse"] | components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description 2026-07-28 envelope: an unknown method (-32601). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JsonRpcResponse"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
        };
    };
    listActions: {
        parameters: {
            query?: {
                /**
                 * @description Only this entity type's actions; an entity type without actions is 404 (its `detail.entity_types` lists those with actions).
                 * @example PurchaseOrder
                 */
                entity_type?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The actions. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "actions": [
                     *         {
                     *           "entity_type": "PurchaseOrder",
                     *           "name": "makePayment",
                     *           "description": "Pay an approved order from the account it is charged to: creates a Payment, debits the account and marks the order paid.",
                     *           "requires_approval": false
                     *         },
                     *         {
                     *           "entity_type": "PurchaseOrder",
                     *           "name": "cancel",
                     *           "description": "Cancel an order that has not been paid.",
                     *           "requires_approval": true
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": components["schemas"]["ActionList"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description No entity type `entity_type` has actions (`detail.entity_types` lists those that do). */
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
        };
    };
    getAction: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description An entity type of the action catalog (`catalog/actions.toml`), e.g. `PurchaseOrder`, `Supplier`.
                 * @example PurchaseOrder
                 */
                entity_type: string;
                /**
                 * @description The action's name on that entity type, e.g. `makePayment`, `approve`, `cancel` (case-sensitive).
                 * @example makePayment
                 */
                action: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The action. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "entity_type": "PurchaseOrder",
                     *       "name": "makePayment",
                     *       "description": "Pay an approved order from the account it is charged to: creates a Payment, debits the account and marks the order paid.",
                     *       "requires_approval": false,
                     *       "parameters": [
                     *         {
                     *           "name": "reference",
                     *           "type": "string",
                     *           "description": "Payment reference shown on the bank statement.",
                     *           "required": false,
                     *           "default": "",
                     *           "minimum": null,
                     *           "maximum": null,
                     *           "allowed_values": []
                     *         }
                     *       ],
                     *       "preconditions": [
                     *         {
                     *           "name": "not_paid",
                     *           "check": "this.status != 'paid'",
                     *           "message": "Order already paid"
                     *         },
                     *         {
                     *           "name": "sufficient_funds",
                     *           "check": "account.balance >= this.amount",
                     *           "message": "Insufficient funds"
                     *         }
                     *       ],
                     *       "effects": [
                     *         "set this.status = 'paid'",
                     *         "set account.balance = account.balance - this.amount"
                     *       ]
                     *     }
                     */
                    "application/json": components["schemas"]["ActionSpec"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description No such action on that entity type (`detail.did_you_mean`, `detail.actions`). */
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
        };
    };
    validateAction: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description An entity type of the action catalog (`catalog/actions.toml`), e.g. `PurchaseOrder`, `Supplier`.
                 * @example PurchaseOrder
                 */
                entity_type: string;
                /**
                 * @description The action's name on that entity type, e.g. `makePayment`, `approve`, `cancel` (case-sensitive).
                 * @example makePayment
                 */
                action: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "entity_ids": [
                 *         "PO-0001",
                 *         "PO-0013"
                 *       ],
                 *       "parameters": {
                 *         "reference": "INV-2026-0001"
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["ActionTargets"];
            };
        };
        responses: {
            /** @description Each entity's checks. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "entity_type": "PurchaseOrder",
                     *       "action_name": "makePayment",
                     *       "total": 2,
                     *       "can_execute": 1,
                     *       "results": [
                     *         {
                     *           "entity_id": "PO-0001",
                     *           "found": true,
                     *           "can_execute": true,
                     *           "checks": [
                     *             {
                     *               "name": "not_paid",
                     *               "passed": true,
                     *               "message": null
                     *             },
                     *             {
                     *               "name": "sufficient_funds",
                     *               "passed": true,
                     *               "message": null
                     *             }
                     *           ]
                     *         },
                     *         {
                     *           "entity_id": "PO-0013",
                     *           "found": true,
                     *           "can_execute": false,
                     *           "checks": [
                     *             {
                     *               "name": "not_paid",
                     *               "passed": false,
                     *               "message": "Order already paid"
                     *             },
                     *             {
                     *               "name": "sufficient_funds",
                     *               "passed": true,
                     *               "message": null
                     *             }
                     *           ]
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": components["schemas"]["ActionValidationReport"];
                };
            };
            /** @description Malformed body (`bad_request`, `invalid_parameters`), or an argument the action-executor refused (`invalid_argument`): no or empty `entity_ids`, more than 10,000, an id blank or over 200 bytes, a parameter unknown, missing or out of its bounds. */
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            /** @description The permission is missing (`forbidden`, `detail.permission`), the action is reserved to other roles (`forbidden`, e.g. supplier blocks: admins), or the batch is over the role's limit (`batch_limit`: an operator pays at most 100 orders a request). */
            403: components["responses"]["Forbidden"];
            /** @description No such action on that entity type (`detail.did_you_mean`, `detail.actions`). */
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    planAction: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description An entity type of the action catalog (`catalog/actions.toml`), e.g. `PurchaseOrder`, `Supplier`.
                 * @example PurchaseOrder
                 */
                entity_type: string;
                /**
                 * @description The action's name on that entity type, e.g. `makePayment`, `approve`, `cancel` (case-sensitive).
                 * @example makePayment
                 */
                action: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "entity_ids": [
                 *         "PO-0001",
                 *         "PO-0002"
                 *       ],
                 *       "parameters": {
                 *         "reference": "INV-2026-0001"
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["ActionTargets"];
            };
        };
        responses: {
            /** @description The decision and the plan. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActionPlanDecision"];
                };
            };
            /** @description Malformed body (`bad_request`, `invalid_parameters`), or an argument the action-executor refused (`invalid_argument`): no or empty `entity_ids`, more than 10,000, an id blank or over 200 bytes, a parameter unknown, missing or out of its bounds. */
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            /** @description The permission is missing (`forbidden`, `detail.permission`), the action is reserved to other roles (`forbidden`, e.g. supplier blocks: admins), or the batch is over the role's limit (`batch_limit`: an operator pays at most 100 orders a request). */
            403: components["responses"]["Forbidden"];
            /** @description No such action on that entity type (`detail.did_you_mean`, `detail.actions`). */
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    executeAction: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description The execution's idempotency key when the body has no `idempotency_key` (the body's wins): 1 to 200 bytes, not blank.
                 * @example pay-42
                 */
                "Idempotency-Key"?: string;
                /**
                 * @description Any value containing `text/event-stream` answers Server-Sent Events; anything else (or none) the JSON report.
                 * @example text/event-stream
                 */
                Accept?: string;
            };
            path: {
                /**
                 * @description An entity type of the action catalog (`catalog/actions.toml`), e.g. `PurchaseOrder`, `Supplier`.
                 * @example PurchaseOrder
                 */
                entity_type: string;
                /**
                 * @description The action's name on that entity type, e.g. `makePayment`, `approve`, `cancel` (case-sensitive).
                 * @example makePayment
                 */
                action: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "entity_ids": [
                 *         "PO-0001",
                 *         "PO-0002"
                 *       ],
                 *       "parameters": {
                 *         "reference": "INV-2026-0001"
                 *       },
                 *       "idempotency_key": "pay-42"
                 *     }
                 */
                "application/json": components["schemas"]["ActionExecuteRequest"];
            };
        };
        responses: {
            /** @description The batch ran: its report (JSON), or its events (SSE). Failed entities are reported, not raised. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "entity_type": "PurchaseOrder",
                     *       "action_name": "makePayment",
                     *       "total": 2,
                     *       "succeeded": 1,
                     *       "failed": 1,
                     *       "unknown": 0,
                     *       "successes": [
                     *         {
                     *           "entity_id": "PO-0001",
                     *           "success": true,
                     *           "log_id": "LOG-1764312000123-3f9a1c2b7d4e5f60-0",
                     *           "replayed": false,
                     *           "changes": [
                     *             {
                     *               "entity_id": "PO-0001",
                     *               "property": "status",
                     *               "before": "approved",
                     *               "after": "paid"
                     *             },
                     *             {
                     *               "entity_id": "ACC-MAIN",
                     *               "property": "balance",
                     *               "before": 60000,
                     *               "after": 48402
                     *             }
                     *           ]
                     *         }
                     *       ],
                     *       "failures": [
                     *         {
                     *           "entity_id": "PO-0013",
                     *           "success": false,
                     *           "log_id": null,
                     *           "replayed": false,
                     *           "error": "Order already paid",
                     *           "reason": "precondition_failed",
                     *           "precondition": "not_paid"
                     *         }
                     *       ],
                     *       "duration_ms": 41
                     *     }
                     */
                    "application/json": components["schemas"]["ActionReport"];
                    /**
                     * @example event: action_plan
                     *     data: {"actor":"admin","plan":{"action_name":"makePayment","entity_type":"PurchaseOrder","parameters":{},"target_count":1,"targets":[{"entity_id":"PO-0003"}]},"type":"action_plan"}
                     *
                     *     event: action_progress
                     *     data: {"completed":1,"entity_id":"PO-0003","replayed":false,"success":true,"total":1,"type":"action_progress"}
                     */
                    "text/event-stream": {
                        event?: string;
                        id?: string;
                        /** @description One event's JSON payload. */
                        data: string;
                    };
                };
            };
            /** @description Malformed body (`bad_request`, `invalid_parameters`), or an argument the action-executor refused (`invalid_argument`): no or empty `entity_ids`, more than 10,000, an id blank or over 200 bytes, a parameter unknown, missing or out of its bounds. Also `actor_mismatch` (`actor` is not the authenticated subject), bad `options` or `idempotency_key`. */
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            /** @description The permission is missing (`forbidden`, `detail.permission`), the action is reserved to other roles (`forbidden`, e.g. supplier blocks: admins), or the batch is over the role's limit (`batch_limit`: an operator pays at most 100 orders a request). Approvals: `approval_required` (plan first), `approval_invalid`, `approval_mismatch` (not the planned ids or parameters), `approval_expired`, `four_eyes` (the planner cannot approve their own plan); `forbidden` when a token is sent without `actions:approve`, or none without `actions:execute`. */
            403: components["responses"]["Forbidden"];
            /** @description No such action on that entity type (`detail.did_you_mean`, `detail.actions`). */
            404: components["responses"]["NotFound"];
            /** @description The approval token was already redeemed (`approval_used`) or the plan rejected (`approval_rejected`); `detail.first` says by whom, when, and under which idempotency key. */
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            /** @description The graph answered with an error while the approval was redeemed (graph errors during the batch itself are per-entity failures in the report). */
            502: components["responses"]["BadGateway"];
            /** @description The graph could not be reached while the approval was redeemed. */
            503: components["responses"]["Unavailable"];
            /** @description The graph timed out while the approval was redeemed. */
            504: components["responses"]["GatewayTimeout"];
        };
    };
    actionLog: {
        parameters: {
            query?: {
                /**
                 * @description Entries per page, 1 to 200.
                 * @example 10
                 */
                limit?: number;
                /**
                 * @description The previous page's `next_cursor` (opaque; one without `|` is 400).
                 * @example 2026-11-28T05:40:00.123Z|LOG-1764312000123-3f9a1c2b7d4e5f60-0
                 */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "entries": [
                     *         {
                     *           "id": "LOG-1764312000123-3f9a1c2b7d4e5f60-0",
                     *           "entity_type": "PurchaseOrder",
                     *           "action_name": "makePayment",
                     *           "entity_id": "PO-0001",
                     *           "parameters": {
                     *             "reference": "INV-2026-0001"
                     *           },
                     *           "changes": [
                     *             {
                     *               "entity_id": "PO-0001",
                     *               "property": "status",
                     *               "before": "approved",
                     *               "after": "paid"
                     *             }
                     *           ],
                     *           "idempotency_key": "pay-42",
                     *           "actor": "admin",
                     *           "at": "2026-11-28T05:40:00.123Z",
                     *           "undone_by": null
                     *         }
                     *       ],
                     *       "next_cursor": "2026-11-28T05:40:00.123Z|LOG-1764312000123-3f9a1c2b7d4e5f60-0"
                     *     }
                     */
                    "application/json": components["schemas"]["ActionLogPage"];
                };
            };
            /** @description `limit` not an integer from 1 to 200, or a `cursor` this service did not issue. */
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    undoAction: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The action-log entry's id (1 to 200 bytes), from a report's `log_id` or `GET /actions/log`.
                 * @example LOG-1764312000123-3f9a1c2b7d4e5f60-0
                 */
                log_id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                /** @example {} */
                "application/json": components["schemas"]["ActionUndoRequest"];
            };
        };
        responses: {
            /** @description The undo's outcome: `changes` with before and after swapped, and the undo's own `log_id`. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "entity_id": "PO-0001",
                     *       "success": true,
                     *       "log_id": "UNDO-1764312060456-9e8d7c6b5a493827",
                     *       "replayed": false,
                     *       "changes": [
                     *         {
                     *           "entity_id": "PO-0001",
                     *           "property": "status",
                     *           "before": "paid",
                     *           "after": "approved"
                     *         },
                     *         {
                     *           "entity_id": "ACC-MAIN",
                     *           "property": "balance",
                     *           "before": 48402,
                     *           "after": 60000
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": components["schemas"]["ActionOutcome"];
                };
            };
            /** @description Malformed body, `actor_mismatch`, a `log_id` over 200 bytes, or an entry that is itself an undo. */
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description No action-log entry with this id. */
            404: components["responses"]["NotFound"];
            /** @description Already undone (`… already undone by …`), the entity changed since the action, or the undo kept losing to concurrent writes (retryable). */
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    setupActions: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The statements run. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "indexes": [
                     *         "CREATE INDEX `kg_purchaseorder_id` IF NOT EXISTS FOR (n:`PurchaseOrder`) ON (n.`id`)",
                     *         "CREATE CONSTRAINT `kg_actionlog_id_unique` IF NOT EXISTS FOR (n:`ActionLog`) REQUIRE n.`id` IS UNIQUE"
                     *       ]
                     *     }
                     */
                    "application/json": components["schemas"]["ActionSetupResult"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description A unique key could not be created: its values are already duplicated in the graph (`detail.statements` lists what ran). */
            409: components["responses"]["Conflict"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
}
