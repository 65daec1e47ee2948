//! The LLM prompts as text templates (docs/agent.md, "Prompts"): `prompts/<lang>/<name>.txt`,
//! mounted into the components at `/prompts` with Spin `files`, so an operator tunes them
//! without rebuilding. Each is looked up as `<lang>` in the mount, the built-in `<lang>`
//! copy, `en` in the mount, the built-in `en` copy: the first that exists wins. The
//! built-in copies are the repository's `prompts/` files compiled in.
//!
//! A prompt that cannot be read or parsed is an error naming its file and line: callers
//! refuse the request with it rather than send the model a broken prompt.

mod file;
mod template;

pub use template::{SyntaxError, Template};

use sha2::{Digest, Sha256};
use std::cell::RefCell;
use std::fmt;
use std::path::Path;

/// Where `spin.toml` mounts the prompts folder.
pub const MOUNT: &str = "/prompts";

/// A prompt the code uses: its file name and the variables its template may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    pub name: &'static str,
    pub variables: &'static [&'static str],
}

/// The router's system prompt: classify the message, rewrite it as a standalone question.
pub const ROUTER: Spec = Spec {
    name: "router",
    variables: &[],
};
/// The ReAct step's system prompt (query and action turns).
pub const REACT: Spec = Spec {
    name: "react",
    variables: &[],
};
/// Added to `react` (after a space) on action turns.
pub const REACT_ACTION: Spec = Spec {
    name: "react_action",
    variables: &[],
};
/// The system prompt of a direct answer (small talk; no tools).
pub const ANSWER: Spec = Spec {
    name: "answer",
    variables: &[],
};
/// The summariser's system prompt; `language` is the answer's language (`English`,
/// `Simplified Chinese`).
pub const SUMMARISER: Spec = Spec {
    name: "summariser",
    variables: &["language"],
};
/// What to ask when the message says nothing the assistant can act on.
pub const CLARIFICATION: Spec = Spec {
    name: "clarification",
    variables: &[],
};

/// Every prompt, in the order `/health` lists them.
pub const ALL: [Spec; 6] = [
    ROUTER,
    REACT,
    REACT_ACTION,
    ANSWER,
    SUMMARISER,
    CLARIFICATION,
];

/// A prompt's language, chosen by each caller from the question as it always has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    En,
    Zh,
}

impl Lang {
    pub const ALL: [Lang; 2] = [Lang::En, Lang::Zh];

    pub fn chinese_if(chinese: bool) -> Lang {
        if chinese { Lang::Zh } else { Lang::En }
    }

    pub fn tag(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Zh => "zh",
        }
    }
}

/// The compiled-in copy of a prompt, when the repository has one in that language.
pub fn built_in(spec: Spec, lang: Lang) -> Option<&'static str> {
    Some(match (spec.name, lang) {
        ("router", Lang::En) => include_str!("../../../prompts/en/router.txt"),
        ("react", Lang::En) => include_str!("../../../prompts/en/react.txt"),
        ("react_action", Lang::En) => include_str!("../../../prompts/en/react_action.txt"),
        ("answer", Lang::En) => include_str!("../../../prompts/en/answer.txt"),
        ("summariser", Lang::En) => include_str!("../../../prompts/en/summariser.txt"),
        ("clarification", Lang::En) => include_str!("../../../prompts/en/clarification.txt"),
        ("router", Lang::Zh) => include_str!("../../../prompts/zh/router.txt"),
        ("react", Lang::Zh) => include_str!("../../../prompts/zh/react.txt"),
        ("react_action", Lang::Zh) => include_str!("../../../prompts/zh/react_action.txt"),
        ("answer", Lang::Zh) => include_str!("../../../prompts/zh/answer.txt"),
        ("summariser", Lang::Zh) => include_str!("../../../prompts/zh/summariser.txt"),
        ("clarification", Lang::Zh) => include_str!("../../../prompts/zh/clarification.txt"),
        _ => return None,
    })
}

/// The compiled-in prompt in `lang`, else in English: what a caller without the mount
/// (a native test, a plain library call) uses.
pub fn built_in_prompt(spec: Spec, lang: Lang) -> Prompt {
    let (lang, text) = match built_in(spec, lang) {
        Some(text) => (lang, text),
        None => (Lang::En, built_in(spec, Lang::En).unwrap_or_default()),
    };
    let file = format!("built-in prompts/{}/{}.txt", lang.tag(), spec.name);
    // The built-in copies are tested to parse; were one not to, its text is still the
    // best prompt there is.
    Prompt::parse(spec, file.clone(), text).unwrap_or_else(|_| Prompt {
        file,
        text: text.to_string(),
        template: Template::literal(text),
    })
}

/// A loaded prompt: where it came from, its content hash and its template.
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    /// `prompts/en/router.txt` (from the mount) or `built-in prompts/en/router.txt`.
    pub file: String,
    /// The text as read (its hash is the prompt's version).
    text: String,
    template: Template,
}

impl Prompt {
    /// `sha256:` and the first 12 hex digits of the text as read: the prompt's version,
    /// shown by `/health` and attached to traces. Computed on request, so a component that
    /// only renders prompts links no SHA-256 for them.
    pub fn hash(&self) -> String {
        content_hash(&self.text)
    }

    pub fn render(&self, values: &[(&str, &str)]) -> String {
        self.template.render(values)
    }

    /// Parses `text` as `spec`'s template; `file` names it in errors.
    pub fn parse(spec: Spec, file: String, text: &str) -> Result<Prompt, PromptError> {
        // Files end with a line break by convention; the prompt does not.
        let body = text.strip_suffix('\n').unwrap_or(text);
        let body = body.strip_suffix('\r').unwrap_or(body);
        let template = Template::parse(body, spec.variables).map_err(|e| PromptError {
            file: file.clone(),
            line: Some(e.line),
            message: e.message,
        })?;
        Ok(Prompt {
            file,
            text: text.to_string(),
            template,
        })
    }
}

/// Why a prompt could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptError {
    pub file: String,
    pub line: Option<usize>,
    pub message: String,
}

impl fmt::Display for PromptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(
                f,
                "prompt template {}, line {line}: {}",
                self.file, self.message
            ),
            None => write!(f, "prompt template {}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for PromptError {}

/// `sha256:` and the first 12 hex digits of `text`'s SHA-256.
pub fn content_hash(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    let hex: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// A prompt as [`load`] found it: its name, language and the result.
type Loaded = (&'static str, Lang, Result<Prompt, PromptError>);

/// `spec` in `lang` from the mounted folder, with the fallbacks described at the top.
///
/// Read once per instance: the mount is read-only while an instance lives, and Spin makes
/// an instance per request, so a request that checks every prompt up front, renders some
/// and hashes them for its spans reads each file once (each read is several host calls).
pub fn load(spec: Spec, lang: Lang) -> Result<Prompt, PromptError> {
    thread_local! {
        static LOADED: RefCell<Vec<Loaded>> = const { RefCell::new(Vec::new()) };
    }
    LOADED.with_borrow_mut(|loaded| {
        if let Some((_, _, prompt)) = loaded
            .iter()
            .find(|(name, l, _)| *name == spec.name && *l == lang)
        {
            return prompt.clone();
        }
        let prompt = load_from(Path::new(MOUNT), spec, lang);
        loaded.push((spec.name, lang, prompt.clone()));
        prompt
    })
}

/// `load` from a given folder (tests; another mount point).
pub fn load_from(root: &Path, spec: Spec, lang: Lang) -> Result<Prompt, PromptError> {
    let mut tried = vec![lang];
    if lang != Lang::En {
        tried.push(Lang::En);
    }
    for lang in tried {
        let relative = format!("{}/{}.txt", lang.tag(), spec.name);
        let shown = format!("prompts/{relative}");
        match file::read(&root.join(&relative)) {
            Ok(bytes) => {
                let text = String::from_utf8(bytes).map_err(|e| PromptError {
                    file: shown.clone(),
                    line: None,
                    message: format!("not UTF-8 text ({e})"),
                })?;
                return Prompt::parse(spec, shown, &text);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(PromptError {
                    file: shown,
                    line: None,
                    message: format!("cannot be read: {e}"),
                });
            }
        }
        if let Some(text) = built_in(spec, lang) {
            return Prompt::parse(spec, format!("built-in {shown}"), text);
        }
    }
    Err(PromptError {
        file: format!("prompts/en/{}.txt", spec.name),
        line: None,
        message: "neither mounted nor built in".into(),
    })
}

/// The content hash of `spec` in `lang` as it would be used now (for spans and logs).
pub fn prompt_hash(spec: Spec, lang: Lang) -> Result<String, PromptError> {
    load(spec, lang).map(|p| p.hash())
}

/// Every prompt in every language, loaded: the first error, if any. Run at the start of a
/// request so a broken template refuses it before anything is done.
pub fn check_all_from(root: &Path) -> Result<(), PromptError> {
    check_each(|spec, lang| load_from(root, spec, lang))
}

/// `check_all_from` the mount, through [`load`]'s per-instance cache: the prompts the turn
/// then renders and hashes are not read again.
pub fn check_all() -> Result<(), PromptError> {
    check_each(load)
}

fn check_each(
    mut load: impl FnMut(Spec, Lang) -> Result<Prompt, PromptError>,
) -> Result<(), PromptError> {
    for spec in ALL {
        for lang in Lang::ALL {
            load(spec, lang)?;
        }
    }
    Ok(())
}

/// One prompt's version as `/health` lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct Version {
    pub name: &'static str,
    pub lang: Lang,
    /// The file it came from and its hash, or why it cannot be used.
    pub loaded: Result<(String, String), PromptError>,
}

/// Every prompt in every language, as `load_from(root, …)` resolves it.
pub fn versions_from(root: &Path) -> Vec<Version> {
    ALL.iter()
        .flat_map(|spec| Lang::ALL.map(|lang| (*spec, lang)))
        .map(|(spec, lang)| Version {
            name: spec.name,
            lang,
            loaded: load_from(root, spec, lang).map(|p| {
                let hash = p.hash();
                (p.file, hash)
            }),
        })
        .collect()
}

/// `versions_from` the mount.
pub fn versions() -> Vec<Version> {
    versions_from(Path::new(MOUNT))
}
