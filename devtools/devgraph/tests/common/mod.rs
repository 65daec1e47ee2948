//! The devgraph binary as the HTTP tests start it: on a free port, with the given flags,
//! killed when dropped. Each test file adds the requests it needs in its own `impl`.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

pub struct Devgraph {
    pub child: Child,
    /// `http://127.0.0.1:PORT/db/neo4j/query/v2`.
    pub base: String,
}

impl Drop for Devgraph {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Devgraph {
    /// Starts devgraph with `args` and waits for its listening line.
    pub fn start(args: &[&str]) -> Devgraph {
        let mut child = Command::new(env!("CARGO_BIN_EXE_devgraph"))
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .expect("devgraph starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let address = line
            .split("http://")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .expect("the listening line")
            .to_string();
        Devgraph {
            child,
            base: format!("http://{address}/db/neo4j/query/v2"),
        }
    }
}
