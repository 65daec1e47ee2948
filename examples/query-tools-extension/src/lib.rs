//! supplier-tools: kg-agent's graph query tools plus one of a team's own,
//! `supplier_order_totals` (a supplier's purchase orders counted and summed per status).
//!
//! The component imports `kg:query-tools/query-tools` (kg-agent's query-tools component,
//! plugged in with `wac plug`) and exports the same interface: every call it does not
//! handle goes to the imported one unchanged, `list-tools` is kg-agent's list with the new
//! tool added, and the new tool reads the graph through kg-agent's guarded
//! `run_read_cypher` (read-only, labels checked, the supplier id passed as a parameter), so
//! the extension needs no Neo4j credentials and no outbound host of its own.

use serde_json::{Map, Value, json};

wit_bindgen::generate!({
    path: "wit",
    world: "extended-query-tools",
    // kg:types is used by both the import and the export: generate it once, here.
    generate_all,
});

use exports::kg::query_tools::query_tools as exported;
use kg::query_tools::query_tools as wrapped;
use kg::types::types::{Check, ComponentStatus, Error, ErrorCode};

/// The tool this component adds.
const TOOL: &str = "supplier_order_totals";
const DESCRIPTION: &str = "A supplier's purchase orders counted and summed per status (draft, approved, paid, cancelled, …), with the totals: how much business is open with one supplier. Takes the supplier's id (e.g. SUP-001); find it with search_instances when only the name is known.";
const SCHEMA: &str = r#"{"type":"object","properties":{"supplier_id":{"type":"string","minLength":1,"maxLength":64,"description":"The supplier's id, e.g. SUP-001."}},"required":["supplier_id"],"additionalProperties":false}"#;
const MAX_ID_CHARS: usize = 64;

/// One row per status of the supplier's orders; a supplier without orders gives one row
/// with a null status and no orders, an unknown supplier no row.
const QUERY: &str = "MATCH (s:Supplier {id: $supplier}) \
OPTIONAL MATCH (o:PurchaseOrder)-[:PLACED_WITH]->(s) \
RETURN s.name AS supplier, o.status AS status, count(o) AS orders, sum(o.amount) AS amount \
ORDER BY status";

struct Extension;

impl exported::Guest for Extension {
    /// The wrapped component's status, with a check saying what was added.
    fn status() -> ComponentStatus {
        let mut status = wrapped::status();
        status.checks.push(Check {
            name: "extension".into(),
            ok: true,
            detail: format!("supplier-tools {} adds {TOOL}", env!("CARGO_PKG_VERSION")),
        });
        status
    }

    fn use_trace_context(traceparent: String) {
        wrapped::use_trace_context(&traceparent);
    }

    fn take_spans() -> String {
        wrapped::take_spans()
    }

    fn use_bookmarks(bookmarks: Vec<String>) {
        wrapped::use_bookmarks(&bookmarks);
    }

    /// kg-agent's tools answer the audience; this tool reads through them, so it does too.
    fn use_audience(audience: exported::Audience) {
        wrapped::use_audience(&wrapped::Audience {
            roles: audience.roles,
            for_model: audience.for_model,
        });
    }

    fn graph_bookmarks() -> Vec<String> {
        wrapped::graph_bookmarks()
    }

    fn list_tools() -> Vec<exported::ToolSpec> {
        let mut tools: Vec<exported::ToolSpec> = wrapped::list_tools()
            .into_iter()
            // Ours wins should kg-agent ever ship a tool of the same name.
            .filter(|tool| tool.name != TOOL)
            .map(|tool| exported::ToolSpec {
                name: tool.name,
                description: tool.description,
                parameters_schema: tool.parameters_schema,
            })
            .collect();
        tools.push(exported::ToolSpec {
            name: TOOL.into(),
            description: DESCRIPTION.into(),
            parameters_schema: SCHEMA.into(),
        });
        tools
    }

    fn call_tool(name: String, arguments: String) -> Result<exported::ToolResult, Error> {
        if name == TOOL {
            return supplier_order_totals(&arguments);
        }
        wrapped::call_tool(&name, &arguments).map(|result| exported::ToolResult {
            data: result.data,
            summary: result.summary,
            graph: result.graph,
            truncated: result.truncated,
        })
    }
}

export!(Extension);

fn supplier_order_totals(arguments: &str) -> Result<exported::ToolResult, Error> {
    let supplier_id = supplier_id(arguments)?;
    let read = json!({
        "query": QUERY,
        "parameters": {"supplier": supplier_id},
        "limit": 100,
    });
    let answer = wrapped::call_tool("run_read_cypher", &read.to_string())?;
    let data: Value = serde_json::from_str(&answer.data).map_err(|e| {
        error(
            ErrorCode::Internal,
            format!("run_read_cypher answered with invalid JSON: {e}"),
        )
    })?;
    let rows = data["rows"].as_array().ok_or_else(|| {
        error(
            ErrorCode::Internal,
            format!("run_read_cypher answered without rows: {data}"),
        )
    })?;
    let Some(first) = rows.first() else {
        return Err(error(
            ErrorCode::NotFound,
            format!("no supplier has the id `{supplier_id}`"),
        ));
    };
    let supplier = first[0].clone();
    let mut by_status = Vec::new();
    let (mut orders, mut amount) = (0_u64, 0.0_f64);
    for row in rows {
        let count = row[2].as_u64().unwrap_or(0);
        if count == 0 {
            continue;
        }
        let sum = row[3].as_f64().unwrap_or(0.0);
        orders += count;
        amount += sum;
        by_status.push(json!({"status": row[1], "orders": count, "amount": cents(sum)}));
    }
    let summary = format!(
        "{supplier_id} ({}): {orders} orders in {} statuses, {:.2} in total",
        supplier.as_str().unwrap_or("unnamed"),
        by_status.len(),
        cents(amount)
    );
    let data = json!({
        "supplier_id": supplier_id,
        "supplier": supplier,
        "orders": orders,
        "amount": cents(amount),
        "by_status": by_status,
    });
    Ok(exported::ToolResult {
        data: data.to_string(),
        summary,
        graph: None,
        truncated: false,
    })
}

/// The `supplier_id` of the arguments object, which may hold nothing else.
fn supplier_id(arguments: &str) -> Result<String, Error> {
    let arguments: Map<String, Value> = serde_json::from_str(arguments)
        .map_err(|e| invalid(format!("{TOOL}: the arguments must be a JSON object ({e})")))?;
    if let Some(other) = arguments.keys().find(|key| *key != "supplier_id") {
        return Err(invalid(format!(
            "{TOOL}: unknown argument `{other}`; it takes `supplier_id`"
        )));
    }
    match arguments.get("supplier_id") {
        Some(Value::String(id)) if !id.trim().is_empty() && id.chars().count() <= MAX_ID_CHARS => {
            Ok(id.trim().to_string())
        }
        Some(Value::String(_)) => Err(invalid(format!(
            "{TOOL}: `supplier_id` must be 1 to {MAX_ID_CHARS} characters"
        ))),
        Some(_) => Err(invalid(format!("{TOOL}: `supplier_id` must be a string"))),
        None => Err(invalid(format!(
            "{TOOL}: `supplier_id` is required (e.g. SUP-001)"
        ))),
    }
}

/// A sum of money rounded to cents (floating-point sums carry noise past them).
fn cents(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}

fn invalid(message: String) -> Error {
    error(ErrorCode::InvalidArgument, message)
}

fn error(code: ErrorCode, message: String) -> Error {
    Error {
        code,
        message,
        retryable: false,
        detail: None,
    }
}
