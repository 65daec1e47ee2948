//! A recursive-descent reader of the read subset of Cypher 5, over the guard's tokens. It
//! builds no tree: it checks the statement against the grammar and, as it closes each
//! pattern scope, emits the insertions (`Edit`s) that give that scope's nodes and
//! relationships their visibility predicates (see the parent module).
//!
//! The subset: `MATCH` / `OPTIONAL MATCH` (pattern lists, path variables,
//! `shortestPath` / `allShortestPaths`, label and type expressions with `| & ! %`,
//! variable-length relationships, quantified path patterns, inline property maps and
//! `WHERE`), `WHERE`, `WITH` and `RETURN` (`DISTINCT`, `AS`, `ORDER BY`, `SKIP`/`OFFSET`,
//! `LIMIT`), `UNWIND`, `CALL { }` and `CALL (…) { }`, `UNION [ALL]`; expressions with
//! Cypher's precedence: boolean, comparison, string and list predicates, `IS [NOT] NULL`,
//! arithmetic, property access, subscripts and slices, label predicates, map projections,
//! literals, parameters, `CASE`, function calls (dotted names, `DISTINCT`, `count(*)`),
//! `all/any/none/single(x IN l WHERE p)`, `reduce`, list and pattern comprehensions,
//! patterns as predicates, `EXISTS` / `COUNT` / `COLLECT { }`. Anything else is an error.

use super::{Edit, Predicates};
use crate::guard::Refusal;
use crate::guard::lexer::{Spanned, Token};

pub(crate) struct Parsed {
    pub edits: Vec<Edit>,
    pub functions: Vec<String>,
}

/// Words that cannot be a variable where an expression is expected.
const RESERVED: [&str; 34] = [
    "MATCH",
    "OPTIONAL",
    "RETURN",
    "WITH",
    "WHERE",
    "UNWIND",
    "CALL",
    "UNION",
    "ORDER",
    "SKIP",
    "OFFSET",
    "LIMIT",
    "AS",
    "AND",
    "OR",
    "XOR",
    "NOT",
    "IN",
    "IS",
    "THEN",
    "ELSE",
    "END",
    "WHEN",
    "DISTINCT",
    "BY",
    "STARTS",
    "ENDS",
    "CONTAINS",
    "ASC",
    "DESC",
    "ASCENDING",
    "DESCENDING",
    "YIELD",
    "CASE",
];

/// Words that start a clause.
const CLAUSES: [&str; 6] = ["MATCH", "OPTIONAL", "UNWIND", "WITH", "RETURN", "CALL"];

pub(crate) fn parse(
    clean: &str,
    tokens: &[Spanned],
    predicates: Predicates,
) -> Result<Parsed, Refusal> {
    let mut p = Parser {
        clean,
        toks: tokens,
        pos: 0,
        edits: Vec::new(),
        generated: 0,
        star: false,
        functions: Vec::new(),
        predicates,
    };
    p.statement()?;
    if p.pos < p.toks.len() {
        return Err(p.error("expected the end of the statement"));
    }
    if p.star && p.generated > 0 {
        return Err(Refusal(
            "`RETURN *` and `WITH *` are not available here while the graph has a visibility policy: name the columns (`RETURN a, b`)".into(),
        ));
    }
    Ok(Parsed {
        edits: p.edits,
        functions: p.functions,
    })
}

type R<T = ()> = Result<T, Refusal>;

/// The predicates one pattern scope collects, and the `WHERE` they join.
#[derive(Default)]
struct Scope {
    predicates: Vec<String>,
}

impl Scope {
    fn add(&mut self, predicate: Option<String>) {
        if let Some(p) = predicate
            && !self.predicates.contains(&p)
        {
            self.predicates.push(p);
        }
    }

    fn joined(&self) -> String {
        self.predicates.join(" AND ")
    }
}

struct Parser<'a> {
    clean: &'a str,
    toks: &'a [Spanned],
    pos: usize,
    edits: Vec<Edit>,
    /// Variables generated for anonymous elements so far.
    generated: usize,
    /// A `*` projection was seen.
    star: bool,
    functions: Vec<String>,
    predicates: Predicates,
}

impl<'a> Parser<'a> {
    // ---- tokens ----

    fn tok(&self, k: usize) -> Option<&'a Token> {
        self.toks.get(self.pos + k).map(|t| &t.token)
    }

    fn kw(&self, k: usize) -> Option<String> {
        self.tok(k).and_then(Token::keyword)
    }

    fn is_kw(&self, word: &str) -> bool {
        self.kw(0).as_deref() == Some(word)
    }

    fn eat_kw(&mut self, word: &str) -> bool {
        let yes = self.is_kw(word);
        if yes {
            self.pos += 1;
        }
        yes
    }

    fn expect_kw(&mut self, word: &str) -> R {
        if self.eat_kw(word) {
            Ok(())
        } else {
            Err(self.error(&format!("expected `{word}`")))
        }
    }

    fn sym(&self, k: usize, c: char) -> bool {
        self.tok(k).is_some_and(|t| t.is_sym(c))
    }

    fn eat(&mut self, c: char) -> bool {
        let yes = self.sym(0, c);
        if yes {
            self.pos += 1;
        }
        yes
    }

    fn expect(&mut self, c: char) -> R {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.error(&format!("expected `{c}`")))
        }
    }

    /// One or more of `item`, separated by commas.
    fn separated(&mut self, mut item: impl FnMut(&mut Self) -> R) -> R {
        loop {
            item(self)?;
            if !self.eat(',') {
                return Ok(());
            }
        }
    }

    /// A name token (bare or back-tick quoted) that is not a reserved word.
    fn is_name(&self, k: usize) -> bool {
        match self.tok(k) {
            Some(Token::Quoted(_)) => true,
            Some(Token::Word(w)) => !RESERVED.contains(&w.to_ascii_uppercase().as_str()),
            _ => false,
        }
    }

    /// Any name token, reserved words too (after `.`, `:` or as a map key).
    fn any_name(&mut self) -> R {
        match self.tok(0) {
            Some(Token::Word(_) | Token::Quoted(_)) => {
                self.pos += 1;
                Ok(())
            }
            _ => Err(self.error("expected a name")),
        }
    }

    /// A variable's text as written (back-ticks kept), and the token is consumed.
    fn variable(&mut self) -> R<String> {
        if !self.is_name(0) {
            return Err(self.error("expected a variable"));
        }
        let t = &self.toks[self.pos];
        self.pos += 1;
        Ok(self.clean[t.start..t.end].to_string())
    }

    /// A pattern element's variable: any name but `WHERE` (`(order)` is a node).
    fn pattern_variable(&mut self) -> Option<String> {
        let t = self.toks.get(self.pos)?;
        let ok = match &t.token {
            Token::Quoted(_) => true,
            Token::Word(w) => !w.eq_ignore_ascii_case("WHERE"),
            _ => false,
        };
        if !ok {
            return None;
        }
        self.pos += 1;
        Some(self.clean[t.start..t.end].to_string())
    }

    fn start(&self) -> usize {
        self.toks
            .get(self.pos)
            .map_or(self.clean.len(), |t| t.start)
    }

    fn prev_end(&self) -> usize {
        self.pos
            .checked_sub(1)
            .and_then(|i| self.toks.get(i))
            .map_or(0, |t| t.end)
    }

    fn emit(&mut self, at: usize, text: String) {
        self.edits.push(Edit { at, text });
    }

    fn generate(&mut self, kind: &str) -> String {
        let name = format!("__kg_{kind}{}", self.generated);
        self.generated += 1;
        name
    }

    fn error(&self, what: &str) -> Refusal {
        let at = self.start();
        let excerpt: String = self.clean[at..].chars().take(30).collect();
        let near = if excerpt.is_empty() {
            "at the end".to_string()
        } else {
            format!("at `{}`", excerpt.trim_end())
        };
        Refusal(format!(
            "while the graph has a visibility policy the guard reads each statement before it runs, and it could not read this one: {what} {near} (byte {at}); write it with MATCH/OPTIONAL MATCH, WHERE, WITH, UNWIND, RETURN, CALL {{ }}, UNION and ordinary expressions"
        ))
    }

    // ---- statements and clauses ----

    fn statement(&mut self) -> R {
        self.query()?;
        while self.eat_kw("UNION") {
            let _ = self.eat_kw("ALL") || self.eat_kw("DISTINCT");
            self.query()?;
        }
        Ok(())
    }

    fn query(&mut self) -> R {
        let mut clauses = 0;
        loop {
            match self.kw(0).as_deref() {
                Some("MATCH" | "OPTIONAL") => self.match_clause()?,
                Some("UNWIND") => {
                    self.pos += 1;
                    self.expr()?;
                    self.expect_kw("AS")?;
                    self.any_name()?;
                }
                Some("WITH") => {
                    self.pos += 1;
                    self.projection()?;
                    if self.eat_kw("WHERE") {
                        self.expr()?;
                    }
                }
                Some("RETURN") => {
                    self.pos += 1;
                    self.projection()?;
                }
                Some("CALL") => self.call_subquery()?,
                _ => break,
            }
            clauses += 1;
        }
        if clauses == 0 {
            return Err(self.error("expected a clause"));
        }
        Ok(())
    }

    fn match_clause(&mut self) -> R {
        self.eat_kw("OPTIONAL");
        self.expect_kw("MATCH")?;
        let mut scope = Scope::default();
        self.pattern_list(&mut scope)?;
        self.close_scope(&scope)
    }

    /// The optional `WHERE` after a scope's patterns, joined by the scope's predicates.
    fn close_scope(&mut self, scope: &Scope) -> R {
        let end_of_patterns = self.prev_end();
        if self.eat_kw("WHERE") {
            if !scope.predicates.is_empty() {
                let at = self.start();
                self.emit(at, "(".into());
            }
            self.expr()?;
            if !scope.predicates.is_empty() {
                let at = self.prev_end();
                self.emit(at, format!(") AND {}", scope.joined()));
            }
        } else if !scope.predicates.is_empty() {
            self.emit(end_of_patterns, format!(" WHERE {}", scope.joined()));
        }
        Ok(())
    }

    fn projection(&mut self) -> R {
        self.eat_kw("DISTINCT");
        if self.eat('*') {
            self.star = true;
            if !self.eat(',') {
                return self.projection_tail();
            }
        }
        self.separated(|p| {
            p.expr()?;
            if p.eat_kw("AS") {
                p.any_name()?;
            }
            Ok(())
        })?;
        self.projection_tail()
    }

    fn projection_tail(&mut self) -> R {
        if self.is_kw("ORDER") {
            self.pos += 1;
            self.expect_kw("BY")?;
            self.separated(|p| {
                p.expr()?;
                let _ = p.eat_kw("ASC")
                    || p.eat_kw("ASCENDING")
                    || p.eat_kw("DESC")
                    || p.eat_kw("DESCENDING");
                Ok(())
            })?;
        }
        if self.eat_kw("SKIP") || self.eat_kw("OFFSET") {
            self.expr()?;
        }
        if self.eat_kw("LIMIT") {
            self.expr()?;
        }
        Ok(())
    }

    fn call_subquery(&mut self) -> R {
        self.expect_kw("CALL")?;
        if self.eat('(') {
            if !self.eat('*') && !self.sym(0, ')') {
                self.separated(|p| p.variable().map(|_| ()))?;
            }
            self.expect(')')?;
        }
        if !self.sym(0, '{') {
            return Err(self.error("expected a subquery `CALL { … }` (procedures are not available under a visibility policy)"));
        }
        self.pos += 1;
        self.statement()?;
        self.expect('}')
    }

    // ---- patterns ----

    fn pattern_list(&mut self, scope: &mut Scope) -> R {
        self.separated(|p| p.pattern_part(scope))
    }

    fn pattern_part(&mut self, scope: &mut Scope) -> R {
        if self.is_name(0) && self.sym(1, '=') {
            self.pos += 2;
        }
        let selector = matches!(
            self.kw(0).as_deref(),
            Some("SHORTESTPATH" | "ALLSHORTESTPATHS")
        ) && self.sym(1, '(');
        if selector {
            self.pos += 2;
            self.path(scope)?;
            return self.expect(')');
        }
        self.path(scope).map(|_| ())
    }

    fn rel_ahead(&self) -> bool {
        (self.sym(0, '-') && (self.sym(1, '-') || self.sym(1, '[')))
            || (self.sym(0, '<') && self.sym(1, '-'))
    }

    /// A path: elements joined by relationships (or set side by side around a quantified
    /// path pattern). Returns how many relationships it has.
    fn path(&mut self, scope: &mut Scope) -> R<usize> {
        let mut relationships = 0;
        self.element(scope)?;
        loop {
            if self.rel_ahead() {
                self.relationship(scope)?;
                relationships += 1;
                self.element(scope)?;
            } else if self.sym(0, '(') {
                self.element(scope)?;
            } else {
                return Ok(relationships);
            }
        }
    }

    /// A node pattern, or a parenthesised (quantified) path pattern.
    fn element(&mut self, scope: &mut Scope) -> R {
        self.expect('(')?;
        if self.sym(0, '(') {
            let mut inner = Scope::default();
            self.path(&mut inner)?;
            self.close_scope(&inner)?;
            self.expect(')')?;
            return self.quantifier();
        }
        let open_end = self.prev_end();
        let var = if let Some(var) = self.pattern_variable() {
            var
        } else if !self.predicates.any() {
            String::new()
        } else {
            let name = self.generate("n");
            self.emit(open_end, name.clone());
            name
        };
        if self.eat(':') {
            // A node may carry a hidden label beside the ones named: checked all the same.
            self.label_expression()?;
        }
        self.properties()?;
        if self.eat_kw("WHERE") {
            self.expr()?;
        }
        self.expect(')')?;
        scope.add(self.predicates.node(&var));
        Ok(())
    }

    fn quantifier(&mut self) -> R {
        if self.eat('+') || self.eat('*') {
            return Ok(());
        }
        if self.eat('{') {
            let _ = self.number();
            if self.eat(',') {
                let _ = self.number();
            }
            return self.expect('}');
        }
        Ok(())
    }

    fn number(&mut self) -> bool {
        let yes = matches!(self.tok(0), Some(Token::Number(_)));
        if yes {
            self.pos += 1;
        }
        yes
    }

    fn properties(&mut self) -> R {
        if self.sym(0, '{') {
            return self.map_literal();
        }
        if matches!(self.tok(0), Some(Token::Param(_))) {
            self.pos += 1;
        }
        Ok(())
    }

    fn relationship(&mut self, scope: &mut Scope) -> R {
        self.eat('<');
        self.expect('-')?;
        let dash_end = self.prev_end();
        let (var, variable_length, named_types) = if self.eat('[') {
            let open_end = self.prev_end();
            let var = if let Some(var) = self.pattern_variable() {
                var
            } else if !self.predicates.any() {
                String::new()
            } else {
                let name = self.generate("r");
                self.emit(open_end, name.clone());
                name
            };
            // Types named only as alternatives (`:A|B`) are visible ones (a hidden name was
            // refused before this), and a relationship has exactly one type.
            let named_types = if self.eat(':') {
                self.label_expression()?
            } else {
                false
            };
            let variable_length = self.eat('*');
            if variable_length {
                self.number();
                if self.eat('.') {
                    self.expect('.')?;
                    self.number();
                }
            }
            self.properties()?;
            if self.eat_kw("WHERE") {
                self.expr()?;
            }
            self.expect(']')?;
            (var, variable_length, named_types)
        } else if !self.predicates.any() {
            (String::new(), false, false)
        } else {
            let name = self.generate("r");
            self.emit(dash_end, format!("[{name}]"));
            (name, false, false)
        };
        self.expect('-')?;
        self.eat('>');
        if self.sym(0, '{') || self.sym(0, '+') {
            return Err(self.error("a quantifier directly on a relationship is not read here: write `[*1..3]` or a parenthesised path pattern"));
        }
        scope.add(
            self.predicates
                .relationship(&var, variable_length, named_types),
        );
        Ok(())
    }

    /// `A`, `A:B`, `A|B`, `A|:B`, `A&B`, `!A`, `%`, `(A|B)`. True when it is names as
    /// alternatives only (`A`, `A|B`, `A|:B`): whatever matches it carries one of them.
    fn label_expression(&mut self) -> R<bool> {
        let mut alternatives = true;
        loop {
            alternatives &= self.label_term()?;
            if self.eat('|') {
                self.eat(':');
            } else if self.eat('&') || self.eat(':') {
                alternatives = false;
            } else {
                return Ok(alternatives);
            }
        }
    }

    /// A name, or a negation, wildcard or group (false: not a plain name).
    fn label_term(&mut self) -> R<bool> {
        if self.eat('!') {
            self.label_term()?;
            return Ok(false);
        }
        if self.eat('%') {
            return Ok(false);
        }
        if self.eat('(') {
            self.label_expression()?;
            self.expect(')')?;
            return Ok(false);
        }
        self.any_name().map(|_| true)
    }

    // ---- expressions ----

    fn expr(&mut self) -> R {
        self.binary(0)
    }

    /// Boolean operators, loosest first: OR, XOR, AND; then NOT and comparisons.
    fn binary(&mut self, level: usize) -> R {
        const OPS: [&str; 3] = ["OR", "XOR", "AND"];
        let Some(op) = OPS.get(level) else {
            return self.not();
        };
        self.binary(level + 1)?;
        while self.eat_kw(op) {
            self.binary(level + 1)?;
        }
        Ok(())
    }

    fn not(&mut self) -> R {
        while self.eat_kw("NOT") {}
        self.comparison()
    }

    fn comparison(&mut self) -> R {
        self.predicate()?;
        loop {
            let width = if (self.sym(0, '<') && (self.sym(1, '>') || self.sym(1, '=')))
                || (self.sym(0, '>') && self.sym(1, '='))
                || (self.sym(0, '!') && self.sym(1, '='))
                || (self.sym(0, '=') && self.sym(1, '~'))
            {
                2
            } else if self.sym(0, '=') || self.sym(0, '<') || self.sym(0, '>') {
                1
            } else {
                return Ok(());
            };
            self.pos += width;
            self.predicate()?;
        }
    }

    /// String, list and null predicates over sums.
    fn predicate(&mut self) -> R {
        self.additive()?;
        loop {
            if (self.is_kw("STARTS") || self.is_kw("ENDS")) && self.kw(1).as_deref() == Some("WITH")
            {
                self.pos += 2;
            } else if self.is_kw("IS") {
                self.pos += 1;
                self.eat_kw("NOT");
                self.expect_kw("NULL")?;
                continue;
            } else if !(self.eat_kw("CONTAINS") || self.eat_kw("IN")) {
                return Ok(());
            }
            self.additive()?;
        }
    }

    fn additive(&mut self) -> R {
        self.multiplicative()?;
        while self.eat('+') || self.eat('-') {
            self.multiplicative()?;
        }
        Ok(())
    }

    fn multiplicative(&mut self) -> R {
        self.power()?;
        while self.eat('*') || self.eat('/') || self.eat('%') {
            self.power()?;
        }
        Ok(())
    }

    fn power(&mut self) -> R {
        self.unary()?;
        while self.eat('^') {
            self.unary()?;
        }
        Ok(())
    }

    fn unary(&mut self) -> R {
        while self.eat('-') || self.eat('+') {}
        self.postfix()
    }

    fn postfix(&mut self) -> R {
        self.atom()?;
        loop {
            // `.` then a name reads a property; `..` is a slice's.
            if self.sym(0, '.') && !self.sym(1, '.') {
                self.pos += 1;
                self.any_name()?;
            } else if self.eat('[') {
                if !self.sym(0, '.') {
                    self.expr()?;
                }
                if self.eat('.') {
                    self.expect('.')?;
                    if !self.sym(0, ']') {
                        self.expr()?;
                    }
                }
                self.expect(']')?;
            } else if self.sym(0, '{') {
                self.map_projection()?;
            } else if self.eat(':') {
                self.label_expression()?;
            } else {
                return Ok(());
            }
        }
    }

    fn atom(&mut self) -> R {
        match self.tok(0) {
            Some(Token::Number(_) | Token::Str | Token::Param(_)) => {
                self.pos += 1;
                Ok(())
            }
            Some(Token::Sym('(')) => {
                if self.attempt(Self::pattern_predicate) {
                    return Ok(());
                }
                self.pos += 1;
                self.expr()?;
                self.expect(')')
            }
            Some(Token::Sym('[')) => self.list(),
            Some(Token::Sym('{')) => self.map_literal(),
            Some(Token::Quoted(_)) => {
                self.pos += 1;
                Ok(())
            }
            Some(Token::Word(w)) => self.word(&w.to_ascii_uppercase()),
            _ => Err(self.error("expected an expression")),
        }
    }

    /// Runs `f`; on failure puts the position and the edits back as they were.
    fn attempt(&mut self, f: fn(&mut Self) -> R) -> bool {
        let (pos, edits, generated) = (self.pos, self.edits.len(), self.generated);
        if f(self).is_ok() {
            return true;
        }
        self.pos = pos;
        self.edits.truncate(edits);
        self.generated = generated;
        false
    }

    /// A pattern used as a predicate, `(a)-[:R]->(b)`: sent as `EXISTS { … }` so that it
    /// has a `WHERE` for its predicates.
    fn pattern_predicate(&mut self) -> R {
        let at = self.start();
        self.emit(at, "EXISTS { ".into());
        let mut scope = Scope::default();
        if self.path(&mut scope)? == 0 {
            return Err(self.error("not a pattern"));
        }
        let end = self.prev_end();
        let tail = if scope.predicates.is_empty() {
            " }".to_string()
        } else {
            format!(" WHERE {} }}", scope.joined())
        };
        self.emit(end, tail);
        Ok(())
    }

    fn word(&mut self, upper: &str) -> R {
        let call = self.sym(1, '(');
        let brace = self.sym(1, '{');
        match upper {
            "TRUE" | "FALSE" | "NULL" => {
                self.pos += 1;
                Ok(())
            }
            "CASE" => self.case(),
            "EXISTS" | "COUNT" | "COLLECT" if brace => self.subquery(),
            "COUNT" if call && self.sym(2, '*') && self.sym(3, ')') => {
                self.pos += 4;
                Ok(())
            }
            "ALL" | "ANY" | "NONE" | "SINGLE"
                if call && self.is_name(2) && self.kw(3).as_deref() == Some("IN") =>
            {
                self.pos += 4;
                self.expr()?;
                self.expect_kw("WHERE")?;
                self.expr()?;
                self.expect(')')
            }
            "REDUCE" if call => {
                self.pos += 2;
                self.variable()?;
                self.expect('=')?;
                self.expr()?;
                self.expect(',')?;
                self.variable()?;
                self.expect_kw("IN")?;
                self.expr()?;
                self.expect('|')?;
                self.expr()?;
                self.expect(')')
            }
            _ => {
                if let Some((name, width)) = self.function_name() {
                    return self.call(name, width);
                }
                // `order` is a variable unless it opens `ORDER BY`.
                if upper == "ORDER" && self.kw(1).as_deref() != Some("BY") {
                    self.pos += 1;
                    return Ok(());
                }
                self.variable().map(|_| ())
            }
        }
    }

    /// A function's name (`f`, `ns.f`) and its number of tokens, when the tokens at the
    /// position call one.
    fn function_name(&self) -> Option<(String, usize)> {
        let mut k = 0;
        let mut parts = Vec::new();
        loop {
            parts.push(self.tok(k)?.name()?.to_string());
            if self.sym(k + 1, '(') {
                return Some((parts.join("."), k + 1));
            }
            if !self.sym(k + 1, '.') {
                return None;
            }
            k += 2;
        }
    }

    fn call(&mut self, name: String, width: usize) -> R {
        self.pos += width;
        self.expect('(')?;
        let lower = name.to_ascii_lowercase();
        if !self.functions.contains(&lower) {
            self.functions.push(lower);
        }
        self.eat_kw("DISTINCT");
        if !self.sym(0, ')') {
            self.separated(Self::expr)?;
        }
        self.expect(')')
    }

    fn case(&mut self) -> R {
        self.expect_kw("CASE")?;
        if !self.is_kw("WHEN") {
            self.expr()?;
        }
        let mut branches = 0;
        while self.eat_kw("WHEN") {
            self.expr()?;
            self.expect_kw("THEN")?;
            self.expr()?;
            branches += 1;
        }
        if branches == 0 {
            return Err(self.error("expected `WHEN`"));
        }
        if self.eat_kw("ELSE") {
            self.expr()?;
        }
        self.expect_kw("END")
    }

    /// `EXISTS { … }`, `COUNT { … }`, `COLLECT { … }`: a query, or patterns with a `WHERE`.
    fn subquery(&mut self) -> R {
        self.pos += 2;
        if self.kw(0).is_some_and(|k| CLAUSES.contains(&k.as_str())) {
            self.statement()?;
        } else {
            let mut scope = Scope::default();
            self.pattern_list(&mut scope)?;
            self.close_scope(&scope)?;
        }
        self.expect('}')
    }

    /// A list literal, a list comprehension or a pattern comprehension.
    fn list(&mut self) -> R {
        self.expect('[')?;
        if self.sym(0, ']') {
            self.pos += 1;
            return Ok(());
        }
        if self.is_name(0) && self.kw(1).as_deref() == Some("IN") {
            self.pos += 2;
            self.expr()?;
            if self.eat_kw("WHERE") {
                self.expr()?;
            }
            if self.eat('|') {
                self.expr()?;
            }
            return self.expect(']');
        }
        if (self.sym(0, '(') || (self.is_name(0) && self.sym(1, '=')))
            && self.attempt(Self::pattern_comprehension)
        {
            return Ok(());
        }
        self.separated(Self::expr)?;
        self.expect(']')
    }

    /// `[p = (a)-->(b) WHERE … | …]`, after its `[`.
    fn pattern_comprehension(&mut self) -> R {
        if self.is_name(0) && self.sym(1, '=') {
            self.pos += 2;
        }
        let mut scope = Scope::default();
        self.path(&mut scope)?;
        self.close_scope(&scope)?;
        self.expect('|')?;
        self.expr()?;
        self.expect(']')
    }

    fn map_literal(&mut self) -> R {
        self.expect('{')?;
        if self.eat('}') {
            return Ok(());
        }
        self.separated(|p| {
            p.any_name()?;
            p.expect(':')?;
            p.expr()
        })?;
        self.expect('}')
    }

    /// `n{.a, .b, k: expr, v}` (`.*` is refused by the visibility layer before this).
    fn map_projection(&mut self) -> R {
        self.expect('{')?;
        if self.eat('}') {
            return Ok(());
        }
        self.separated(|p| {
            if p.eat('.') {
                if !p.eat('*') {
                    p.any_name()?;
                }
                Ok(())
            } else if p.sym(1, ':') {
                p.any_name()?;
                p.expect(':')?;
                p.expr()
            } else {
                p.variable().map(|_| ())
            }
        })?;
        self.expect('}')
    }
}
