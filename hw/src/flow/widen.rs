//! Width check of emitted Verilog: finds arithmetic that rust-hdl
//! simulates modulo 2^N but the emitted Verilog evaluates wider.
//!
//! rust-hdl computes `Bits<N>` arithmetic (`+`, `-`, `*`, `<<`, `!` (emitted
//! `~`), unary `-`) modulo 2^N. Verilog sizes an expression by its context instead: the
//! operands of a compare are extended to the wider side (rust-hdl's literals
//! are 32 bits, `x == 32'h10`), a `bit_cast` is emitted as
//! `((x) & 64'hff..)` and so evaluates `x` at 64 bits, and a shift amount
//! or an `if` condition is used at its full self-determined width. Where
//! such an expression holds arithmetic on narrower operands, the bits above
//! N are carries/borrows that the rust-hdl simulation never had (`(tail -
//! head) == 32'h10` on 5-bit pointers is -16, not 16, once `tail` wrapped).
//!
//! The check parses each module's declarations (widths of ports, regs,
//! wires, memories) and every expression site of the always blocks and
//! continuous assignments, computes Verilog's evaluation width of every
//! node (IEEE 1364 sizing rules), and tracks from which bit on a value may
//! differ from rust-hdl's (the *dirty* bits). Low bits of `+ - * << & | ^`
//! never depend on higher bits, so dirt is harmless until a consumer reads
//! it: a compare, a shift amount, the left side of a variable `>>` (a
//! constant one moves the dirt down), a condition, a reduction, an index,
//! a concatenation element, or an assignment to a target wider than the
//! arithmetic's own width. A mask with no bits there (a literal, or a
//! clean value known to fit below), or an assignment to a target no wider
//! than N, truncates it away. An upper bound on each value's significant
//! bits lets an add or shift that cannot carry out of N (operands
//! zero-extended by a cast) or a subtraction that cannot borrow (a
//! constant minuend above the subtrahend's range) stay clean.
//!
//! The parser covers the subset rust-hdl emits and the hand-written leaf
//! modules of this design use (declarations, `always`/`assign`/`if`/
//! `case`/initialiser statements one per line, attributes skipped); a line
//! it cannot read is reported, not skipped silently.

use std::collections::HashMap;

/// Where a too-wide value was consumed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WidenSink {
    /// Operand of `==`, `!=`, `<`, `<=`, `>`, `>=` or a `case` selector.
    Compare,
    /// Right operand of `<<` / `>>`.
    ShiftAmount,
    /// Left operand of a variable `>>` (its high bits shift down into the
    /// result), or an operand of `/` or `%`.
    ShiftedRight,
    /// `if` condition, `&&`/`||` operand, `!`, `?:` condition.
    Condition,
    /// Operand of a reduction `&x`, `|x`, `^x`.
    Reduction,
    /// Bit index, part-select offset or memory address.
    Index,
    /// Element of a concatenation (sized by itself, so its width shows).
    Concatenation,
    /// Assigned to a target wider than the arithmetic's own width (a
    /// widening `bit_cast` keeps the extra bits).
    WideAssignment,
}

impl std::fmt::Display for WidenSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            WidenSink::Compare => "compare",
            WidenSink::ShiftAmount => "shift amount",
            WidenSink::ShiftedRight => "right-shifted value",
            WidenSink::Condition => "condition",
            WidenSink::Reduction => "reduction",
            WidenSink::Index => "index",
            WidenSink::Concatenation => "concatenation element",
            WidenSink::WideAssignment => "assignment to a wider target",
        })
    }
}

/// One arithmetic expression whose Verilog result differs from rust-hdl's
/// modulo-2^N result in bits that are used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WidenFinding {
    /// Verilog module (after `emit_block`'s renaming).
    pub module: String,
    /// 1-based line in the block's Verilog.
    pub line: usize,
    /// The whole statement (trimmed), the key of [`WIDEN_WAIVERS`].
    pub statement: String,
    /// The arithmetic sub-expression that was evaluated wide.
    pub expression: String,
    /// rust-hdl's width of that expression (the widest non-literal
    /// operand).
    pub operand_width: u32,
    /// The width Verilog evaluates it at.
    pub context_width: u32,
    /// What consumed the extra bits.
    pub sink: WidenSink,
}

impl std::fmt::Display for WidenFinding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}: `{}` is {} bits in rust-hdl but evaluated at {} bits in Verilog, used as {}: `{}`",
            self.module, self.line, self.expression, self.operand_width, self.context_width, self.sink, self.statement
        )
    }
}

/// A statement whose wide evaluation is intended or harmless, with why.
#[derive(Clone, Copy, Debug)]
pub struct WidenWaiver {
    /// The statement exactly as emitted (trimmed); it is waived in every
    /// module (a block's module and its copy inside `mrc_core`).
    pub statement: &'static str,
    pub reason: &'static str,
}

/// Statements the width check lets through. Each entry says why the wider
/// Verilog result is intended or cannot change behaviour. A waiver that no
/// longer matches anything is reported by [`check_blocks`] (and fails
/// `hw/tests/flow.rs` over the whole design).
pub const WIDEN_WAIVERS: &[WidenWaiver] = &[
    WidenWaiver {
        statement: "r_last = r_out_cnt$q == (h_nout - 32'h1);",
        reason: "dma_axi: h_nout is (len + 63) >> 6 of a request's 16-bit length, and zero-length requests are dropped \
                 (cnt_rd_zero_len) before they are queued, so h_nout is 1..=1024 and h_nout - 1 never borrows",
    },
    WidenWaiver {
        statement: "cnt_wr_bad_last = dma_wr$beat$last != (w_cnt$q == (w_nout$q - 32'h1));",
        reason: "dma_axi: w_nout is (len + 63) >> 6 of a request's 16-bit length, and zero-length requests are dropped \
                 (cnt_wr_zero_len) before w_nout is loaded, so w_nout is 1..=1024 and w_nout - 1 never borrows",
    },
    WidenWaiver {
        statement: "last_keep$d = c_ones >> (32'h40 - tail);",
        reason: "rx_buffer: tail is cmd_len & 63 and this branch runs only when tail != 0, so 64 - tail is 1..63 and never borrows",
    },
    WidenWaiver {
        statement: "b_k_v6_len$d = a_is6$q & (v6_plen + 32'h28 > ip_avail);",
        reason: "rx_parser: v6_plen is the 16-bit IPv6 payload length zero-extended to 18 bits; + 40 stays below 2^17 and never carries out",
    },
    WidenWaiver {
        statement: "d_k_x_short$d = c_xbit$q & (c_t_len$q < c_at_hdr$q + 32'h2);",
        reason: "rx_parser: at_hdr is one of the constant header offsets (12, 16, 28, ...), far below 2^18 - 2",
    },
    WidenWaiver {
        statement: "p2_aligned$d = p1_view$q << (((32'h40 - p1_crc_n$q) & 10'h3ff) << 32'h3);",
        reason: "tx_builder: crc_n is 0..=64 (the low 6 bits of the bytes left, 64, or 0), so 64 - crc_n never borrows",
    },
];

/// Result of checking one block's Verilog.
#[derive(Clone, Debug, Default)]
pub struct WidenReport {
    pub findings: Vec<WidenFinding>,
    /// Expression sites analysed.
    pub sites: usize,
    /// Lines that look like statements but did not parse (`line`, text):
    /// the check could not see them.
    pub unparsed: Vec<(usize, String)>,
}

#[derive(Clone, Debug, PartialEq)]
struct Lit {
    text: String,
    /// Width (32 when unsized).
    width: u32,
    /// Value when it fits 128 bits and has no x/z digits.
    value: Option<u128>,
    /// Highest set bit (None: zero; `u32::MAX` when unknown: too wide to
    /// tell cheaply, or x/z digits).
    top_bit: Option<u32>,
    /// Every bit of its width set (rust-hdl's `bit_cast` mask).
    all_ones: bool,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Lit(Lit),
    Op(&'static str),
}

const OPS: &[&str] = &[
    "<<<", ">>>", "===", "!==", "<<", ">>", "==", "!=", "<=", ">=", "&&", "||", "~&", "~|", "~^", "^~", "+:", "-:",
    "(", ")", "[", "]", "{", "}", "?", ":", ",", "+", "-", "*", "/", "%", "&", "|", "^", "~", "!", "<", ">", "=", ";",
    "@", ".", "#",
];

fn lex(s: &str) -> Option<Vec<Tok>> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'/' && b.get(i + 1) == Some(&b'/') {
            break;
        } else if s[i..].starts_with("(*") && !s[i..].starts_with("(*)") {
            // Attribute, e.g. `(* keep *)`.
            i += s[i..].find("*)")? + 2;
        } else if c.is_ascii_alphabetic() || c == b'_' || c == b'$' {
            let st = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$') {
                i += 1;
            }
            out.push(Tok::Ident(s[st..i].to_string()));
        } else if c.is_ascii_digit() || c == b'\'' {
            let st = i;
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
                i += 1;
            }
            let size: Option<u32> = if i > st {
                s[st..i].replace('_', "").parse().ok()
            } else {
                None
            };
            if b.get(i) == Some(&b'\'') {
                i += 1;
                let base = b.get(i)?.to_ascii_lowercase();
                i += 1;
                let dst = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                let digits: String = s[dst..i].chars().filter(|&c| c != '_').collect();
                let width = size.unwrap_or(32).max(1);
                out.push(Tok::Lit(based_literal(&s[st..i], width, base, &digits)?));
            } else {
                let v: u128 = s[st..i].replace('_', "").parse().ok()?;
                out.push(Tok::Lit(Lit {
                    text: s[st..i].to_string(),
                    width: 32,
                    value: Some(v),
                    top_bit: top_of(v),
                    all_ones: v == u128::from(u32::MAX),
                }));
            }
        } else {
            let op = OPS.iter().find(|o| s[i..].starts_with(**o))?;
            i += op.len();
            out.push(Tok::Op(op));
        }
    }
    Some(out)
}

fn top_of(v: u128) -> Option<u32> {
    (v != 0).then(|| 127 - v.leading_zeros())
}

fn based_literal(text: &str, width: u32, base: u8, digits: &str) -> Option<Lit> {
    let radix = match base {
        b'h' => 16,
        b'b' => 2,
        b'o' => 8,
        b'd' => 10,
        _ => return None,
    };
    let known = digits.chars().all(|c| c.is_digit(radix));
    let value = if known {
        u128::from_str_radix(digits, radix).ok()
    } else {
        None
    };
    let top_bit = match value {
        Some(v) => top_of(v),
        None if known && radix != 10 => {
            // Wider than 128 bits: the first non-zero digit gives the top bit.
            let per = radix.trailing_zeros();
            let n = digits.len() as u32;
            digits.char_indices().find(|(_, c)| *c != '0').map(|(k, c)| {
                let d = c.to_digit(radix).unwrap_or(1);
                (n - 1 - k as u32) * per + (31 - d.leading_zeros())
            })
        }
        None => Some(u32::MAX),
    };
    let top_bit = top_bit.map(|t| t.min(width - 1));
    let all_ones = match radix {
        16 => {
            let rem = width % 4;
            let want = width / 4 + u32::from(rem > 0);
            digits.len() as u32 == want
                && digits
                    .chars()
                    .enumerate()
                    .all(|(k, c)| c.to_digit(16) == Some(if k == 0 && rem > 0 { (1 << rem) - 1 } else { 15 }))
        }
        2 => digits.len() as u32 == width && digits.chars().all(|c| c == '1'),
        _ => false,
    };
    Some(Lit {
        text: text.to_string(),
        width,
        value,
        top_bit,
        all_ones,
    })
}

#[derive(Clone, Debug)]
enum Expr {
    Ident(String),
    Lit(Lit),
    Index(Box<Expr>, Box<Expr>),
    Slice(Box<Expr>, Box<Expr>, u32),
    Range(Box<Expr>, u32),
    Unary(&'static str, Box<Expr>),
    Binary(&'static str, Box<Expr>, Box<Expr>),
    Ternary(Box<Expr>, Box<Expr>, Box<Expr>),
    Concat(Vec<Expr>),
    Repl(u32, Vec<Expr>),
    Paren(Box<Expr>),
    Call(String, Box<Expr>),
}

struct Parser<'a> {
    t: &'a [Tok],
    i: usize,
}

fn prec(op: &str) -> Option<u8> {
    Some(match op {
        "||" => 1,
        "&&" => 2,
        "|" | "~|" => 3,
        "^" | "~^" | "^~" => 4,
        "&" | "~&" => 5,
        "==" | "!=" | "===" | "!==" => 6,
        "<" | "<=" | ">" | ">=" => 7,
        "<<" | ">>" | "<<<" | ">>>" => 8,
        "+" | "-" => 9,
        "*" | "/" | "%" => 10,
        _ => return None,
    })
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.t.get(self.i)
    }
    fn at_end(&self) -> bool {
        self.i >= self.t.len()
    }
    fn eat(&mut self, op: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Op(o)) if *o == op) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn eat_word(&mut self, w: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Ident(n)) if n == w) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, op: &str) -> Option<()> {
        self.eat(op).then_some(())
    }
    fn expr(&mut self) -> Option<Expr> {
        let c = self.binary(1)?;
        if self.eat("?") {
            let a = self.expr()?;
            self.expect(":")?;
            let b = self.expr()?;
            return Some(Expr::Ternary(Box::new(c), Box::new(a), Box::new(b)));
        }
        Some(c)
    }
    fn binary(&mut self, min: u8) -> Option<Expr> {
        let mut l = self.unary()?;
        while let Some(Tok::Op(op)) = self.peek() {
            let op: &'static str = op;
            let p = match prec(op) {
                Some(p) if p >= min => p,
                _ => break,
            };
            self.i += 1;
            let r = self.binary(p + 1)?;
            l = Expr::Binary(op, Box::new(l), Box::new(r));
        }
        Some(l)
    }
    fn unary(&mut self) -> Option<Expr> {
        for op in ["~&", "~|", "~^", "~", "-", "+", "!", "&", "|", "^"] {
            if self.eat(op) {
                let e = self.unary()?;
                return Some(Expr::Unary(op, Box::new(e)));
            }
        }
        self.postfix()
    }
    fn postfix(&mut self) -> Option<Expr> {
        let mut e = self.primary()?;
        while self.eat("[") {
            let a = self.expr()?;
            if self.eat("+:") {
                let w = self.expr()?;
                self.expect("]")?;
                e = Expr::Slice(Box::new(e), Box::new(a), const_value(&w)?);
            } else if self.eat(":") {
                let lo = self.expr()?;
                self.expect("]")?;
                let hi = const_value(&a)?;
                let lo = const_value(&lo)?;
                e = Expr::Range(Box::new(e), hi.checked_sub(lo)? + 1);
            } else {
                self.expect("]")?;
                e = Expr::Index(Box::new(e), Box::new(a));
            }
        }
        Some(e)
    }
    fn primary(&mut self) -> Option<Expr> {
        match self.peek()?.clone() {
            Tok::Ident(n) => {
                self.i += 1;
                if n.starts_with('$') {
                    self.expect("(")?;
                    let e = self.expr()?;
                    self.expect(")")?;
                    return Some(Expr::Call(n, Box::new(e)));
                }
                Some(Expr::Ident(n))
            }
            Tok::Lit(l) => {
                self.i += 1;
                Some(Expr::Lit(l))
            }
            Tok::Op("(") => {
                self.i += 1;
                let e = self.expr()?;
                self.expect(")")?;
                Some(Expr::Paren(Box::new(e)))
            }
            Tok::Op("{") => {
                self.i += 1;
                let first = self.expr()?;
                if self.eat("{") {
                    let n = const_value(&first)?;
                    let items = self.list()?;
                    self.expect("}")?;
                    return Some(Expr::Repl(n, items));
                }
                let mut items = vec![first];
                while self.eat(",") {
                    items.push(self.expr()?);
                }
                self.expect("}")?;
                Some(Expr::Concat(items))
            }
            _ => None,
        }
    }
    fn list(&mut self) -> Option<Vec<Expr>> {
        let mut items = vec![self.expr()?];
        while self.eat(",") {
            items.push(self.expr()?);
        }
        self.expect("}")?;
        Some(items)
    }
}

/// Value of a constant (slice widths, ranges, replication counts).
fn const_value(e: &Expr) -> Option<u32> {
    match e {
        Expr::Paren(x) => const_value(x),
        Expr::Lit(l) => l.value.and_then(|v| u32::try_from(v).ok()),
        _ => None,
    }
}

/// Width facts of one module.
#[derive(Default)]
struct Scope {
    widths: HashMap<String, u32>,
    /// Memories: element width.
    arrays: HashMap<String, u32>,
    /// localparams: treated like literals (a rust-hdl constant adopts the
    /// width of the other operand).
    params: HashMap<String, u32>,
}

#[derive(Clone, Debug)]
struct Info {
    /// rust-hdl's width of the value (None: a literal or constant, which
    /// adopts the other operand's width).
    rust_width: Option<u32>,
    /// Where the Verilog value may differ from rust-hdl's zero-extended
    /// value: (lowest such bit, which wide arithmetic put it there).
    dirty: Vec<(u32, usize)>,
    /// Upper bound on the significant bits of the exact (unbounded)
    /// value: an add whose result fits in its rust-hdl width cannot carry
    /// out, so its wider Verilog evaluation gives the same value.
    bits: u32,
}

impl Info {
    fn clean(rust_width: Option<u32>, bits: u32) -> Info {
        Info {
            rust_width,
            dirty: Vec::new(),
            bits,
        }
    }
}

struct Dirt {
    expression: String,
    operand_width: u32,
    context_width: u32,
}

struct Analysis<'a> {
    scope: &'a Scope,
    origins: Vec<Dirt>,
    hits: Vec<(WidenSink, usize)>,
    unknown: Option<String>,
}

fn max_opt(a: Option<u32>, b: Option<u32>) -> Option<u32> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

fn merge(mut a: Vec<(u32, usize)>, b: Vec<(u32, usize)>) -> Vec<(u32, usize)> {
    a.extend(b);
    a
}

impl Analysis<'_> {
    fn self_width(&mut self, e: &Expr) -> u32 {
        match e {
            Expr::Ident(n) => match self.scope.widths.get(n).or(self.scope.params.get(n)) {
                Some(w) => *w,
                None => {
                    self.unknown.get_or_insert_with(|| n.clone());
                    1
                }
            },
            Expr::Lit(l) => l.width,
            Expr::Index(a, _) => match &**a {
                Expr::Ident(n) if self.scope.arrays.contains_key(n) => self.scope.arrays[n],
                _ => 1,
            },
            Expr::Slice(_, _, w) | Expr::Range(_, w) => *w,
            Expr::Unary(op, x) => match *op {
                "~" | "-" | "+" => self.self_width(x),
                _ => 1,
            },
            Expr::Binary(op, l, r) => match *op {
                "+" | "-" | "*" | "/" | "%" | "&" | "|" | "^" | "~^" | "^~" | "~&" | "~|" => {
                    let a = self.self_width(l);
                    let b = self.self_width(r);
                    a.max(b)
                }
                "<<" | ">>" | "<<<" | ">>>" => self.self_width(l),
                _ => 1,
            },
            Expr::Ternary(_, a, b) => {
                let x = self.self_width(a);
                let y = self.self_width(b);
                x.max(y)
            }
            Expr::Concat(items) => items.iter().map(|x| self.self_width(x)).sum(),
            Expr::Repl(n, items) => n * items.iter().map(|x| self.self_width(x)).sum::<u32>(),
            Expr::Paren(x) | Expr::Call(_, x) => self.self_width(x),
        }
    }

    /// `info` is consumed at `width` bits by `sink`.
    fn sink(&mut self, sink: WidenSink, info: &Info, width: u32) {
        for &(d, origin) in &info.dirty {
            if d < width && !self.hits.iter().any(|h| h.1 == origin) {
                self.hits.push((sink, origin));
            }
        }
    }

    /// A self-determined operand.
    fn selfdet(&mut self, e: &Expr, sink: WidenSink) -> Info {
        let w = self.self_width(e);
        let i = self.eval(e, w);
        self.sink(sink, &i, w);
        i
    }

    /// An operation whose result rust-hdl truncates to `n` bits but
    /// Verilog keeps at `w`: dirty from `n`.
    fn widened(&mut self, e: &Expr, n: Option<u32>, w: u32, mut operands: Vec<(u32, usize)>) -> Vec<(u32, usize)> {
        if let Some(n) = n.filter(|&n| w > n) {
            self.origins.push(Dirt {
                expression: render(e),
                operand_width: n,
                context_width: w,
            });
            operands.push((n, self.origins.len() - 1));
        }
        operands
    }

    fn eval(&mut self, e: &Expr, ctx: u32) -> Info {
        match e {
            Expr::Ident(n) => {
                let w = self.self_width(e);
                Info::clean(
                    if self.scope.params.contains_key(n) {
                        None
                    } else {
                        Some(w)
                    },
                    w,
                )
            }
            Expr::Lit(l) => Info::clean(None, l.top_bit.map_or(0, |t| t.saturating_add(1)).min(l.width)),
            Expr::Index(_, i) => {
                self.selfdet(i, WidenSink::Index);
                let w = self.self_width(e);
                Info::clean(Some(w), w)
            }
            Expr::Slice(_, off, w) => {
                self.selfdet(off, WidenSink::Index);
                Info::clean(Some(*w), *w)
            }
            Expr::Range(_, w) => Info::clean(Some(*w), *w),
            Expr::Paren(x) | Expr::Call(_, x) => self.eval(x, ctx),
            Expr::Unary(op, x) => match *op {
                // Inverting or negating a zero-extended value sets the
                // bits above its width.
                "~" | "-" => {
                    let w = self.self_width(e).max(ctx);
                    let i = self.eval(x, w);
                    let dirty = self.widened(e, i.rust_width, w, i.dirty);
                    Info {
                        rust_width: i.rust_width,
                        dirty,
                        bits: w,
                    }
                }
                "+" => self.eval(x, ctx),
                "!" => {
                    self.selfdet(x, WidenSink::Condition);
                    Info::clean(Some(1), 1)
                }
                _ => {
                    self.selfdet(x, WidenSink::Reduction);
                    Info::clean(Some(1), 1)
                }
            },
            Expr::Binary(op, l, r) => self.binary(e, op, l, r, ctx),
            Expr::Ternary(c, a, b) => {
                self.selfdet(c, WidenSink::Condition);
                let w = self.self_width(e).max(ctx);
                let x = self.eval(a, w);
                let y = self.eval(b, w);
                Info {
                    rust_width: max_opt(x.rust_width, y.rust_width),
                    dirty: merge(x.dirty, y.dirty),
                    bits: x.bits.max(y.bits),
                }
            }
            Expr::Concat(items) | Expr::Repl(_, items) => {
                for x in items {
                    self.selfdet(x, WidenSink::Concatenation);
                }
                let w = self.self_width(e);
                Info::clean(Some(w), w)
            }
        }
    }

    fn binary(&mut self, e: &Expr, op: &'static str, l: &Expr, r: &Expr, ctx: u32) -> Info {
        match op {
            "==" | "!=" | "===" | "!==" | "<" | "<=" | ">" | ">=" => {
                let w = self.self_width(l).max(self.self_width(r));
                let a = self.eval(l, w);
                self.sink(WidenSink::Compare, &a, w);
                let b = self.eval(r, w);
                self.sink(WidenSink::Compare, &b, w);
                Info::clean(Some(1), 1)
            }
            "&&" | "||" => {
                self.selfdet(l, WidenSink::Condition);
                self.selfdet(r, WidenSink::Condition);
                Info::clean(Some(1), 1)
            }
            "<<" | "<<<" | ">>" | ">>>" => {
                let w = self.self_width(e).max(ctx);
                let a = self.eval(l, w);
                self.selfdet(r, WidenSink::ShiftAmount);
                let amount = const_value(r);
                if op.starts_with('>') {
                    // Dirty high bits come down by the shift amount: by a
                    // constant they stay tracked (a later mask or narrow
                    // target may still drop them); by a variable amount any
                    // of them can reach bit 0.
                    return match amount {
                        Some(k) => Info {
                            rust_width: a.rust_width,
                            dirty: a.dirty.iter().map(|&(d, o)| (d.saturating_sub(k), o)).collect(),
                            bits: a.bits.saturating_sub(k),
                        },
                        None => {
                            self.sink(WidenSink::ShiftedRight, &a, w);
                            Info {
                                rust_width: a.rust_width,
                                dirty: a.dirty,
                                bits: a.bits,
                            }
                        }
                    };
                }
                let bits = amount.map_or(w, |k| a.bits.saturating_add(k)).min(w);
                let n = a.rust_width.filter(|&n| bits > n);
                let dirty = self.widened(e, n, w, a.dirty);
                Info {
                    rust_width: a.rust_width,
                    dirty,
                    bits,
                }
            }
            "+" | "-" | "*" => {
                let w = self.self_width(e).max(ctx);
                let a = self.eval(l, w);
                let b = self.eval(r, w);
                let bits = match op {
                    "+" if a.bits == 0 || b.bits == 0 => a.bits.max(b.bits),
                    "+" => a.bits.max(b.bits) + 1,
                    "*" => a.bits + b.bits,
                    // A subtraction cannot borrow when the subtrahend is
                    // zero or below a constant minuend.
                    _ if b.bits == 0 => a.bits,
                    _ => match literal_value(l) {
                        Some(v) if b.bits < 128 && v >= (1u128 << b.bits) - 1 => a.bits,
                        _ => w,
                    },
                }
                .min(w);
                let n = max_opt(a.rust_width, b.rust_width);
                let dirty = self.widened(e, n.filter(|&n| bits > n), w, merge(a.dirty.clone(), b.dirty.clone()));
                Info {
                    rust_width: n,
                    dirty,
                    bits,
                }
            }
            "/" | "%" => {
                let w = self.self_width(e).max(ctx);
                let a = self.eval(l, w);
                self.sink(WidenSink::ShiftedRight, &a, w);
                let b = self.eval(r, w);
                self.sink(WidenSink::ShiftedRight, &b, w);
                Info::clean(max_opt(a.rust_width, b.rust_width), a.bits)
            }
            _ => {
                // & | ^ and friends: bit for bit, so dirt stays where it is.
                let w = self.self_width(e).max(ctx);
                let mut a = self.eval(l, w);
                let mut b = self.eval(r, w);
                let bits = if op == "&" {
                    a.bits.min(b.bits)
                } else {
                    a.bits.max(b.bits)
                };
                if op == "&" {
                    // A clean operand (a mask literal, or a value known to
                    // fit in fewer bits) clears the other's dirt above its
                    // own significant bits.
                    if b.dirty.is_empty() {
                        a.dirty.retain(|&(d, _)| d < b.bits);
                    }
                    if a.dirty.is_empty() {
                        b.dirty.retain(|&(d, _)| d < a.bits);
                    }
                }
                // rust-hdl's bit_cast::<K, _>(x) is emitted `((x) & K'h<K ones>)`.
                let cast = match (op, l, r) {
                    (
                        "&",
                        Expr::Paren(_),
                        Expr::Lit(Lit {
                            width, all_ones: true, ..
                        }),
                    ) => Some(*width),
                    _ => None,
                };
                Info {
                    rust_width: cast.or(max_opt(a.rust_width, b.rust_width)),
                    dirty: merge(a.dirty.clone(), b.dirty.clone()),
                    bits,
                }
            }
        }
    }
}

fn literal_value(e: &Expr) -> Option<u128> {
    match e {
        Expr::Lit(l) => l.value,
        Expr::Paren(x) => literal_value(x),
        _ => None,
    }
}

fn render(e: &Expr) -> String {
    match e {
        Expr::Ident(n) => n.clone(),
        Expr::Lit(l) => l.text.clone(),
        Expr::Index(a, i) => format!("{}[{}]", render(a), render(i)),
        Expr::Slice(a, o, w) => format!("{}[{}+:{w}]", render(a), render(o)),
        Expr::Range(a, w) => format!("{}[{w} bits]", render(a)),
        Expr::Unary(op, x) => format!("{op}{}", render(x)),
        Expr::Binary(op, l, r) => format!("{} {op} {}", render(l), render(r)),
        Expr::Ternary(c, a, b) => format!("{} ? {} : {}", render(c), render(a), render(b)),
        Expr::Concat(items) => format!("{{{}}}", items.iter().map(render).collect::<Vec<_>>().join(", ")),
        Expr::Repl(n, items) => format!("{{{n}{{{}}}}}", items.iter().map(render).collect::<Vec<_>>().join(", ")),
        Expr::Paren(x) => format!("({})", render(x)),
        Expr::Call(f, x) => format!("{f}({})", render(x)),
    }
}

/// One expression site of a module.
enum Site {
    Assign { lhs: Expr, rhs: Expr },
    Condition(Expr),
    CaseSelector(Expr),
}

/// Parse the statement in `toks` (one source line) into sites. `None`: a
/// line with expressions that did not parse.
fn parse_line(toks: &[Tok], sites: &mut Vec<Site>) -> Option<()> {
    let mut p = Parser { t: toks, i: 0 };
    loop {
        if p.at_end() {
            return Some(());
        }
        if p.eat_word("begin")
            || p.eat_word("end")
            || p.eat_word("else")
            || p.eat_word("endcase")
            || p.eat_word("assign")
        {
            continue;
        }
        if p.eat_word("always") || p.eat_word("initial") {
            if p.eat("@") {
                // Sensitivity list: `@(*)` or `@(posedge clock)`.
                p.expect("(")?;
                let mut depth = 1;
                while depth > 0 {
                    match p.peek()? {
                        Tok::Op("(") => depth += 1,
                        Tok::Op(")") => depth -= 1,
                        _ => {}
                    }
                    p.i += 1;
                }
            }
            continue;
        }
        if p.eat_word("if") {
            p.expect("(")?;
            let c = p.expr()?;
            p.expect(")")?;
            sites.push(Site::Condition(c));
            continue;
        }
        if p.eat_word("case") {
            p.expect("(")?;
            let c = p.expr()?;
            p.expect(")")?;
            sites.push(Site::CaseSelector(c));
            return p.at_end().then_some(());
        }
        if p.eat_word("default") {
            p.expect(":")?;
            continue;
        }
        if p.eat(";") {
            continue;
        }
        // A case label (`32'h3:`) or an assignment.
        let start = p.i;
        if p.expr().is_some() && p.eat(":") {
            continue;
        }
        p.i = start;
        let lhs = p.postfix()?;
        if !(p.eat("=") || p.eat("<=")) {
            return None;
        }
        let rhs = p.expr()?;
        p.expect(";")?;
        sites.push(Site::Assign { lhs, rhs });
    }
}

/// Lines the check skips: instance connections, module headers, tasks.
fn is_structural(toks: &[Tok]) -> bool {
    match toks {
        [] => true,
        [Tok::Op(".") | Tok::Op(")"), ..] => true,
        [Tok::Ident(k), ..] if k == "module" || k == "endmodule" || k.starts_with('$') => true,
        // `type instance(`: a submodule instance.
        [Tok::Ident(_), Tok::Ident(_), Tok::Op("(") | Tok::Op("#"), ..] => true,
        _ => false,
    }
}

/// Declarations: `input wire [7:0] a;`, `reg [3:0] m[15:0];`, `wire w = e;`,
/// `localparam p = 32'h1;`, `integer i;`. Returns the initialiser site;
/// `None` when the line is not a declaration (or a malformed one: it is
/// then parsed as a statement and reported as unparsed).
fn parse_decl(toks: &[Tok], scope: &mut Scope) -> Option<Option<Site>> {
    let mut p = Parser { t: toks, i: 0 };
    if p.eat_word("localparam") || p.eat_word("parameter") {
        let name = match p.peek()? {
            Tok::Ident(n) => n.clone(),
            _ => return None,
        };
        p.i += 1;
        p.expect("=")?;
        let v = p.expr()?;
        let w = match &v {
            Expr::Lit(l) => l.width,
            _ => 32,
        };
        scope.params.insert(name, w);
        return Some(None);
    }
    let mut is_decl = false;
    for k in ["input", "output", "inout"] {
        is_decl |= p.eat_word(k);
    }
    let mut width = 1;
    if p.eat_word("integer") {
        width = 32;
        is_decl = true;
    }
    for k in ["wire", "reg", "logic"] {
        is_decl |= p.eat_word(k);
    }
    if !is_decl {
        return None;
    }
    p.eat_word("signed");
    if p.eat("[") {
        let hi = p.expr()?;
        p.expect(":")?;
        let lo = p.expr()?;
        p.expect("]")?;
        width = const_value(&hi)?.checked_sub(const_value(&lo)?)? + 1;
    }
    loop {
        let name = match p.peek()? {
            Tok::Ident(n) => n.clone(),
            _ => return None,
        };
        p.i += 1;
        if p.eat("[") {
            p.expr()?;
            p.expect(":")?;
            p.expr()?;
            p.expect("]")?;
            scope.arrays.insert(name.clone(), width);
        }
        scope.widths.insert(name.clone(), width);
        if p.eat("=") {
            let rhs = p.expr()?;
            p.expect(";")?;
            return Some(Some(Site::Assign {
                lhs: Expr::Ident(name),
                rhs,
            }));
        }
        if p.eat(";") {
            return Some(None);
        }
        p.expect(",")?;
    }
}

/// Run the width check over one Verilog file (every module in it).
pub fn check_verilog(verilog: &str) -> WidenReport {
    let mut report = WidenReport::default();
    let lines: Vec<&str> = verilog.lines().collect();
    let mut at = 0;
    while at < lines.len() {
        let Some(name) = lines[at].trim_start().strip_prefix("module ") else {
            at += 1;
            continue;
        };
        let module = name.split(['(', ' ', ';']).next().unwrap_or("").to_string();
        let end = (at..lines.len())
            .find(|&k| lines[k].trim_start().starts_with("endmodule"))
            .unwrap_or(lines.len());
        check_module(&module, &lines, at + 1, end, &mut report);
        at = end + 1;
    }
    report
}

fn check_module(module: &str, lines: &[&str], from: usize, to: usize, report: &mut WidenReport) {
    let mut scope = Scope::default();
    let mut sites: Vec<(usize, Site)> = Vec::new();
    let mut statements: Vec<(usize, Vec<Tok>)> = Vec::new();
    // Pass 1: declarations (a module may use a name before declaring it).
    for (k, line) in lines.iter().enumerate().take(to).skip(from) {
        let Some(toks) = lex(line) else {
            report.unparsed.push((k + 1, line.trim().to_string()));
            continue;
        };
        if is_structural(&toks) {
            continue;
        }
        match parse_decl(&toks, &mut scope) {
            Some(Some(site)) => sites.push((k + 1, site)),
            Some(None) => {}
            None => statements.push((k + 1, toks)),
        }
    }
    // Pass 2: statements.
    for (line, toks) in statements {
        let mut found = Vec::new();
        if parse_line(&toks, &mut found).is_none() {
            report.unparsed.push((line, lines[line - 1].trim().to_string()));
        }
        sites.extend(found.into_iter().map(|s| (line, s)));
    }
    sites.sort_by_key(|s| s.0);
    for (line, site) in sites {
        report.sites += 1;
        let mut a = Analysis {
            scope: &scope,
            origins: Vec::new(),
            hits: Vec::new(),
            unknown: None,
        };
        match &site {
            Site::Assign { lhs, rhs } => {
                let target = a.self_width(lhs);
                let _ = a.eval(lhs, target);
                let ctx = target.max(a.self_width(rhs));
                let info = a.eval(rhs, ctx);
                a.sink(WidenSink::WideAssignment, &info, target);
            }
            Site::Condition(c) => {
                a.selfdet(c, WidenSink::Condition);
            }
            Site::CaseSelector(c) => {
                a.selfdet(c, WidenSink::Compare);
            }
        }
        if let Some(n) = a.unknown {
            report
                .unparsed
                .push((line, format!("undeclared `{n}`: {}", lines[line - 1].trim())));
        }
        for (sink, origin) in a.hits {
            let d = &a.origins[origin];
            report.findings.push(WidenFinding {
                module: module.to_string(),
                line,
                statement: lines[line - 1].trim().to_string(),
                expression: d.expression.clone(),
                operand_width: d.operand_width,
                context_width: d.context_width,
                sink,
            });
        }
    }
}

/// Whether `f` is covered by a waiver.
pub fn is_waived(f: &WidenFinding) -> bool {
    WIDEN_WAIVERS.iter().any(|w| w.statement == f.statement)
}

/// Findings not covered by [`WIDEN_WAIVERS`] over `blocks`, and waivers
/// that matched nothing (stale: the statement changed or was fixed).
pub fn check_blocks(blocks: &[super::BlockRtl]) -> (Vec<(String, WidenFinding)>, Vec<&'static str>) {
    let mut open = Vec::new();
    let mut used = vec![false; WIDEN_WAIVERS.len()];
    for b in blocks {
        for f in check_verilog(&b.verilog).findings {
            match WIDEN_WAIVERS.iter().position(|w| w.statement == f.statement) {
                Some(k) => used[k] = true,
                None => open.push((b.name.to_string(), f)),
            }
        }
    }
    let stale = WIDEN_WAIVERS
        .iter()
        .zip(used)
        .filter(|(_, u)| !u)
        .map(|(w, _)| w.statement)
        .collect();
    (open, stale)
}
