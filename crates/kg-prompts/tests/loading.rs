//! Loading prompts from a folder laid out like `prompts/`: the fallback order, the
//! content hashes and the errors that name the file and line.

use kg_prompts::{
    ALL, CLARIFICATION, Lang, REACT, ROUTER, SUMMARISER, Spec, built_in, check_all_from, load_from,
    versions_from,
};
use std::path::Path;

fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn every_built_in_english_prompt_exists_and_parses() {
    let empty = tempfile::tempdir().unwrap();
    for spec in ALL {
        assert!(built_in(spec, Lang::En).is_some(), "{}", spec.name);
        let prompt = load_from(empty.path(), spec, Lang::En).unwrap();
        assert_eq!(
            prompt.file,
            format!("built-in prompts/en/{}.txt", spec.name)
        );
        assert_eq!(kg_prompts::built_in_prompt(spec, Lang::En), prompt);
        // Every prompt ships in Chinese too.
        let zh = kg_prompts::built_in_prompt(spec, Lang::Zh);
        assert_eq!(zh.file, format!("built-in prompts/zh/{}.txt", spec.name));
    }
    check_all_from(empty.path()).unwrap();
}

/// The repository's own prompts/ folder is what gets mounted: it must load cleanly.
#[test]
fn the_repository_prompts_folder_loads() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../prompts");
    check_all_from(&root).unwrap();
    let summariser = load_from(&root, SUMMARISER, Lang::En).unwrap();
    assert_eq!(summariser.file, "prompts/en/summariser.txt");
    assert!(
        summariser
            .render(&[("language", "English")])
            .contains("Answer in English.")
    );
}

#[test]
fn a_mounted_file_wins_and_its_hash_follows_its_text() {
    let dir = tempfile::tempdir().unwrap();
    let built_in_hash = load_from(dir.path(), ROUTER, Lang::En).unwrap().hash();
    write(dir.path(), "en/router.txt", "Route carefully.\n");
    let mounted = load_from(dir.path(), ROUTER, Lang::En).unwrap();
    assert_eq!(mounted.file, "prompts/en/router.txt");
    assert_eq!(mounted.render(&[]), "Route carefully.");
    assert_ne!(mounted.hash(), built_in_hash);
    assert!(mounted.hash().starts_with("sha256:") && mounted.hash().len() == 19);
    write(dir.path(), "en/router.txt", "Route very carefully.\n");
    assert_ne!(
        load_from(dir.path(), ROUTER, Lang::En).unwrap().hash(),
        mounted.hash()
    );
}

#[test]
fn chinese_falls_back_to_the_built_in_chinese_copy_then_to_english() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "en/clarification.txt", "What now?\n");
    write(dir.path(), "en/react.txt", "Use the tools.\n");
    // A built-in Chinese copy exists: it comes before the mounted English one.
    let clarification = load_from(dir.path(), CLARIFICATION, Lang::Zh).unwrap();
    assert_eq!(clarification.file, "built-in prompts/zh/clarification.txt");
    assert!(clarification.render(&[]).contains("请问"));
    // Every prompt ships in Chinese, so the built-in Chinese copy comes first here too.
    let react = load_from(dir.path(), REACT, Lang::Zh).unwrap();
    assert_eq!(react.file, "built-in prompts/zh/react.txt");
    // A prompt with no Chinese copy at all (one an operator adds): the mounted English one.
    const EXTRA: Spec = Spec {
        name: "extra",
        variables: &[],
    };
    write(dir.path(), "en/extra.txt", "Be brief.\n");
    assert_eq!(
        load_from(dir.path(), EXTRA, Lang::Zh).unwrap().file,
        "prompts/en/extra.txt"
    );
    // A mounted Chinese one wins over both.
    write(dir.path(), "zh/react.txt", "使用工具。\n");
    assert_eq!(
        load_from(dir.path(), REACT, Lang::Zh).unwrap().render(&[]),
        "使用工具。"
    );
}

#[test]
fn a_broken_template_is_an_error_naming_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "en/summariser.txt",
        "Answer from the evidence.\nAnswer in {{ lang }}.\n",
    );
    let e = load_from(dir.path(), SUMMARISER, Lang::En).unwrap_err();
    assert_eq!(
        e.to_string(),
        "prompt template prompts/en/summariser.txt, line 2: unknown variable `lang`: this prompt takes `language`"
    );
    assert_eq!(check_all_from(dir.path()).unwrap_err(), e);
    let versions = versions_from(dir.path());
    let broken: Vec<_> = versions.iter().filter(|v| v.loaded.is_err()).collect();
    // Only the English summariser: the Chinese one has its own built-in copy.
    assert_eq!(broken.len(), 1, "{versions:?}");
    assert!(broken.iter().all(|v| v.name == "summariser"));
}

#[test]
fn a_file_that_is_not_text_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("en/router.txt");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, [0xff, 0xfe, 0x00]).unwrap();
    let e = load_from(dir.path(), ROUTER, Lang::En).unwrap_err();
    assert_eq!(e.file, "prompts/en/router.txt");
    assert_eq!(e.line, None);
    assert!(e.message.starts_with("not UTF-8"), "{e}");
}
