//! Chunking by structure, then by size: markdown headings start new chunks, paragraphs are
//! packed together up to `max_chars`, longer paragraphs are cut near a sentence or word
//! boundary. Each chunk's *body* is a contiguous slice of the input and the bodies tile it
//! exactly, so nothing is lost or duplicated; the overlap is a copy of the text just before
//! the body, prepended for context.

/// Sizes are in characters (Unicode scalar values), not bytes, so CJK text is not cut short.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkingOptions {
    pub max_chars: usize,
    pub overlap_chars: usize,
}

impl Default for ChunkingOptions {
    fn default() -> Self {
        ChunkingOptions {
            max_chars: 1000,
            overlap_chars: 150,
        }
    }
}

pub const MIN_MAX_CHARS: usize = 50;
pub const MAX_MAX_CHARS: usize = 20_000;

impl ChunkingOptions {
    /// Why these options cannot be used, naming the field.
    pub fn problem(&self) -> Option<String> {
        if !(MIN_MAX_CHARS..=MAX_MAX_CHARS).contains(&self.max_chars) {
            return Some(format!(
                "max_chars must be between {MIN_MAX_CHARS} and {MAX_MAX_CHARS}, got {}",
                self.max_chars
            ));
        }
        if self.overlap_chars >= self.max_chars {
            return Some(format!(
                "overlap_chars must be smaller than max_chars ({}), got {}",
                self.max_chars, self.overlap_chars
            ));
        }
        None
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Markdown,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// Overlap followed by body: what gets embedded and indexed.
    pub text: String,
    /// Bytes of `text` that repeat the end of the previous chunk.
    pub overlap_len: usize,
    /// Byte range of the body in the input.
    pub start: usize,
    pub end: usize,
}

impl Chunk {
    pub fn body(&self) -> &str {
        &self.text[self.overlap_len..]
    }
}

/// A run of lines that stays together unless it alone exceeds the size limit.
struct Block {
    start: usize,
    end: usize,
    /// A markdown heading: the previous chunk ends before it.
    opens_section: bool,
}

/// Splits `input` into chunks. Whitespace-only input gives no chunks.
pub fn chunk(input: &str, format: Format, options: ChunkingOptions) -> Vec<Chunk> {
    if input.trim().is_empty() {
        return Vec::new();
    }
    let max = options.max_chars.max(1);
    let mut bodies: Vec<(usize, usize, bool)> = Vec::new();
    let mut current: Option<(usize, usize, bool)> = None;
    for block in blocks(input, format) {
        if let Some((s, e, opens)) = current {
            let fits = char_len(&input[s..block.end]) <= max;
            if block.opens_section || !fits {
                bodies.push((s, e, opens));
            } else {
                current = Some((s, block.end, opens));
                continue;
            }
        }
        let mut start = block.start;
        let mut opens = block.opens_section;
        while char_len(&input[start..block.end]) > max {
            let cut = cut_point(input, start, block.end, max);
            bodies.push((start, cut, opens));
            start = cut;
            opens = false;
        }
        current = Some((start, block.end, opens));
    }
    if let Some(last) = current {
        bodies.push(last);
    }
    bodies
        .into_iter()
        .enumerate()
        .map(|(i, (start, end, opens_section))| {
            let overlap_start = if i == 0 || opens_section {
                start
            } else {
                overlap_start(input, start, options.overlap_chars)
            };
            Chunk {
                text: input[overlap_start..end].to_string(),
                overlap_len: start - overlap_start,
                start,
                end,
            }
        })
        .collect()
}

/// Blocks tile the input: a block is a paragraph (or heading) with the blank lines that
/// follow it; leading blank lines belong to the first block.
fn blocks(input: &str, format: Format) -> Vec<Block> {
    let mut blocks: Vec<Block> = Vec::new();
    let mut offset = 0;
    let mut previous_blank = true;
    let mut in_fence = false;
    for line in input.split_inclusive('\n') {
        let trimmed = line.trim();
        let blank = trimmed.is_empty();
        let fence = format == Format::Markdown && trimmed.starts_with("```");
        let heading = format == Format::Markdown && !in_fence && is_heading(trimmed);
        let starts_block = !blank && (previous_blank || heading) && !in_fence;
        if starts_block || blocks.is_empty() {
            blocks.push(Block {
                start: offset,
                end: offset + line.len(),
                opens_section: heading,
            });
        } else if let Some(last) = blocks.last_mut() {
            last.end = offset + line.len();
        }
        if fence {
            in_fence = !in_fence;
        }
        // A heading is a paragraph of its own: the text under it starts a new block.
        previous_blank = blank || heading;
        offset += line.len();
    }
    blocks
}

fn is_heading(trimmed: &str) -> bool {
    let hashes = trimmed.chars().take_while(|c| *c == '#').count();
    (1..=6).contains(&hashes)
        && trimmed[hashes..]
            .chars()
            .next()
            .is_none_or(char::is_whitespace)
}

/// Where to end a piece that starts at `start` and may hold `max` characters: after the
/// last sentence end, else the last whitespace, in the second half of the window; else at
/// `max` characters exactly.
fn cut_point(input: &str, start: usize, end: usize, max: usize) -> usize {
    let window_end = input[start..end]
        .char_indices()
        .nth(max)
        .map_or(end, |(i, _)| start + i);
    let window = &input[start..window_end];
    let half = window
        .char_indices()
        .nth(max / 2)
        .map_or(window.len(), |(i, _)| i);
    let after = |pred: &dyn Fn(char) -> bool| {
        window
            .char_indices()
            .filter(|(i, c)| *i >= half && pred(*c))
            .last()
            .map(|(i, c)| start + i + c.len_utf8())
    };
    after(&|c| matches!(c, '.' | '!' | '?' | '。' | '！' | '？' | '；' | '\n'))
        .or_else(|| after(&char::is_whitespace))
        .unwrap_or(window_end)
}

/// The start of the overlap before `start`: `overlap` characters back, moved forward to a
/// word start when that keeps some of it.
fn overlap_start(input: &str, start: usize, overlap: usize) -> usize {
    if overlap == 0 {
        return start;
    }
    let before = &input[..start];
    let back = before
        .char_indices()
        .rev()
        .nth(overlap - 1)
        .map_or(0, |(i, _)| i);
    let candidate = &input[back..start];
    match candidate.find(char::is_whitespace) {
        Some(ws) if back > 0 && ws + 1 < candidate.len() => {
            let skip = candidate[ws..]
                .find(|c: char| !c.is_whitespace())
                .map_or(candidate.len(), |n| ws + n);
            back + skip
        }
        _ => back,
    }
}

fn char_len(s: &str) -> usize {
    s.chars().count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn options(max_chars: usize, overlap_chars: usize) -> ChunkingOptions {
        ChunkingOptions {
            max_chars,
            overlap_chars,
        }
    }

    #[test]
    fn markdown_headings_start_new_chunks() {
        let text = "# One\nalpha beta.\n\n# Two\ngamma delta.\n";
        let chunks = chunk(text, Format::Markdown, options(1000, 100));
        let bodies: Vec<&str> = chunks.iter().map(Chunk::body).collect();
        assert_eq!(bodies, ["# One\nalpha beta.\n\n", "# Two\ngamma delta.\n"]);
        // A new section carries no overlap from the previous one.
        assert_eq!(chunks[1].overlap_len, 0);
    }

    #[test]
    fn plain_text_packs_paragraphs_up_to_the_limit() {
        let para = "word ".repeat(10); // 50 chars
        let text = format!("{para}\n\n{para}\n\n{para}");
        let chunks = chunk(&text, Format::Text, options(110, 0));
        assert_eq!(chunks.len(), 2, "{chunks:#?}");
        assert!(chunks.iter().all(|c| c.body().chars().count() <= 110));
    }

    #[test]
    fn hashes_in_plain_text_and_code_fences_are_not_headings() {
        let text = "# not a heading\nline\n";
        assert_eq!(chunk(text, Format::Text, options(1000, 0)).len(), 1);
        let md = "intro\n\n```\n# comment\n```\n";
        let chunks = chunk(md, Format::Markdown, options(1000, 0));
        assert_eq!(chunks.len(), 1, "{chunks:#?}");
    }

    #[test]
    fn long_paragraphs_are_cut_at_sentence_ends_with_overlap() {
        let text = "First sentence is here. ".repeat(20);
        let chunks = chunk(&text, Format::Text, options(100, 30));
        assert!(chunks.len() > 3);
        for c in &chunks[..chunks.len() - 1] {
            assert!(c.body().trim_end().ends_with('.'), "{:?}", c.body());
        }
        assert!(chunks[1].overlap_len > 0);
        let prev = chunks[0].body();
        assert!(prev.ends_with(&chunks[1].text[..chunks[1].overlap_len]));
    }

    #[test]
    fn chinese_text_is_measured_in_characters() {
        let text = "采购订单需要经过审批。".repeat(30); // 330 characters
        let chunks = chunk(&text, Format::Text, options(100, 20));
        assert!(chunks.iter().all(|c| c.body().chars().count() <= 100));
        assert!(chunks.len() >= 4);
        assert!(chunks[0].body().ends_with('。'));
    }

    #[test]
    fn blank_input_has_no_chunks_and_bad_options_are_named() {
        assert!(chunk(" \n\n ", Format::Text, ChunkingOptions::default()).is_empty());
        assert!(options(10, 0).problem().unwrap().contains("max_chars"));
        assert!(
            options(100, 100)
                .problem()
                .unwrap()
                .contains("overlap_chars")
        );
        assert!(ChunkingOptions::default().problem().is_none());
    }

    fn text_strategy() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            "[a-z]{1,12}",
            Just(" ".to_string()),
            Just("\n".to_string()),
            Just("\n\n".to_string()),
            Just("# ".to_string()),
            Just("## Title\n".to_string()),
            Just("```\n".to_string()),
            Just(". ".to_string()),
            "[采购订单审批付款发票供应商]{1,20}",
            Just("。".to_string()),
        ];
        proptest::collection::vec(piece, 0..120).prop_map(|v| v.concat())
    }

    proptest! {
        #[test]
        fn bodies_tile_the_input_exactly(
            text in text_strategy(),
            max in 50usize..300,
            overlap in 0usize..49,
            markdown in any::<bool>(),
        ) {
            let format = if markdown { Format::Markdown } else { Format::Text };
            let chunks = chunk(&text, format, options(max, overlap));
            let rebuilt: String = chunks.iter().map(Chunk::body).collect();
            if text.trim().is_empty() {
                prop_assert!(chunks.is_empty());
            } else {
                prop_assert_eq!(&rebuilt, &text);
            }
            let mut expected_start = 0;
            for c in &chunks {
                prop_assert_eq!(c.start, expected_start);
                prop_assert_eq!(c.body(), &text[c.start..c.end]);
                prop_assert!(c.body().chars().count() <= max);
                prop_assert!(c.text[..c.overlap_len].chars().count() <= overlap);
                // The overlap is exactly the text before the body.
                prop_assert!(text[..c.start].ends_with(&c.text[..c.overlap_len]));
                prop_assert!(!c.body().is_empty());
                expected_start = c.end;
            }
        }
    }
}
