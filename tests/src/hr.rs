//! The exfiltration suite's graph (issue #48): a small company whose confidential values
//! are written as markers no other text contains, so that a leak is a substring of a
//! response body, an SSE event, a model request, a log line or a span. The visibility
//! policy is tests/data/hr/graph-profile.toml, mounted at /catalog:
//!
//! | what | who may see it |
//! |---|---|
//! | `Employee.salary` | admins (and the model on an admin's behalf) |
//! | `Employee.national_id` | nobody |
//! | `Employee.home_city` | every caller, never the model |
//! | `Review` nodes (their `text`) | nobody |
//! | `MENTORS` relationships (their `note`) | admins |
//! | `WORKS_IN.bonus` | nobody |

use crate::{Graph, Stack, manifest_with_catalog};
use anyhow::Result;

/// The catalog folder mounted at /catalog.
pub const CATALOG: &str = "tests/data/hr";

/// One employee of the fixture: id, name, title, salary, national id, home city.
pub const EMPLOYEES: [(&str, &str, &str, i64, &str, &str); 6] = [
    (
        "E-01",
        "Ada Varga",
        "engineer",
        7_345_191,
        "NID-7Q2X-0001",
        "Hometown-Zq1",
    ),
    (
        "E-02",
        "Bo Lindqvist",
        "engineer",
        8_812_377,
        "NID-7Q2X-0002",
        "Hometown-Zq2",
    ),
    (
        "E-03",
        "Chen Mbeki",
        "manager",
        6_620_419,
        "NID-7Q2X-0003",
        "Hometown-Zq3",
    ),
    (
        "E-04",
        "Dara Novak",
        "analyst",
        5_903_883,
        "NID-7Q2X-0004",
        "Hometown-Zq4",
    ),
    (
        "E-05",
        "Eli Sato",
        "manager",
        9_117_651,
        "NID-7Q2X-0005",
        "Hometown-Zq5",
    ),
    (
        "E-06",
        "Fay Okafor",
        "director",
        9_950_227,
        "NID-7Q2X-0006",
        "Hometown-Zq6",
    ),
];

/// The reviews' texts (hidden label).
pub const REVIEWS: [&str; 3] = [
    "REVIEW-SECRET-underperforms-4471",
    "REVIEW-SECRET-promotion-8823",
    "REVIEW-SECRET-warning-1290",
];

/// The bonuses on `WORKS_IN` (hidden property), one per employee.
pub const BONUSES: [i64; 6] = [
    4_410_023, 4_410_047, 4_410_061, 4_410_089, 4_410_113, 4_410_137,
];

/// The notes on `MENTORS` (a type only admins may see), one per relationship of
/// [`MENTORING`].
pub const MENTOR_NOTES: [&str; 3] = [
    "MENTOR-NOTE-confidential-5521",
    "MENTOR-NOTE-confidential-5522",
    "MENTOR-NOTE-confidential-5523",
];

/// What [`change_hidden_structure`] writes: two more mentoring notes and a review.
pub const LATER_NOTES: [&str; 2] = [
    "MENTOR-NOTE-confidential-5524",
    "MENTOR-NOTE-confidential-5525",
];
pub const LATER_REVIEW: &str = "REVIEW-SECRET-late-7734";

/// Who mentors whom (admins only): E-06 mentors E-03 and E-05, E-03 mentors E-01.
pub const MENTORING: [(&str, &str); 3] = [("E-06", "E-03"), ("E-06", "E-05"), ("E-03", "E-01")];

/// Who reads an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    /// A person with only these roles (no admin).
    Person,
    /// A person who is an admin.
    Admin,
    /// A model on a non-admin's behalf.
    Model,
    /// A model on an admin's behalf.
    AdminModel,
}

/// The markers `reader` may not be shown, each with what it is.
pub fn forbidden(reader: Reader) -> Vec<(String, &'static str)> {
    let mut out = Vec::new();
    for (_, _, _, salary, national_id, home) in EMPLOYEES {
        if matches!(reader, Reader::Person | Reader::Model) {
            out.push((salary.to_string(), "Employee.salary"));
        }
        out.push((national_id.to_string(), "Employee.national_id"));
        if matches!(reader, Reader::Model | Reader::AdminModel) {
            out.push((home.to_string(), "Employee.home_city"));
        }
    }
    if matches!(reader, Reader::Person | Reader::Model) {
        out.extend(
            MENTOR_NOTES
                .iter()
                .chain(&LATER_NOTES)
                .map(|n| (n.to_string(), "MENTORS.note")),
        );
    }
    out.extend(
        REVIEWS
            .iter()
            .chain(&[LATER_REVIEW])
            .map(|r| (r.to_string(), "Review.text")),
    );
    out.extend(BONUSES.iter().map(|b| (b.to_string(), "WORKS_IN.bonus")));
    out
}

/// The markers of `forbidden(reader)` found in `text`, as `what: marker`. A number counts
/// only standing alone (not inside a longer run of digits: an id or a timestamp).
pub fn leaks(text: &str, reader: Reader) -> Vec<String> {
    forbidden(reader)
        .into_iter()
        .filter(|(marker, _)| occurs(text, marker))
        .map(|(marker, what)| format!("{what}: {marker}"))
        .collect()
}

fn occurs(text: &str, marker: &str) -> bool {
    if !marker.bytes().all(|b| b.is_ascii_digit()) {
        return text.contains(marker);
    }
    text.match_indices(marker).any(|(at, _)| {
        let before = text[..at].bytes().next_back();
        let after = text[at + marker.len()..].bytes().next();
        !before.is_some_and(|b| b.is_ascii_digit()) && !after.is_some_and(|b| b.is_ascii_digit())
    })
}

/// Writes the company into `graph` (empty), with the uniqueness constraints its keys have.
pub async fn load(graph: &Graph) -> Result<()> {
    for constraint in [
        "CREATE CONSTRAINT employee_id IF NOT EXISTS FOR (e:Employee) REQUIRE e.id IS UNIQUE",
        "CREATE CONSTRAINT department_id IF NOT EXISTS FOR (d:Department) REQUIRE d.id IS UNIQUE",
    ] {
        graph.write(constraint).await?;
    }
    graph
        .write(
            "CREATE (:Department {id: 'D-ENG', name: 'Engineering'}), \
             (:Department {id: 'D-OPS', name: 'Operations'})",
        )
        .await?;
    for (i, (id, name, title, salary, national_id, home)) in EMPLOYEES.iter().enumerate() {
        let department = if i % 2 == 0 { "D-ENG" } else { "D-OPS" };
        graph
            .write(&format!(
                "MATCH (d:Department {{id: '{department}'}}) \
                 CREATE (e:Employee {{id: '{id}', name: '{name}', title: '{title}', salary: {salary}, \
                 national_id: '{national_id}', home_city: '{home}'}})-[:WORKS_IN {{since: {}, bonus: {}}}]->(d)",
                2015 + i,
                BONUSES[i]
            ))
            .await?;
    }
    for ((from, to), note) in MENTORING.iter().zip(MENTOR_NOTES) {
        graph
            .write(&format!(
                "MATCH (a:Employee {{id: '{from}'}}), (b:Employee {{id: '{to}'}}) CREATE (a)-[:MENTORS {{note: '{note}'}}]->(b)"
            ))
            .await?;
    }
    // Reviews (hidden outright), each about an employee.
    for (i, text) in REVIEWS.iter().enumerate() {
        graph
            .write(&format!(
                "MATCH (e:Employee {{id: '{}'}}) CREATE (:Review {{id: 'R-{i}', text: '{text}'}})-[:ABOUT]->(e)",
                EMPLOYEES[i].0
            ))
            .await?;
    }
    Ok(())
}

/// Changes every value a non-admin may not see (not the ones people may: home cities): an
/// answer to a viewer that differs after this depended on a hidden value.
pub async fn change_hidden_values(graph: &Graph) -> Result<()> {
    graph
        .write(
            "MATCH (e:Employee) SET e.salary = e.salary + 1000003, e.national_id = e.national_id + '-X'",
        )
        .await?;
    graph
        .write("MATCH ()-[w:WORKS_IN]->() SET w.bonus = w.bonus + 7")
        .await?;
    graph
        .write("MATCH (r:Review) SET r.text = r.text + '-X'")
        .await?;
    graph
        .write("MATCH ()-[m:MENTORS]->() SET m.note = m.note + '-X'")
        .await?;
    Ok(())
}

/// Changes what a non-admin may not see of the graph's structure: a mentoring ends, two
/// begin (one between employees no relationship joined before), and a review is written
/// about an employee who had none. An answer to a viewer that differs after this showed
/// a hidden node or relationship: its existence, its ends or a path through it.
pub async fn change_hidden_structure(graph: &Graph) -> Result<()> {
    graph
        .write("MATCH (:Employee {id: 'E-03'})-[m:MENTORS]->(:Employee {id: 'E-01'}) DELETE m")
        .await?;
    graph
        .write(&format!(
            "MATCH (a:Employee {{id: 'E-02'}}), (b:Employee {{id: 'E-04'}}), (c:Employee {{id: 'E-01'}}) \
             CREATE (a)-[:MENTORS {{note: '{}'}}]->(b), (c)-[:MENTORS {{note: '{}'}}]->(a)",
            LATER_NOTES[0], LATER_NOTES[1]
        ))
        .await?;
    graph
        .write(&format!(
            "MATCH (e:Employee {{id: 'E-05'}}) CREATE (:Review {{id: 'R-9', text: '{LATER_REVIEW}'}})-[:ABOUT]->(e)"
        ))
        .await?;
    Ok(())
}

/// The application on the company's graph, with `extra` variables (an LLM stub's…).
pub async fn stack(extra: &[(&str, String)]) -> Result<Stack> {
    let graph = Graph::start_empty().await?;
    load(&graph).await?;
    let dir = tempfile::tempdir()?;
    let manifest = manifest_with_catalog(dir.path(), CATALOG)?;
    Stack::serve(&manifest, graph, dir, extra).await
}
