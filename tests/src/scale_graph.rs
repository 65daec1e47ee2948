//! The demo's procurement domain at a scale factor, written into a running Neo4j through
//! the Query API: what `tests/tests/graph_scale.rs` grows the demo graph with to see
//! whether a tool's cost grows with the graph, and what `scale-graph` (src/bin) grows a
//! graph with by hand.
//!
//! It ADDS to what is there (normally the demo dataset, `devtools/devgraph/src/demo.rs`):
//! suppliers, accounts, products (parts and assemblies), purchase orders with their lines,
//! invoices and payments, with the demo's labels, relationship types, property names and
//! value shapes, and ids of their own (`SUP-G0000001`, `PO-G0000001-L1`, …) that cannot
//! collide with the demo's (`SUP-001`, `PO-0001-L1`, …) nor match the demo's own search
//! terms (no generated name contains "acme", no id contains "PO-000"). The demo's hubs grow
//! too, so that a node's degree grows with the scale as it does in a real graph: ACME
//! (`SUP-001`) gets `ACME_ORDER_PERCENT` of the new orders and supplies some new parts,
//! `ACC-MAIN` is charged by `MAIN_ACCOUNT_PERCENT` of them, and some new lines order the
//! demo's own parts.
//!
//! Scale 1.0 is about 500,000 nodes (suppliers 1 %, accounts 0.1 %, products 4 %, orders
//! 25 %, lines 55 %, invoices 10 %, payments 5 %), each relationship type in proportion;
//! fractional factors are allowed (0.01 is about 5,000 nodes, ten times the 565-node
//! demo). The data is deterministic (a seeded LCG, as the demo's), so a scale gives the
//! same graph on every run; growing the same graph twice is refused by the id
//! constraints, as it would create every id again.
//!
//! Writes are batched parameterised statements (`UNWIND $rows AS r CREATE …`, at most
//! `BATCH_ROWS` rows, each its own request and transaction), linked by id through range
//! indexes: before loading, every domain label without a range index on `id` gets a
//! uniqueness constraint on it (the kind of key `POST /actions/setup` and the graph
//! profile rely on; a label the application's set-up already indexed keeps its index, as
//! Neo4j refuses a constraint over an existing index).

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Value, json};
use std::fmt;
use std::time::{Duration, Instant};

/// Nodes created at scale factor 1.0.
pub const NODES_AT_SCALE_1: f64 = 500_000.0;
/// Most rows one request carries: large enough that per-request overhead is small, small
/// enough that a transaction stays well inside the pool's 256 MiB per-transaction memory.
pub const BATCH_ROWS: usize = 10_000;
/// Orders generated and sent at a time: their lines (2.2 per order on average, at most 3)
/// fit in one batch.
const ORDERS_PER_CHUNK: usize = BATCH_ROWS / 3;

/// The demo's supplier hub, and the share (in percent) of the new orders placed with it.
pub const ACME: &str = "SUP-001";
pub const ACME_ORDER_PERCENT: u64 = 2;
/// Share (percent) of the new parts ACME supplies.
const ACME_PART_PERCENT: u64 = 2;
/// The demo's account hub, and the share (percent) of the new orders charged to it.
pub const MAIN_ACCOUNT: &str = "ACC-MAIN";
pub const MAIN_ACCOUNT_PERCENT: u64 = 10;
/// Share (percent) of the new order lines that order one of the demo's parts
/// (`PRD-001` … `PRD-035`, whose prices the demo computes as below).
const DEMO_PART_PERCENT: u64 = 5;
const DEMO_PARTS: u64 = 35;

/// The labels the loader links by `id` (the demo's catalog labels).
pub const LABELS: [&str; 7] = [
    "Supplier",
    "Product",
    "PurchaseOrder",
    "LineItem",
    "Invoice",
    "Payment",
    "Account",
];

/// The seed of the generator's LCG (the demo's is 42; any other value works).
const SEED: u64 = 0x05CA_1E0F_DA7A;

/// A Neo4j to write to (the Query API v2, basic auth).
#[derive(Clone, Debug)]
pub struct Target {
    /// `http://host:port`, without a trailing slash.
    pub origin: String,
    pub user: String,
    pub password: String,
    pub database: String,
}

impl Target {
    /// User `neo4j`, database `neo4j`.
    pub fn new(origin: &str, password: &str) -> Target {
        Target {
            origin: origin.trim_end_matches('/').to_string(),
            user: "neo4j".to_string(),
            password: password.to_string(),
            database: "neo4j".to_string(),
        }
    }

    fn query_url(&self) -> String {
        format!("{}/db/{}/query/v2", self.origin, self.database)
    }
}

/// How many of each entity a scale factor creates; lines, invoices and payments follow
/// from the orders (2.2 lines per order; 40 % of orders approved or paid, so invoiced;
/// 20 % paid).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizes {
    pub suppliers: usize,
    pub accounts: usize,
    pub products: usize,
    pub orders: usize,
}

impl Sizes {
    /// The sizes at `factor` (finite and positive); at least one of each, and two products
    /// so that there is a part besides any assembly.
    pub fn at(factor: f64) -> Result<Sizes> {
        ensure!(
            factor.is_finite() && factor > 0.0,
            "the scale factor must be a positive number, not {factor}"
        );
        let nodes = NODES_AT_SCALE_1 * factor;
        let share =
            |percent: f64, least: usize| ((nodes * percent / 100.0).round() as usize).max(least);
        Ok(Sizes {
            suppliers: share(1.0, 1),
            accounts: share(0.1, 1),
            products: share(4.0, 2),
            orders: share(25.0, 1),
        })
    }
}

/// What a load created, as the graph counted it, and how long it took.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    pub nodes: u64,
    pub relationships: u64,
    /// Write requests sent (one transaction each).
    pub requests: usize,
    /// The whole load, index set-up included.
    pub elapsed: Duration,
    /// Of which creating the id constraints and waiting for them to come online (on a
    /// graph the application has set up, only the wait).
    pub index_setup: Duration,
}

impl Report {
    /// The write rate: nodes over the time after the index set-up.
    pub fn nodes_per_second(&self) -> f64 {
        let writing = self.elapsed.saturating_sub(self.index_setup);
        self.nodes as f64 / writing.as_secs_f64().max(1e-9)
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} nodes and {} relationships in {} requests, {:.1} s ({:.1} s of index set-up, then {:.0} nodes/s)",
            self.nodes,
            self.relationships,
            self.requests,
            self.elapsed.as_secs_f64(),
            self.index_setup.as_secs_f64(),
            self.nodes_per_second()
        )
    }
}

/// Grows the graph at `target` by `factor` (see the module comment), calling `progress`
/// with the running totals after each request. Fails on the first statement the graph
/// refuses (after retrying transient errors), and when the graph created fewer nodes or
/// relationships than generated (a row whose ids did not match).
pub async fn grow(
    target: &Target,
    factor: f64,
    mut progress: impl FnMut(&Report),
) -> Result<Report> {
    let sizes = Sizes::at(factor)?;
    let mut loader = Loader::new(target)?;
    loader.ensure_id_indexes().await?;
    let mut domain = Domain::new(sizes);
    let mut expected = (0u64, 0u64);

    for (statement, rows, counts) in [
        (CREATE_ACCOUNTS, domain.accounts(), (1, 0)),
        (CREATE_SUPPLIERS, domain.suppliers(), (1, 0)),
    ] {
        expected = add(expected, rows.len(), counts);
        loader.write_batched(statement, rows, &mut progress).await?;
    }
    let (products, supplied, components) = domain.products();
    expected = add(expected, products.len(), (1, 0));
    expected.1 += supplied as u64;
    loader
        .write_batched(CREATE_PRODUCTS, products, &mut progress)
        .await?;
    expected = add(expected, components.len(), (0, 1));
    loader
        .write_batched(LINK_COMPONENTS, components, &mut progress)
        .await?;

    let mut first = 0;
    while first < sizes.orders {
        let count = ORDERS_PER_CHUNK.min(sizes.orders - first);
        let chunk = domain.orders(first, count);
        first += count;
        for (statement, rows, counts) in [
            (CREATE_ORDERS, chunk.orders, (1, 2)),
            (CREATE_LINES, chunk.lines, (1, 2)),
            (CREATE_INVOICES, chunk.invoices, (1, 1)),
            (CREATE_PAYMENTS, chunk.payments, (1, 2)),
        ] {
            expected = add(expected, rows.len(), counts);
            loader.write_batched(statement, rows, &mut progress).await?;
        }
    }
    let report = loader.report();
    ensure!(
        (report.nodes, report.relationships) == expected,
        "the graph created {} nodes and {} relationships, {} and {} were generated: rows \
         whose ids matched nothing (was the graph the demo dataset?)",
        report.nodes,
        report.relationships,
        expected.0,
        expected.1
    );
    // The planner reads index sizes from samples Neo4j refreshes in the background; ask
    // for them now, so plans made right after a load see the grown graph.
    loader
        .run("CALL db.resampleOutdatedIndexes()", json!({}), "WRITE")
        .await?;
    Ok(loader.report())
}

fn add(total: (u64, u64), rows: usize, (nodes, relationships): (u64, u64)) -> (u64, u64) {
    (
        total.0 + rows as u64 * nodes,
        total.1 + rows as u64 * relationships,
    )
}

const CREATE_ACCOUNTS: &str = "UNWIND $rows AS r \
     CREATE (:Account {id: r.id, name: r.name, balance: r.balance, currency: r.currency})";
const CREATE_SUPPLIERS: &str = "UNWIND $rows AS r \
     CREATE (:Supplier {id: r.id, name: r.name, country: r.country, blocked: r.blocked, rating: r.rating})";
const CREATE_PRODUCTS: &str = "UNWIND $rows AS r \
     CREATE (p:Product {id: r.id, name: r.name, category: r.category, unit_price: r.unit_price}) \
     WITH p, r WHERE r.supplier IS NOT NULL \
     MATCH (s:Supplier {id: r.supplier}) CREATE (s)-[:SUPPLIES]->(p)";
const LINK_COMPONENTS: &str = "UNWIND $rows AS r \
     MATCH (part:Product {id: r.part}) MATCH (assembly:Product {id: r.assembly}) \
     CREATE (part)-[:COMPONENT_OF {quantity: r.quantity}]->(assembly)";
const CREATE_ORDERS: &str = "UNWIND $rows AS r \
     MATCH (s:Supplier {id: r.supplier}) MATCH (a:Account {id: r.account}) \
     CREATE (o:PurchaseOrder {id: r.id, status: r.status, amount: r.amount, currency: r.currency, order_date: r.order_date}) \
     CREATE (o)-[:PLACED_WITH]->(s) CREATE (o)-[:CHARGED_TO]->(a)";
const CREATE_LINES: &str = "UNWIND $rows AS r \
     MATCH (o:PurchaseOrder {id: r.order}) MATCH (p:Product {id: r.product}) \
     CREATE (l:LineItem {id: r.id, quantity: r.quantity, unit_price: r.unit_price, amount: r.amount}) \
     CREATE (o)-[:HAS_LINE]->(l) CREATE (l)-[:FOR_PRODUCT]->(p)";
const CREATE_INVOICES: &str = "UNWIND $rows AS r \
     MATCH (o:PurchaseOrder {id: r.order}) \
     CREATE (i:Invoice {id: r.id, amount: r.amount, status: r.status, due_date: r.due_date}) \
     CREATE (i)-[:BILLS]->(o)";
const CREATE_PAYMENTS: &str = "UNWIND $rows AS r \
     MATCH (o:PurchaseOrder {id: r.order}) MATCH (a:Account {id: r.account}) \
     CREATE (p:Payment {id: r.id, amount: r.amount, paid_on: r.paid_on}) \
     CREATE (p)-[:PAYS]->(o) CREATE (p)-[:FROM_ACCOUNT]->(a)";

/// The Query API, one statement per request.
struct Loader {
    http: reqwest::Client,
    target: Target,
    report: Report,
    started: Instant,
}

impl Loader {
    fn new(target: &Target) -> Result<Loader> {
        Ok(Loader {
            // A batch takes seconds on a small page cache; a stuck server should still end
            // the load rather than hang it.
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(600))
                .build()?,
            target: target.clone(),
            report: Report::default(),
            started: Instant::now(),
        })
    }

    fn report(&self) -> Report {
        Report {
            elapsed: self.started.elapsed(),
            ..self.report.clone()
        }
    }

    /// A uniqueness constraint on `id` for every domain label that has no range index on
    /// it yet, then waits for every index to come online (a constraint is created
    /// populating: a lookup before that scans).
    async fn ensure_id_indexes(&mut self) -> Result<()> {
        let body = self
            .run(
                "SHOW INDEXES YIELD type, labelsOrTypes, properties \
                 WHERE type = 'RANGE' RETURN labelsOrTypes, properties",
                json!({}),
                "READ",
            )
            .await?;
        let indexed: Vec<&Value> = body["data"]["values"]
            .as_array()
            .map(|rows| rows.iter().collect())
            .unwrap_or_default();
        for label in LABELS {
            let has_index = indexed
                .iter()
                .any(|row| row[0] == json!([label]) && row[1] == json!(["id"]));
            if !has_index {
                self.run(
                    &format!(
                        "CREATE CONSTRAINT scale_graph_{}_id IF NOT EXISTS FOR (n:{label}) REQUIRE n.id IS UNIQUE",
                        label.to_lowercase()
                    ),
                    json!({}),
                    "WRITE",
                )
                .await?;
            }
        }
        self.run("CALL db.awaitIndexes(600)", json!({}), "WRITE")
            .await?;
        self.report.index_setup = self.started.elapsed();
        Ok(())
    }

    /// `statement` over `rows`, `BATCH_ROWS` at a time, each batch its own request.
    async fn write_batched(
        &mut self,
        statement: &str,
        rows: Vec<Value>,
        progress: &mut impl FnMut(&Report),
    ) -> Result<()> {
        for batch in rows.chunks(BATCH_ROWS) {
            let body = self
                .run(statement, json!({ "rows": batch }), "WRITE")
                .await?;
            let counters = &body["counters"];
            self.report.nodes += counters["nodesCreated"].as_u64().unwrap_or(0);
            self.report.relationships += counters["relationshipsCreated"].as_u64().unwrap_or(0);
            self.report.requests += 1;
            progress(&self.report());
        }
        Ok(())
    }

    /// One statement in its own transaction; the answer's JSON. A transient error (a
    /// deadlock, a lock timeout) rolled the whole statement back, so it is sent again.
    async fn run(&self, statement: &str, parameters: Value, mode: &str) -> Result<Value> {
        let request = json!({
            "statement": statement,
            "parameters": parameters,
            "accessMode": mode,
            "includeCounters": true,
        });
        let summary = statement
            .split_whitespace()
            .take(8)
            .collect::<Vec<_>>()
            .join(" ");
        for attempt in 1..=5 {
            let response = self
                .http
                .post(self.target.query_url())
                .basic_auth(&self.target.user, Some(&self.target.password))
                .header("accept", "application/json")
                .json(&request)
                .send()
                .await
                .with_context(|| format!("sending `{summary} …` to {}", self.target.origin))?;
            let status = response.status();
            let body: Value = response.json().await.with_context(|| {
                format!("the graph answered `{summary} …` with HTTP {status} and no JSON")
            })?;
            let Some(error) = body["errors"].get(0) else {
                ensure!(
                    status.is_success(),
                    "the graph answered `{summary} …` with HTTP {status}: {body}"
                );
                return Ok(body);
            };
            let code = error["code"].as_str().unwrap_or("(no code)");
            if code.starts_with("Neo.TransientError.") && attempt < 5 {
                tokio::time::sleep(Duration::from_millis(200 * attempt)).await;
                continue;
            }
            // The first batch meeting an id the graph holds: this scale was loaded before.
            let hint = if code == "Neo.ClientError.Schema.ConstraintValidationFailed" {
                " (the generated ids are the same on every run: was this graph grown before?)"
            } else {
                ""
            };
            bail!(
                "the graph refused `{summary} …`: {code}: {}{hint}",
                error["message"].as_str().unwrap_or_default()
            );
        }
        bail!("`{summary} …` kept failing with transient errors")
    }
}

/// The demo's LCG (`devtools/devgraph/src/demo.rs`), seeded with `SEED`.
struct Lcg(u64);

impl Lcg {
    /// A number in `0..bound` (`bound` > 0).
    fn next(&mut self, bound: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % bound.max(1)
    }

    /// True `percent` times in a hundred.
    fn percent(&mut self, percent: u64) -> bool {
        self.next(100) < percent
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.next(items.len() as u64) as usize]
    }
}

const NAME_FIRST: [&str; 16] = [
    "Northwind",
    "Baltic",
    "Cedar",
    "Summit",
    "Riverside",
    "Orion",
    "Vantage",
    "Harbor",
    "Keystone",
    "Silverline",
    "Meridian",
    "Pinnacle",
    "Tundra",
    "Lumen",
    "Sterling",
    "Quarry",
];
const NAME_SECOND: [&str; 12] = [
    "Fasteners",
    "Components",
    "Metals",
    "Polymers",
    "Electronics",
    "Tooling",
    "Sensors",
    "Packaging",
    "Castings",
    "Hydraulics",
    "Bearings",
    "Supplies",
];
const COUNTRIES: [&str; 12] = [
    "DE", "SE", "PL", "NL", "CN", "NO", "GB", "IT", "JP", "FR", "US", "ES",
];
/// The demo's part categories; assemblies are "assembly".
const CATEGORIES: [&str; 5] = ["fastener", "electronics", "polymer", "metal", "packaging"];

/// One chunk of orders and what hangs off them, as rows for the statements above.
struct OrderChunk {
    orders: Vec<Value>,
    lines: Vec<Value>,
    invoices: Vec<Value>,
    payments: Vec<Value>,
}

/// The generated entities; generation order is fixed, so the data is deterministic.
struct Domain {
    sizes: Sizes,
    rng: Lcg,
    /// Unit price of each new product, by number (1-based; index 0 unused).
    prices: Vec<f64>,
    /// Numbers of the new products that are parts (not assemblies).
    parts: Vec<usize>,
}

fn supplier_id(n: usize) -> String {
    format!("SUP-G{n:07}")
}
fn account_id(n: usize) -> String {
    format!("ACC-G{n:07}")
}
fn product_id(n: usize) -> String {
    format!("PRD-G{n:07}")
}
fn order_id(n: usize) -> String {
    format!("PO-G{n:07}")
}

/// Money rounded to cents, as the demo rounds it.
fn cents(amount: f64) -> f64 {
    (amount * 100.0).round() / 100.0
}

impl Domain {
    fn new(sizes: Sizes) -> Domain {
        Domain {
            sizes,
            rng: Lcg(SEED),
            prices: vec![0.0],
            parts: Vec::new(),
        }
    }

    fn accounts(&mut self) -> Vec<Value> {
        (1..=self.sizes.accounts)
            .map(|n| {
                json!({
                    "id": account_id(n),
                    "name": format!("Operating account {n}"),
                    "balance": cents(10_000.0 + 50.0 * self.rng.next(2_000) as f64),
                    "currency": "EUR",
                })
            })
            .collect()
    }

    fn suppliers(&mut self) -> Vec<Value> {
        (1..=self.sizes.suppliers)
            .map(|n| {
                let name = format!(
                    "{} {} {n}",
                    self.rng.pick(&NAME_FIRST),
                    self.rng.pick(&NAME_SECOND)
                );
                json!({
                    "id": supplier_id(n),
                    "name": name,
                    "country": self.rng.pick(&COUNTRIES),
                    // As rare as in the demo (1 in 10) would block a tenth of the orders.
                    "blocked": self.rng.next(50) == 0,
                    "rating": 3 + self.rng.next(3) as i64,
                })
            })
            .collect()
    }

    /// The products' rows (parts with their supplier), how many SUPPLIES they make, and
    /// the COMPONENT_OF rows: every eighth product is an assembly of four parts.
    fn products(&mut self) -> (Vec<Value>, usize, Vec<Value>) {
        let mut rows = Vec::with_capacity(self.sizes.products);
        let mut assemblies = Vec::new();
        for n in 1..=self.sizes.products {
            let assembly = n % 8 == 0;
            let (category, price, supplier) = if assembly {
                assemblies.push(n);
                ("assembly", 900.0 + 150.0 * self.rng.next(20) as f64, None)
            } else {
                self.parts.push(n);
                let supplier = if self.rng.percent(ACME_PART_PERCENT) {
                    ACME.to_string()
                } else {
                    supplier_id(1 + self.rng.next(self.sizes.suppliers as u64) as usize)
                };
                (
                    self.rng.pick(&CATEGORIES),
                    cents(2.5 + 0.25 * self.rng.next(400) as f64),
                    Some(supplier),
                )
            };
            self.prices.push(price);
            rows.push(json!({
                "id": product_id(n),
                "name": format!("{} G{n}", if assembly { "Assembly" } else { "Part" }),
                "category": category,
                "unit_price": price,
                "supplier": supplier,
            }));
        }
        let supplied = self.parts.len();
        let mut components = Vec::with_capacity(assemblies.len() * 4);
        for assembly in assemblies {
            let start = self.rng.next(self.parts.len() as u64) as usize;
            for k in 0..4 {
                // Four parts spread over the list: distinct unless there are fewer.
                let part =
                    self.parts[(start + k * (self.parts.len() / 4).max(1)) % self.parts.len()];
                components.push(json!({
                    "part": product_id(part),
                    "assembly": product_id(assembly),
                    "quantity": 1 + k as i64,
                }));
            }
        }
        (rows, supplied, components)
    }

    /// Orders `first + 1 ..= first + count`: 20 % paid (invoice settled, payment), 20 %
    /// approved (invoice open), 35 % draft, 25 % cancelled; 2 or 3 lines each.
    fn orders(&mut self, first: usize, count: usize) -> OrderChunk {
        let mut chunk = OrderChunk {
            orders: Vec::with_capacity(count),
            lines: Vec::with_capacity(count * 3),
            invoices: Vec::new(),
            payments: Vec::new(),
        };
        for n in first + 1..=first + count {
            let id = order_id(n);
            let supplier = if self.rng.percent(ACME_ORDER_PERCENT) {
                ACME.to_string()
            } else {
                supplier_id(1 + self.rng.next(self.sizes.suppliers as u64) as usize)
            };
            let account = if self.rng.percent(MAIN_ACCOUNT_PERCENT) {
                MAIN_ACCOUNT.to_string()
            } else {
                account_id(1 + self.rng.next(self.sizes.accounts as u64) as usize)
            };
            let status = match self.rng.next(20) {
                0..=3 => "paid",
                4..=7 => "approved",
                8..=14 => "draft",
                _ => "cancelled",
            };
            let lines = 2 + usize::from(self.rng.next(5) == 0);
            let mut amount = 0.0;
            for l in 1..=lines {
                let (product, unit_price) = if self.rng.percent(DEMO_PART_PERCENT) {
                    let part = 1 + self.rng.next(DEMO_PARTS);
                    (format!("PRD-{part:03}"), 2.5 + 7.25 * (part % 13) as f64)
                } else {
                    let part = self.parts[self.rng.next(self.parts.len() as u64) as usize];
                    (product_id(part), self.prices[part])
                };
                let quantity = 10 + self.rng.next(90) as i64;
                let line_amount = cents(quantity as f64 * unit_price);
                amount += line_amount;
                chunk.lines.push(json!({
                    "order": id,
                    "id": format!("{id}-L{l}"),
                    "product": product,
                    "quantity": quantity,
                    "unit_price": unit_price,
                    "amount": line_amount,
                }));
            }
            let amount = cents(amount);
            let day = 1 + n % 28;
            let month = 1 + n % 9;
            chunk.orders.push(json!({
                "id": id,
                "status": status,
                "amount": amount,
                "currency": "EUR",
                "order_date": format!("2026-{month:02}-{day:02}"),
                "supplier": supplier,
                "account": account,
            }));
            let later = format!("2026-{:02}-{day:02}", month + 1);
            if matches!(status, "approved" | "paid") {
                chunk.invoices.push(json!({
                    "order": id,
                    "id": format!("INV-G{n:07}"),
                    "amount": amount,
                    "status": if status == "paid" { "settled" } else { "open" },
                    "due_date": later,
                }));
            }
            if status == "paid" {
                chunk.payments.push(json!({
                    "order": id,
                    "account": account,
                    "id": format!("PAY-G{n:07}"),
                    "amount": amount,
                    "paid_on": later,
                }));
            }
        }
        chunk
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row a scale generates, by statement.
    fn generate(factor: f64) -> Vec<(&'static str, Vec<Value>)> {
        let sizes = Sizes::at(factor).unwrap();
        let mut d = Domain::new(sizes);
        let mut out = vec![("accounts", d.accounts()), ("suppliers", d.suppliers())];
        let (products, _, components) = d.products();
        out.push(("products", products));
        out.push(("components", components));
        let chunk = d.orders(0, sizes.orders);
        out.push(("orders", chunk.orders));
        out.push(("lines", chunk.lines));
        out.push(("invoices", chunk.invoices));
        out.push(("payments", chunk.payments));
        out
    }

    #[test]
    fn scale_one_is_about_half_a_million_nodes_in_the_stated_shares() {
        let sizes = Sizes::at(1.0).unwrap();
        assert_eq!(
            sizes,
            Sizes {
                suppliers: 5_000,
                accounts: 500,
                products: 20_000,
                orders: 125_000
            }
        );
        let small = generate(0.01);
        let count = |name: &str| small.iter().find(|(n, _)| *n == name).unwrap().1.len();
        let nodes: usize = [
            "accounts",
            "suppliers",
            "products",
            "orders",
            "lines",
            "invoices",
            "payments",
        ]
        .iter()
        .map(|n| count(n))
        .sum();
        assert!((4_500..=5_500).contains(&nodes), "{nodes}");
        let share = |name: &str| count(name) as f64 / nodes as f64;
        assert!((0.50..0.60).contains(&share("lines")), "{}", share("lines"));
        assert!(
            (0.07..0.13).contains(&share("invoices")),
            "{}",
            share("invoices")
        );
        assert!(
            (0.03..0.07).contains(&share("payments")),
            "{}",
            share("payments")
        );
    }

    #[test]
    fn the_data_is_deterministic_and_grows_the_demo_hubs() {
        let a = generate(0.01);
        assert_eq!(a, generate(0.01));
        let orders = &a.iter().find(|(n, _)| *n == "orders").unwrap().1;
        let acme = orders.iter().filter(|o| o["supplier"] == ACME).count();
        let main = orders
            .iter()
            .filter(|o| o["account"] == MAIN_ACCOUNT)
            .count();
        assert!(acme > 5 && acme < orders.len() / 20, "{acme}");
        assert!(
            main > orders.len() / 20 && main < orders.len() / 5,
            "{main}"
        );
    }

    /// The demo's search terms find the same entities after growing: no generated id
    /// or name contains them, and no generated id is a demo id.
    #[test]
    fn generated_values_do_not_collide_with_the_demo() {
        for (_, rows) in generate(0.01) {
            for row in rows {
                for key in ["id", "name"] {
                    if let Some(text) = row[key].as_str() {
                        let lower = text.to_lowercase();
                        assert!(!lower.contains("acme"), "{text}");
                        assert!(!lower.contains("po-000"), "{text}");
                        assert!(text.contains("-G") || key == "name", "{text}");
                    }
                }
            }
        }
    }

    #[test]
    fn tiny_and_invalid_factors() {
        assert!(Sizes::at(0.0).is_err());
        assert!(Sizes::at(f64::NAN).is_err());
        let tiny = Sizes::at(1e-9).unwrap();
        assert_eq!(
            (tiny.suppliers, tiny.accounts, tiny.products, tiny.orders),
            (1, 1, 2, 1)
        );
        generate(1e-9);
    }
}
