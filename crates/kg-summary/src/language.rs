//! Which language to answer in: the one asked for, else the question's script.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    Chinese,
    English,
}

impl Language {
    /// The BCP 47 tag reported with the answer.
    pub fn tag(self) -> &'static str {
        match self {
            Language::Chinese => "zh",
            Language::English => "en",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Language::Chinese => "Simplified Chinese",
            Language::English => "English",
        }
    }

    /// The prompt language (`prompts/<lang>/`) for answers in this language.
    pub fn prompt_lang(self) -> kg_prompts::Lang {
        kg_prompts::Lang::chinese_if(self == Language::Chinese)
    }

    /// `zh`, `zh-CN`, `zh-Hant`… are Chinese; any other tag is answered in English.
    pub fn from_tag(tag: &str) -> Language {
        let primary = tag.trim().split(['-', '_']).next().unwrap_or_default();
        if primary.eq_ignore_ascii_case("zh") {
            Language::Chinese
        } else {
            Language::English
        }
    }
}

/// Chinese when Han characters make up a fair share of the letters (a Chinese question
/// often carries Latin ids such as `PO-0012`), English otherwise.
pub fn detect_language(text: &str) -> Language {
    let han = text.chars().filter(|c| is_han(*c)).count();
    let latin = text.chars().filter(char::is_ascii_alphabetic).count();
    // One Han character carries about a word; weigh it like four Latin letters.
    if han > 0 && han * 4 >= latin {
        Language::Chinese
    } else {
        Language::English
    }
}

fn is_han(c: char) -> bool {
    matches!(c, '\u{4e00}'..='\u{9fff}' | '\u{3400}'..='\u{4dbf}' | '\u{f900}'..='\u{faff}')
}
