//! The demo dataset: a procurement domain with an ontology describing it. Deterministic,
//! so tests can assert exact counts. Supplier ACME (SUP-001) has 24 orders in mixed states
//! so that paying them all yields successes and several distinct failures (already paid,
//! not approved, cancelled, insufficient funds); SUP-007 is blocked.

use grafeo::session::Session;
use grafeo::{NodeId, Value};
use std::collections::BTreeMap;

/// Expected node counts per label, asserted by tests and reported by `--demo`.
pub const SUPPLIERS: usize = 10;
pub const PRODUCTS: usize = 40;
pub const ACCOUNTS: usize = 2;
pub const ACME_ORDERS: usize = 24;

type Props = Vec<(&'static str, Value)>;

struct Builder<'a> {
    session: &'a Session,
    /// Business id → node, to link by id.
    ids: BTreeMap<String, NodeId>,
    /// Deterministic pseudo-random source (an LCG): same dataset on every load.
    seed: u64,
}

impl Builder<'_> {
    fn node(&mut self, label: &str, id: &str, mut props: Props) -> grafeo::Result<NodeId> {
        props.insert(0, ("id", Value::from(id)));
        let node = self.session.create_node_with_props(&[label], props)?;
        self.ids.insert(id.to_string(), node);
        Ok(node)
    }

    fn edge(&self, from: &str, rel: &str, to: &str, props: Props) -> grafeo::Result<()> {
        let (Some(a), Some(b)) = (self.ids.get(from), self.ids.get(to)) else {
            return Err(grafeo::Error::Internal(format!(
                "demo data: unknown id {from} or {to}"
            )));
        };
        self.session.create_edge_with_props(*a, *b, rel, props)?;
        Ok(())
    }

    fn next(&mut self, bound: u64) -> u64 {
        self.seed = self
            .seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.seed >> 33) % bound
    }
}

const SUPPLIER_NAMES: [(&str, &str, bool); SUPPLIERS] = [
    ("ACME Industrial", "DE", false),
    ("Borealis Components", "SE", false),
    ("Cobalt Fasteners", "PL", false),
    ("Delta Polymers", "NL", false),
    ("Everline Electronics", "CN", false),
    ("Fjord Logistics Parts", "NO", false),
    ("Blackline Metals", "GB", true),
    ("Granite Tooling", "IT", false),
    ("Helix Sensors", "JP", false),
    ("Ivory Packaging", "FR", false),
];

const CATEGORIES: [&str; 5] = ["fastener", "electronics", "polymer", "metal", "packaging"];

/// Loads the dataset into an empty graph. Returns the number of nodes created.
pub fn load(session: &Session) -> grafeo::Result<usize> {
    let mut b = Builder {
        session,
        ids: BTreeMap::new(),
        seed: 42,
    };
    ontology(&mut b)?;

    b.node(
        "Account",
        "ACC-MAIN",
        vec![
            ("name", Value::from("Main operating account")),
            ("balance", Value::from(60_000.0)),
            ("currency", Value::from("EUR")),
        ],
    )?;
    b.node(
        "Account",
        "ACC-RESERVE",
        vec![
            ("name", Value::from("Reserve account")),
            ("balance", Value::from(5_000.0)),
            ("currency", Value::from("EUR")),
        ],
    )?;

    for (i, (name, country, blocked)) in SUPPLIER_NAMES.iter().enumerate() {
        b.node(
            "Supplier",
            &format!("SUP-{:03}", i + 1),
            vec![
                ("name", Value::from(*name)),
                ("country", Value::from(*country)),
                ("blocked", Value::from(*blocked)),
                ("rating", Value::from(3 + (i as i64 % 3))),
            ],
        )?;
    }

    // ACC-MAIN's 60,000 cover only part of ACME's approved orders: paying them all runs
    // out of funds part-way.
    // Products 1–35 are parts; 36–40 are assemblies built from parts.
    for i in 1..=PRODUCTS {
        let assembly = i > 35;
        let category = if assembly {
            "assembly"
        } else {
            CATEGORIES[i % CATEGORIES.len()]
        };
        let price = if assembly {
            900.0 + 150.0 * i as f64
        } else {
            2.5 + 7.25 * (i % 13) as f64
        };
        b.node(
            "Product",
            &format!("PRD-{i:03}"),
            vec![
                (
                    "name",
                    Value::from(format!(
                        "{} {}",
                        if assembly { "Assembly" } else { "Part" },
                        i
                    )),
                ),
                ("category", Value::from(category)),
                ("unit_price", Value::from(price)),
            ],
        )?;
        if !assembly {
            b.edge(
                &format!("SUP-{:03}", (i % SUPPLIERS) + 1),
                "SUPPLIES",
                &format!("PRD-{i:03}"),
                vec![],
            )?;
        }
    }
    for assembly in 36..=PRODUCTS {
        for k in 0..4 {
            let part = 1 + (assembly * 7 + k * 5) % 35;
            b.edge(
                &format!("PRD-{part:03}"),
                "COMPONENT_OF",
                &format!("PRD-{assembly:03}"),
                vec![("quantity", Value::from(1 + (k as i64)))],
            )?;
        }
    }

    let mut order_no = 0;
    for supplier in 1..=SUPPLIERS {
        let count = if supplier == 1 { ACME_ORDERS } else { 8 };
        for k in 0..count {
            order_no += 1;
            let status = order_status(supplier, k);
            let id = format!("PO-{order_no:04}");
            let lines = 2 + b.next(3) as usize;
            let mut amount = 0.0;
            let mut line_items = Vec::new();
            for l in 0..lines {
                let part = 1 + ((supplier - 1) + 10 * l + k) % 35;
                let quantity = 10 + b.next(90) as i64;
                let unit_price = 2.5 + 7.25 * (part % 13) as f64;
                let line_amount = (quantity as f64 * unit_price * 100.0).round() / 100.0;
                amount += line_amount;
                line_items.push((
                    format!("{id}-L{}", l + 1),
                    part,
                    quantity,
                    unit_price,
                    line_amount,
                ));
            }
            let amount = (amount * 100.0).round() / 100.0;
            let day = 1 + (order_no % 28);
            let month = 1 + (order_no % 9);
            b.node(
                "PurchaseOrder",
                &id,
                vec![
                    ("status", Value::from(status)),
                    ("amount", Value::from(amount)),
                    ("currency", Value::from("EUR")),
                    (
                        "order_date",
                        Value::from(format!("2026-{month:02}-{day:02}")),
                    ),
                ],
            )?;
            b.edge(&id, "PLACED_WITH", &format!("SUP-{supplier:03}"), vec![])?;
            b.edge(&id, "CHARGED_TO", "ACC-MAIN", vec![])?;
            for (line_id, part, quantity, unit_price, line_amount) in line_items {
                b.node(
                    "LineItem",
                    &line_id,
                    vec![
                        ("quantity", Value::from(quantity)),
                        ("unit_price", Value::from(unit_price)),
                        ("amount", Value::from(line_amount)),
                    ],
                )?;
                b.edge(&id, "HAS_LINE", &line_id, vec![])?;
                b.edge(&line_id, "FOR_PRODUCT", &format!("PRD-{part:03}"), vec![])?;
            }
            if matches!(status, "approved" | "paid") {
                let invoice = format!("INV-{order_no:04}");
                b.node(
                    "Invoice",
                    &invoice,
                    vec![
                        ("amount", Value::from(amount)),
                        (
                            "status",
                            Value::from(if status == "paid" { "settled" } else { "open" }),
                        ),
                        (
                            "due_date",
                            Value::from(format!("2026-{:02}-{day:02}", month + 1)),
                        ),
                    ],
                )?;
                b.edge(&invoice, "BILLS", &id, vec![])?;
            }
            if status == "paid" {
                let payment = format!("PAY-{order_no:04}");
                b.node(
                    "Payment",
                    &payment,
                    vec![
                        ("amount", Value::from(amount)),
                        (
                            "paid_on",
                            Value::from(format!("2026-{:02}-{day:02}", month + 1)),
                        ),
                    ],
                )?;
                b.edge(&payment, "PAYS", &id, vec![])?;
                b.edge(&payment, "FROM_ACCOUNT", "ACC-MAIN", vec![])?;
            }
        }
    }
    Ok(b.ids.len())
}

/// ACME: 12 approved, 5 paid, 4 draft, 3 cancelled. Others: a rotating mix.
fn order_status(supplier: usize, k: usize) -> &'static str {
    if supplier == 1 {
        match k {
            0..=11 => "approved",
            12..=16 => "paid",
            17..=20 => "draft",
            _ => "cancelled",
        }
    } else {
        [
            "approved",
            "paid",
            "draft",
            "approved",
            "paid",
            "cancelled",
            "approved",
            "paid",
        ][k % 8]
    }
}

/// Classes and relationship types with descriptions and properties, stored in the graph
/// as `:OntologyClass` and `:OntologyRelationship` nodes (the query tools read them).
fn ontology(b: &mut Builder) -> grafeo::Result<()> {
    let classes: [(&str, &str, &[&str]); 7] = [
        (
            "Supplier",
            "A company that supplies products; a blocked supplier must not be paid.",
            &[
                "id:string",
                "name:string",
                "country:string",
                "blocked:boolean",
                "rating:integer",
            ],
        ),
        (
            "Product",
            "A part or an assembly that can be ordered.",
            &[
                "id:string",
                "name:string",
                "category:string",
                "unit_price:float",
            ],
        ),
        (
            "PurchaseOrder",
            "An order placed with a supplier; status is draft, approved, paid or cancelled.",
            &[
                "id:string",
                "status:string",
                "amount:float",
                "currency:string",
                "order_date:date",
            ],
        ),
        (
            "LineItem",
            "One product line of a purchase order.",
            &[
                "id:string",
                "quantity:integer",
                "unit_price:float",
                "amount:float",
            ],
        ),
        (
            "Invoice",
            "A supplier's bill for an approved order.",
            &[
                "id:string",
                "amount:float",
                "status:string",
                "due_date:date",
            ],
        ),
        (
            "Payment",
            "Money paid from an account for an order.",
            &["id:string", "amount:float", "paid_on:date"],
        ),
        (
            "Account",
            "A bank account with a limited balance that payments draw from.",
            &[
                "id:string",
                "name:string",
                "balance:float",
                "currency:string",
            ],
        ),
    ];
    for (name, description, properties) in classes {
        b.node(
            "OntologyClass",
            &format!("class:{name}"),
            vec![
                ("name", Value::from(name)),
                ("description", Value::from(description)),
                (
                    "properties",
                    Value::List(
                        properties
                            .iter()
                            .map(|p| Value::from(*p))
                            .collect::<Vec<_>>()
                            .into(),
                    ),
                ),
            ],
        )?;
    }
    let relationships = [
        (
            "PLACED_WITH",
            "PurchaseOrder",
            "Supplier",
            "The supplier an order is placed with.",
        ),
        (
            "CHARGED_TO",
            "PurchaseOrder",
            "Account",
            "The account an order is paid from.",
        ),
        (
            "HAS_LINE",
            "PurchaseOrder",
            "LineItem",
            "A line of the order.",
        ),
        (
            "FOR_PRODUCT",
            "LineItem",
            "Product",
            "The product a line orders.",
        ),
        (
            "SUPPLIES",
            "Supplier",
            "Product",
            "The supplier delivers this product.",
        ),
        (
            "COMPONENT_OF",
            "Product",
            "Product",
            "A part used in an assembly.",
        ),
        (
            "BILLS",
            "Invoice",
            "PurchaseOrder",
            "The invoice bills this order.",
        ),
        (
            "PAYS",
            "Payment",
            "PurchaseOrder",
            "The payment settles this order.",
        ),
        (
            "FROM_ACCOUNT",
            "Payment",
            "Account",
            "The account the payment was drawn from.",
        ),
    ];
    for (name, source, target, description) in relationships {
        b.node(
            "OntologyRelationship",
            &format!("rel:{name}"),
            vec![
                ("name", Value::from(name)),
                ("source", Value::from(source)),
                ("target", Value::from(target)),
                ("description", Value::from(description)),
            ],
        )?;
    }
    Ok(())
}
